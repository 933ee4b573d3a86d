/* test_session.c - the whole pipeline on the real-kernel recordings: every
 * sample comes out once, in time order, stitched as the fixtures' README
 * says; the raw view and file order; errors name the file. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <signal.h>
#include <sys/wait.h>

#include <callstitch/callstitch.h>
#include "abi/perf_abi.h"
#include "lib/session/interrupt.h"
#include "lib/util/errbuf.h"
#include "lib/write/encode.h"
#include "lib/write/writer.h"

struct seen {
	uint64_t samples, deferred, events;
	uint64_t by_state[CS_CHAIN_UNMERGED + 1];
	uint64_t last_event_time;	/* events come in time order */
	uint64_t last_offset;		/* ... or in file order */
	bool file_order;
	uint64_t out_of_order;
	uint64_t bad_chains;		/* a marker or cookie left in a merged chain */
	uint64_t exits_before_samples;	/* an EXIT seen while its tid waited */
	uint64_t begin, end;
	uint64_t *offsets;		/* samples' record offsets, to count repeats */
	size_t nr_offsets, cap_offsets;
	uint64_t progress_calls, progress_last;
};

static void check_order(struct seen *w, const struct cs_event *ev)
{
	if (w->file_order) {
		if (ev->offset < w->last_offset)
			w->out_of_order++;
		w->last_offset = ev->offset;
		return;
	}
	if (!ev->has_id || ev->id.time == 0)
		return;
	if (ev->id.time < w->last_event_time)
		w->out_of_order++;
	w->last_event_time = ev->id.time;
}

static int on_begin(void *ctx, struct cs_session *s)
{
	struct seen *w = ctx;

	assert_non_null(cs_session_machine(s));
	w->begin++;
	return 0;
}

static int on_end(void *ctx, struct cs_session *s)
{
	struct seen *w = ctx;

	(void)s;
	w->end++;
	return 0;
}

static int on_sample(void *ctx, const struct cs_stitched *st)
{
	struct seen *w = ctx;

	w->samples++;
	w->by_state[st->state]++;
	if (w->nr_offsets == w->cap_offsets) {
		w->cap_offsets = w->cap_offsets ? 2 * w->cap_offsets : 4096;
		w->offsets = realloc(w->offsets, w->cap_offsets * sizeof(uint64_t));
		assert_non_null(w->offsets);
	}
	w->offsets[w->nr_offsets++] = st->event->offset;
	if (st->state == CS_CHAIN_ORIGINAL || st->state == CS_CHAIN_UNMERGED)
		return 0;
	for (uint64_t i = 0; i < st->chain_nr; i++)
		if (st->chain[i] == CS_CONTEXT_USER_DEFERRED)
			w->bad_chains++;
	if (st->state == CS_CHAIN_KERNEL_ONLY)
		return 0;
	/* stitched: the sample's kernel part is the chain's prefix */
	const struct cs_sample *s = &st->event->sample;
	uint64_t nk = s->callchain_nr - 2;
	if (st->chain_nr <= nk ||
	    memcmp(st->chain, s->callchain, nk * 8) ||
	    st->chain[nk] != CS_CONTEXT_USER ||
	    s->callchain[nk + 1] != st->cookie)
		w->bad_chains++;
	return 0;
}

static int on_deferred(void *ctx, const struct cs_event *ev)
{
	struct seen *w = ctx;

	w->deferred++;
	check_order(w, ev);
	return 0;
}

static int on_event(void *ctx, const struct cs_event *ev)
{
	struct seen *w = ctx;

	w->events++;
	check_order(w, ev);
	return 0;
}

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct seen *w = ctx;

	assert_true(done <= total);
	assert_true(done >= w->progress_last);
	w->progress_last = done;
	w->progress_calls++;
}

static const struct cs_output_ops ops = {
	.begin = on_begin,
	.sample = on_sample,
	.deferred = on_deferred,
	.event = on_event,
	.end = on_end,
};

static char *fixture(const char *name)
{
	const char *root = getenv("CS_ROOT");
	char *p;

	if (asprintf(&p, "%s/tests/fixtures/linux-7.3.4/%s", root ? root : ".",
		     name) < 0)
		return NULL;
	return p;
}

static int offset_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static const struct cs_stats *run(const char *name, struct seen *w,
				  bool no_merge, bool ordered_off,
				  struct cs_session **out)
{
	struct cs_session_opts o = { .sz = sizeof(o),
		.fd = -1,
		.no_merge = no_merge,
		.ordered_off = ordered_off,
		.progress = on_progress,
		.progress_ctx = w,
	};
	struct cs_session *s;
	char *path = fixture(name);
	int err;

	memset(w, 0, sizeof(*w));
	w->file_order = ordered_off;
	o.path = path;
	err = cs_session_open(&o, &s);
	if (err)
		fail_msg("open %s: %s", path, cs_session_error(s));
	err = cs_session_run(s, &ops, w);
	if (err)
		fail_msg("run %s: %d %s", path, err, cs_session_error(s));
	free(path);
	*out = s;

	/* every sample exactly once */
	qsort(w->offsets, w->nr_offsets, sizeof(uint64_t), offset_cmp);
	for (size_t i = 1; i < w->nr_offsets; i++)
		assert_true(w->offsets[i - 1] != w->offsets[i]);
	free(w->offsets);
	w->offsets = NULL;
	assert_int_equal(w->begin, 1);
	assert_int_equal(w->end, 1);
	assert_true(w->progress_calls >= 1);
	return cs_session_stats(s);
}

static void assert_stats_add_up(const struct cs_stats *st, const struct seen *w)
{
	uint64_t types = 0;

	assert_int_equal(st->samples, w->samples);
	assert_int_equal(st->samples, st->stitched + st->stitched_late +
			 st->kernel_only + st->original);
	assert_int_equal(st->by_type[CS_RECORD_SAMPLE], st->samples);
	assert_int_equal(st->by_type[CS_RECORD_CALLCHAIN_DEFERRED],
			 st->deferred_records);
	for (int t = 0; t < 128; t++)
		types += st->by_type[t];
	assert_int_equal(types, st->records);
	assert_int_equal(w->deferred, st->deferred_records);
	assert_int_equal(w->events + w->deferred + w->samples, st->records);
}

static void task_profile_stitches_every_sample_it_can(void **state)
{
	struct seen w;
	struct cs_session *s;
	const struct cs_stats *st;

	(void)state;
	st = run("task-defer.data", &w, false, false, &s);
	/* numbers from the fixtures' README */
	assert_int_equal(st->samples, 14117);
	assert_int_equal(st->deferred_records, 12800);
	assert_int_equal(st->stitched_late, 69);
	assert_int_equal(st->kernel_only, 0);	/* nothing was left waiting */
	assert_true(st->stitched > 10000);
	assert_int_equal(st->stitched + st->stitched_late + st->original,
			 st->samples);
	assert_int_equal(w.out_of_order, 0);
	assert_int_equal(w.bad_chains, 0);
	assert_int_equal(w.by_state[CS_CHAIN_STITCHED_LATE], 69);
	assert_stats_add_up(st, &w);
	assert_true(st->max_pending >= 1);
	cs_session_free(s);
}

static void system_wide_profile_stitches_across_cpus(void **state)
{
	struct seen w;
	struct cs_session *s;
	const struct cs_stats *st;

	(void)state;
	st = run("syswide-defer.data", &w, false, false, &s);
	assert_int_equal(st->samples, 13859);
	assert_int_equal(st->deferred_records, 11369);
	assert_int_equal(st->stitched_late, 148);
	assert_int_equal(st->kernel_only, 0);
	assert_true(st->original > 0);		/* kernel threads */
	assert_int_equal(w.out_of_order, 0);
	assert_int_equal(w.bad_chains, 0);
	assert_stats_add_up(st, &w);
	cs_session_free(s);
}

static void unmerged_view_shows_samples_and_records_as_recorded(void **state)
{
	struct seen w;
	struct cs_session *s;
	const struct cs_stats *st;

	(void)state;
	st = run("task-defer.data", &w, true, false, &s);
	assert_int_equal(st->samples, 14117);
	assert_int_equal(w.by_state[CS_CHAIN_UNMERGED], st->samples_deferred);
	assert_int_equal(w.by_state[CS_CHAIN_ORIGINAL] +
			 w.by_state[CS_CHAIN_UNMERGED], st->samples);
	assert_int_equal(w.deferred, 12800);
	assert_int_equal(st->stitched + st->stitched_late + st->kernel_only, 0);
	assert_stats_add_up(st, &w);
	cs_session_free(s);
}

static void ordered_off_delivers_in_file_order(void **state)
{
	struct seen w;
	struct cs_session *s;
	const struct cs_stats *st;

	(void)state;
	st = run("syswide-defer.data", &w, true, true, &s);
	assert_int_equal(w.out_of_order, 0);
	assert_int_equal(st->samples, 13859);
	assert_stats_add_up(st, &w);
	cs_session_free(s);
}

static void profile_without_deferral_passes_samples_through(void **state)
{
	struct seen w;
	struct cs_session *s;
	const struct cs_stats *st;

	(void)state;
	st = run("task-nodefer.data", &w, false, false, &s);
	assert_true(st->samples > 1000);
	assert_int_equal(st->original, st->samples);
	assert_int_equal(st->samples_deferred, 0);
	assert_int_equal(st->deferred_records, 0);
	assert_int_equal(w.out_of_order, 0);
	assert_stats_add_up(st, &w);
	cs_session_free(s);
}

static void missing_file_error_names_it(void **state)
{
	struct cs_session_opts o = { .sz = sizeof(o), .path = "/nonexistent/perf.data", .fd = -1 };
	struct cs_session *s;

	(void)state;
	assert_true(cs_session_open(&o, &s) < 0);
	assert_non_null(s);
	assert_non_null(strstr(cs_session_error(s), "/nonexistent/perf.data"));
	assert_true(cs_session_run(s, NULL, NULL) < 0);	/* refused, no crash */
	cs_session_free(s);
}

static void truncated_file_fails_with_the_file_name(void **state)
{
	char *src = fixture("task-defer.data");
	char dst[] = "/tmp/cs-test-session-XXXXXX";
	int fd = mkstemp(dst);
	FILE *in = fopen(src, "rb");
	char buf[65536];
	size_t n, total = 0;
	struct cs_session_opts o = { .sz = sizeof(o), .path = dst, .fd = -1 };
	struct cs_session *s;
	int err;

	(void)state;
	assert_true(fd >= 0);
	assert_non_null(in);
	/* the header and a third of the data; the header still claims all */
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0 && total < 400000) {
		assert_int_equal(write(fd, buf, n), (ssize_t)n);
		total += n;
	}
	fclose(in);
	close(fd);
	err = cs_session_open(&o, &s);
	if (!err)
		err = cs_session_run(s, NULL, NULL);
	unlink(dst);
	free(src);
	assert_true(err < 0);
	assert_non_null(strstr(cs_session_error(s), dst));
	cs_session_free(s);
}

static int stop_at_3(void *ctx, const struct cs_stitched *st)
{
	uint64_t *n = ctx;

	(void)st;
	return ++*n == 3 ? 42 : 0;
}

static void output_error_stops_the_run(void **state)
{
	struct cs_session_opts o = { .sz = sizeof(o), .fd = -1 };
	struct cs_output_ops stop = { .sample = stop_at_3 };
	struct cs_session *s;
	char *path = fixture("task-defer.data");

	(void)state;
	o.path = path;
	assert_int_equal(cs_session_open(&o, &s), 0);
	uint64_t n = 0;
	assert_int_equal(cs_session_run(s, &stop, &n), 42);
	assert_int_equal(n, 3);
	/* a session runs once */
	assert_true(cs_session_run(s, &stop, &n) < 0);
	cs_session_free(s);
	free(path);
}

/* ---- a synthetic profile written in every format the reader takes ---- */

enum kind { SAMPLE, RECORD, LOST, EXIT, PLAIN };

struct syn {
	uint64_t time;
	uint32_t cpu;
	enum kind kind;
	uint32_t tid;
	uint64_t cookie;
};

#define A 0xa00000001ULL
#define B 0xb00000001ULL
#define C 0xc00000001ULL
#define D 0xd00000001ULL
#define E 0xe00000001ULL
#define F 0xf00000001ULL

/* in time order; written per CPU buffer, round by round, as perf does */
static const struct syn story[] = {
	{ 100, 0, SAMPLE, 10, A },
	{ 110, 0, SAMPLE, 10, A },
	{ 130, 1, RECORD, 10, A },	/* migrated, and in the next round */
	{ 135, 1, SAMPLE, 10, A },	/* late */
	{ 140, 1, SAMPLE, 20, B },
	{ 150, 0, RECORD, 20, B },	/* cpu 0's chunk: earlier in the file */
	{ 151, 1, RECORD, 20, B },	/* a second defer_output copy */
	{ 160, 0, SAMPLE, 30, C },
	{ 170, 0, LOST, 0, 0 },
	{ 180, 0, SAMPLE, 30, D },	/* C's record was in the lost part */
	{ 190, 1, SAMPLE, 40, E },
	{ 200, 1, EXIT, 40, 0 },
	{ 210, 0, RECORD, 50, F },	/* orphan */
	{ 220, 1, PLAIN, 60, 0 },
	{ 230, 0, SAMPLE, 30, D },	/* still waiting at the end */
};
static const uint64_t round_ends[] = { 125, 200 };

static struct cs_perf_attr syn_attr(void)
{
	struct cs_perf_attr a = {
		.type = CS_PERF_TYPE_SOFTWARE,
		.size = CS_PERF_ATTR_SIZE_VER7,
		.config = CS_PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 250000,
		.sample_type = CS_SAMPLE_IP | CS_SAMPLE_TID | CS_SAMPLE_TIME |
			       CS_SAMPLE_CALLCHAIN | CS_SAMPLE_CPU |
			       CS_SAMPLE_PERIOD,
		.flags = CS_ATTR_SAMPLE_ID_ALL | CS_ATTR_TASK | CS_ATTR_COMM |
			 CS_ATTR_MMAP | CS_ATTR_DEFER_CALLCHAIN |
			 CS_ATTR_DEFER_OUTPUT,
	};
	return a;
}

static long syn_encode(const struct cs_perf_attr *a, const struct syn *e,
		       void *buf, size_t cap)
{
	struct cs_sample_id id = { .pid = e->tid, .tid = e->tid, .time = e->time,
				   .cpu = e->cpu };
	uint64_t chain[8] = { CS_CONTEXT_KERNEL, 0xffffffff81000000ULL + e->time,
			      0xffffffff82000000ULL + e->tid };
	uint64_t ips[3] = { 0x400000 + e->tid, 0x401000 + e->cookie % 256,
			    0x402000 };
	struct cs_sample smp = { .ip = chain[1], .pid = e->tid, .tid = e->tid,
				 .time = e->time, .cpu = e->cpu,
				 .period = 250000, .misc = CS_MISC_KERNEL };
	struct cs_deferred d = { .cookie = e->cookie, .nr = 3, .ips = ips };
	struct cs_fork_exit x = { .pid = e->tid, .ppid = 1, .tid = e->tid,
				  .ptid = 1, .time = e->time };
	struct cs_lost l = { .id = 1, .lost = 5 };

	switch (e->kind) {
	case SAMPLE:
		chain[3] = CS_CONTEXT_USER_DEFERRED;
		chain[4] = e->cookie;
		return cs_encode_sample(a, &smp, chain, 5, buf, cap);
	case PLAIN:
		chain[3] = CS_CONTEXT_USER;
		chain[4] = 0x401234;
		return cs_encode_sample(a, &smp, chain, 5, buf, cap);
	case RECORD:
		return cs_encode_deferred(a, &d, &id, buf, cap);
	case LOST:
		return cs_encode_lost(a, &l, &id, buf, cap);
	case EXIT:
		return cs_encode_fork_exit(a, CS_RECORD_EXIT, &x, &id, buf, cap);
	}
	return -EINVAL;
}

static void syn_write(const char *path, const struct cs_writer_opts *o,
		      bool rounds)
{
	struct cs_perf_attr a = syn_attr();
	struct cs_errbuf eb = { { 0 } };
	struct cs_writer *w;
	uint64_t ids[1] = { 1 };
	uint64_t buf[512];
	size_t first = 0, n = sizeof(story) / sizeof(story[0]);

	if (cs_writer_open(path, -1, o, &eb, &w))
		fail_msg("%s", eb.msg);
	assert_int_equal(cs_writer_add_event(w, &a, "cpu-clock", ids, 1), 0);
	assert_int_equal(cs_writer_begin(w), 0);
	for (size_t r = 0; r <= 2; r++) {
		uint64_t end = r < 2 ? round_ends[r] : UINT64_MAX;
		size_t last = first;

		while (last < n && story[last].time < end)
			last++;
		for (uint32_t cpu = 0; cpu < 2; cpu++)
			for (size_t i = first; i < last; i++) {
				long len;

				if (story[i].cpu != cpu)
					continue;
				len = syn_encode(&a, &story[i], buf, sizeof(buf));
				assert_true(len > 0);
				assert_int_equal(cs_writer_write(w, buf, (size_t)len), 0);
			}
		if (rounds)
			assert_int_equal(cs_writer_finished_round(w), 0);
		first = last;
	}
	if (cs_writer_finish(w))
		fail_msg("%s", cs_writer_error(w));
	cs_writer_free(w);
}

/* The story written with rounds into a new temporary file: path is its
 * mkstemp() template, and becomes its name. */
static void syn_temp(char *path, const struct cs_writer_opts *o)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	syn_write(path, o, true);
}

struct syn_out {
	uint64_t time[32];
	enum cs_chain_state state[32];
	enum cs_missing_reason missing[32];
	uint64_t chain[32][8];
	uint64_t chain_nr[32];
	size_t n;
};

/* Whether the user marker before st->user is implied, as callstitch.h
 * says a caller tells (written here from the header's words, not from
 * the library's helper, to pin what callers are promised). */
static bool marker_implied(const struct cs_stitched *st)
{
	return st->user_nr && st->user[0] != CS_CONTEXT_USER &&
	       st->user[0] != CS_CONTEXT_USER_DEFERRED;
}

static int syn_sample(void *ctx, const struct cs_stitched *st)
{
	struct syn_out *o = ctx;
	uint64_t nr = st->chain_nr;

	assert_true(o->n < 32 && st->chain_nr + 1 + st->user_nr <= 8);
	o->time[o->n] = st->event->sample.time;
	o->state[o->n] = st->state;
	o->missing[o->n] = st->missing;
	memcpy(o->chain[o->n], st->chain, st->chain_nr * 8);
	if (marker_implied(st))
		o->chain[o->n][nr++] = CS_CONTEXT_USER;
	if (st->user_nr)
		memcpy(o->chain[o->n] + nr, st->user, st->user_nr * 8);
	o->chain_nr[o->n] = nr + st->user_nr;
	o->n++;
	return 0;
}

/* fd >= 0: read the file through a pipe, as `perf record -o - |` would */
/* A child that writes path into a pipe, then keeps it open (quiet) for
 * half a minute, or closes it; *fd the reading end. */
static pid_t pipe_from(const char *path, bool quiet, int *fd)
{
	int pfd[2];
	pid_t child;

	assert_int_equal(pipe(pfd), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		char b[4096];
		ssize_t n;
		int in = open(path, O_RDONLY);

		close(pfd[0]);
		while (in >= 0 && (n = read(in, b, sizeof(b))) > 0)
			if (write(pfd[1], b, (size_t)n) != n)
				_exit(1);
		if (quiet)	/* a recorder between rounds (killed sooner) */
			sleep(30);
		_exit(0);
	}
	close(pfd[1]);
	*fd = pfd[0];
	return child;
}

static struct cs_stats syn_run_as(const char *path, bool through_pipe,
				  bool implied, struct syn_out *o)
{
	static const struct cs_output_ops sops = { .sample = syn_sample };
	struct cs_session_opts opts = { .sz = sizeof(opts), .path = path, .fd = -1,
					.chain_parts = implied,
					.user_marker_implied = implied };
	struct cs_session *s;
	struct cs_stats st;
	int fd = -1;
	pid_t child = -1;

	memset(o, 0, sizeof(*o));
	if (through_pipe) {
		child = pipe_from(path, false, &fd);
		opts.fd = fd;
		opts.path = "pipe";
	}
	if (cs_session_open(&opts, &s))
		fail_msg("open: %s", cs_session_error(s));
	if (cs_session_run(s, &sops, o))
		fail_msg("run: %s", cs_session_error(s));
	st = *cs_session_stats(s);
	cs_session_free(s);
	if (through_pipe) {
		close(fd);
		waitpid(child, NULL, 0);
	}
	return st;
}

static struct cs_stats syn_run(const char *path, bool through_pipe,
			       struct syn_out *o)
{
	return syn_run_as(path, through_pipe, false, o);
}

static void synthetic_profile_stitches_by_every_rule(void **state)
{
	char path[] = "/tmp/cs-test-syn-XXXXXX";
	struct cs_writer_opts wo = { 0 };
	struct syn_out o;
	struct cs_stats st;

	(void)state;
	syn_temp(path, &wo);
	st = syn_run(path, false, &o);
	unlink(path);

	assert_int_equal(st.samples, 9);
	assert_int_equal(st.stitched, 3);
	assert_int_equal(st.stitched_late, 1);
	assert_int_equal(st.original, 1);
	assert_int_equal(st.kernel_only, 4);
	assert_int_equal(st.kernel_only_by[CS_MISSING_LOST], 1);
	assert_int_equal(st.kernel_only_by[CS_MISSING_EXITED], 1);
	assert_int_equal(st.kernel_only_by[CS_MISSING_END], 2);
	assert_int_equal(st.deferred_records, 4);
	assert_int_equal(st.duplicate_records, 1);
	assert_int_equal(st.orphan_records, 1);
	assert_int_equal(st.lost_events, 5);

	/* in the order they became whole */
	static const uint64_t when[] = { 100, 110, 135, 140, 160, 190, 220, 180, 230 };
	static const enum cs_chain_state how[] = {
		CS_CHAIN_STITCHED, CS_CHAIN_STITCHED, CS_CHAIN_STITCHED_LATE,
		CS_CHAIN_STITCHED, CS_CHAIN_KERNEL_ONLY, CS_CHAIN_KERNEL_ONLY,
		CS_CHAIN_ORIGINAL, CS_CHAIN_KERNEL_ONLY, CS_CHAIN_KERNEL_ONLY,
	};
	assert_int_equal(o.n, 9);
	for (size_t i = 0; i < 9; i++) {
		assert_int_equal(o.time[i], when[i]);
		assert_int_equal(o.state[i], how[i]);
	}
	/* the migrated record's stack, after the sample's own kernel part */
	assert_int_equal(o.chain_nr[0], 3 + 1 + 3);
	assert_int_equal(o.chain[0][1], 0xffffffff81000000ULL + 100);
	assert_int_equal(o.chain[0][3], CS_CONTEXT_USER);
	assert_int_equal(o.chain[0][4], 0x400000 + 10);
	assert_int_equal(o.chain_nr[4], 3);	/* kernel part only */
}

/* What the late sample of far_profile() came out with. */
struct far_seen {
	uint64_t late, stitched;
	uint64_t user[3];
	bool in_record;
};

static int far_sample(void *ctx, const struct cs_stitched *st)
{
	struct far_seen *f = ctx;

	if (st->state == CS_CHAIN_STITCHED)
		f->stitched++;
	if (st->state != CS_CHAIN_STITCHED_LATE)
		return 0;
	f->late++;
	assert_int_equal(st->user_nr, 3);
	assert_true(marker_implied(st));
	memcpy(f->user, st->user, sizeof(f->user));
	f->in_record = st->user[-2] == st->cookie && st->user[-1] == 3;
	return 0;
}

/*
 * A record's ips are kept for the samples of its entry that come late,
 * and with user_marker_implied a mapped file's are kept where they are.
 * Here the late sample comes 48 MB of records after its record: the
 * reader has given the record's pages back (MADV_DONTNEED, 32 MB behind
 * it) by then, which a private read-only mapping reads again from the
 * file; had it unmapped them, or were the ips in a buffer since reused,
 * this would crash or ASan would say so.
 */
static void late_sample_far_after_its_record_gets_its_ips(void **state)
{
	enum { FILLER_FRAMES = 120, FILLER = 48 << 20 };
	char path[] = "/tmp/cs-test-far-XXXXXX";
	struct cs_perf_attr a = syn_attr();
	struct cs_writer_opts wo = { 0 };
	struct cs_errbuf eb = { { 0 } };
	struct cs_writer *w;
	uint64_t ids[1] = { 1 }, buf[512], chain[FILLER_FRAMES];
	uint64_t time = 100, written = 0;
	int fd = mkstemp(path);
	static const struct syn head[] = {
		{ 100, 0, SAMPLE, 10, A },	/* waits, then stitched */
		{ 110, 0, RECORD, 10, A },	/* its record: kept for ... */
	};
	struct syn late = { 0, 0, SAMPLE, 10, A };	/* ... this one */
	struct far_seen seen = { 0 };
	static const struct cs_output_ops ops = { .sample = far_sample };
	CS_SESSION_OPTS(o, .fd = -1, .chain_parts = true,
			.user_marker_implied = true);
	struct cs_session *s;
	long len;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	if (cs_writer_open(path, -1, &wo, &eb, &w))
		fail_msg("%s", eb.msg);
	assert_int_equal(cs_writer_add_event(w, &a, "cpu-clock", ids, 1), 0);
	assert_int_equal(cs_writer_begin(w), 0);
	for (size_t i = 0; i < 2; i++) {
		len = syn_encode(&a, &head[i], buf, sizeof(buf));
		assert_true(len > 0);
		assert_int_equal(cs_writer_write(w, buf, (size_t)len), 0);
	}
	/* another task's ordinary samples, a round every thousand */
	chain[0] = CS_CONTEXT_KERNEL;
	for (size_t i = 1; i < FILLER_FRAMES; i++)
		chain[i] = 0xffffffff81000000ULL + i;
	for (uint64_t n = 0; written < FILLER; n++) {
		struct cs_sample smp = { .ip = chain[1], .pid = 60, .tid = 60,
					 .time = ++time + 1000, .cpu = 1,
					 .period = 1, .misc = CS_MISC_KERNEL };

		len = cs_encode_sample(&a, &smp, chain, FILLER_FRAMES, buf,
				       sizeof(buf));
		assert_true(len > 0);
		assert_int_equal(cs_writer_write(w, buf, (size_t)len), 0);
		written += (uint64_t)len;
		if (n % 1000 == 999)
			assert_int_equal(cs_writer_finished_round(w), 0);
	}
	late.time = time + 2000;
	len = syn_encode(&a, &late, buf, sizeof(buf));
	assert_true(len > 0);
	assert_int_equal(cs_writer_write(w, buf, (size_t)len), 0);
	if (cs_writer_finish(w))
		fail_msg("%s", cs_writer_error(w));
	cs_writer_free(w);

	o.path = path;
	if (cs_session_open(&o, &s) || cs_session_run(s, &ops, &seen))
		fail_msg("%s", cs_session_error(s));
	cs_session_free(s);
	unlink(path);
	assert_int_equal(seen.stitched, 1);
	assert_int_equal(seen.late, 1);
	assert_true(seen.in_record);		/* not a copy */
	assert_int_equal(seen.user[0], 0x400000 + 10);	/* syn_encode()'s */
	assert_int_equal(seen.user[1], 0x401000 + A % 256);
	assert_int_equal(seen.user[2], 0x402000);
}

static void pipe_big_endian_zstd_and_roundless_files_stitch_the_same(void **state)
{
	static const struct {
		struct cs_writer_opts o;
		bool rounds, pipe;
	} kinds[] = {
		{ { .pipe = true }, true, true },
		{ { .big_endian = true }, true, false },
		{ { .zstd_level = 1 }, true, false },
		{ { .pipe = true, .zstd_level = 3 }, true, true },
		{ { 0 }, false, false },
	};
	char path[] = "/tmp/cs-test-syn-XXXXXX";
	struct cs_writer_opts plain = { 0 };
	struct syn_out want, got;
	struct cs_stats ws, gs;

	(void)state;
	syn_temp(path, &plain);
	ws = syn_run(path, false, &want);
	/* each kind joined, and in parts with the user marker implied: its
	 * records' bytes do not last (a pipe's buffer, a decompressed or
	 * byte-swapped copy), so the ips are copied, still without one */
	for (size_t run = 0; run < 2 * sizeof(kinds) / sizeof(kinds[0]); run++) {
		size_t k = run / 2;

		syn_write(path, &kinds[k].o, kinds[k].rounds);
		gs = syn_run_as(path, kinds[k].pipe, run % 2, &got);
		assert_int_equal(got.n, want.n);
		for (size_t i = 0; i < want.n; i++) {
			assert_int_equal(got.time[i], want.time[i]);
			assert_int_equal(got.state[i], want.state[i]);
			assert_int_equal(got.missing[i], want.missing[i]);
			assert_int_equal(got.chain_nr[i], want.chain_nr[i]);
			assert_memory_equal(got.chain[i], want.chain[i],
					    want.chain_nr[i] * 8);
		}
		assert_int_equal(gs.stitched, ws.stitched);
		assert_int_equal(gs.stitched_late, ws.stitched_late);
		assert_int_equal(gs.duplicate_records, ws.duplicate_records);
		assert_int_equal(gs.orphan_records, ws.orphan_records);
		assert_int_equal(gs.lost_events, ws.lost_events);
	}
	unlink(path);
}

static void recording_cut_short_is_read_and_said(void **state)
{
	char path[] = "/tmp/cs-test-syn-XXXXXX";
	struct cs_writer_opts wo = { 0 };
	struct cs_perf_file_header h;
	struct syn_out o;
	struct cs_stats st;
	struct cs_session_opts opts = { .sz = sizeof(opts), .fd = -1 };
	static const struct cs_output_ops sops = { .sample = syn_sample };
	struct cs_session *s;
	int fd;

	(void)state;
	syn_temp(path, &wo);
	/* what a recorder killed before it rewrote the header leaves: no data
	 * size, no features, the last record half written */
	fd = open(path, O_RDWR);
	assert_int_equal(pread(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	assert_int_equal(ftruncate(fd, (off_t)(h.data.offset + h.data.size - 12)), 0);
	h.data.size = 0;
	memset(h.adds_features, 0, sizeof(h.adds_features));
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	close(fd);

	opts.path = path;
	memset(&o, 0, sizeof(o));
	if (cs_session_open(&opts, &s))
		fail_msg("open: %s", cs_session_error(s));
	assert_null(cs_session_warning(s));
	if (cs_session_run(s, &sops, &o))
		fail_msg("run: %s", cs_session_error(s));
	st = *cs_session_stats(s);
	assert_non_null(cs_session_warning(s));
	assert_non_null(strstr(cs_session_warning(s), path));
	assert_non_null(strstr(cs_session_warning(s), "cut short"));
	/* the last record (the sample at 230) is gone; all else is there */
	assert_int_equal(st.samples, 8);
	assert_int_equal(st.samples, st.stitched + st.stitched_late +
			 st.kernel_only + st.original);
	cs_session_free(s);
	unlink(path);

	/* a whole file says nothing */
	syn_write(path, &wo, true);
	syn_run(path, false, &o);
	opts.path = path;
	assert_int_equal(cs_session_open(&opts, &s), 0);
	assert_int_equal(cs_session_run(s, NULL, NULL), 0);
	assert_null(cs_session_warning(s));
	cs_session_free(s);
	unlink(path);
}

/* Chains as a callback sees them: a hash of every whole chain in order,
 * and how many came in two parts. */
struct chains {
	uint64_t hash;
	uint64_t samples, in_parts;
	uint64_t read_ahead;		/* the session's count */
	bool other_thread;		/* a callback ran off the caller's */
	bool implied_ok;		/* the session's user_marker_implied */
	uint64_t implied;		/* user parts without their marker */
	uint64_t in_record;		/* ... that are the deferred record's
					 * own ips: behind its nr and cookie */
};

static uint64_t hash_ips(uint64_t h, const uint64_t *ips, uint64_t nr)
{
	for (uint64_t i = 0; i < nr; i++)
		h = (h ^ ips[i]) * 0x100000001b3ULL;
	return h;
}

static int hash_chain(void *ctx, const struct cs_stitched *st)
{
	struct chains *c = ctx;

	c->samples++;
	if (gettid() != getpid())
		c->other_thread = true;
	c->hash = hash_ips(c->hash * 31 + st->state, st->chain, st->chain_nr);
	if (st->user_nr) {
		c->in_parts++;
		/* the kernel part is the record's own, not a copy */
		assert_ptr_equal(st->chain, st->event->sample.callchain);
		assert_int_equal(st->chain_nr, st->event->sample.callchain_nr - 2);
		if (!c->implied_ok)
			assert_int_equal(st->user[0], CS_CONTEXT_USER);
		if (marker_implied(st)) {
			const uint64_t marker = CS_CONTEXT_USER;

			c->implied++;
			c->hash = hash_ips(c->hash, &marker, 1);
			/* a mapped file's record: cookie, nr, then the ips
			 * (the fixtures are mapped and in this byte order) */
			if (st->user[-2] == st->cookie &&
			    st->user[-1] == st->user_nr)
				c->in_record++;
		}
		c->hash = hash_ips(c->hash, st->user, st->user_nr);
	}
	return 0;
}

static void run_chains_as(const char *name, bool parts, bool implied,
			  bool complete, bool ahead, struct chains *c)
{
	struct cs_session_opts o = { .sz = sizeof(o), .fd = -1,
				     .chain_parts = parts,
				     .user_marker_implied = implied,
				     .completeness = complete,
				     .read_ahead = ahead };
	const struct cs_output_ops hash_ops = { .sample = hash_chain };
	struct cs_session *s;
	char *path = fixture(name);

	memset(c, 0, sizeof(*c));
	c->implied_ok = implied;
	o.path = path;
	if (cs_session_open(&o, &s) || cs_session_run(s, &hash_ops, c))
		fail_msg("%s: %s", path, cs_session_error(s));
	c->read_ahead = cs_session_stats(s)->read_ahead;
	cs_session_free(s);
	free(path);
}

static void run_chains(const char *name, bool parts, bool complete,
		       bool ahead, struct chains *c)
{
	run_chains_as(name, parts, false, complete, ahead, c);
}

/* chain_parts hands a stitched chain over in two parts, uncopied; without
 * it (callers built before the option) the session joins them: the same
 * chains either way, also where the completeness tally looks at them */
static void chain_parts_join_to_the_same_chains(void **state)
{
	const char *names[] = { "task-defer.data", "syswide-defer.data" };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct chains whole, parts, tallied;

		run_chains(names[i], false, false, false, &whole);
		run_chains(names[i], true, false, false, &parts);
		run_chains(names[i], true, true, false, &tallied);
		assert_int_equal(whole.in_parts, 0);
		assert_int_equal(tallied.in_parts, 0);
		assert_true(parts.in_parts > 10000);
		assert_int_equal(parts.samples, whole.samples);
		assert_int_equal(parts.hash, whole.hash);
		assert_int_equal(tallied.hash, whole.hash);
	}
}

/* user_marker_implied: a mapped file's stitched user parts are the
 * deferred records' own ips, handed over without a copy, their marker
 * implied; put back, the chains are the joined ones, read ahead or not.
 * Without the option (chain_parts_join_to_the_same_chains) every user
 * part begins with its marker, as callers built before it expect. */
static void implied_marker_hands_over_the_records_own_ips(void **state)
{
	const char *names[] = { "task-defer.data", "syswide-defer.data" };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct chains whole, implied, ahead, tallied;

		run_chains(names[i], false, false, false, &whole);
		run_chains_as(names[i], true, true, false, false, &implied);
		run_chains_as(names[i], true, true, false, true, &ahead);
		run_chains_as(names[i], true, true, true, false, &tallied);
		assert_true(implied.in_parts > 10000);
		/* released kernels write no marker: every one is implied */
		assert_int_equal(implied.implied, implied.in_parts);
		assert_int_equal(implied.in_record, implied.in_parts);
		assert_int_equal(implied.hash, whole.hash);
		assert_int_equal(ahead.in_record, implied.in_parts);
		assert_int_equal(ahead.hash, whole.hash);
		/* the tally joins the chains: the option changes nothing */
		assert_int_equal(tallied.in_parts, 0);
		assert_int_equal(tallied.hash, whole.hash);
	}
}

/* read_ahead reads and orders the records on a thread of its own: the
 * same chains, in the same order, handed to the callback on this thread */
static void reading_ahead_delivers_the_same_chains(void **state)
{
	const char *names[] = { "task-defer.data", "syswide-defer.data" };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct chains here, ahead, ahead_whole, whole;

		run_chains(names[i], true, false, false, &here);
		run_chains(names[i], true, false, true, &ahead);
		run_chains(names[i], false, true, true, &ahead_whole);
		run_chains(names[i], false, true, false, &whole);
		assert_int_equal(here.read_ahead, 0);
		/* every record but the round ends and the last round's */
		assert_true(ahead.read_ahead > ahead.samples / 2);
		assert_false(ahead.other_thread);
		assert_int_equal(ahead.samples, here.samples);
		assert_int_equal(ahead.hash, here.hash);
		assert_int_equal(ahead.in_parts, here.in_parts);
		assert_int_equal(ahead_whole.hash, whole.hash);
	}
}

/* The output's error stops the reading thread too; a reading error
 * comes back with the file's name, as without it. */
static void reading_ahead_stops_on_either_side(void **state)
{
	struct cs_session_opts o = { .sz = sizeof(o), .fd = -1,
				     .read_ahead = true };
	struct cs_output_ops stop = { .sample = stop_at_3 };
	char *src = fixture("syswide-defer.data");
	char dst[] = "/tmp/cs-test-session-XXXXXX";
	char inline_msg[512];
	struct cs_session *s;
	uint64_t n = 0, at, end, half;
	uint16_t size = 0;
	unsigned char *data;
	FILE *in;
	size_t got;
	int fd = mkstemp(dst);

	(void)state;
	o.path = src;
	assert_int_equal(cs_session_open(&o, &s), 0);
	assert_int_equal(cs_session_run(s, &stop, &n), 42);
	assert_int_equal(n, 3);
	cs_session_free(s);

	/* a record half way through the data claims 3 bytes: the reading
	 * thread stops there, after handing over what came before */
	in = fopen(src, "rb");
	assert_non_null(in);
	assert_true(fd >= 0);
	data = malloc(8 << 20);
	assert_non_null(data);
	got = fread(data, 1, 8 << 20, in);
	fclose(in);
	memcpy(&at, data + 40, 8);		/* the data section's offset */
	memcpy(&end, data + 48, 8);
	end += at;
	assert_true(end <= got);
	for (half = at + (end - at) / 2; at < half; at += size) {
		memcpy(&size, data + at + 6, 2);
		assert_true(size >= 8);
	}
	data[at + 6] = 3;
	data[at + 7] = 0;
	assert_int_equal(write(fd, data, got), (ssize_t)got);
	free(data);
	close(fd);
	for (int ahead = 0; ahead < 2; ahead++) {
		int err;

		o.path = dst;
		o.read_ahead = ahead;
		err = cs_session_open(&o, &s);
		if (!err)
			err = cs_session_run(s, NULL, NULL);
		assert_int_equal(err, -EBADMSG);
		assert_non_null(strstr(cs_session_error(s), dst));
		assert_non_null(strstr(cs_session_error(s), "claims 3 bytes"));
		if (!ahead)
			snprintf(inline_msg, sizeof(inline_msg), "%s",
				 cs_session_error(s));
		else
			assert_string_equal(cs_session_error(s), inline_msg);
		cs_session_free(s);
	}
	unlink(dst);
	free(src);
}

/* A stop the output returns, of any value, is the run's return, and no
 * sample comes after it: from a mapped file and from a stream, with the
 * records read here or ahead. 1 is the value a reading thread once used
 * to hand back, and it was taken for that: the run went on, reading the
 * input to its end (a live pipe's: until the recorder stopped). From a
 * pipe whose writer stays quiet, the run returns while the writer still
 * holds it open. */
struct stopper {
	uint64_t n;
	int value;
};

static int stop_at_3_with(void *ctx, const struct cs_stitched *st)
{
	struct stopper *p = ctx;

	(void)st;
	assert_true(p->n < 3);	/* nothing after the stop */
	return ++p->n == 3 ? p->value : 0;
}

static void any_stop_the_output_returns_ends_the_run(void **state)
{
	static const int values[] = { 1, 42, -EIO };
	struct cs_output_ops stop = { .sample = stop_at_3_with };
	struct cs_writer_opts piped = { .pipe = true };
	char *mapped = fixture("syswide-defer.data");
	char stream[] = "/tmp/cs-test-stop-XXXXXX";

	(void)state;
	syn_temp(stream, &piped);
	for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
		for (int input = 0; input < 3; input++) {
			for (int ahead = 0; ahead < 2; ahead++) {
				struct cs_session_opts o = {
					.sz = sizeof(o), .fd = -1,
					.read_ahead = ahead,
				};
				struct stopper p = { .value = values[v] };
				struct cs_session *s;
				pid_t child = -1;
				int fd = -1;

				/* a quiet writer blocks a reading thread in
				 * its read: only without one */
				if (input == 2 && ahead)
					continue;
				o.path = input ? "pipe" : mapped;
				if (input)
					child = pipe_from(stream, input == 2, &fd);
				o.fd = fd;
				assert_int_equal(cs_session_open(&o, &s), 0);
				assert_int_equal(cs_session_run(s, &stop, &p),
						 values[v]);
				assert_int_equal(p.n, 3);
				cs_session_free(s);
				if (child < 0)
					continue;
				/* returned while the quiet writer waits */
				if (input == 2)
					assert_int_equal(waitpid(child, NULL, WNOHANG), 0);
				close(fd);
				kill(child, SIGKILL);
				waitpid(child, NULL, 0);
			}
		}
	}
	unlink(stream);
	free(mapped);
}

/* cs_session_interrupt(), as an output's writing thread calls it when a
 * write fails: the run returns 1 even while it waits on a pipe whose
 * writer is quiet, read here or on a reading thread. Called from a
 * thread of its own a little after the run starts (earlier or later, the
 * run returns 1 all the same; without the wake it would return when the
 * pipe closes, half a minute on). */
static void *interrupt_soon(void *arg)
{
	struct timespec t = { 0, 50 * 1000 * 1000 };

	nanosleep(&t, NULL);
	cs_session_interrupt(arg);
	return NULL;
}

static void interrupt_wakes_a_read_on_a_quiet_pipe(void **state)
{
	struct cs_writer_opts piped = { .pipe = true };
	char stream[] = "/tmp/cs-test-interrupt-XXXXXX";

	(void)state;
	syn_temp(stream, &piped);
	for (int ahead = 0; ahead < 2; ahead++) {
		struct cs_session_opts o = { .sz = sizeof(o), .path = "pipe",
					     .read_ahead = ahead };
		pid_t child = pipe_from(stream, true, &o.fd);
		struct cs_session *s;
		pthread_t t;

		assert_int_equal(cs_session_open(&o, &s), 0);
		assert_int_equal(pthread_create(&t, NULL, interrupt_soon, s), 0);
		assert_int_equal(cs_session_run(s, NULL, NULL), 1);
		pthread_join(t, NULL);
		/* returned while the quiet writer waits */
		assert_int_equal(waitpid(child, NULL, WNOHANG), 0);
		cs_session_free(s);
		close(o.fd);
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	unlink(stream);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(task_profile_stitches_every_sample_it_can),
		cmocka_unit_test(system_wide_profile_stitches_across_cpus),
		cmocka_unit_test(chain_parts_join_to_the_same_chains),
		cmocka_unit_test(implied_marker_hands_over_the_records_own_ips),
		cmocka_unit_test(reading_ahead_delivers_the_same_chains),
		cmocka_unit_test(reading_ahead_stops_on_either_side),
		cmocka_unit_test(unmerged_view_shows_samples_and_records_as_recorded),
		cmocka_unit_test(ordered_off_delivers_in_file_order),
		cmocka_unit_test(profile_without_deferral_passes_samples_through),
		cmocka_unit_test(missing_file_error_names_it),
		cmocka_unit_test(truncated_file_fails_with_the_file_name),
		cmocka_unit_test(output_error_stops_the_run),
		cmocka_unit_test(any_stop_the_output_returns_ends_the_run),
		cmocka_unit_test(interrupt_wakes_a_read_on_a_quiet_pipe),
		cmocka_unit_test(synthetic_profile_stitches_by_every_rule),
		cmocka_unit_test(pipe_big_endian_zstd_and_roundless_files_stitch_the_same),
		cmocka_unit_test(late_sample_far_after_its_record_gets_its_ips),
		cmocka_unit_test(recording_cut_short_is_read_and_said),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
