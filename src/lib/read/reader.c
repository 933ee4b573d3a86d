/* reader.c - perf.data files (mapped) and streams (read) into records.
 *
 * File mode maps the file and hands out pointers into the mapping. Pipe
 * mode reads with large read() calls into one reused buffer; a record may
 * span two reads. Records from a foreign-endian file, from a zstd payload
 * or that sit misaligned are handed out from reader-owned memory (!stable).
 */
#include "lib/read/reader.h"
#include "lib/read/reader_int.h"
#include "lib/read/evlist.h"
#include "lib/read/evlist_int.h"
#include "lib/read/decode.h"
#include "lib/read/bytes.h"
#include "lib/util/errbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PIPE_BUF_CAP	(4u << 20)	/* one read() asks for up to this */
#define MAX_RECORD	65536u		/* header.size is a u16 */
#define PAGE		4096u
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22		/* Linux 5.14; older headers lack it */
#endif

struct cs_reader {
	char *path;
	int fd;
	int wake_fd;			/* cs_reader_set_wake(); -1: none */
	bool own_fd;
	bool swap;
	bool pipe;
	bool truncated;			/* open-ended data read to its end */
	/* no next_mapped(): a pipe, a foreign byte order, no mapping yet, or
	 * records coming out of a compressed payload (set_long_way()) */
	bool long_way;
	struct cs_errbuf *eb;
	struct cs_errbuf own_eb;
	struct cs_errbuf warning;	/* damage that costs no records */

	/* file mode */
	const uint8_t *map;
	size_t map_size;
	uint64_t pos, data_end;
	uint64_t released;		/* mapped bytes below were given back */
	uint64_t fetched;		/* lines below were asked for ahead */
	uint64_t mapped;		/* pages below are mapped ahead */
	/* where release_passed() or map_ahead() is next due: one compare a
	 * record instead of two tests of two fields each (UINT64_MAX: never,
	 * a pipe) */
	uint64_t chores_at;
	uint64_t claimed_end;		/* where the header says data ends */
	bool open_ended;		/* data.size == 0: runs to the end */

	/* pipe mode */
	uint8_t *buf;
	size_t buf_pos, buf_len;
	uint64_t stream_off;		/* stream offset of buf[0] */
	bool eof;
	int read_err;			/* a failed read(): every later one fails */
	uint64_t pipe_skip;		/* payload bytes still to drop */
	uint8_t *pipe_keep;		/* where they go, if kept (tracing data) */
	size_t pipe_kept;

	/* compressed payloads */
	struct cs_zstream *z;
	bool z_active;
	bool z_ahead;			/* inflate on a second thread */
	uint64_t z_offset;		/* offset of the COMPRESSED record */
	uint32_t z_type;		/* COMPRESSED or COMPRESSED2 */

	/* swapped or realigned copies */
	uint8_t *scratch;
	uint8_t *zcopy;			/* a compressed record that needed one */

	struct cs_evlist *evlist;
	struct cs_feat_store feat;
};

static const char *tname(uint32_t type, char *buf, size_t n)
{
	const char *s = cs_record_type_name(type);

	if (s)
		return s;
	snprintf(buf, n, "type-%u", type);
	return buf;
}

static int rerr(struct cs_reader *r, uint32_t type, uint64_t off,
		const char *why)
{
	char b[24];

	return cs_error(r->eb, -EBADMSG, "%s: %s record at offset %#" PRIx64
			": %s", r->path, tname(type, b, sizeof(b)), off, why);
}

/* ---- file mode ---------------------------------------------------------- */

static bool in_file(const struct cs_reader *r, uint64_t off, uint64_t size)
{
	return off <= r->map_size && size <= r->map_size - off;
}

/* [a, a + alen) and [b, b + blen) share a byte; no sum can wrap */
static bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a >= b ? a - b < blen : b - a < alen;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One id naming two events makes records of one event look like the
 * other's: a damaged ids section (or a stream's HEADER_ATTR at off whose
 * size swallowed what followed). Sorts a copy (ids are bounded by the
 * input's size). */
static int check_unique_ids(struct cs_reader *r, uint64_t off)
{
	size_t n = 0, nr_ev = cs_evlist_count(r->evlist);
	uint64_t *all;
	int err = 0;

	for (size_t i = 0; i < nr_ev; i++)
		n += cs_evlist_get(r->evlist, i)->nr_ids;
	if (n < 2)
		return 0;
	all = malloc(n * sizeof(*all));
	if (!all)
		return cs_error(r->eb, -ENOMEM, "%s: out of memory", r->path);
	n = 0;
	for (size_t i = 0; i < nr_ev; i++) {
		const struct cs_evsel *e = cs_evlist_get(r->evlist, i);

		if (e->nr_ids)
			memcpy(all + n, e->ids, e->nr_ids * sizeof(*all));
		n += e->nr_ids;
	}
	qsort(all, n, sizeof(*all), by_value);
	for (size_t i = 1; i < n && !err; i++)
		if (all[i] == all[i - 1])
			err = cs_error(r->eb, -EBADMSG, "%s: id %" PRIu64 " is "
				       "listed twice in the ids at offset %#" PRIx64
				       " and on: a damaged ids section", r->path,
				       all[i], off);
	free(all);
	return err;
}

static int read_attrs(struct cs_reader *r, const struct cs_perf_file_header *h)
{
	uint64_t esz = h->attr_size, nr;
	uint8_t abuf[sizeof(struct cs_perf_attr)];

	if (esz < CS_PERF_ATTR_SIZE_VER0 + 16)
		return cs_error(r->eb, -EBADMSG, "%s: attr entries of %" PRIu64
				" bytes at offset 0x18: at least 80 expected",
				r->path, esz);
	if (!in_file(r, h->attrs.offset, h->attrs.size) || h->attrs.size % esz)
		return cs_error(r->eb, -EBADMSG, "%s: attr section at offset %#"
				PRIx64 ", %#" PRIx64 " bytes, does not fit the file"
				" (%zu bytes) or its %" PRIu64 "-byte entries",
				r->path, h->attrs.offset, h->attrs.size,
				r->map_size, esz);
	nr = h->attrs.size / esz;
	if (!nr)
		return cs_error(r->eb, -EBADMSG, "%s: no events in the attr "
				"section at offset %#" PRIx64, r->path,
				h->attrs.offset);
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t off = h->attrs.offset + i * esz;
		const uint8_t *e = r->map + off;
		size_t alen = (size_t)(esz - 16);
		size_t copy = alen < sizeof(abuf) ? alen : sizeof(abuf);
		struct cs_perf_attr *a = (struct cs_perf_attr *)abuf;
		uint64_t ioff = cs_ld64x(e + alen, r->swap);
		uint64_t isz = cs_ld64x(e + alen + 8, r->swap);
		uint64_t *ids;
		int err;

		memset(abuf, 0, sizeof(abuf));
		memcpy(abuf, e, copy);
		if (r->swap)
			cs_swap_attr(abuf, copy);
		if (a->size > alen)
			return cs_error(r->eb, -EBADMSG, "%s: attr at offset %#"
					PRIx64 " claims %u bytes, the entry has "
					"%zu", r->path, off, a->size, alen);
		if (a->size && a->size < CS_PERF_ATTR_SIZE_VER0)
			return cs_error(r->eb, -EBADMSG, "%s: attr at offset %#"
					PRIx64 " claims %u bytes, under 64",
					r->path, off, a->size);
		if (a->size > copy)	/* bigger than ours: keep what we know */
			a->size = (uint32_t)copy;
		if (!in_file(r, ioff, isz) || isz % 8)
			return cs_error(r->eb, -EBADMSG, "%s: ids of attr %" PRIu64
					" at offset %#" PRIx64 ", %#" PRIx64 " bytes,"
					" do not fit the file (%zu bytes)", r->path,
					i, ioff, isz, r->map_size);
		/* perf puts them between the header and the attrs: ids read
		 * from elsewhere are a damaged offset, and would silently
		 * tie records to no event */
		if (isz && (ioff % 8 || overlaps(ioff, isz, 0, sizeof(*h)) ||
			    overlaps(ioff, isz, h->attrs.offset, h->attrs.size) ||
			    overlaps(ioff, isz, h->data.offset, h->data.size)))
			return cs_error(r->eb, -EBADMSG, "%s: ids of attr %" PRIu64
					" at offset %#" PRIx64 " are misaligned or "
					"overlap the header, the attrs or the data",
					r->path, i, ioff);
		ids = malloc(isz ? isz : 1);
		if (!ids)
			return -ENOMEM;
		for (uint64_t k = 0; k < isz / 8; k++)
			ids[k] = cs_ld64x(r->map + ioff + k * 8, r->swap);
		err = cs_evlist_add(r->evlist, a, NULL, ids, isz / 8);
		free(ids);
		if (err == -EINVAL)
			return cs_error(r->eb, -EBADMSG, "%s: attr at offset %#"
					PRIx64 " places its sample id differently "
					"from the first event", r->path, off);
		if (err)
			return cs_error(r->eb, err, "%s: %s", r->path, strerror(-err));
	}
	return check_unique_ids(r, sizeof(*h));
}

struct feat_section {
	int bit;
	uint64_t off, size;
};

static int by_offset(const void *a, const void *b)
{
	const struct feat_section *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * Checks the feature sections before any is believed. The table is
 * positional: a flipped bit in the header's bitmap makes every later
 * section be read as another feature's. Such a table shows as sections
 * that overlap the header, the table, the data or each other, or that do
 * not parse as their feature. Returns NULL, or what was wrong (in msg).
 */
static const char *check_sections(struct cs_reader *r,
				  const struct cs_perf_file_header *h,
				  struct feat_section *sec, uint64_t n,
				  char *msg, size_t msg_size)
{
	uint64_t toff = h->data.offset + h->data.size;
	struct cs_feat_store probe = { 0 };
	const char *why = NULL;

	for (uint64_t k = 0; k < n; k++) {
		const struct feat_section *f = &sec[k];
		int err;

		if (!in_file(r, f->off, f->size))
			why = "runs past the end of the file";
		else if (!f->size)
			continue;
		else if (overlaps(f->off, f->size, 0, sizeof(*h)) ||
			 overlaps(f->off, f->size, h->data.offset, h->data.size) ||
			 overlaps(f->off, f->size, toff, n * 16))
			why = "overlaps the header, the data or the feature table";
		else if ((err = cs_feat_parse(&probe, NULL, f->bit, r->map + f->off,
					      (size_t)f->size, r->swap, 0, &why)))
			why = err == -ENOMEM ? "out of memory" : why ? why : "malformed";
		if (why) {
			snprintf(msg, msg_size, "feature %d section at %#" PRIx64
				 ", %#" PRIx64 " bytes: %s", f->bit, f->off,
				 f->size, why);
			break;
		}
	}
	cs_feat_store_free(&probe);
	if (why)
		return msg;
	qsort(sec, n, sizeof(*sec), by_offset);
	for (uint64_t k = 1; k < n; k++)
		if (sec[k - 1].size && sec[k].off < sec[k - 1].off + sec[k - 1].size) {
			snprintf(msg, msg_size, "feature %d section at %#" PRIx64
				 " overlaps feature %d's", sec[k].bit, sec[k].off,
				 sec[k - 1].bit);
			return msg;
		}
	return NULL;
}

static int read_features(struct cs_reader *r, const struct cs_perf_file_header *h)
{
	uint64_t toff = h->data.offset + h->data.size;
	struct feat_section sec[CS_FEAT_BITS];
	uint64_t n = 0;
	char msg[200];

	for (int bit = 0; bit < CS_FEAT_BITS; bit++)
		if (h->adds_features[bit / 64] >> (bit % 64) & 1)
			sec[n++].bit = bit;
	if (!n)
		return 0;
	if (!in_file(r, toff, n * 16))
		return cs_error(r->eb, -EBADMSG, "%s: feature table at offset %#"
				PRIx64 " (%" PRIu64 " entries) runs past the end "
				"of the file (%zu bytes): truncated?", r->path,
				toff, n, r->map_size);
	for (uint64_t k = 0; k < n; k++) {
		sec[k].off = cs_ld64x(r->map + toff + k * 16, r->swap);
		sec[k].size = cs_ld64x(r->map + toff + k * 16 + 8, r->swap);
	}
	/* a damaged table costs the metadata, not the samples */
	if (check_sections(r, h, sec, n, msg, sizeof(msg))) {
		cs_error(&r->warning, 0, "%s: feature table at offset %#" PRIx64
			 " is damaged (%s): its metadata is dropped, the samples "
			 "are read", r->path, toff, msg);
		return 0;
	}
	for (uint64_t k = 0; k < n; k++) {
		const char *why = NULL;
		int err = cs_feat_parse(&r->feat, r->evlist, sec[k].bit,
					r->map + sec[k].off, (size_t)sec[k].size,
					r->swap, 0, &why);

		if (err)	/* it parsed once: only memory can fail */
			return cs_error(r->eb, err, "%s: feature %d section at "
					"offset %#" PRIx64 ": %s", r->path,
					sec[k].bit, sec[k].off,
					err == -ENOMEM ? "out of memory" : why);
	}
	return 0;
}

/*
 * A header whose data size is 0 was left by a recorder that died before
 * rewriting it (its data then runs to the end of the file), or belongs to
 * a finished file that holds no records. Only the second has a feature
 * section table right after the (empty) data whose sections all lie
 * between that table and the end of the file.
 */
static bool finished_without_records(const struct cs_reader *r,
				     const struct cs_perf_file_header *h)
{
	uint64_t nr = 0, toff = h->data.offset;

	for (int i = 0; i < 4; i++)
		nr += (uint64_t)__builtin_popcountll(h->adds_features[i]);
	if (!nr || !in_file(r, toff, nr * 16))
		return false;
	for (uint64_t k = 0; k < nr; k++) {
		uint64_t off = cs_ld64x(r->map + toff + k * 16, r->swap);
		uint64_t size = cs_ld64x(r->map + toff + k * 16 + 8, r->swap);

		if (off < toff + nr * 16 || !in_file(r, off, size))
			return false;
	}
	return true;
}

#define RELEASE_LAG	(32u << 20)
#define RELEASE_STEP	(8u << 20)
#define MAP_AHEAD	(8u << 20)

/* Called wherever one of the four changes. */
static void set_long_way(struct cs_reader *r)
{
	r->long_way = r->pipe || r->swap || !r->map || r->z_active;
}

/* The first position at which cs_reader_next() gives back passed pages
 * (pos - released >= RELEASE_LAG + RELEASE_STEP) or maps the next window
 * (pos + MAP_AHEAD / 2 > mapped); both conditions are checked again
 * there, so an early time costs a check, never a skipped chore. */
static void plan_chores(struct cs_reader *r)
{
	uint64_t release = r->released + RELEASE_LAG + RELEASE_STEP;
	uint64_t map = r->mapped == UINT64_MAX ? UINT64_MAX :
		       r->mapped < MAP_AHEAD / 2 ? 0 :
		       r->mapped - MAP_AHEAD / 2 + 1;

	r->chores_at = release < map ? release : map;
}

static int open_file(struct cs_reader *r, size_t size)
{
	struct cs_perf_file_header h;
	void *m;

	if (size < sizeof(h))
		return cs_error(r->eb, -EBADMSG, "%s: ends at offset %#zx, too "
				"short for a perf.data header (104 bytes)",
				r->path, size);
	m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, r->fd, 0);
	if (m == MAP_FAILED)
		return cs_error(r->eb, -errno, "%s: mmap: %s", r->path,
				strerror(errno));
	r->map = m;
	set_long_way(r);
	r->map_size = size;
	/* advice values are not bits: one call each */
	madvise(m, size, MADV_SEQUENTIAL);
	madvise(m, size, MADV_WILLNEED);
	memcpy(&h, r->map, sizeof(h));
	if (r->swap) {
		uint64_t *w = (uint64_t *)&h;

		for (size_t i = 0; i < sizeof(h) / 8; i++)
			w[i] = __builtin_bswap64(w[i]);
	}
	if (h.size != sizeof(h))
		return cs_error(r->eb, -EBADMSG, "%s: header at offset 0x8 claims "
				"%" PRIu64 " bytes, 104 expected", r->path, h.size);
	r->feat.info.data_offset = h.data.offset;
	r->feat.info.data_size = h.data.size;
	if (h.data.offset % 8 || h.data.offset < sizeof(h) || h.data.offset > size)
		return cs_error(r->eb, -EBADMSG, "%s: data section offset %#"
				PRIx64 " is misaligned, inside the header or past the end of the "
				"file (%zu bytes)", r->path, h.data.offset, size);
	r->pos = h.data.offset;
	r->mapped = r->pos & ~(uint64_t)(PAGE - 1);
	plan_chores(r);
	if (!h.data.size && !finished_without_records(r, &h)) {
		/* a recorder that died before rewriting the header */
		r->open_ended = true;
		r->data_end = r->claimed_end = size;
		r->feat.info.data_size = size - h.data.offset;
	} else {
		r->claimed_end = h.data.offset + h.data.size;
		if (r->claimed_end < h.data.offset)
			r->claimed_end = UINT64_MAX;
		r->data_end = r->claimed_end < size ? r->claimed_end : size;
	}
	int err = read_attrs(r, &h);

	if (err)
		return err;
	if (!r->open_ended)
		return read_features(r, &h);
	return 0;
}

/* ---- pipe mode ---------------------------------------------------------- */

/* Waits until the stream has bytes (or its end) or wake_fd is readable;
 * whether it was the latter. */
static bool woken(struct cs_reader *r)
{
	struct pollfd p[2] = {
		{ .fd = r->fd, .events = POLLIN },
		{ .fd = r->wake_fd, .events = POLLIN },
	};

	while (poll(p, 2, -1) < 0)
		if (errno != EINTR)
			return false;	/* the read then says what is wrong */
	return p[1].revents != 0;
}

/* Makes at least n bytes (n <= PIPE_BUF_CAP) available at buf + buf_pos.
 * Returns 1, 0 at the end of input with fewer than n, or -errno. Bytes
 * before buf_pos are dropped when room is needed: the caller is done with
 * them (records handed out from the buffer live until the next call). */
static int fill(struct cs_reader *r, size_t n)
{
	while (r->buf_len - r->buf_pos < n) {
		ssize_t got;

		if (r->eof)
			return 0;
		if (r->buf_pos + n > PIPE_BUF_CAP || r->buf_pos == r->buf_len) {
			/* at most a part of one record moves */
			memmove(r->buf, r->buf + r->buf_pos, r->buf_len - r->buf_pos);
			r->stream_off += r->buf_pos;
			r->buf_len -= r->buf_pos;
			r->buf_pos = 0;
		}
		if (r->read_err)
			return cs_error(r->eb, r->read_err, "%s: read: %s",
					r->path, strerror(-r->read_err));
		if (r->wake_fd >= 0 && woken(r)) {
			r->read_err = -ECANCELED;
			return cs_error(r->eb, r->read_err, "%s: read: stopped",
					r->path);
		}
		got = read(r->fd, r->buf + r->buf_len, PIPE_BUF_CAP - r->buf_len);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			/* kept: a peek that failed leaves the error to the
			 * read that follows it, on whichever thread */
			r->read_err = -errno;
			return cs_error(r->eb, r->read_err, "%s: read: %s",
					r->path, strerror(errno));
		}
		if (!got)
			r->eof = true;
		r->buf_len += (size_t)got;
	}
	return 1;
}

/* The payload of a HEADER_TRACING_DATA record is the TRACING_DATA feature
 * of a pipe: kept (the first one, if the header had none) for readers of
 * tracepoint fields. */
#define TRACING_DATA_MAX (256u << 20)

static int keep_pipe_payload(struct cs_reader *r, uint32_t type, uint64_t n,
			     uint64_t off)
{
	if (type != CS_RECORD_HEADER_TRACING_DATA || !n ||
	    r->feat.raw[CS_FEAT_TRACING_DATA])
		return 0;
	if (n > TRACING_DATA_MAX)
		return rerr(r, type, off, "more than 256 MiB of tracing data");
	r->pipe_keep = malloc((size_t)n);
	if (!r->pipe_keep)
		return cs_error(r->eb, -ENOMEM, "%s: out of memory", r->path);
	r->pipe_kept = 0;
	return 0;
}

static void kept_pipe_payload(struct cs_reader *r)
{
	r->feat.owned[CS_FEAT_TRACING_DATA] = r->pipe_keep;
	r->feat.raw[CS_FEAT_TRACING_DATA] = r->pipe_keep;
	r->feat.raw_size[CS_FEAT_TRACING_DATA] = r->pipe_kept;
	r->pipe_keep = NULL;
}

static int drop_pipe_bytes(struct cs_reader *r)
{
	while (r->pipe_skip) {
		size_t have = r->buf_len - r->buf_pos;
		size_t n = have < r->pipe_skip ? have : (size_t)r->pipe_skip;
		int err;

		if (r->pipe_keep) {
			memcpy(r->pipe_keep + r->pipe_kept, r->buf + r->buf_pos, n);
			r->pipe_kept += n;
		}
		r->buf_pos += n;
		r->pipe_skip -= n;
		if (!r->pipe_skip) {
			if (r->pipe_keep)
				kept_pipe_payload(r);
			break;
		}
		err = fill(r, 1);
		if (err < 0)
			return err;
		if (!err)
			return cs_error(r->eb, -EBADMSG, "%s: stream ends inside a "
					"payload at offset %#" PRIx64, r->path,
					r->stream_off + r->buf_pos);
	}
	return 0;
}

/* The stream's 16-byte header; the buffer may already hold its bytes. */
static int open_pipe(struct cs_reader *r)
{
	uint64_t hsize;
	int err;

	r->pipe = true;
	set_long_way(r);
	r->feat.info.pipe_mode = true;
	if (!r->buf) {
		r->buf = malloc(PIPE_BUF_CAP);
		if (!r->buf)
			return -ENOMEM;
	}
	err = fill(r, 16);
	if (err < 0)
		return err;
	if (!err)
		return cs_error(r->eb, -EBADMSG, "%s: ends at offset %#zx, too "
				"short for a perf.data header", r->path,
				r->buf_len);
	hsize = cs_ld64x(r->buf + 8, r->swap);
	if (hsize != 16)
		return cs_error(r->eb, -EBADMSG, "%s: header at offset 0x8 claims "
				"%" PRIu64 " bytes: a file-mode perf.data cannot "
				"be read from a pipe, pass it as a file", r->path,
				hsize);
	r->buf_pos = 16;
	return 0;
}

/* Without CLOCK_DATA, the clock is the one the events asked for. */
static void clockid_from_attr(struct cs_reader *r)
{
	const struct cs_evsel *e = cs_evlist_get(r->evlist, 0);

	if (r->feat.info.clockid < 0 && e &&
	    (cs_evsel_attr(e)->flags & CS_ATTR_USE_CLOCKID))
		r->feat.info.clockid = cs_evsel_attr(e)->clockid;
}

/* ---- open/close ---------------------------------------------------------- */

int cs_reader_open(const char *path, int fd, struct cs_errbuf *eb,
		   struct cs_reader **out)
{
	struct cs_reader *r = calloc(1, sizeof(*r));
	uint8_t head[16];
	struct stat st;
	bool regular;
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->eb = eb ? eb : &r->own_eb;
	r->fd = -1;
	r->wake_fd = -1;
	r->chores_at = UINT64_MAX;	/* a pipe's: no mapping to look after */
	r->long_way = true;		/* until the file is mapped */
	r->feat.info.clockid = -1;
	if (fd >= 0)
		r->path = strdup(path ? path : "(fd)");
	else
		r->path = strdup(!strcmp(path, "-") ? "(stdin)" : path);
	err = r->path ? cs_evlist_new(&r->evlist) : -ENOMEM;
	if (err)
		goto fail;
	if (fd >= 0) {
		r->fd = fd;
	} else if (!strcmp(path, "-")) {
		r->fd = STDIN_FILENO;
	} else {
		r->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0) {
			err = cs_error(r->eb, -errno, "%s: %s", path, strerror(errno));
			goto fail;
		}
		r->own_fd = true;
	}
	if (fstat(r->fd, &st) < 0) {
		err = cs_error(r->eb, -errno, "%s: %s", r->path, strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		err = cs_error(r->eb, -EISDIR, "%s: is a directory (the "
			       "perf record --threads layout is not read)",
			       r->path);
		goto fail;
	}
	regular = S_ISREG(st.st_mode);
	if (regular) {
		ssize_t got = pread(r->fd, head, sizeof(head), 0);

		if (got < 16) {
			err = cs_error(r->eb, -EBADMSG, "%s: ends at offset %#zx, "
				       "too short for a perf.data header", r->path,
				       got < 0 ? (size_t)0 : (size_t)got);
			goto fail;
		}
	} else {
		/* a pipe: peek at the magic through the stream buffer */
		r->buf = malloc(PIPE_BUF_CAP);
		err = r->buf ? fill(r, 16) : -ENOMEM;
		if (err <= 0) {
			if (!err)
				err = cs_error(r->eb, -EBADMSG, "%s: ends at offset "
					       "%#zx, too short for a perf.data "
					       "header", r->path, r->buf_len);
			goto fail;
		}
		memcpy(head, r->buf, 16);
	}
	if (cs_ld64(head) == CS_PERF_MAGIC2_SWAPPED) {
		r->swap = true;
		set_long_way(r);
	} else if (cs_ld64(head) != CS_PERF_MAGIC2) {
		err = cs_error(r->eb, -EBADMSG, "%s: not a perf.data file (no "
			       "PERFILE2 magic at offset 0x0)", r->path);
		goto fail;
	}
	r->feat.info.big_endian = r->swap !=
		(__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	if (!regular) {
		err = open_pipe(r);
	} else if (cs_ld64x(head + 8, r->swap) == 16) {
		/* a stream saved to a file (perf record -o - > f) */
		if (lseek(r->fd, 0, SEEK_SET) < 0)
			err = cs_error(r->eb, -errno, "%s: %s", r->path,
				       strerror(errno));
		else
			err = open_pipe(r);
	} else {
		err = open_file(r, (size_t)st.st_size);
	}
	if (err)
		goto fail;
	r->scratch = malloc(MAX_RECORD);
	r->zcopy = malloc(MAX_RECORD);
	if (!r->scratch || !r->zcopy) {
		err = -ENOMEM;
		goto fail;
	}
	clockid_from_attr(r);
	*out = r;
	return 0;
fail:
	if (err == -ENOMEM)
		cs_error(r->eb, err, "%s: out of memory", r->path ? r->path : path);
	cs_reader_free(r);
	return err;
}

void cs_reader_free(struct cs_reader *r)
{
	if (!r)
		return;
	cs_zstream_free(r->z);		/* its thread reads the mapping */
	if (r->map)
		munmap((void *)r->map, r->map_size);
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	free(r->buf);
	free(r->pipe_keep);
	free(r->scratch);
	free(r->zcopy);
	cs_feat_store_free(&r->feat);
	cs_evlist_free(r->evlist);
	free(r->path);
	free(r);
}

const struct cs_evlist *cs_reader_evlist(const struct cs_reader *r)
{
	return r->evlist;
}

const struct cs_file_info *cs_reader_info(const struct cs_reader *r)
{
	return &r->feat.info;
}

const char *cs_reader_path(const struct cs_reader *r)
{
	return r->path;
}

uint64_t cs_reader_total(const struct cs_reader *r)
{
	return r->pipe ? 0 : r->map_size;
}

bool cs_reader_truncated(const struct cs_reader *r)
{
	return r->truncated;
}

const char *cs_reader_warning(const struct cs_reader *r)
{
	return r->warning.msg[0] ? r->warning.msg : NULL;
}

int cs_reader_feature(const struct cs_reader *r, int feat, const void **data,
		      size_t *size)
{
	if (feat < 0 || feat >= CS_FEAT_LAST || !r->feat.raw[feat])
		return -ENOENT;
	*data = r->feat.raw[feat];
	*size = r->feat.raw_size[feat];
	return 0;
}

int cs_reader_for_each_build_id(const struct cs_reader *r, cs_build_id_fn fn,
				void *ctx)
{
	for (size_t i = 0; i < r->feat.nr_bids; i++) {
		const struct cs_build_id_entry *b = &r->feat.bids[i];
		int err = fn(ctx, b->pid, b->misc, b->id, b->size, b->path);

		if (err)
			return err;
	}
	return 0;
}

/* ---- records ------------------------------------------------------------- */

/* perf's cpu map (CPU_MAP records, EVENT_UPDATE of type CPUS): a u16
 * type, then cpus, a mask or a range. The bytes it takes, or 0 when it
 * cannot be told. */
static size_t cpu_map_size(const uint8_t *p, size_t n)
{
	if (n < 4)
		return 0;
	switch (cs_ld16(p)) {
	case 0:				/* u16 nr, u16 cpu[nr] */
		return 4 + 2 * (size_t)cs_ld16(p + 2);
	case 1:				/* u16 nr, u16 long_size, masks */
		if (n < 6)
			return 0;
		if (cs_ld16(p + 4) == 4)
			return 6 + 4 * (size_t)cs_ld16(p + 2);
		if (cs_ld16(p + 4) == 8)
			return 8 + 8 * (size_t)cs_ld16(p + 2);
		return 0;
	case 2:				/* u8 any, u8 pad, u16 start, u16 end */
		return 8;
	}
	return 0;
}

/* The bytes of an EVENT_UPDATE's payload (after type and id), or 0. */
static size_t event_update_size(const uint8_t *rec, size_t size)
{
	const uint8_t *nul;

	switch (cs_ld64(rec + 8)) {
	case 0:				/* UNIT, NAME: a string */
	case 2:
		nul = memchr(rec + 24, '\0', size - 24);
		return nul ? (size_t)(nul - (rec + 24)) + 1 : 0;
	case 1:				/* SCALE: a double */
		return 8;
	case 3:				/* CPUS */
		return cpu_map_size(rec + 24, size - 24);
	}
	return 0;
}

/* A body of have bytes holds a payload of need (0: unknown) and less than
 * slack bytes of padding: more than that is a damaged size. */
static bool padded_within(size_t have, size_t need, size_t slack)
{
	return !need || (need <= have && have - need < slack);
}

/* Records that change what the reader knows: events, names, features,
 * build ids. rec is native and aligned here. */
static int absorb(struct cs_reader *r, const uint8_t *rec, size_t size,
		  uint64_t off)
{
	uint32_t type = cs_ld32(rec);
	const char *why = NULL;
	int err = 0;

	switch (type) {
	/* records of a fixed shape: another size is a damaged one that
	 * swallowed what followed it (or stops inside itself) */
	case CS_RECORD_FINISHED_ROUND:
	case CS_RECORD_FINISHED_INIT:
		if (size != 8)
			return rerr(r, type, off, "claims more than its 8 bytes");
		break;
	case CS_RECORD_TIME_CONV:	/* 3 u64s, 5 and 8 flag bytes since 5.16 */
		if (size != 32 && size != 56)
			return rerr(r, type, off, "neither 32 nor 56 bytes");
		break;
	case CS_RECORD_ID_INDEX:	/* 32-byte entries, then 16 more each */
	case CS_RECORD_THREAD_MAP: {	/* 24-byte entries */
		uint64_t nr = size >= 16 ? cs_ld64(rec + 8) : UINT64_MAX;
		uint64_t body = size >= 16 ? size - 16 : 1;
		uint64_t entry = type == CS_RECORD_ID_INDEX ? 32 : 24;

		if (nr > body / entry || (body != nr * entry &&
		    (type != CS_RECORD_ID_INDEX || body != nr * 48)))
			return rerr(r, type, off, "entries do not fill its size");
		break;
	}
	case CS_RECORD_HEADER_ATTR: {
		struct cs_perf_attr a;
		uint32_t asz;

		if (!r->pipe)
			return 0;	/* file mode: the attr section rules */
		if (size < 8 + CS_PERF_ATTR_SIZE_VER0)
			return rerr(r, type, off, "shorter than an attr");
		asz = cs_ld32(rec + 12);
		if (!asz)
			asz = CS_PERF_ATTR_SIZE_VER0;
		if (asz < CS_PERF_ATTR_SIZE_VER0 || asz > size - 8)
			return rerr(r, type, off, "attr size out of bounds");
		memset(&a, 0, sizeof(a));
		memcpy(&a, rec + 8, asz < sizeof(a) ? asz : sizeof(a));
		if (a.size > sizeof(a))
			a.size = sizeof(a);
		if ((size - 8 - asz) % 8)
			return rerr(r, type, off, "ids not a whole number of u64");
		err = cs_evlist_add(r->evlist, &a, NULL,
				    (const uint64_t *)(const void *)(rec + 8 + asz),
				    (size - 8 - asz) / 8);
		if (err == -EINVAL)
			return rerr(r, type, off, "places its sample id "
				    "differently from the first event");
		if (!err && (err = check_unique_ids(r, off)))
			return err;
		if (!err)
			clockid_from_attr(r);
		break;
	}
	case CS_RECORD_CPU_MAP:
		if (size > 8 && !padded_within(size - 8, cpu_map_size(rec + 8, size - 8), 8))
			return rerr(r, type, off, "cpu map does not fill its size");
		break;
	case CS_RECORD_EVENT_UPDATE: {
		/* type NAME (2): the name string follows type and id */
		const struct cs_evsel *e;
		size_t n;

		if (size < 24)
			return rerr(r, type, off, "shorter than 24 bytes");
		/* perf sizes it with its payload union (16 bytes) as well */
		if (!padded_within(size - 24, event_update_size(rec, size), 24))
			return rerr(r, type, off, "its payload does not fill its size");
		if (cs_ld64(rec + 8) != 2)
			return 0;
		e = cs_evlist_find(r->evlist, cs_ld64(rec + 16));
		n = strnlen((const char *)rec + 24, size - 24);
		if (e && n) {
			char name[256];

			if (n >= sizeof(name))
				n = sizeof(name) - 1;
			memcpy(name, rec + 24, n);
			name[n] = '\0';
			err = cs_evlist_set_name(r->evlist, e->index, name);
		}
		break;
	}
	case CS_RECORD_HEADER_FEATURE: {
		uint64_t feat;
		void *copy;

		if (size < 16)
			return rerr(r, type, off, "shorter than 16 bytes");
		feat = cs_ld64(rec + 8);
		if (feat >= CS_FEAT_LAST)
			return 0;
		/* the stream buffer is reused: keep our own copy */
		copy = malloc(size - 16 ? size - 16 : 1);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, rec + 16, size - 16);
		free(r->feat.owned[feat]);
		r->feat.owned[feat] = copy;
		err = cs_feat_parse(&r->feat, r->evlist, (int)feat, copy,
				    size - 16, r->swap, 7, &why);
		if (err == -EBADMSG)
			return rerr(r, type, off, why ? why : "malformed feature");
		break;
	}
	case CS_RECORD_HEADER_BUILD_ID: {
		/* our copy of the record is native: pass swap = false */
		err = cs_feat_add_build_id(&r->feat, rec, size, false, &why);
		if (err == -EBADMSG)
			return rerr(r, type, off, why);
		break;
	}
	default:
		break;
	}
	if (err)
		return cs_error(r->eb, err, "%s: %s record at offset %#" PRIx64
				": %s", r->path, cs_record_type_name(type), off,
				strerror(-err));
	return 0;
}

/*
 * What every record header must hold, wherever it comes from: a kernel
 * record's size is a multiple of 8 (the kernel aligns every record), and
 * no type reaches 128 (perf's own go to 86). A header that breaks this is
 * where the data went wrong: reading on would take garbage for records.
 */
static int check_header(struct cs_reader *r, uint32_t type, size_t size,
			uint64_t off)
{
	char m[64];

	if (type < CS_RECORD_HEADER_ATTR && (size & 7)) {
		snprintf(m, sizeof(m), "size %zu is not a multiple of 8", size);
		return rerr(r, type, off, m);
	}
	if (type >= 128)
		return cs_error(r->eb, -EBADMSG, "%s: record at offset %#" PRIx64
				" has type %u, which no perf.data has: the data "
				"is damaged here", r->path, off, type);
	return 0;
}

/* Payload bytes that follow some records without counting in their size. */
static int payload_after(struct cs_reader *r, const uint8_t *rec, size_t size,
			 uint64_t off, uint64_t *n)
{
	uint32_t type = cs_ld32(rec);

	*n = 0;
	if (type == CS_RECORD_AUXTRACE) {
		if (size < 16)
			return rerr(r, type, off, "shorter than 16 bytes");
		*n = cs_ld64(rec + 8);
	} else if (type == CS_RECORD_HEADER_TRACING_DATA) {
		if (size < 12)
			return rerr(r, type, off, "shorter than 12 bytes");
		*n = ((uint64_t)cs_ld32(rec + 8) + 7) & ~7ULL;
	}
	return 0;
}

/* What every record read the long way takes once it is native: a size
 * that wrapped (wrapped: compressed2_wrapped_size()'s, else 0) written
 * back into its header, the header checked, and the payload after it
 * measured into *n. */
static int settle(struct cs_reader *r, const uint8_t *rec, uint32_t type,
		  size_t size, size_t wrapped, uint64_t off, uint64_t *n)
{
	int err;

	if (wrapped)
		cs_st16((uint8_t *)(uintptr_t)rec + 6, (uint16_t)size);
	err = check_header(r, type, size, off);
	if (err)
		return err;
	return payload_after(r, rec, size, off, n);
}

/*
 * perf 6.16+ writes COMPRESSED2 with header.size = ALIGN(16 + data_size, 8)
 * stored in a u16: when 16 + data_size is 65529..65535 that is 65536 and
 * wraps to 0, and the padding is not written. Such a record is whole in
 * 16 + data_size bytes; returns that size, or 0 for any other record.
 * (When perf's size wraps over several sub-records it cannot be told from
 * corruption and stays an error.)
 */
static size_t compressed2_wrapped_size(uint32_t type, uint16_t hsize,
				       const uint8_t *rec, size_t have, bool swap)
{
	uint64_t want;

	if (type != CS_RECORD_COMPRESSED2 || hsize != 0 || have < 16)
		return 0;
	want = 16 + cs_ld64x(rec + 8, swap);
	if (want < 65529 || want > 65535)
		return 0;
	return (size_t)want;
}

/* Native, aligned bytes of a record found at src: the same pointer when it
 * can be, else a copy in scratch. A caller that must change the bytes of a
 * record in a read-only mapping passes *stable = false to get the copy. */
static const uint8_t *nativize(struct cs_reader *r, uint8_t *src, bool writable,
			       size_t size, uint64_t off, bool *stable, int *err)
{
	uint8_t *rec = src;
	const char *why;

	*err = 0;
	if (r->swap || ((uintptr_t)src & 7) || !*stable) {
		if (!writable || ((uintptr_t)src & 7)) {
			memcpy(r->scratch, src, size);
			rec = r->scratch;
			*stable = false;
		}
	}
	if (r->swap) {
		cs_swap_header(rec);
		why = cs_swap_body(r->evlist, rec, size);
		if (why) {
			*err = rerr(r, cs_ld32(rec), off, why);
			return NULL;
		}
	}
	return rec;
}

static int hand_out(struct cs_reader *r, struct cs_record *out,
		    const uint8_t *rec, size_t size, uint64_t off, bool stable)
{
	uint32_t type = cs_ld32(rec);
	int err;

	err = absorb(r, rec, size, off);
	if (err)
		return err;
	if (type == CS_RECORD_COMPRESSED || type == CS_RECORD_COMPRESSED2) {
		const uint8_t *data = rec + 8;
		size_t n = size - 8;

		if (type == CS_RECORD_COMPRESSED2) {
			uint64_t ds;

			if (size < 16)
				return rerr(r, type, off, "shorter than 16 bytes");
			ds = cs_ld64(rec + 8);
			if (ds > size - 16)
				return rerr(r, type, off, "data_size exceeds the "
					    "record");
			data = rec + 16;
			n = (size_t)ds;
		}
		if (r->z_active)
			return rerr(r, type, off, "compressed record inside a "
				    "compressed payload");
		if (!r->z) {			/* on first use */
			if (cs_zstream_new(&r->z))
				return cs_error(r->eb, -ENOMEM, "%s: out of "
						"memory", r->path);
			/* without the thread, the reader inflates */
			if (r->z_ahead && r->map)
				(void)cs_zstream_ahead(r->z, r->map, off,
						       r->data_end, r->swap);
		}
		/* the payload is read lazily, after scratch is reused */
		if (rec == r->scratch) {
			memcpy(r->zcopy, rec, size);
			data = r->zcopy + (data - rec);
		}
		cs_zstream_feed(r->z, off, data, n);
		r->z_active = true;
		set_long_way(r);
		r->z_offset = off;
		r->z_type = type;
	}
	out->bytes = rec;
	out->size = size;
	out->offset = off;
	out->type = type;
	out->stable = stable;
	return 1;
}

static const char *z_type_name(const struct cs_reader *r)
{
	return r->z_type == CS_RECORD_COMPRESSED2 ? "COMPRESSED2" : "COMPRESSED";
}

static int next_compressed(struct cs_reader *r, struct cs_record *out)
{
	const char *why = NULL;
	const uint8_t *rec;
	void *raw;
	size_t size;
	uint64_t n;
	bool stable = false;
	int err;

	err = cs_zstream_next(r->z, r->swap, &raw, &size, &why);
	if (err < 0)
		return cs_error(r->eb, -EBADMSG, "%s: %s record at offset %#"
				PRIx64 ": zstd: %s", r->path, z_type_name(r),
				r->z_offset, why);
	if (!err) {
		r->z_active = false;
		set_long_way(r);
		return 0;
	}
	rec = nativize(r, raw, true, size, r->z_offset, &stable, &err);
	if (!rec)
		return err;
	err = settle(r, rec, cs_ld32(rec), size, 0, r->z_offset, &n);
	if (err)
		return err;
	cs_zstream_skip(r->z, n);
	return hand_out(r, out, rec, size, r->z_offset, false);
}

/*
 * The mapping is read a record at a time, and each record's address is
 * the one before plus its size: a chain of loads that the hardware
 * prefetchers do not follow across pages, so each new line would be
 * waited for from memory. Asking for every line a fixed distance ahead
 * turns that wait into a stream (on a 2-core VM: 41 -> 20 ns a record
 * for the walk alone, bench/run.sh's pipeline rows 0.25x -> 0.3x cat).
 */
#define FETCH_AHEAD	8192u
#define LINE		64u
#define BIG_RECORD	2048u

static inline void fetch_ahead(struct cs_reader *r, size_t size)
{
	uint64_t want = r->pos + FETCH_AHEAD;

	/* a big record (a sample's user stack copy) is mostly not read: ask
	 * only for the next header, and stream again from there */
	if (size > BIG_RECORD) {
		r->fetched = r->pos & ~(uint64_t)(LINE - 1);
		__builtin_prefetch(r->map + r->fetched);
		return;
	}
	/* The usual record: the window moved on by its size, which spans at
	 * most four lines; each is asked for without a loop, whose trip
	 * count (one line or two or three, as records straddle lines)
	 * changes from record to record in no order a branch predictor
	 * learns (stitch_only, deferred: -3%). A line asked for twice costs
	 * next to nothing. */
	if (size <= 3 * LINE && r->fetched + size >= want &&
	    r->fetched <= want && want <= r->data_end) {
		const uint8_t *end = r->map + want;

		__builtin_prefetch(end - 1);
		__builtin_prefetch(end - 1 - LINE);
		__builtin_prefetch(end - 1 - 2 * LINE);
		__builtin_prefetch(end - size);
		r->fetched = want;
		return;
	}
	if (want > r->data_end)
		want = r->data_end;
	if (r->fetched < r->pos)	/* the start, or a record read the long way */
		r->fetched = r->pos & ~(uint64_t)(LINE - 1);
	for (; r->fetched < want; r->fetched += LINE)
		__builtin_prefetch(r->map + r->fetched);
}

/*
 * The common record of a mapped file (!r->long_way: native, mapped, not
 * inside a compressed payload): aligned, a kernel type (< 64,
 * so no payload after it, nothing to absorb, not COMPRESSED) that fits.
 * It goes out as a pointer into the mapping with no more checks. Returns
 * 1, or 0 to take the long way (next_file), which sees everything else.
 */
static inline int next_mapped(struct cs_reader *r, struct cs_record *out)
{
	uint64_t off = r->pos, left = r->data_end - r->pos;
	const uint8_t *rec = r->map + off;
	uint32_t type;
	uint16_t size;

	if (left < 8 || ((uintptr_t)rec & 7))
		return 0;
	type = cs_ld32(rec);
	size = cs_ld16(rec + 6);
	if (type >= CS_RECORD_HEADER_ATTR || size < 8 || size > left || (size & 7))
		return 0;
	r->pos += size;
	fetch_ahead(r, size);
	out->bytes = rec;
	out->size = size;
	out->offset = off;
	out->type = type;
	out->stable = true;
	out->time = cs_evlist_kernel_record_time(r->evlist, rec, size, type);
	return 1;
}

static int next_file(struct cs_reader *r, struct cs_record *out)
{
	uint64_t off = r->pos, left = r->data_end - r->pos, n;
	const uint8_t *rec;
	uint8_t hdr[8];
	size_t wrapped;
	uint16_t size;
	uint32_t type;
	bool stable = true;
	int err;

	if (!left) {
		if (r->open_ended)
			r->truncated = true;
		if (r->data_end < r->claimed_end)
			return cs_error(r->eb, -EBADMSG, "%s: data ends at offset "
					"%#" PRIx64 ", the header says %#" PRIx64
					": file truncated", r->path, off,
					r->claimed_end);
		return 0;
	}
	if (left < 8) {
		if (r->open_ended) {
			r->truncated = true;
			return 0;
		}
		return cs_error(r->eb, -EBADMSG, "%s: record at offset %#" PRIx64
				" is cut short: %" PRIu64 " bytes remain", r->path,
				off, left);
	}
	memcpy(hdr, r->map + off, 8);
	if (r->swap)
		cs_swap_header(hdr);
	type = cs_ld32(hdr);
	size = cs_ld16(hdr + 6);
	wrapped = compressed2_wrapped_size(type, size, r->map + off,
					   (size_t)(left < 16 ? left : 16), r->swap);
	if (wrapped && wrapped <= left) {
		size = (uint16_t)wrapped;
		stable = false;		/* we fix the size in a copy */
	}
	if (size < 8 || size > left) {
		char b[24];

		if (size >= 8 && r->open_ended) {
			r->truncated = true;
			return 0;
		}
		return cs_error(r->eb, -EBADMSG, "%s: %s record at offset %#"
				PRIx64 " claims %u bytes, %" PRIu64 " remain",
				r->path, tname(type, b, sizeof(b)), off, size,
				left);
	}
	rec = nativize(r, (uint8_t *)(uintptr_t)(r->map + off), false, size,
		       off, &stable, &err);
	if (!rec)
		return err;
	err = settle(r, rec, type, size, wrapped, off, &n);
	if (err)
		return err;
	if (n > left - size)
		return rerr(r, type, off, "payload runs past the data section");
	if (type == CS_RECORD_HEADER_TRACING_DATA && n &&
	    !r->feat.raw[CS_FEAT_TRACING_DATA]) {
		/* a pipe saved as a file: the mapping keeps the payload */
		r->feat.raw[CS_FEAT_TRACING_DATA] = r->map + off + size;
		r->feat.raw_size[CS_FEAT_TRACING_DATA] = (size_t)n;
	}
	r->pos += size + n;
	return hand_out(r, out, rec, size, off, stable);
}

static int next_pipe(struct cs_reader *r, struct cs_record *out)
{
	uint64_t off, n;
	const uint8_t *rec;
	size_t wrapped = 0;
	uint8_t *at;
	uint16_t size;
	uint32_t type;
	bool stable = false;
	int err;

	err = drop_pipe_bytes(r);
	if (err)
		return err;
	err = fill(r, 8);
	if (err < 0)
		return err;
	off = r->stream_off + r->buf_pos;
	if (!err) {
		if (r->buf_len == r->buf_pos)
			return 0;
		return cs_error(r->eb, -EBADMSG, "%s: stream ends inside a "
				"record header at offset %#" PRIx64, r->path, off);
	}
	at = r->buf + r->buf_pos;
	type = cs_ld32x(at, r->swap);
	size = cs_ld16(at + 6);
	if (r->swap)
		size = __builtin_bswap16(size);
	if (type == CS_RECORD_COMPRESSED2 && size == 0) {
		err = fill(r, 16);
		if (err < 0)
			return err;
		at = r->buf + r->buf_pos;
		wrapped = compressed2_wrapped_size(type, size, at,
						   r->buf_len - r->buf_pos, r->swap);
		if (wrapped)
			size = (uint16_t)wrapped;
	}
	if (size < 8)
		return rerr(r, type, off, "claims under 8 bytes");
	err = fill(r, size);
	if (err < 0)
		return err;
	if (!err) {
		char m[96];

		snprintf(m, sizeof(m), "stream ends inside it (%zu of %u bytes)",
			 r->buf_len - r->buf_pos, size);
		return rerr(r, type, off, m);
	}
	at = r->buf + r->buf_pos;	/* fill() may have moved the bytes */
	r->buf_pos += size;
	stable = true;			/* the buffer is ours: no copy needed */
	rec = nativize(r, at, true, size, off, &stable, &err);
	if (!rec)
		return err;
	err = settle(r, rec, type, size, wrapped, off, &n);
	if (!err)
		err = keep_pipe_payload(r, type, n, off);
	if (err)
		return err;
	r->pipe_skip = n;
	return hand_out(r, out, rec, size, off, false);
}

/* Everything but the common record, kept out of line so that the common
 * path saves no registers. */
static __attribute__((noinline)) int next_slow(struct cs_reader *r,
						struct cs_record *rec)
{
	int ret;

	if (r->z_active) {
		ret = next_compressed(r, rec);
		if (ret)
			return ret;
	}
	ret = r->pipe ? next_pipe(r, rec) : next_file(r, rec);
	if (ret == 0 && r->z && cs_zstream_pending(r->z))
		return cs_error(r->eb, -EBADMSG, "%s: data ends inside a "
				"compressed record (%zu bytes left over from "
				"the %s record at offset %#" PRIx64 ")",
				r->path, cs_zstream_pending(r->z),
				z_type_name(r), r->z_offset);
	return ret;
}

/*
 * Pages the reader has passed are given back, so that resident memory
 * does not grow with the file. Records still held (the ordering queue
 * keeps a few rounds) stay valid: the mapping is private and never
 * written, so a page given back is read again from the page cache if it
 * is touched. The lag keeps that rare.
 */
static void release_passed(struct cs_reader *r)
{
	uint64_t upto = (r->pos - RELEASE_LAG) & ~(uint64_t)(RELEASE_STEP - 1);

	if (upto > r->released) {
		madvise((void *)(uintptr_t)(r->map + r->released),
			(size_t)(upto - r->released), MADV_DONTNEED);
		r->released = upto;
	}
}

/*
 * Pages ahead of the reader are mapped a window at a time rather than by
 * a fault at each first touch: fewer trips into the kernel, and the line
 * prefetches of fetch_ahead() land on mapped pages instead of being
 * dropped (stitch_only, five passes: -7 to -9% on both bench profiles).
 * Kernels before 5.14 refuse the advice; their reader faults as before.
 */
static void map_ahead(struct cs_reader *r)
{
	uint64_t from = r->mapped > r->pos ? r->mapped :
			r->pos & ~(uint64_t)(PAGE - 1);
	uint64_t to = from + MAP_AHEAD;

	if (to >= r->map_size) {
		to = r->map_size;
		r->mapped = UINT64_MAX;		/* the last window */
	} else {
		r->mapped = to;
	}
	if (madvise((void *)(uintptr_t)(r->map + from), (size_t)(to - from),
		    MADV_POPULATE_READ))
		r->mapped = UINT64_MAX;
}

/* A stream's next header, read into the buffer if it is not there yet
 * (the read is what cs_reader_next() would do first). */
static int peek_pipe_type(struct cs_reader *r)
{
	uint32_t t;

	if (r->pipe_skip)
		return -1;
	if (r->buf_len - r->buf_pos < 8 && fill(r, 8) <= 0)
		return -1;		/* the end, or an error the read repeats */
	t = cs_ld32(r->buf + r->buf_pos);
	return t > 0xffff ? 0xffff : (int)t;
}

int cs_reader_peek_type(struct cs_reader *r)
{
	int type = CS_ZSTREAM_PAYLOAD_DONE;
	uint32_t t;

	if (r->swap || (!r->pipe && !r->map))
		return -1;
	if (r->z_active)
		type = cs_zstream_peek_type(r->z);
	if (type != CS_ZSTREAM_PAYLOAD_DONE)
		return type;
	if (r->pipe)
		return peek_pipe_type(r);
	if (r->data_end - r->pos < 8)
		return -1;
	t = cs_ld32(r->map + r->pos);
	return t > 0xffff ? 0xffff : (int)t;	/* no such type */
}

bool cs_reader_compressed(const struct cs_reader *r)
{
	return r->z != NULL;
}

void cs_reader_set_wake(struct cs_reader *r, int wake_fd)
{
	r->wake_fd = wake_fd;
}

void cs_reader_set_errbuf(struct cs_reader *r, struct cs_errbuf *eb)
{
	r->eb = eb ? eb : &r->own_eb;
}

void cs_reader_inflate_ahead(struct cs_reader *r, bool on)
{
	r->z_ahead = on;
}

/* Inlined by the link (LTO) into its two callers (the session's read
 * loop, dump): the common record's path then runs without a call, its
 * registers saved once per loop, not per record (short entries: 73 -> 60
 * instructions a record). */
__attribute__((always_inline)) inline int
cs_reader_next(struct cs_reader *r, struct cs_record *rec)
{
	int ret;

	if (!r->long_way && next_mapped(r, rec)) {
		ret = 1;
	} else {
		ret = next_slow(r, rec);
		/* records perf synthesizes (types >= 64) carry no sample_id */
		if (ret > 0)
			rec->time = rec->type < CS_RECORD_HEADER_ATTR ?
				cs_evlist_record_time(r->evlist, rec->bytes,
						      rec->size) : CS_NO_TIME;
	}
	if (r->pos >= r->chores_at) {
		if (r->pos - r->released >= RELEASE_LAG + RELEASE_STEP)
			release_passed(r);
		if (r->pos + MAP_AHEAD / 2 > r->mapped)
			map_ahead(r);
		plan_chores(r);
	}
	return ret;
}
