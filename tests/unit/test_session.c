/* test_session.c - the whole pipeline on the real-kernel recordings: every
 * sample comes out once, in time order, stitched as the fixtures' README
 * says; the raw view and file order; errors name the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <callstitch/callstitch.h>
#include "abi/perf_abi.h"

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
	struct cs_session_opts o = {
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
	struct cs_session_opts o = { .path = "/nonexistent/perf.data", .fd = -1 };
	struct cs_session *s;

	(void)state;
	assert_true(cs_session_open(&o, &s) < 0);
	assert_non_null(s);
	assert_non_null(strstr(cs_session_error(s), "/nonexistent/perf.data"));
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
	struct cs_session_opts o = { .path = dst, .fd = -1 };
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
	struct cs_session_opts o = { .fd = -1 };
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(task_profile_stitches_every_sample_it_can),
		cmocka_unit_test(system_wide_profile_stitches_across_cpus),
		cmocka_unit_test(unmerged_view_shows_samples_and_records_as_recorded),
		cmocka_unit_test(ordered_off_delivers_in_file_order),
		cmocka_unit_test(profile_without_deferral_passes_samples_through),
		cmocka_unit_test(missing_file_error_names_it),
		cmocka_unit_test(truncated_file_fails_with_the_file_name),
		cmocka_unit_test(output_error_stops_the_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
