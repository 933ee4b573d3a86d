/* report_spill.c - report's spill mode (see report_int.h): when the
 * tables of frames and stacks pass the memory budget, every stack counted
 * so far goes to a temporary file as a weighted record, the tables are
 * freed, and every later sample is appended as a record of its own; the
 * report is then written from that file (report_external.c). Before that,
 * while it is not known whether the tables will end within the budget,
 * samples may be set aside in a file of their own, and taken back or
 * read after the tables' records. Here: the temporary files, the rules
 * and the switches, and the records. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util/big_alloc.h"
#include "outputs/report_int.h"

/* ---- temporary files ------------------------------------------------------ */

static int tmp_fail(struct report_tmp *f, int err, const char *what)
{
	/* the first error is the one that explains the others */
	if (f->err && !f->err[0])
		snprintf(f->err, REPORT_ERR_LEN, "temporary file %s: %s: %s",
			 f->path ? f->path : "(none)", what, strerror(-err));
	return err;
}

int report_tmp_open(struct report_tmp *f, size_t buf_size, char *err,
		    uint64_t *written)
{
	const char *dir = getenv("TMPDIR");
	size_t len;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->err = err;
	f->written = written;
	if (!dir || !*dir)
		dir = "/tmp";
	len = strlen(dir) + sizeof("/callstitch-report-XXXXXX");
	f->path = malloc(len);
	f->buf = malloc(buf_size);
	if (!f->path || !f->buf)
		return tmp_fail(f, -ENOMEM, "allocating its buffer");
	f->cap = buf_size;
	snprintf(f->path, len, "%s/callstitch-report-XXXXXX", dir);
	f->fd = mkostemp(f->path, O_CLOEXEC);
	if (f->fd < 0)
		return tmp_fail(f, -errno, "creating it");
	/* gone from the directory at once: nothing is left behind, whatever
	 * way the process ends */
	if (unlink(f->path))
		return tmp_fail(f, -errno, "unlinking it");
	return 0;
}

int report_tmp_flush(struct report_tmp *f)
{
	size_t done = 0;

	while (done < f->len) {
		ssize_t n = pwrite(f->fd, f->buf + done, f->len - done,
				   (off_t)(f->size - f->len + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return tmp_fail(f, n < 0 ? -errno : -EIO, "writing");
		done += (size_t)n;
	}
	*f->written += f->len;
	f->len = 0;
	return 0;
}

int report_tmp_write(struct report_tmp *f, const void *p, size_t n)
{
	const char *s = p;

	while (n) {
		size_t take = f->cap - f->len < n ? f->cap - f->len : n;
		int err;

		memcpy(f->buf + f->len, s, take);
		f->len += take;
		f->size += take;
		s += take;
		n -= take;
		if (f->len == f->cap && (err = report_tmp_flush(f)))
			return err;
	}
	return 0;
}

void report_tmp_close(struct report_tmp *f)
{
	if (f->fd >= 0)
		close(f->fd);
	free(f->buf);
	free(f->path);
	f->fd = -1;
	f->buf = f->path = NULL;
	f->len = f->size = 0;
}

int report_tmp_reader_open(struct report_tmp_reader *rd, struct report_tmp *f,
			   uint64_t off, uint64_t end, size_t buf_size)
{
	int err;

	memset(rd, 0, sizeof(*rd));
	rd->f = f;
	rd->off = off;
	rd->end = end;
	/* what is still buffered is read from the file too */
	if ((err = report_tmp_flush(f)))
		return err;
	rd->buf = malloc(buf_size);
	if (!rd->buf)
		return tmp_fail(f, -ENOMEM, "allocating a buffer to read it");
	rd->cap = buf_size;
	return 0;
}

int report_tmp_read(struct report_tmp_reader *rd, void *p, size_t n)
{
	char *d = p;
	size_t got = 0;

	while (got < n) {
		size_t take;

		if (rd->pos == rd->len) {
			uint64_t left = rd->end - rd->off;
			size_t want = left < rd->cap ? (size_t)left : rd->cap;
			ssize_t r;

			if (!want && rd->next) {
				/* the next range follows at once */
				rd->f = rd->next;
				rd->off = rd->next_off;
				rd->end = rd->next_end;
				rd->next = NULL;
				continue;
			}
			if (!want) {
				if (!got)
					return 1;
				/* a damaged count read before led here: the
				 * bytes asked for began got bytes back */
				return report_tmp_bad(rd, rd->off - got, -EBADMSG,
						      "it ends inside what is read there");
			}
			r = pread(rd->f->fd, rd->buf, want, (off_t)rd->off);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				return tmp_fail(rd->f, r < 0 ? -errno : -EIO,
						r < 0 ? "reading" :
						"reading: it is shorter than was written");
			rd->off += (uint64_t)r;
			rd->pos = 0;
			rd->len = (size_t)r;
		}
		take = rd->len - rd->pos < n - got ? rd->len - rd->pos : n - got;
		memcpy(d + got, rd->buf + rd->pos, take);
		rd->pos += take;
		got += take;
	}
	return 0;
}

void report_tmp_reader_close(struct report_tmp_reader *rd)
{
	free(rd->buf);
	rd->buf = NULL;
}

uint64_t report_tmp_reader_tell(const struct report_tmp_reader *rd)
{
	return rd->off - (rd->len - rd->pos);
}

int report_spill_reader_open(struct report_tmp_reader *rd, struct cs_report *r,
			     size_t buf_size)
{
	int err = r->aside ? report_tmp_flush(r->aside) : 0;

	if (!err)
		err = report_tmp_reader_open(rd, r->spill, 0, r->spill->size,
					     buf_size);
	if (!err && r->aside) {
		rd->next = r->aside;
		rd->next_off = r->aside_from;
		rd->next_end = r->aside->size;
	}
	return err;
}

uint64_t report_spill_bytes(const struct cs_report *r)
{
	return r->spill->size + (r->aside ? r->aside->size - r->aside_from : 0);
}

/* ---- records -------------------------------------------------------------- */

static int write_rec(struct cs_report *r, struct report_tmp *f,
		     uint32_t thread, uint64_t count, uint64_t period,
		     uint32_t nr)
{
	struct report_spill_rec h = {
		.seq = r->spill_seq++, .count = count, .period = period,
		.thread = thread, .nr = nr,
	};
	uint8_t buf[REPORT_SPILL_REC_MAX];

	r->spill_items++;
	return report_tmp_write(f, buf,
				report_spill_rec_encode(&h, &r->spill_last, buf));
}

static int write_frame(struct cs_report *r, struct report_tmp *f,
		       const struct cs_agg_key *key, uint64_t sym_start)
{
	struct report_spill_frame fr = { .key = *key, .sym_start = sym_start };
	uint8_t buf[REPORT_SPILL_FRAME_MAX];
	int err;

	if ((err = report_names_id(&r->names, key->sym, &fr.sym_id)) ||
	    (err = report_names_id(&r->names, key->dso, &fr.dso_id)))
		return err;
	r->spill_items++;
	return report_tmp_write(f, buf,
				report_spill_frame_encode(&fr, &r->spill_last, buf));
}

/* The aside file's records are read after the spill file's: once there
 * is one, every later sample goes there too */
int report_spill_rec(struct cs_report *r, uint32_t thread, uint64_t count,
		     uint64_t period, uint32_t nr)
{
	if (r->aside && !r->spill)
		r->aside_nr++;
	return write_rec(r, r->aside ? r->aside : r->spill, thread, count,
			 period, nr);
}

int report_spill_frame(struct cs_report *r, const struct cs_agg_key *key,
		       uint64_t sym_start)
{
	return write_frame(r, r->aside ? r->aside : r->spill, key, sym_start);
}

size_t report_tables_memory(const struct cs_report *r)
{
	return cs_agg_memory(r->stacks) +
	       cs_agg_nr_frames(r->stacks) * sizeof(*r->sym_start);
}

/* Spill mode starts when the tables pass the budget. On a profile far too
 * big for it, that leaves the process at the budget plus all that lives
 * beside the tables (the threads, the machine's maps and symbols, the
 * heap's freed blocks: 11-18 MiB on a profile of distinct stacks), over
 * it. So past 7/8 of the budget the tables go already if, growing on as
 * they grew over the part of the input read, they would end past 5/4 of
 * it: such a profile goes to the file anyway, and now the process is
 * still under the budget. Tables that end a little under the budget (the
 * bench's 500k profile: 242 MiB of 256) project under it at that point,
 * and go on in memory. Between the two (a projection of 1 to 5/4 of the
 * budget), or not knowing the input's size (a pipe), where they will end
 * is not known yet: they stop growing, and the samples after are set
 * aside in the temporary file until the end says (report_aside_settle()).
 * The tables never pass 7/8 of the budget by more than the samples
 * between two looks, unless one step of an index takes them past the
 * budget itself, which is the last word.
 *
 * Tables projected past twice the budget go sooner, from half of it: the
 * process peaks at the switch (the tables and the spill's buffers side
 * by side), and a profile growing so fast (every stack new: the bench's
 * all-random 2 GB profile projects to 26 times the budget) goes to the
 * file anyway, so the earlier, the lower its peak. To end in memory after
 * all, its tables would have to grow four times slower than they did. */
#define EARLY_SHARE(budget)	((budget) - (budget) / 8)
#define FAR_SHARE(budget)	((budget) / 2)
/* The projection past which the tables go at once; under it (and over
 * the budget) the samples are set aside until the end says. The same
 * bound decides whether those set aside take the tables past it. */
#define SPILL_PAST		1.25	/* 5/4 of the budget */

static uint64_t samples_counted(const struct cs_report *r)
{
	uint64_t samples = 0;

	for (size_t ev = 0; ev < r->nr_ev; ev++)
		samples += r->ev_samples[ev];
	return samples;
}

/* Where the tables would end, growing on as they grew over done of total
 * bytes of the input; 0 when the input's size is not known */
static double tables_projected(size_t tables, uint64_t done, uint64_t total)
{
	if (!total || !done)
		return 0;
	if (done >= total)
		return (double)tables;
	return (double)tables * (double)total / (double)done;
}

/* The switch, a projection past a multiple of the budget (past) says why */
static enum report_due spill_projected(struct cs_report *r, size_t tables,
				       double projected, const char *past)
{
	snprintf(r->why, sizeof(r->why), "from a temporary file: the tables "
		 "were projected past %s the budget of %zu bytes after %"
		 PRIu64 " samples (%zu bytes at %.1f%% of the input: %.0f)",
		 past, r->budget, samples_counted(r), tables,
		 (double)tables / projected * 100, projected);
	return REPORT_SPILL;
}

enum report_due report_spill_due(struct cs_report *r, uint64_t done,
				 uint64_t total, size_t step)
{
	/* the tables with the step the next sample makes them take */
	size_t tables = report_tables_memory(r), mem = tables + step;
	double budget = (double)r->budget, projected;

	if (mem <= FAR_SHARE(r->budget))
		return REPORT_KEEP;
	/* the step is taken once; the growth is projected */
	projected = tables_projected(tables, done, total);
	if (mem <= EARLY_SHARE(r->budget))
		return projected > 2 * budget ?
		       spill_projected(r, tables, projected, "twice") :
		       REPORT_KEEP;
	if (tables > r->budget) {
		snprintf(r->why, sizeof(r->why), "from a temporary file: the "
			 "tables passed the budget of %zu bytes after %" PRIu64
			 " samples (%zu bytes)", r->budget, samples_counted(r),
			 tables);
		return REPORT_SPILL;
	}
	if (!projected)
		return REPORT_ASIDE;
	if (projected <= budget && mem <= r->budget)
		return REPORT_KEEP;
	if (projected <= budget * SPILL_PAST)
		return REPORT_ASIDE;
	return spill_projected(r, tables, projected, "5/4 of");
}

int report_aside_start(struct cs_report *r)
{
	int err;

	if (!(r->aside = malloc(sizeof(*r->aside))))
		return -ENOMEM;
	err = report_tmp_open(r->aside, 1 << 20, r->err,
			      &r->tmp_written);
	if (err)
		return err;
	/* the records' seq go on from the stacks' ids, as in spill mode */
	r->spill_seq = cs_agg_nr_stacks(r->stacks);
	r->aside_samples = samples_counted(r);
	r->aside_tables = report_tables_memory(r);
	/* frames seen before are named by their keys in the records */
	return report_spill_seen(r);
}

bool report_aside_due(struct cs_report *r)
{
	/* aside_nr / aside_samples > (5/4 budget - aside_tables) / aside_tables,
	 * divided out: SPILL_PAST as in report_spill_due(), for the same steps */
	double grown = (double)r->aside_nr * (double)r->aside_tables;

	return r->aside_samples &&
	       grown > ((double)r->budget * SPILL_PAST - (double)r->aside_tables) *
		       (double)r->aside_samples;
}

int report_aside_spill(struct cs_report *r)
{
	uint64_t seq = r->spill_seq;
	int err = report_spill_start(r);

	/* the tables' records take the seq of their ids; the samples go on
	 * from where those set aside were */
	r->spill_seq = seq;
	r->aside_from = 0;
	snprintf(r->why, sizeof(r->why), "from a temporary file: the tables "
		 "passed 7/8 of the budget of %zu bytes after %" PRIu64
		 " samples (%zu bytes); the %" PRIu64 " samples set aside since "
		 "would, growing them as the samples before did, take them past "
		 "5/4 of it, the tables at most %zu bytes", r->budget,
		 r->aside_samples, r->aside_tables, r->aside_nr, r->aside_tables);
	return err;
}

/* One record of the file aside: its header into *h, its frames' keys
 * into r->frame_keys and r->frame_sym_start (through frames, room for
 * CS_FRAMES_MAX). 0, 1 at the end of the file, or a negative errno */
static int read_aside(struct cs_report *r, struct report_tmp_reader *rd,
		      struct report_spill_rec *h,
		      struct report_spill_frame *frames)
{
	int err = report_spill_rec_read(rd, (uint32_t)cs_agg_nr_frames(r->threads),
					&r->names, h, frames);

	for (uint32_t i = 0; !err && i < h->nr; i++) {
		r->frame_keys[i] = frames[i].key;
		r->frame_sym_start[i] = frames[i].sym_start;
	}
	return err;
}

/* The end of the input says how many samples were set aside: taken back
 * one by one, the tables' growth over those taken back so far, carried
 * on over those left, says where they would end. Past the budget (or a
 * record that would make an index step past it), the switch comes at
 * once, the tables a little past 7/8 of it (a profile that will spill
 * anyway does, under the budget); else the tables take them all, as if
 * they had never been set aside (the records are the samples, in order,
 * and the stacks first seen among them get their ids in the same order:
 * the text is the same). */
int report_aside_settle(struct cs_report *r)
{
	struct report_tmp_reader rd;
	struct report_spill_rec h;
	size_t start = report_tables_memory(r), mem = start, stepped = 0;
	double projected = (double)start;
	struct report_spill_frame *frames = malloc(CS_FRAMES_MAX * sizeof(*frames));
	int err = frames ? report_tmp_reader_open(&rd, r->aside, 0,
						  r->aside->size, 1 << 20) :
			   -ENOMEM;

	r->aside_back = 0;
	while (!err) {
		uint64_t at = report_tmp_reader_tell(&rd);
		size_t step;

		if ((err = read_aside(r, &rd, &h, frames)))
			break;
		step = cs_agg_step(r->stacks, h.nr);
		if (step || (r->aside_back &&
			     r->aside_back % r->check_every == 0)) {
			/* the steps taken are not growth to carry on: the
			 * next is looked at when it comes */
			mem = report_tables_memory(r);
			projected = (double)mem;
			if (r->aside_back)
				projected += (double)(mem - start - stepped) /
					     (double)r->aside_back *
					     (double)(r->aside_nr - r->aside_back);
			if (mem + step > r->budget ||
			    projected > (double)r->budget) {
				err = report_spill_start(r);
				r->aside_from = at;
				break;
			}
		}
		err = report_count_keys(r, h.thread, r->frame_keys,
					r->frame_sym_start, h.nr, h.count,
					h.period);
		if (!err && step)
			stepped += report_tables_memory(r) - mem;
		if (!err)
			r->aside_back++;
	}
	if (frames)
		report_tmp_reader_close(&rd);
	free(frames);
	if (err == 1) {
		/* all of them back: in memory, as if never set aside */
		report_tmp_close(r->aside);
		free(r->aside);
		r->aside = NULL;
		return 0;
	}
	if (err)
		return err;
	snprintf(r->why, sizeof(r->why), "from a temporary file: the tables "
		 "passed 7/8 of the budget of %zu bytes after %" PRIu64
		 " samples (%zu bytes); of the %" PRIu64 " samples set aside "
		 "then, %" PRIu64 " were taken back, the tables at most %zu "
		 "bytes, and all would have made them %.0f", r->budget,
		 r->aside_samples, r->aside_tables, r->aside_nr, r->aside_back,
		 mem, projected);
	return 0;
}

/* Every stack of the tables as a record (seq: its id, so the order of
 * first sight stays that of the ids), then the tables emptied. */
int report_spill_start(struct cs_report *r)
{
	size_t nr = cs_agg_nr_stacks(r->stacks);
	uint32_t *frames = malloc((cs_agg_max_depth(r->stacks) + 1) * sizeof(*frames));
	struct cs_agg *empty = NULL;
	int err = frames ? cs_agg_new(&empty) : -ENOMEM;

	if (!err && !(r->spill = malloc(sizeof(*r->spill))))
		err = -ENOMEM;
	if (!err) {
		err = report_tmp_open(r->spill, 1 << 20, r->err,
				      &r->tmp_written);
		r->spill_seq = 0;
	}
	for (size_t s = 0; s < nr && !err; s++) {
		struct cs_agg_stack st;

		cs_agg_stack(r->stacks, (uint32_t)s, frames, &st);
		err = write_rec(r, r->spill, st.tag, st.count, st.period, st.nr);
		for (uint32_t i = 0; i < st.nr && !err; i++)
			err = write_frame(r, r->spill,
					  cs_agg_frame_key(r->stacks, st.frames[i]),
					  r->sym_start[st.frames[i]]);
	}
	if (!err)
		err = report_spill_seen(r);
	free(frames);
	if (err) {
		cs_agg_free(empty);
		return err;
	}
	cs_agg_free(r->stacks);
	r->stacks = empty;
	cs_big_free(r->sym_start);
	r->sym_start = NULL;
	r->cap_sym_start = 0;
	free(r->inlined);
	r->inlined = NULL;
	r->cap_inlined = 0;
	return 0;
}

void report_spill_free(struct cs_report *r)
{
	if (r->spill)
		report_tmp_close(r->spill);
	free(r->spill);
	r->spill = NULL;
	if (r->aside)
		report_tmp_close(r->aside);
	free(r->aside);
	r->aside = NULL;
	free(r->seen_keys);
	r->seen_keys = NULL;
	report_names_free(&r->names);
}
