/* writer.c - perf.data in file or pipe mode, buffered, optionally zstd.
 *
 * File layout (file mode): header | ids | attrs | data | feature table |
 * feature payloads. The header is written first with data.size 0 and no
 * features, and rewritten by cs_writer_finish(), so that an interrupted
 * writer leaves a file whose data runs to its end.
 *
 * Compression writes PERF_RECORD_COMPRESSED (81), the type perf 6.1 reads:
 * records are staged in chunks of CHUNK bytes (a record may straddle two
 * chunks, as with perf record -z), each chunk becomes one zstd frame in one
 * record. The record is padded to 8 bytes with a zstd skippable frame, which
 * every zstd stream decoder passes over, so records stay aligned.
 */
#include "lib/write/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zstd.h>

#include "lib/util/errbuf.h"
#include "lib/util/write_all.h"
#include "lib/write/feature.h"
#include "lib/write/swap.h"

#define OUT_BUF   (4u << 20)
#define CHUNK     61440u		/* one frame: fits a record once compressed */
#define REC_MAX   65528u
#define ATTR_SIZE CS_PERF_ATTR_SIZE_VER7
#define SKIPPABLE_MAGIC 0x184D2A50u

struct wev {
	struct cs_perf_attr attr;	/* size = ATTR_SIZE, later bits zero */
	char *name;
	uint64_t *ids;
	size_t nr_ids;
};

struct wid {
	uint64_t id;
	size_t ev;
};

struct wbid {
	int32_t pid;
	uint16_t misc;
	uint8_t size;
	uint8_t id[CS_BUILD_ID_SIZE_MAX];
	char *path;
};

struct cs_writer {
	char *path;
	int fd;
	bool own_fd;
	struct cs_writer_opts o;
	struct cs_errbuf eb;
	int err;			/* sticky: the first failure */
	bool begun, finished;

	struct wev *ev;
	size_t nr_ev;
	struct wid *ids;		/* sorted by id, for big_endian lookups */
	size_t nr_ids;

	char *str[CS_FEAT_LAST];	/* string features */
	struct cs_fbuf raw[CS_FEAT_LAST];	/* copied feature sections */
	char **argv;
	int argc;
	bool has_nrcpus;
	uint32_t online, avail;
	struct wbid *bids;
	size_t nr_bids;

	uint8_t *out;			/* output buffer */
	size_t out_len;
	uint64_t pos;			/* file offset of out[0] */
	uint64_t data_offset;
	uint64_t data_bytes;		/* bytes in the data section */
	uint64_t rec_bytes;		/* bytes of records before compression */

	uint8_t *scratch;		/* a record being swapped */

	ZSTD_CCtx *zc;
	uint8_t *zin;
	size_t zin_len;
	uint8_t *zrec;			/* one COMPRESSED record */
	uint64_t zin_total, zout_total;
};

static int fail(struct cs_writer *w, int err, const char *fmt, const char *what)
{
	if (!w->err)
		w->err = err;
	return cs_error(&w->eb, err, fmt, w->path, what);
}

static int fail_errno(struct cs_writer *w, int err, const char *what)
{
	if (!w->err)
		w->err = err;
	return cs_error(&w->eb, err, "%s: %s: %s", w->path, what, strerror(-err));
}

static int write_all(struct cs_writer *w, const void *p, size_t n)
{
	int err = cs_write_all(w->fd, p, n);

	return err ? fail_errno(w, err, "write") : 0;
}

static int out_flush(struct cs_writer *w)
{
	int err;

	if (w->err)
		return w->err;
	err = write_all(w, w->out, w->out_len);
	if (err)
		return err;
	w->pos += w->out_len;
	w->out_len = 0;
	return 0;
}

static int out_append(struct cs_writer *w, const void *p, size_t n)
{
	int err;

	if (w->err)
		return w->err;
	if (n > OUT_BUF - w->out_len) {
		err = out_flush(w);
		if (err)
			return err;
		if (n > OUT_BUF) {
			err = write_all(w, p, n);
			if (!err)
				w->pos += n;
			return err;
		}
	}
	memcpy(w->out + w->out_len, p, n);
	w->out_len += n;
	return 0;
}

static uint64_t out_offset(const struct cs_writer *w)
{
	return w->pos + w->out_len;
}

int cs_writer_open(const char *path, int fd, const struct cs_writer_opts *o,
		   struct cs_errbuf *eb, struct cs_writer **out)
{
	static const struct cs_writer_opts defaults;
	struct cs_writer *w;
	const char *name = fd >= 0 ? (path ? path : "(fd)") : path;

	*out = NULL;
	if (!name)
		return cs_error(eb, -EINVAL, "perf.data writer: no output named");
	w = calloc(1, sizeof(*w));
	if (!w)
		return cs_error(eb, -ENOMEM, "%s: out of memory", name);
	w->o = o ? *o : defaults;
	w->fd = -1;
	w->path = strdup(strcmp(name, "-") ? name : "(stdout)");
	w->out = malloc(OUT_BUF);
	w->scratch = malloc(REC_MAX + 8);
	if (!w->path || !w->out || !w->scratch) {
		cs_writer_free(w);
		return cs_error(eb, -ENOMEM, "%s: out of memory", name);
	}
	if (w->o.zstd_level > 0) {
		w->zc = ZSTD_createCCtx();
		w->zin = malloc(CHUNK);
		w->zrec = malloc(REC_MAX + 8);
		if (!w->zc || !w->zin || !w->zrec) {
			cs_writer_free(w);
			return cs_error(eb, -ENOMEM, "%s: out of memory", name);
		}
		if (ZSTD_isError(ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel,
							w->o.zstd_level))) {
			int err = cs_error(eb, -EINVAL, "%s: zstd level %d refused",
					   name, w->o.zstd_level);

			cs_writer_free(w);
			return err;
		}
	}
	if (fd >= 0) {
		w->fd = fd;
	} else if (!strcmp(path, "-")) {
		w->fd = STDOUT_FILENO;
	} else {
		w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (w->fd < 0) {
			int err = cs_error(eb, -errno, "%s: cannot create: %s", path,
					   strerror(errno));

			cs_writer_free(w);
			return err;
		}
		w->own_fd = true;
	}
	if (!w->o.pipe) {
		/* the header is rewritten at the end: the output must seek */
		off_t at = lseek(w->fd, 0, SEEK_CUR);

		if (at != 0) {
			int err = cs_error(eb, -ESPIPE, at < 0 ?
				"%s: file mode needs a seekable output (use pipe mode)" :
				"%s: file mode needs an output at offset 0", w->path);

			cs_writer_free(w);
			return err;
		}
	}
	*out = w;
	return 0;
}

int cs_writer_add_event(struct cs_writer *w, const struct cs_perf_attr *attr,
			const char *name, const uint64_t *ids, size_t nr_ids)
{
	struct wev *ev;

	if (w->begun)
		return fail(w, -EINVAL, "%s: %s", "event added after the data began");
	if (nr_ids > (REC_MAX - 8 - ATTR_SIZE) / 8)
		return fail(w, -EINVAL, "%s: %s", "too many ids for one event");
	ev = realloc(w->ev, (w->nr_ev + 1) * sizeof(*ev));
	if (!ev)
		return fail(w, -ENOMEM, "%s: %s", "out of memory");
	w->ev = ev;
	ev = &w->ev[w->nr_ev];
	memset(ev, 0, sizeof(*ev));
	/* perf 6.1 refuses attrs larger than its own 128-byte struct */
	memcpy(&ev->attr, attr, ATTR_SIZE);
	ev->attr.size = ATTR_SIZE;
	if (name && !(ev->name = strdup(name)))
		return fail(w, -ENOMEM, "%s: %s", "out of memory");
	if (nr_ids) {
		ev->ids = malloc(nr_ids * sizeof(*ids));
		if (!ev->ids) {
			free(ev->name);
			return fail(w, -ENOMEM, "%s: %s", "out of memory");
		}
		memcpy(ev->ids, ids, nr_ids * sizeof(*ids));
	}
	ev->nr_ids = nr_ids;
	w->nr_ev++;
	return 0;
}

int cs_writer_set_string(struct cs_writer *w, int feat, const char *value)
{
	char *s;

	switch (feat) {
	case CS_FEAT_HOSTNAME:
	case CS_FEAT_OSRELEASE:
	case CS_FEAT_VERSION:
	case CS_FEAT_ARCH:
	case CS_FEAT_CPUDESC:
	case CS_FEAT_CPUID:
		break;
	default:
		return fail(w, -EINVAL, "%s: %s", "not a string feature");
	}
	if (w->o.pipe && w->begun)
		return fail(w, -EINVAL, "%s: %s", "pipe mode: features go before the data");
	s = strdup(value);
	if (!s)
		return fail(w, -ENOMEM, "%s: %s", "out of memory");
	free(w->str[feat]);
	w->str[feat] = s;
	return 0;
}

int cs_writer_set_cmdline(struct cs_writer *w, int argc, const char *const *argv)
{
	char **v;

	if (w->o.pipe && w->begun)
		return fail(w, -EINVAL, "%s: %s", "pipe mode: features go before the data");
	v = calloc((size_t)argc + 1, sizeof(*v));
	if (!v)
		return fail(w, -ENOMEM, "%s: %s", "out of memory");
	for (int i = 0; i < argc; i++) {
		v[i] = strdup(argv[i]);
		if (!v[i]) {
			while (i--)
				free(v[i]);
			free(v);
			return fail(w, -ENOMEM, "%s: %s", "out of memory");
		}
	}
	for (int i = 0; i < w->argc; i++)
		free(w->argv[i]);
	free(w->argv);
	w->argv = v;
	w->argc = argc;
	return 0;
}

int cs_writer_set_nr_cpus(struct cs_writer *w, uint32_t online, uint32_t avail)
{
	if (w->o.pipe && w->begun)
		return fail(w, -EINVAL, "%s: %s", "pipe mode: features go before the data");
	w->has_nrcpus = true;
	w->online = online;
	w->avail = avail;
	return 0;
}

static int zflush(struct cs_writer *w);

/* perf's build_id_event: header, pid, 24 bytes (20 of id, then its size),
 * then the path padded; the layout of the BUILD_ID feature and of
 * HEADER_BUILD_ID records alike. */
static void put_build_id(struct cs_fbuf *b, const struct wbid *e, uint32_t type,
			 bool align8)
{
	size_t n = strlen(e->path) + 1;
	size_t len = align8 ? (36 + n + 7) / 8 * 8 - 36 : (n + 63) / 64 * 64;
	uint8_t id[24] = { 0 };

	memcpy(id, e->id, e->size);
	id[20] = e->size;
	cs_fbuf_u32(b, type);
	cs_fbuf_u16(b, e->misc | CS_MISC_BUILD_ID_SIZE);
	cs_fbuf_u16(b, (uint16_t)(36 + len));
	cs_fbuf_u32(b, (uint32_t)e->pid);
	cs_fbuf_bytes(b, id, sizeof(id));
	cs_fbuf_bytes(b, e->path, n);
	cs_fbuf_zero(b, len - n);
}

static int emit_fbuf(struct cs_writer *w, struct cs_fbuf *b)
{
	int err;

	if (b->oom) {
		cs_fbuf_free(b);
		return fail(w, -ENOMEM, "%s: %s", "out of memory");
	}
	err = out_append(w, b->p, b->len);
	cs_fbuf_free(b);
	return err;
}

int cs_writer_add_build_id(struct cs_writer *w, int32_t pid, uint16_t misc,
			   const uint8_t *build_id, size_t size, const char *path)
{
	struct wbid *e;

	if (size > CS_BUILD_ID_SIZE_MAX)
		return fail(w, -EINVAL, "%s: %s", "build id longer than 20 bytes");
	if (strlen(path) > 4000)
		return fail(w, -EINVAL, "%s: %s", "build id path too long");
	e = realloc(w->bids, (w->nr_bids + 1) * sizeof(*e));
	if (!e)
		return fail(w, -ENOMEM, "%s: %s", "out of memory");
	w->bids = e;
	e = &w->bids[w->nr_bids];
	memset(e, 0, sizeof(*e));
	e->pid = pid;
	e->misc = misc & (uint16_t)~CS_MISC_BUILD_ID_SIZE;
	e->size = (uint8_t)size;
	memcpy(e->id, build_id, size);
	e->path = strdup(path);
	if (!e->path)
		return fail(w, -ENOMEM, "%s: %s", "out of memory");
	w->nr_bids++;
	if (w->o.pipe && w->begun) {
		/* a pipe cannot go back: the record goes into the stream now,
		 * after the records written before it */
		struct cs_fbuf b = { .swap = w->o.big_endian };
		int err = w->zc ? zflush(w) : 0;

		if (err)
			return err;
		put_build_id(&b, e, CS_RECORD_HEADER_BUILD_ID, true);
		return emit_fbuf(w, &b);
	}
	return 0;
}

/* ---- header pieces ------------------------------------------------------ */

static const char *event_name(const struct wev *ev, char *buf, size_t n)
{
	if (ev->name)
		return ev->name;
	if (ev->attr.type == CS_PERF_TYPE_SOFTWARE) {
		switch (ev->attr.config) {
		case CS_PERF_COUNT_SW_CPU_CLOCK:
			return "cpu-clock";
		case CS_PERF_COUNT_SW_TASK_CLOCK:
			return "task-clock";
		case CS_PERF_COUNT_SW_DUMMY:
			return "dummy";
		}
	} else if (ev->attr.type == CS_PERF_TYPE_HARDWARE) {
		switch (ev->attr.config) {
		case CS_PERF_COUNT_HW_CPU_CYCLES:
			return "cycles";
		case CS_PERF_COUNT_HW_INSTRUCTIONS:
			return "instructions";
		}
	}
	snprintf(buf, n, "%" PRIu32 ":%#" PRIx64, ev->attr.type, ev->attr.config);
	return buf;
}

static void put_attr(struct cs_writer *w, struct cs_fbuf *b,
		     const struct cs_perf_attr *a)
{
	uint8_t raw[ATTR_SIZE];

	if (w->o.big_endian)
		cs_wswap_attr(raw, a, ATTR_SIZE);
	else
		memcpy(raw, a, ATTR_SIZE);
	cs_fbuf_bytes(b, raw, ATTR_SIZE);
}

static const char *feat_default(struct cs_writer *w, int feat,
				const struct utsname *u)
{
	if (w->str[feat])
		return w->str[feat];
	switch (feat) {
	case CS_FEAT_HOSTNAME:
		return u->nodename;
	case CS_FEAT_OSRELEASE:
		return u->release;
	case CS_FEAT_ARCH:
		return u->machine;
	case CS_FEAT_VERSION:
		return "callstitch";
	}
	return NULL;
}

/* One feature's payload into b; false if the file does not carry it. */
static bool feature_payload(struct cs_writer *w, int feat, struct cs_fbuf *b,
			    const struct utsname *u)
{
	switch (feat) {
	case CS_FEAT_BUILD_ID:
		if (!w->nr_bids)
			return false;
		for (size_t i = 0; i < w->nr_bids; i++)
			put_build_id(b, &w->bids[i], 0, false);
		return true;
	case CS_FEAT_HOSTNAME:
	case CS_FEAT_OSRELEASE:
	case CS_FEAT_VERSION:
	case CS_FEAT_ARCH:
	case CS_FEAT_CPUDESC:
	case CS_FEAT_CPUID: {
		const char *s = feat_default(w, feat, u);

		if (!s)
			return false;
		cs_fbuf_string(b, s);
		return true;
	}
	case CS_FEAT_NRCPUS: {
		uint32_t online = w->online, avail = w->avail;

		if (!w->has_nrcpus) {
			long n = sysconf(_SC_NPROCESSORS_ONLN);
			long c = sysconf(_SC_NPROCESSORS_CONF);

			online = n > 0 ? (uint32_t)n : 1;
			avail = c > 0 ? (uint32_t)c : online;
		}
		/* perf writes the available count first */
		cs_fbuf_u32(b, avail);
		cs_fbuf_u32(b, online);
		return true;
	}
	case CS_FEAT_CMDLINE:
		cs_fbuf_u32(b, (uint32_t)w->argc);
		for (int i = 0; i < w->argc; i++)
			cs_fbuf_string(b, w->argv[i]);
		return true;
	case CS_FEAT_EVENT_DESC:
		cs_fbuf_u32(b, (uint32_t)w->nr_ev);
		cs_fbuf_u32(b, ATTR_SIZE);
		for (size_t i = 0; i < w->nr_ev; i++) {
			char nb[64];

			put_attr(w, b, &w->ev[i].attr);
			cs_fbuf_u32(b, (uint32_t)w->ev[i].nr_ids);
			cs_fbuf_string(b, event_name(&w->ev[i], nb, sizeof(nb)));
			for (size_t k = 0; k < w->ev[i].nr_ids; k++)
				cs_fbuf_u64(b, w->ev[i].ids[k]);
		}
		return true;
	case CS_FEAT_COMPRESSED: {
		uint64_t ratio = w->zout_total ? w->zin_total / w->zout_total : 0;

		if (!w->zc)
			return false;
		cs_fbuf_u32(b, 1);		/* version */
		cs_fbuf_u32(b, 1);		/* ZSTD */
		cs_fbuf_u32(b, (uint32_t)w->o.zstd_level);
		cs_fbuf_u32(b, (uint32_t)(ratio > UINT32_MAX ? UINT32_MAX : ratio));
		/* the most one record decompresses to */
		cs_fbuf_u32(b, 2 * CHUNK);
		return true;
	}
	}
	if (feat > 0 && feat < CS_FEAT_LAST && w->raw[feat].len) {
		cs_fbuf_bytes(b, w->raw[feat].p, w->raw[feat].len);
		return true;
	}
	return false;
}

/* Features whose content the writer builds itself. */
static bool feature_is_built(int feat)
{
	switch (feat) {
	case CS_FEAT_BUILD_ID: case CS_FEAT_HOSTNAME: case CS_FEAT_OSRELEASE:
	case CS_FEAT_VERSION: case CS_FEAT_ARCH: case CS_FEAT_NRCPUS:
	case CS_FEAT_CPUDESC: case CS_FEAT_CPUID: case CS_FEAT_CMDLINE:
	case CS_FEAT_EVENT_DESC: case CS_FEAT_COMPRESSED:
		return true;
	}
	return false;
}

int cs_writer_set_feature_raw(struct cs_writer *w, int feat, const void *data,
			      size_t size)
{
	struct cs_fbuf *b;

	if (w->err)
		return w->err;
	/* DIR_FORMAT describes a directory of files, not the one we write */
	if (feat <= 0 || feat >= CS_FEAT_LAST || feature_is_built(feat) ||
	    feat == CS_FEAT_DIR_FORMAT)
		return fail(w, -EINVAL, "%s: %s", "not a feature that can be copied");
	if (w->o.big_endian)
		return fail(w, -EOPNOTSUPP, "%s: %s",
			    "big-endian output: a copied feature cannot be swapped");
	if (w->o.pipe && w->begun)
		return fail(w, -EINVAL, "%s: %s", "pipe mode: features go before the data");
	b = &w->raw[feat];
	b->len = 0;
	cs_fbuf_bytes(b, data, size);
	if (b->oom)
		return fail(w, -ENOMEM, "%s: %s", "out of memory");
	return 0;
}

static int cmp_wid(const void *a, const void *b)
{
	const struct wid *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int build_id_index(struct cs_writer *w)
{
	size_t n = 0;

	for (size_t i = 0; i < w->nr_ev; i++)
		n += w->ev[i].nr_ids;
	if (!n)
		return 0;
	w->ids = malloc(n * sizeof(*w->ids));
	if (!w->ids)
		return fail(w, -ENOMEM, "%s: %s", "out of memory");
	for (size_t i = 0; i < w->nr_ev; i++)
		for (size_t k = 0; k < w->ev[i].nr_ids; k++)
			w->ids[w->nr_ids++] = (struct wid){ w->ev[i].ids[k], i };
	qsort(w->ids, w->nr_ids, sizeof(*w->ids), cmp_wid);
	return 0;
}

static void put_header(struct cs_writer *w, struct cs_fbuf *b,
		       uint64_t data_size, const uint64_t feats[4])
{
	uint64_t ids_size = 0;

	for (size_t i = 0; i < w->nr_ev; i++)
		ids_size += w->ev[i].nr_ids * 8;
	cs_fbuf_u64(b, CS_PERF_MAGIC2);
	cs_fbuf_u64(b, sizeof(struct cs_perf_file_header));
	cs_fbuf_u64(b, ATTR_SIZE + sizeof(struct cs_perf_file_section));
	cs_fbuf_u64(b, sizeof(struct cs_perf_file_header) + ids_size);
	cs_fbuf_u64(b, w->nr_ev * (ATTR_SIZE + sizeof(struct cs_perf_file_section)));
	cs_fbuf_u64(b, w->data_offset);
	cs_fbuf_u64(b, data_size);
	cs_fbuf_u64(b, 0);
	cs_fbuf_u64(b, 0);
	for (int i = 0; i < 4; i++)
		cs_fbuf_u64(b, feats[i]);
}

static int begin_file(struct cs_writer *w)
{
	struct cs_fbuf b = { .swap = w->o.big_endian };
	static const uint64_t none[4];
	uint64_t off = sizeof(struct cs_perf_file_header), ids_size = 0;

	for (size_t i = 0; i < w->nr_ev; i++)
		ids_size += w->ev[i].nr_ids * 8;
	w->data_offset = off + ids_size +
			 w->nr_ev * (ATTR_SIZE + sizeof(struct cs_perf_file_section));
	put_header(w, &b, 0, none);
	for (size_t i = 0; i < w->nr_ev; i++)
		for (size_t k = 0; k < w->ev[i].nr_ids; k++)
			cs_fbuf_u64(&b, w->ev[i].ids[k]);
	for (size_t i = 0; i < w->nr_ev; i++) {
		put_attr(w, &b, &w->ev[i].attr);
		cs_fbuf_u64(&b, off);
		cs_fbuf_u64(&b, w->ev[i].nr_ids * 8);
		off += w->ev[i].nr_ids * 8;
	}
	return emit_fbuf(w, &b);
}

/* EVENT_UPDATE records of type NAME, perf's other way of naming the events
 * of a pipe. */
static void put_name_updates(struct cs_writer *w, struct cs_fbuf *b)
{
	for (size_t i = 0; i < w->nr_ev; i++) {
		char nb[64];
		const char *name = event_name(&w->ev[i], nb, sizeof(nb));
		size_t len = strnlen(name, REC_MAX / 2) + 1;
		size_t pad = (8 - len % 8) % 8;

		if (!w->ev[i].nr_ids)
			continue;
		cs_fbuf_u32(b, CS_RECORD_EVENT_UPDATE);
		cs_fbuf_u16(b, 0);
		cs_fbuf_u16(b, (uint16_t)(24 + len + pad));
		cs_fbuf_u64(b, 2);		/* PERF_EVENT_UPDATE__NAME */
		cs_fbuf_u64(b, w->ev[i].ids[0]);
		cs_fbuf_bytes(b, name, len - 1);
		cs_fbuf_zero(b, 1 + pad);
	}
}

static int begin_pipe(struct cs_writer *w)
{
	struct cs_fbuf b = { .swap = w->o.big_endian };
	struct utsname u;

	if (uname(&u))
		memset(&u, 0, sizeof(u));
	cs_fbuf_u64(&b, CS_PERF_MAGIC2);
	cs_fbuf_u64(&b, sizeof(struct cs_perf_pipe_file_header));
	for (size_t i = 0; i < w->nr_ev; i++) {
		cs_fbuf_u32(&b, CS_RECORD_HEADER_ATTR);
		cs_fbuf_u16(&b, 0);
		cs_fbuf_u16(&b, (uint16_t)(8 + ATTR_SIZE + w->ev[i].nr_ids * 8));
		put_attr(w, &b, &w->ev[i].attr);
		for (size_t k = 0; k < w->ev[i].nr_ids; k++)
			cs_fbuf_u64(&b, w->ev[i].ids[k]);
	}
	/* perf sends build ids as their own records, not as a feature */
	for (size_t i = 0; i < w->nr_bids; i++)
		put_build_id(&b, &w->bids[i], CS_RECORD_HEADER_BUILD_ID, true);
	for (int feat = 1; feat < CS_FEAT_LAST; feat++) {
		size_t start = b.len;

		/* these two come as records of their own */
		if (feat == CS_FEAT_BUILD_ID || feat == CS_FEAT_TRACING_DATA)
			continue;
		cs_fbuf_u32(&b, CS_RECORD_HEADER_FEATURE);
		cs_fbuf_u16(&b, 0);
		cs_fbuf_u16(&b, 0);
		cs_fbuf_u64(&b, (uint64_t)feat);
		if (!feature_payload(w, feat, &b, &u)) {
			b.len = start;
			continue;
		}
		cs_fbuf_zero(&b, (8 - (b.len - start) % 8) % 8);
		if (b.len - start > REC_MAX && feat == CS_FEAT_EVENT_DESC) {
			/* too many events for one record: a name each */
			b.len = start;
			put_name_updates(w, &b);
			continue;
		}
		if (b.len - start > REC_MAX) {
			cs_fbuf_free(&b);
			return fail(w, -EINVAL, "%s: %s", "a feature does not fit one record");
		}
		cs_fbuf_put_u16_at(&b, start + 6, (uint16_t)(b.len - start));
	}
	if (w->raw[CS_FEAT_TRACING_DATA].len) {
		/* a 12-byte record, then the data padded to 8 bytes, which the
		 * record's size field counts and its header does not */
		const struct cs_fbuf *td = &w->raw[CS_FEAT_TRACING_DATA];
		size_t padded = (td->len + 7) & ~(size_t)7;

		if (padded > UINT32_MAX) {
			cs_fbuf_free(&b);
			return fail(w, -EINVAL, "%s: %s", "tracing data larger than 4 GiB");
		}
		cs_fbuf_u32(&b, CS_RECORD_HEADER_TRACING_DATA);
		cs_fbuf_u16(&b, 0);
		cs_fbuf_u16(&b, 12);
		cs_fbuf_u32(&b, (uint32_t)padded);
		cs_fbuf_bytes(&b, td->p, td->len);
		cs_fbuf_zero(&b, padded - td->len);
	}
	return emit_fbuf(w, &b);
}

int cs_writer_begin(struct cs_writer *w)
{
	int err;

	if (w->err)
		return w->err;
	if (w->begun)
		return fail(w, -EINVAL, "%s: %s", "data section begun twice");
	if (!w->nr_ev)
		return fail(w, -EINVAL, "%s: %s", "no events to write");
	err = build_id_index(w);
	if (err)
		return err;
	err = w->o.pipe ? begin_pipe(w) : begin_file(w);
	if (err)
		return err;
	w->begun = true;
	if (w->o.pipe)
		w->data_offset = out_offset(w);
	return 0;
}

/* ---- data --------------------------------------------------------------- */

static int zflush(struct cs_writer *w)
{
	size_t n, pad;
	struct cs_perf_event_header h = { .type = CS_RECORD_COMPRESSED };

	if (!w->zin_len)
		return 0;
	n = ZSTD_compress2(w->zc, w->zrec + 8, REC_MAX - 8 - 15, w->zin, w->zin_len);
	if (ZSTD_isError(n))
		return fail(w, -EIO, "%s: zstd: %s", ZSTD_getErrorName(n));
	pad = (8 - (8 + n) % 8) % 8;
	if (pad) {
		/* a skippable frame is 8 bytes at least */
		uint32_t sk[2] = { SKIPPABLE_MAGIC, (uint32_t)pad };

		pad += 8;
		memset(w->zrec + 8 + n, 0, pad);
		memcpy(w->zrec + 8 + n, sk, sizeof(sk));
	}
	h.size = (uint16_t)(8 + n + pad);
	if (w->o.big_endian) {
		h.type = cs_bswap32(h.type);
		h.size = cs_bswap16(h.size);
	}
	memcpy(w->zrec, &h, sizeof(h));
	w->zin_total += w->zin_len;
	w->zout_total += 8 + n + pad;
	w->data_bytes += 8 + n + pad;
	w->zin_len = 0;
	return out_append(w, w->zrec, 8 + n + pad);
}

static int emit(struct cs_writer *w, const void *p, size_t n)
{
	const uint8_t *b = p;
	int err;

	if (!w->zc) {
		w->data_bytes += n;
		return out_append(w, p, n);
	}
	while (n) {
		size_t k = CHUNK - w->zin_len;

		if (k > n)
			k = n;
		memcpy(w->zin + w->zin_len, b, k);
		w->zin_len += k;
		b += k;
		n -= k;
		if (w->zin_len == CHUNK) {
			err = zflush(w);
			if (err)
				return err;
		}
	}
	return 0;
}

static const struct cs_perf_attr *attr_of(struct cs_writer *w, const void *rec,
					  size_t size)
{
	uint64_t id;
	size_t lo = 0, hi = w->nr_ids;

	if (w->nr_ev == 1)
		return &w->ev[0].attr;
	id = cs_wswap_record_id(&w->ev[0].attr, rec, size);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->ids[mid].id == id)
			return &w->ev[w->ids[mid].ev].attr;
		if (w->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &w->ev[0].attr;
}

int cs_writer_write(struct cs_writer *w, const void *rec, size_t size)
{
	struct cs_perf_event_header h;
	int err;

	if (w->err)
		return w->err;
	if (!w->begun || w->finished)
		return fail(w, -EINVAL, "%s: %s", "record written outside the data section");
	if (size < sizeof(h) || size % 8 || size > REC_MAX)
		return fail(w, -EINVAL, "%s: %s", "record size not 8-aligned or out of range");
	memcpy(&h, rec, sizeof(h));
	if (h.size != size)
		return fail(w, -EINVAL, "%s: %s", "record header size disagrees with its length");
	w->rec_bytes += size;
	if (w->o.big_endian) {
		memcpy(w->scratch, rec, size);
		err = cs_wswap_record(attr_of(w, rec, size), w->scratch, size);
		if (err == -EOPNOTSUPP)
			return fail(w, err, "%s: %s", "big-endian output: record type not supported");
		if (err)
			return fail(w, err, "%s: %s", "big-endian output: record does not match its event");
		return emit(w, w->scratch, size);
	}
	return emit(w, rec, size);
}

int cs_writer_finished_round(struct cs_writer *w)
{
	struct cs_perf_event_header h = {
		.type = CS_RECORD_FINISHED_ROUND, .size = sizeof(h),
	};
	int err;

	if (w->err)
		return w->err;
	if (!w->begun || w->finished)
		return fail(w, -EINVAL, "%s: %s", "record written outside the data section");
	/* perf record writes rounds outside the compressed payload */
	err = w->zc ? zflush(w) : 0;
	if (err)
		return err;
	if (w->o.big_endian) {
		h.type = cs_bswap32(h.type);
		h.size = cs_bswap16(h.size);
	}
	w->rec_bytes += sizeof(h);
	w->data_bytes += sizeof(h);
	return out_append(w, &h, sizeof(h));
}

int cs_writer_flush(struct cs_writer *w)
{
	int err;

	if (w->err)
		return w->err;
	err = w->zc ? zflush(w) : 0;
	return err ? err : out_flush(w);
}

uint64_t cs_writer_data_size(const struct cs_writer *w)
{
	return w->rec_bytes;
}

static int finish_file(struct cs_writer *w)
{
	struct cs_fbuf tab = { .swap = w->o.big_endian };
	struct cs_fbuf pay = { .swap = w->o.big_endian };
	struct cs_fbuf hdr = { .swap = w->o.big_endian };
	uint64_t feats[4] = { 0 };
	size_t nr = 0, starts[CS_FEAT_LAST + 1];
	struct utsname u;
	uint64_t base;
	int err;

	if (uname(&u))
		memset(&u, 0, sizeof(u));
	/* sections in the order of their feature bits, as readers expect */
	for (int feat = 1; feat < CS_FEAT_LAST; feat++) {
		size_t start = pay.len;

		if (!feature_payload(w, feat, &pay, &u))
			continue;
		feats[feat / 64] |= 1ULL << (feat % 64);
		starts[nr++] = start;
	}
	starts[nr] = pay.len;
	base = out_offset(w) + nr * sizeof(struct cs_perf_file_section);
	for (size_t i = 0; i < nr; i++) {
		cs_fbuf_u64(&tab, base + starts[i]);
		cs_fbuf_u64(&tab, starts[i + 1] - starts[i]);
	}
	err = emit_fbuf(w, &tab);
	if (!err)
		err = emit_fbuf(w, &pay);
	else
		cs_fbuf_free(&pay);
	if (!err)
		err = out_flush(w);
	if (err)
		return err;
	put_header(w, &hdr, w->data_bytes, feats);
	if (hdr.oom) {
		cs_fbuf_free(&hdr);
		return fail(w, -ENOMEM, "%s: %s", "out of memory");
	}
	errno = 0;
	if (pwrite(w->fd, hdr.p, hdr.len, 0) != (ssize_t)hdr.len)
		err = fail_errno(w, errno ? -errno : -EIO, "rewriting the header");
	cs_fbuf_free(&hdr);
	return err;
}

int cs_writer_finish(struct cs_writer *w)
{
	int err;

	if (w->err)
		return w->err;
	if (!w->begun)
		return fail(w, -EINVAL, "%s: %s", "finished before the data began");
	if (w->finished)
		return 0;
	err = w->zc ? zflush(w) : 0;
	if (err)
		return err;
	w->finished = true;
	if (w->o.pipe)
		return out_flush(w);
	return finish_file(w);
}

const char *cs_writer_error(const struct cs_writer *w)
{
	return w->eb.msg;
}

void cs_writer_free(struct cs_writer *w)
{
	if (!w)
		return;
	if (w->own_fd && w->fd >= 0)
		close(w->fd);
	for (size_t i = 0; i < w->nr_ev; i++) {
		free(w->ev[i].name);
		free(w->ev[i].ids);
	}
	free(w->ev);
	free(w->ids);
	for (int i = 0; i < CS_FEAT_LAST; i++) {
		free(w->str[i]);
		cs_fbuf_free(&w->raw[i]);
	}
	for (int i = 0; i < w->argc; i++)
		free(w->argv[i]);
	free(w->argv);
	for (size_t i = 0; i < w->nr_bids; i++)
		free(w->bids[i].path);
	free(w->bids);
	free(w->out);
	free(w->scratch);
	ZSTD_freeCCtx(w->zc);
	free(w->zin);
	free(w->zrec);
	free(w->path);
	free(w);
}
