/* report_spill.c - report's spill mode (see report_int.h): when the
 * tables of frames and stacks pass the memory budget, every stack counted
 * so far goes to a temporary file as a weighted record, the tables are
 * freed, and every later sample is appended as a record of its own; the
 * report is then written from that file (report_external.c). Here: the
 * temporary files, the switch and the records. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int report_tmp_open(struct report_tmp *f, size_t buf_size, char *err)
{
	const char *dir = getenv("TMPDIR");
	size_t len;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->err = err;
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

			if (!want) {
				if (!got)
					return 1;
				return tmp_fail(rd->f, -EIO, "reading: it ends inside a record");
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

/* ---- records -------------------------------------------------------------- */

int report_spill_rec(struct cs_report *r, uint32_t thread, uint64_t count,
		     uint64_t period, uint32_t nr)
{
	struct report_spill_rec h = {
		.seq = r->spill_seq++, .count = count, .period = period,
		.thread = thread, .nr = nr,
	};

	return report_tmp_write(r->spill, &h, sizeof(h));
}

int report_spill_frame(struct cs_report *r, const struct cs_agg_key *key,
		       uint64_t sym_start)
{
	struct report_spill_frame f = { .key = *key, .sym_start = sym_start };

	return report_tmp_write(r->spill, &f, sizeof(f));
}

size_t report_tables_memory(const struct cs_report *r)
{
	return cs_agg_memory(r->stacks) +
	       cs_agg_nr_frames(r->stacks) * sizeof(*r->sym_start);
}

/* Spill mode starts when the tables pass the budget. On a profile far too
 * big for it, that leaves the process at the budget plus all that lives
 * beside the tables (the threads, the machine's maps and symbols: 11 MiB
 * on a 2 GB profile of distinct stacks), over it. So past 7/8 of the
 * budget the tables go already if, growing on as they grew over the part
 * of the input read, they would end past 5/4 of it: such a profile goes
 * to the file anyway, and now the process is still under the budget.
 * Tables that end a little under the budget (the bench's 500k profile:
 * 242 MiB of 256) project under 5/4 of it at that point, by a margin
 * wider than the steps their indexes make as they double. Not knowing
 * the input's size (a pipe), only the budget decides. */
#define EARLY_SHARE(budget)	((budget) - (budget) / 8)

bool report_spill_due(struct cs_report *r, uint64_t done, uint64_t total)
{
	size_t mem = report_tables_memory(r);
	uint64_t samples = 0;
	double share, projected;

	if (mem <= EARLY_SHARE(r->budget))
		return false;
	for (size_t ev = 0; ev < r->nr_ev; ev++)
		samples += r->ev_samples[ev];
	if (mem > r->budget) {
		snprintf(r->why, sizeof(r->why), "from a temporary file: the "
			 "tables passed the budget of %zu bytes after %" PRIu64
			 " samples (%zu bytes)", r->budget, samples, mem);
		return true;
	}
	if (!total || !done)
		return false;
	share = done < total ? (double)done / (double)total : 1.0;
	projected = (double)mem / share;
	if (projected <= (double)r->budget * 1.25)
		return false;
	snprintf(r->why, sizeof(r->why), "from a temporary file: the tables "
		 "were projected past 5/4 of the budget of %zu bytes after %"
		 PRIu64 " samples (%zu bytes at %.1f%% of the input: %.0f)",
		 r->budget, samples, mem, share * 100, projected);
	return true;
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
		err = report_tmp_open(r->spill, 1 << 20, r->err);
		r->spill_seq = 0;
	}
	for (size_t s = 0; s < nr && !err; s++) {
		struct cs_agg_stack st;

		cs_agg_stack(r->stacks, (uint32_t)s, frames, &st);
		err = report_spill_rec(r, st.tag, st.count, st.period, st.nr);
		for (uint32_t i = 0; i < st.nr && !err; i++)
			err = report_spill_frame(r, cs_agg_frame_key(r->stacks, st.frames[i]),
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
	free(r->sym_start);
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
	free(r->seen_keys);
	r->seen_keys = NULL;
}
