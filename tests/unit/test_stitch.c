/* test_stitch.c - one test per stitching rule of SPEC.md §1, and a stress
 * run against a naive model of the same rules. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "abi/perf_abi.h"
#include "lib/stitch/parts.h"
#include "lib/stitch/stitch.h"

#define MAXCHAIN 64

/* The rules hold whatever form the chains go out in and wherever the
 * records' bytes are: main() runs them once for each of these. */
static struct {
	enum cs_stitch_form form;
	bool stable;		/* deferred records fed stable */
} mode = { CS_STITCH_PARTS, false };

/* A stable deferred record's ips are kept (the fixture's own memory,
 * freed with it) behind this word and their count, so that a user part
 * handed out can be told to be the record's own */
#define KEPT_MAGIC 0x6b6570742d697073ULL

/* what the stitcher handed out, copied at the callback */
struct out {
	uint64_t id;			/* the sample's period: a unique name */
	uint32_t tid;
	enum cs_chain_state state;
	enum cs_missing_reason missing;
	uint64_t cookie;
	uint64_t chain_nr;
	uint64_t chain[MAXCHAIN];
};

struct fix {
	struct cs_stitch *st;
	struct cs_stats stats;
	struct out *out;
	size_t n, cap;
	int fail_at;			/* return 5 at this delivery (1-based) */
	uint64_t next_id;
	uint64_t buf[4 + MAXCHAIN];	/* the caller's reused record buffer */
	uint64_t **kept;		/* stable records' ips, live until freed */
	size_t nr_kept, cap_kept;
};

/*
 * The tests' own sample record: header, tid, id (the sample's time and
 * period), nr, callchain. test_decode decodes it as cs_decode() would
 * decode a perf record: the stitcher decodes a waiting sample again with
 * it when the sample goes out.
 */
static int test_decode(void *ctx, const void *bytes, size_t size,
		       uint64_t offset, bool filed, unsigned int evsel,
		       struct cs_event *ev)
{
	const uint64_t *r = bytes;

	(void)ctx;
	(void)filed;
	(void)evsel;
	assert_true(size >= 4 * 8 && size == (4 + r[3]) * 8);
	memset(ev, 0, sizeof(*ev));
	ev->type = CS_RECORD_SAMPLE;
	ev->bytes = bytes;
	ev->size = (uint16_t)size;
	ev->offset = offset;
	ev->has_id = true;
	ev->id.tid = ev->id.pid = (uint32_t)r[1];
	ev->sample.pid = ev->sample.tid = (uint32_t)r[1];
	ev->sample.time = ev->sample.period = r[2];
	ev->sample.callchain_nr = r[3];
	ev->sample.callchain = &r[4];
	return 0;
}

/* Writes a record of the tests' form into rec (room for 4 + nr u64s). */
static size_t test_record(uint64_t *rec, uint32_t tid, uint64_t id,
			  const uint64_t *chain, size_t nr)
{
	size_t size = (4 + nr) * 8;

	rec[0] = CS_RECORD_SAMPLE | (uint64_t)size << 48;
	rec[1] = tid;
	rec[2] = id;
	rec[3] = nr;
	if (nr)
		memcpy(&rec[4], chain, nr * sizeof(*chain));
	return size;
}

static int collect(void *ctx, const struct cs_stitched *s)
{
	struct fix *f = ctx;
	struct out *o;

	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 256;
		f->out = realloc(f->out, f->cap * sizeof(*f->out));
		assert_non_null(f->out);
	}
	o = &f->out[f->n++];
	memset(o, 0, sizeof(*o));
	o->id = s->event->sample.period;
	o->tid = s->event->sample.tid;
	o->state = s->state;
	o->missing = s->missing;
	o->cookie = s->cookie;
	assert_true(s->chain_nr + s->user_nr <= MAXCHAIN);
	assert_true(cs_parts_nr(s) <= MAXCHAIN);
	o->chain_nr = cs_parts_join(s, o->chain);
	/* a stitched chain comes in two parts, the kernel one as recorded */
	if (s->user_nr) {
		assert_int_not_equal(mode.form, CS_STITCH_JOINED);
		assert_ptr_equal(s->chain, s->event->sample.callchain);
	}
	/* the form callers built before the option get: marker stored */
	if (s->user_nr && mode.form == CS_STITCH_PARTS)
		assert_false(cs_parts_marker_implied(s));
	/* else a stable record's ips go out where they are */
	if (s->user_nr && mode.form == CS_STITCH_PARTS_MARKER_IMPLIED &&
	    mode.stable) {
		assert_int_equal(s->user[-2], KEPT_MAGIC);
		assert_int_equal(s->user[-1], s->user_nr);
	}
	if (f->fail_at && (int)f->n == f->fail_at)
		return 5;
	return 0;
}

static struct fix *fix_new(bool merge)
{
	struct fix *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->next_id = 1;
	assert_int_equal(cs_stitch_new(merge, mode.form, collect, f,
				       test_decode, NULL, &f->stats, &f->st), 0);
	return f;
}

static void fix_free(struct fix *f)
{
	cs_stitch_free(f->st);
	/* the stable records outlive the stitcher, as a mapped file does */
	for (size_t i = 0; i < f->nr_kept; i++)
		free(f->kept[i]);
	free(f->kept);
	free(f->out);
	free(f);
}

/* A copy of ips[0..nr) that lives until fix_free(), behind KEPT_MAGIC
 * and nr: the bytes of a stable record. */
static const uint64_t *keep_ips(struct fix *f, const uint64_t *ips, size_t nr)
{
	uint64_t *k = malloc((2 + nr) * sizeof(*k));

	assert_non_null(k);
	if (f->nr_kept == f->cap_kept) {
		f->cap_kept = f->cap_kept ? 2 * f->cap_kept : 64;
		f->kept = realloc(f->kept, f->cap_kept * sizeof(*f->kept));
		assert_non_null(f->kept);
	}
	f->kept[f->nr_kept++] = k;
	k[0] = KEPT_MAGIC;
	k[1] = nr;
	if (nr)
		memcpy(k + 2, ips, nr * sizeof(*ips));
	return k + 2;
}

/* Feeds a sample whose callchain is chain[0..nr) (built in the reused
 * buffer, then scribbled over). Returns the sample's id. */
static uint64_t feed_chain(struct fix *f, uint32_t tid, const uint64_t *chain,
			   size_t nr, int *err)
{
	struct cs_event ev;
	uint64_t id = f->next_id++;
	size_t size;
	int e;

	assert_true(nr <= MAXCHAIN);
	size = test_record(f->buf, tid, id, chain, nr);
	test_decode(NULL, f->buf, size, 0, false, 0, &ev);
	e = cs_stitch_event(f->st, &ev);
	memset(f->buf, 0xee, sizeof(f->buf));
	if (err)
		*err = e;
	else
		assert_int_equal(e, 0);
	return id;
}

/* A deferred sample: kernel[0..nk), then [USER_DEFERRED, cookie]. */
static uint64_t feed_sample(struct fix *f, uint32_t tid, uint64_t cookie,
			    const uint64_t *kernel, size_t nk)
{
	uint64_t chain[MAXCHAIN];

	if (nk)
		memcpy(chain, kernel, nk * sizeof(*kernel));
	chain[nk] = CS_CONTEXT_USER_DEFERRED;
	chain[nk + 1] = cookie;
	return feed_chain(f, tid, chain, nk + 2, NULL);
}

static int feed_deferred_cpu(struct fix *f, uint32_t tid, uint64_t cookie,
			     const uint64_t *ips, size_t nr, uint32_t cpu)
{
	uint64_t copy[MAXCHAIN];
	struct cs_event ev = { .type = CS_RECORD_CALLCHAIN_DEFERRED };
	int err;

	if (nr)
		memcpy(copy, ips, nr * sizeof(*ips));
	ev.has_id = true;
	ev.id.pid = ev.id.tid = tid;
	ev.id.cpu = cpu;
	ev.deferred.cookie = cookie;
	ev.deferred.nr = nr;
	if (mode.stable) {
		ev.deferred.ips = keep_ips(f, ips, nr);
		return cs_stitch_event_stable(f->st, &ev);
	}
	ev.deferred.ips = copy;
	err = cs_stitch_event(f->st, &ev);
	memset(copy, 0xdd, sizeof(copy));	/* the record's buffer is reused too */
	return err;
}

static void feed_deferred(struct fix *f, uint32_t tid, uint64_t cookie,
			  const uint64_t *ips, size_t nr)
{
	assert_int_equal(feed_deferred_cpu(f, tid, cookie, ips, nr, 0), 0);
}

static void feed_exit(struct fix *f, uint32_t tid)
{
	struct cs_event ev = { .type = CS_RECORD_EXIT };

	ev.fork.pid = ev.fork.tid = tid;
	assert_int_equal(cs_stitch_event(f->st, &ev), 0);
}

static void feed_lost(struct fix *f, uint32_t type)
{
	struct cs_event ev = { .type = type };

	ev.lost.lost = 3;
	assert_int_equal(cs_stitch_event(f->st, &ev), 0);
}

static const struct out *delivered(struct fix *f, size_t i)
{
	assert_true(i < f->n);
	return &f->out[i];
}

static const struct out *delivered_id(struct fix *f, uint64_t id)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->out[i].id == id)
			return &f->out[i];
	fail_msg("sample %lu was not delivered", (unsigned long)id);
	return NULL;
}

/* kernel part, one CS_CONTEXT_USER, then the user stack */
static void assert_chain_eq(const struct out *o, const uint64_t *k, size_t nk,
			    const uint64_t *u, size_t nu)
{
	assert_int_equal(o->chain_nr, nk + 1 + nu);
	for (size_t i = 0; i < nk; i++)
		assert_int_equal(o->chain[i], k[i]);
	assert_int_equal(o->chain[nk], CS_CONTEXT_USER);
	for (size_t i = 0; i < nu; i++)
		assert_int_equal(o->chain[nk + 1 + i], u[i]);
}

static void assert_kernel_only(const struct out *o, const uint64_t *k,
			       size_t nk, uint64_t cookie,
			       enum cs_missing_reason why)
{
	assert_int_equal(o->state, CS_CHAIN_KERNEL_ONLY);
	assert_int_equal(o->missing, why);
	assert_int_equal(o->cookie, cookie);
	assert_int_equal(o->chain_nr, nk);
	for (size_t i = 0; i < nk; i++)
		assert_int_equal(o->chain[i], k[i]);
}

static void assert_stats_add_up(const struct cs_stats *s)
{
	uint64_t by = 0;

	for (int r = 0; r < CS_MISSING__COUNT; r++)
		by += s->kernel_only_by[r];
	assert_int_equal(by, s->kernel_only);
	assert_int_equal(s->samples, s->stitched + s->stitched_late +
			 s->kernel_only + s->original);
	assert_int_equal(s->deferred_records, s->deferred_used +
			 s->duplicate_records + s->orphan_records);
	assert_null(cs_stats_mismatch(s));
}

static void a_count_off_by_one_is_a_mismatch(void **state)
{
	struct cs_stats s = { .samples = 10, .stitched = 4, .stitched_late = 1,
			      .kernel_only = 2, .original = 3,
			      .deferred_records = 5, .deferred_used = 3,
			      .duplicate_records = 1, .orphan_records = 1 };

	(void)state;
	s.kernel_only_by[CS_MISSING_END] = 2;
	assert_null(cs_stats_mismatch(&s));
	s.samples++;
	assert_non_null(strstr(cs_stats_mismatch(&s), "samples read"));
	s.samples--;
	s.orphan_records++;
	assert_non_null(strstr(cs_stats_mismatch(&s), "deferred records"));
	s.orphan_records--;
	s.kernel_only_by[CS_MISSING_LOST] = 1;
	assert_non_null(strstr(cs_stats_mismatch(&s), "by reason"));
}

static const uint64_t K[] = { CS_CONTEXT_KERNEL, 0xffffffff81000010ULL,
			      0xffffffff81000020ULL };
static const uint64_t K2[] = { CS_CONTEXT_KERNEL, 0xffffffff81000030ULL };
static const uint64_t U[] = { 0x401000, 0x401100, 0x401200 };
/* U as a chain holds it: behind its marker */
static const uint64_t U_MARKED[] = { CS_CONTEXT_USER, 0x401000, 0x401100,
				     0x401200 };
static const uint64_t U2[] = { 0x7f0000001000ULL, 0x7f0000002000ULL };
#define TID 100
#define COOKIE 0xb00000006ULL

/* ---- the rules ---- */

static void deferred_record_completes_every_waiting_sample_of_its_cookie(void **state)
{
	struct fix *f = fix_new(true);

	(void)state;
	feed_sample(f, TID, COOKIE, K, 3);
	feed_sample(f, TID, COOKIE, K2, 2);
	feed_sample(f, TID, COOKIE, K, 3);
	assert_int_equal(f->n, 0);		/* they wait */
	assert_int_equal(cs_stitch_pending(f->st), 3);
	feed_deferred(f, TID, COOKIE, U, 3);
	assert_int_equal(f->n, 3);
	assert_chain_eq(delivered(f, 0), K, 3, U, 3);
	assert_chain_eq(delivered(f, 1), K2, 2, U, 3);
	assert_chain_eq(delivered(f, 2), K, 3, U, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(delivered(f, i)->state, CS_CHAIN_STITCHED);
		assert_int_equal(delivered(f, i)->cookie, COOKIE);
		assert_int_equal(delivered(f, i)->id, (uint64_t)i + 1);
	}
	assert_int_equal(f->stats.stitched, 3);
	assert_int_equal(f->stats.max_pending, 3);
	assert_int_equal(cs_stitch_pending(f->st), 0);
	assert_stats_add_up(&f->stats);
	fix_free(f);
}

static void match_is_on_tid_and_cookie(void **state)
{
	struct fix *f = fix_new(true);

	(void)state;
	feed_sample(f, TID, COOKIE, K, 3);
	feed_sample(f, TID + 1, COOKIE, K2, 2);	/* same cookie, other task */
	feed_deferred(f, TID + 1, COOKIE, U2, 2);
	assert_int_equal(f->n, 1);
	assert_int_equal(delivered(f, 0)->tid, TID + 1);
	assert_chain_eq(delivered(f, 0), K2, 2, U2, 2);
	feed_deferred(f, TID, COOKIE, U, 3);
	assert_int_equal(f->n, 2);
	assert_chain_eq(delivered(f, 1), K, 3, U, 3);
	fix_free(f);
}

static void late_sample_is_stitched_from_the_last_record(void **state)
{
	struct fix *f = fix_new(true);

	(void)state;
	/* the record arrives first; a sample of the same kernel entry follows */
	feed_deferred(f, TID, COOKIE, U, 3);
	feed_sample(f, TID, COOKIE, K, 3);
	assert_int_equal(f->n, 1);
	assert_chain_eq(delivered(f, 0), K, 3, U, 3);
	assert_int_equal(delivered(f, 0)->state, CS_CHAIN_STITCHED_LATE);
	assert_int_equal(f->stats.stitched_late, 1);
	assert_int_equal(f->stats.stitched, 0);
	assert_int_equal(cs_stitch_pending(f->st), 0);
	assert_stats_add_up(&f->stats);
	fix_free(f);
}

static void late_sample_after_stitched_ones_uses_the_same_record(void **state)
{
	struct fix *f = fix_new(true);

	(void)state;
	feed_sample(f, TID, COOKIE, K, 3);
	feed_deferred(f, TID, COOKIE, U, 3);
	feed_sample(f, TID, COOKIE, K2, 2);
	assert_int_equal(f->n, 2);
	assert_int_equal(delivered(f, 0)->state, CS_CHAIN_STITCHED);
	assert_int_equal(delivered(f, 1)->state, CS_CHAIN_STITCHED_LATE);
	assert_chain_eq(delivered(f, 1), K2, 2, U, 3);
	fix_free(f);
}

static void duplicate_record_changes_nothing(void **state)
{
	struct fix *f = fix_new(true);

	(void)state;
	feed_sample(f, TID, COOKIE, K, 3);
	feed_deferred(f, TID, COOKIE, U, 3);
	feed_deferred(f, TID, COOKIE, U2, 2);	/* second copy, even if it differs */
	assert_int_equal(f->n, 1);
	assert_int_equal(f->stats.duplicate_records, 1);
	assert_int_equal(f->stats.orphan_records, 0);
	assert_int_equal(f->stats.deferred_records, 2);
	/* a late sample still gets the first record's stack */
	feed_sample(f, TID, COOKIE, K, 3);
	assert_chain_eq(delivered(f, 1), K, 3, U, 3);
	fix_free(f);
}

static void duplicate_of_an_overtaken_record_changes_nothing(void **state)
{
	struct fix *f = fix_new(true);

	(void)state;
	feed_sample(f, TID, COOKIE, K, 3);
	feed_deferred(f, TID, COOKIE, U, 3);
	feed_deferred(f, TID, COOKIE + 1, U2, 2);	/* an entry without samples */
	feed_sample(f, TID, COOKIE + 2, K2, 2);	/* a newer entry waits */
	feed_deferred(f, TID, COOKIE, U2, 2);	/* a late copy of the first */
	assert_int_equal(f->stats.duplicate_records, 1);
	assert_int_equal(f->n, 1);
	assert_int_equal(cs_stitch_pending(f->st), 1);	/* still waits */
	feed_deferred(f, TID, COOKIE + 2, U, 3);
	assert_int_equal(f->n, 2);
	assert_chain_eq(delivered(f, 1), K2, 2, U, 3);
	assert_int_equal(delivered(f, 1)->state, CS_CHAIN_STITCHED);
	fix_free(f);
}

static void orphan_record_is_counted_and_ignored(void **state)
{
	struct fix *f = fix_new(true);

	(void)state;
	feed_deferred(f, TID, COOKIE, U, 3);
	assert_int_equal(f->n, 0);
	assert_int_equal(f->stats.orphan_records, 1);
	assert_int_equal(f->stats.deferred_records, 1);
	assert_int_equal(cs_stitch_pending(f->st), 0);
	fix_free(f);
}

static void newer_cookie_sample_releases_older_waiting_samples(void **state)
{
	struct fix *f = fix_new(true);

	(void)state;
	feed_sample(f, TID, COOKIE, K, 3);
	feed_sample(f, TID, COOKIE, K2, 2);
	feed_sample(f, TID, COOKIE + 1, K, 3);	/* a newer kernel entry */
	assert_int_equal(f->n, 2);
	assert_kernel_only(delivered(f, 0), K, 3, COOKIE, CS_MISSING_SUPERSEDED);
	assert_kernel_only(delivered(f, 1), K2, 2, COOKIE, CS_MISSING_SUPERSEDED);
	assert_int_equal(f->stats.kernel_only_by[CS_MISSING_SUPERSEDED], 2);
	assert_int_equal(cs_stitch_pending(f->st), 1);
	feed_deferred(f, TID, COOKIE + 1, U, 3);
	assert_chain_eq(delivered(f, 2), K, 3, U, 3);
	assert_stats_add_up(&f->stats);
	fix_free(f);
}

static void newer_cookie_record_releases_older_waiting_samples(void **state)
{
	struct fix *f = fix_new(true);

	(void)state;
	feed_sample(f, TID, COOKIE, K, 3);
	feed_deferred(f, TID, COOKIE + 1, U, 3);
	assert_int_equal(f->n, 1);
	assert_kernel_only(delivered(f, 0), K, 3, COOKIE, CS_MISSING_SUPERSEDED);
	assert_int_equal(f->stats.orphan_records, 1);
	assert_int_equal(cs_stitch_pending(f->st), 0);
	fix_free(f);
}

static void lost_records_mark_superseded_samples_as_lost(void **state)
{
	struct fix *f = fix_new(true);

	(void)state;
	feed_sample(f, TID, COOKIE, K, 3);
	feed_sample(f, TID + 1, 7, K, 3);
	feed_lost(f, CS_RECORD_LOST);		/* the record may be in there */
	feed_sample(f, TID, COOKIE + 1, K2, 2);
	assert_kernel_only(delivered(f, 0), K, 3, COOKIE, CS_MISSING_LOST);
	assert_int_equal(f->stats.kernel_only_by[CS_MISSING_LOST], 1);
	/* a wait that began after the loss is plainly superseded */
	feed_sample(f, TID, COOKIE + 2, K2, 2);
	assert_kernel_only(delivered(f, 1), K2, 2, COOKIE + 1,
			   CS_MISSING_SUPERSEDED);
	/* LOST_SAMPLES counts as a loss too */
	feed_lost(f, CS_RECORD_LOST_SAMPLES);
	feed_sample(f, TID + 1, 8, K, 3);
	assert_kernel_only(delivered(f, 2), K, 3, 7, CS_MISSING_LOST);
	assert_int_equal(cs_stitch_flush(f->st), 0);
	assert_stats_add_up(&f->stats);
	fix_free(f);
}

static void exit_releases_waiting_samples(void **state)
{
	struct fix *f = fix_new(true);

	(void)state;
	feed_sample(f, TID, COOKIE, K, 3);
	feed_sample(f, TID + 1, COOKIE, K2, 2);
	feed_exit(f, TID);
	assert_int_equal(f->n, 1);
	assert_kernel_only(delivered(f, 0), K, 3, COOKIE, CS_MISSING_EXITED);
	assert_int_equal(cs_stitch_pending(f->st), 1);
	/* the tid may be reused: nothing of the old task is left */
	feed_sample(f, TID, COOKIE, K, 3);
	assert_int_equal(f->n, 1);
	feed_exit(f, TID + 7);			/* unknown tid: nothing happens */
	assert_int_equal(f->n, 1);
	fix_free(f);
}

static void end_of_input_releases_waiting_samples_in_arrival_order(void **state)
{
	struct fix *f = fix_new(true);
	uint64_t ids[4];

	(void)state;
	ids[0] = feed_sample(f, 5, 50, K, 3);
	ids[1] = feed_sample(f, 900, 90, K2, 2);
	ids[2] = feed_sample(f, 5, 50, K2, 2);
	ids[3] = feed_sample(f, 17, 70, K, 3);
	assert_int_equal(cs_stitch_flush(f->st), 0);
	assert_int_equal(f->n, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(delivered(f, i)->id, ids[i]);
		assert_int_equal(delivered(f, i)->state, CS_CHAIN_KERNEL_ONLY);
		assert_int_equal(delivered(f, i)->missing, CS_MISSING_END);
	}
	assert_kernel_only(delivered(f, 1), K2, 2, 90, CS_MISSING_END);
	assert_int_equal(f->stats.kernel_only_by[CS_MISSING_END], 4);
	assert_int_equal(cs_stitch_pending(f->st), 0);
	assert_stats_add_up(&f->stats);
	fix_free(f);
}

static void record_from_another_cpu_later_in_time_stitches(void **state)
{
	struct fix *f = fix_new(true);

	(void)state;
	/* the task migrated between its samples and its return to user */
	feed_sample(f, TID, COOKIE, K, 3);
	feed_sample(f, TID + 1, 1, K2, 2);
	feed_deferred(f, TID + 1, 1, U2, 2);
	assert_int_equal(feed_deferred_cpu(f, TID, COOKIE, U, 3, 1), 0);
	assert_int_equal(f->n, 2);
	assert_chain_eq(delivered_id(f, 1), K, 3, U, 3);
	assert_int_equal(delivered_id(f, 1)->state, CS_CHAIN_STITCHED);
	fix_free(f);
}

static void samples_without_deferral_pass_through(void **state)
{
	struct fix *f = fix_new(true);
	const uint64_t ordinary[] = { CS_CONTEXT_KERNEL, 0xffffffff81000010ULL,
				      CS_CONTEXT_USER, 0x401000, 0x401100 };
	const uint64_t kthread[] = { CS_CONTEXT_KERNEL, 0xffffffff81000010ULL };

	(void)state;
	feed_sample(f, TID, COOKIE, K, 3);	/* one waits meanwhile */
	feed_chain(f, TID, ordinary, 5, NULL);
	feed_chain(f, 2, kthread, 2, NULL);
	feed_chain(f, 3, NULL, 0, NULL);	/* no callchain at all */
	assert_int_equal(f->n, 3);
	assert_int_equal(delivered(f, 0)->state, CS_CHAIN_ORIGINAL);
	assert_int_equal(delivered(f, 0)->chain_nr, 5);
	assert_memory_equal(delivered(f, 0)->chain, ordinary, sizeof(ordinary));
	assert_int_equal(delivered(f, 1)->chain_nr, 2);
	assert_int_equal(delivered(f, 2)->chain_nr, 0);
	assert_int_equal(delivered(f, 0)->cookie, 0);
	assert_int_equal(f->stats.original, 3);
	assert_int_equal(f->stats.samples_deferred, 1);
	assert_int_equal(cs_stitch_pending(f->st), 1);	/* not released */
	fix_free(f);
}

static void marker_first_ips_get_no_second_marker(void **state)
{
	struct fix *f = fix_new(true);
	const uint64_t draft[] = { CS_CONTEXT_USER, 0x401000, 0x401100 };

	(void)state;
	feed_sample(f, TID, COOKIE, K, 3);
	feed_deferred(f, TID, COOKIE, draft, 3);
	assert_int_equal(delivered(f, 0)->chain_nr, 3 + 3);
	assert_memory_equal(delivered(f, 0)->chain, K, sizeof(K));
	assert_memory_equal(delivered(f, 0)->chain + 3, draft, sizeof(draft));
	fix_free(f);
}

/* JITs may put code at or above PERF_CONTEXT_MAX: in a deferred record
 * those are user addresses, never markers */
static void deferred_ips_above_context_max_are_addresses(void **state)
{
	struct fix *f = fix_new(true);
	const uint64_t jit[] = { 0xfffffffffffff100ULL, 0x401000,
				 (uint64_t)-1, CS_CONTEXT_KERNEL };

	(void)state;
	feed_sample(f, TID, COOKIE, K, 3);
	feed_deferred(f, TID, COOKIE, jit, 4);
	assert_int_equal(delivered(f, 0)->state, CS_CHAIN_STITCHED);
	assert_chain_eq(delivered(f, 0), K, 3, jit, 4);
	fix_free(f);
}

static void user_mode_sample_gets_the_user_stack_alone(void **state)
{
	struct fix *f = fix_new(true);

	(void)state;
	feed_sample(f, TID, COOKIE, NULL, 0);	/* [USER_DEFERRED, cookie] */
	feed_deferred(f, TID, COOKIE, U, 3);
	assert_chain_eq(delivered(f, 0), NULL, 0, U, 3);
	fix_free(f);
}

static void waiting_sample_is_copied(void **state)
{
	struct fix *f = fix_new(true);
	const uint64_t k[] = { CS_CONTEXT_KERNEL, 1, 2, 3, 4, 5, 6, 7, 8, 9 };

	(void)state;
	/* feed_sample scribbles over the buffer the sample was read from */
	feed_sample(f, TID, COOKIE, k, 10);
	feed_sample(f, TID, COOKIE, K, 3);
	feed_deferred(f, TID, COOKIE, U, 3);
	assert_chain_eq(delivered(f, 0), k, 10, U, 3);
	assert_chain_eq(delivered(f, 1), K, 3, U, 3);
	fix_free(f);
}

/* what a sample handed out points at, for the stable-bytes tests */
struct where {
	const void *bytes;
	const uint64_t *callchain;
	uint64_t offset;
	uint64_t user[3];
	int n;
};

static int collect_where(void *ctx, const struct cs_stitched *s)
{
	struct where *w = ctx;

	w->bytes = s->event->bytes;
	w->callchain = s->event->sample.callchain;
	w->offset = s->event->offset;
	assert_int_equal(s->chain_nr, 3);
	assert_int_equal(s->user_nr, 1 + 3);
	memcpy(w->user, s->user + 1, sizeof(w->user));
	w->n++;
	return 0;
}

static void stable_waiting_sample_keeps_pointing_at_its_record(void **state)
{
	struct cs_stats stats = { 0 };
	struct where w = { 0 };
	const uint64_t chain[5] = { K[0], K[1], K[2], CS_CONTEXT_USER_DEFERRED,
				    COOKIE };
	uint64_t rec[4 + 5], ips[3] = { 1, 2, 3 };
	size_t size = test_record(rec, TID, 7, chain, 5);
	struct cs_event ev, d = { .type = CS_RECORD_CALLCHAIN_DEFERRED,
				  .has_id = true };
	struct cs_stitch *st;

	(void)state;
	assert_int_equal(cs_stitch_new(true, CS_STITCH_PARTS, collect_where, &w, test_decode,
				       NULL, &stats, &st), 0);
	test_decode(NULL, rec, size, 0x1238, false, 0, &ev);
	assert_int_equal(cs_stitch_event_stable(st, &ev), 0);
	memset(&ev, 0, sizeof(ev));	/* the decoded event is not kept */
	d.id.tid = TID;
	d.deferred.cookie = COOKIE;
	d.deferred.nr = 3;
	d.deferred.ips = ips;
	assert_int_equal(cs_stitch_event(st, &d), 0);
	assert_int_equal(w.n, 1);
	assert_ptr_equal(w.bytes, rec);		/* not copied */
	assert_ptr_equal(w.callchain, &rec[4]);
	assert_int_equal(w.offset, 0x1238);	/* decoded again from its place */
	assert_int_equal(w.user[0], 1);
	assert_int_equal(w.user[2], 3);
	assert_int_equal(stats.stitched, 1);
	cs_stitch_free(st);
}

/* what the last sample handed out held as its user part */
struct user_seen {
	const uint64_t *user;
	uint64_t user_nr;
	uint64_t chain[MAXCHAIN];	/* the whole stack, joined */
	uint64_t chain_nr;
	enum cs_chain_state state;
	int n;
};

static int collect_user(void *ctx, const struct cs_stitched *s)
{
	struct user_seen *u = ctx;

	u->user = s->user;
	u->user_nr = s->user_nr;
	u->state = s->state;
	assert_true(cs_parts_nr(s) <= MAXCHAIN);
	u->chain_nr = cs_parts_join(s, u->chain);
	u->n++;
	return 0;
}

/* A stitcher in form that has seen a waiting sample of K and then the
 * deferred record ips[0..nr), stable or not. */
static struct cs_stitch *user_part_of(enum cs_stitch_form form,
				      struct user_seen *u, struct cs_stats *stats,
				      const uint64_t *ips, uint64_t nr,
				      bool stable)
{
	const uint64_t chain[5] = { K[0], K[1], K[2], CS_CONTEXT_USER_DEFERRED,
				    COOKIE };
	uint64_t rec[4 + 5];
	size_t size = test_record(rec, TID, 1, chain, 5);
	struct cs_event ev, d = { .type = CS_RECORD_CALLCHAIN_DEFERRED,
				  .has_id = true };
	struct cs_stitch *st;

	assert_int_equal(cs_stitch_new(true, form, collect_user, u,
				       test_decode, NULL, stats, &st), 0);
	test_decode(NULL, rec, size, 0, false, 0, &ev);
	assert_int_equal(cs_stitch_event(st, &ev), 0);
	d.id.tid = TID;
	d.deferred.cookie = COOKIE;
	d.deferred.nr = nr;
	d.deferred.ips = ips;
	if (stable)
		assert_int_equal(cs_stitch_event_stable(st, &d), 0);
	else
		assert_int_equal(cs_stitch_event(st, &d), 0);
	assert_int_equal(u->n, 1);
	assert_int_equal(u->state, CS_CHAIN_STITCHED);
	return st;
}

/* A sample of the same entry after its record: stitched late. */
static void feed_late(struct cs_stitch *st, uint64_t id)
{
	const uint64_t chain[4] = { K2[0], K2[1], CS_CONTEXT_USER_DEFERRED,
				    COOKIE };
	uint64_t rec[4 + 4];
	size_t size = test_record(rec, TID, id, chain, 4);
	struct cs_event ev;

	test_decode(NULL, rec, size, 0, false, 0, &ev);
	assert_int_equal(cs_stitch_event(st, &ev), 0);
	memset(rec, 0xee, sizeof(rec));
}

static void assert_joined(const struct user_seen *u, const uint64_t *k,
			  size_t nk, const uint64_t *user, size_t nu)
{
	assert_int_equal(u->chain_nr, nk + nu);
	assert_memory_equal(u->chain, k, nk * sizeof(*k));
	assert_memory_equal(u->chain + nk, user, nu * sizeof(*user));
}

/* The marker implied, a stable record's ips are the user part itself -
 * for the samples it completes and for those of its entry that come
 * late - with the marker put back by whoever joins the parts. */
static void implied_marker_hands_out_the_stable_records_own_ips(void **state)
{
	uint64_t ips[3] = { U[0], U[1], U[2] };
	struct cs_stats stats = { 0 };
	struct user_seen u = { 0 };
	struct cs_stitch *st;

	(void)state;
	st = user_part_of(CS_STITCH_PARTS_MARKER_IMPLIED, &u, &stats, ips, 3,
			  true);
	assert_ptr_equal(u.user, ips);			/* not copied */
	assert_int_equal(u.user_nr, 3);
	assert_joined(&u, K, 3, U_MARKED, 4);
	feed_late(st, 2);
	assert_int_equal(u.n, 2);
	assert_int_equal(u.state, CS_CHAIN_STITCHED_LATE);
	assert_ptr_equal(u.user, ips);
	assert_joined(&u, K2, 2, U_MARKED, 4);
	assert_int_equal(stats.stitched_late, 1);
	cs_stitch_free(st);
}

/* ... and a record whose bytes do not last (a pipe's) is copied as it
 * is, without a marker moved in front: late samples still get it. */
static void implied_marker_copies_an_unstable_record_as_it_is(void **state)
{
	uint64_t ips[3] = { U[0], U[1], U[2] };
	struct cs_stats stats = { 0 };
	struct user_seen u = { 0 };
	struct cs_stitch *st;

	(void)state;
	st = user_part_of(CS_STITCH_PARTS_MARKER_IMPLIED, &u, &stats, ips, 3,
			  false);
	memset(ips, 0xdd, sizeof(ips));		/* the buffer is reused */
	assert_ptr_not_equal(u.user, ips);
	assert_int_equal(u.user_nr, 3);
	assert_joined(&u, K, 3, U_MARKED, 4);
	feed_late(st, 2);
	assert_int_equal(u.state, CS_CHAIN_STITCHED_LATE);
	assert_int_equal(u.user_nr, 3);
	assert_joined(&u, K2, 2, U_MARKED, 4);
	cs_stitch_free(st);
}

/* Drafts of the feature put a marker first themselves: with the marker
 * implied it is neither doubled nor dropped, and the ips stay where they
 * are; the chain is what the stored form gives. */
static void implied_marker_keeps_a_drafts_own_marker(void **state)
{
	static const uint64_t drafts[2][3] = {
		{ CS_CONTEXT_USER, 0x401000, 0x401100 },
		{ CS_CONTEXT_USER_DEFERRED, 0x401000, 0x401100 },
	};

	(void)state;
	for (int i = 0; i < 2; i++) {
		uint64_t ips[3] = { drafts[i][0], drafts[i][1], drafts[i][2] };
		struct cs_stats stats = { 0 }, stored_stats = { 0 };
		struct user_seen u = { 0 }, stored = { 0 };
		struct cs_stitch *st, *st2;

		st = user_part_of(CS_STITCH_PARTS_MARKER_IMPLIED, &u, &stats,
				  ips, 3, true);
		st2 = user_part_of(CS_STITCH_PARTS, &stored, &stored_stats,
				   ips, 3, true);
		assert_ptr_equal(u.user, ips);
		assert_int_equal(u.user_nr, 3);
		assert_joined(&u, K, 3, drafts[i], 3);
		assert_int_equal(stored.chain_nr, u.chain_nr);
		assert_memory_equal(stored.chain, u.chain, u.chain_nr * 8);
		cs_stitch_free(st);
		cs_stitch_free(st2);
	}
}

/* Callers built before the option get the marker stored in front, so
 * even a stable record's ips are copied behind it; joined chains have it
 * too. */
static void stored_marker_and_joined_forms_keep_the_marker(void **state)
{
	uint64_t ips[3] = { U[0], U[1], U[2] };
	struct cs_stats stats = { 0 };
	struct user_seen u = { 0 };
	struct cs_stitch *st;

	(void)state;
	st = user_part_of(CS_STITCH_PARTS, &u, &stats, ips, 3, true);
	assert_int_equal(u.user_nr, 4);
	assert_memory_equal(u.user, U_MARKED, sizeof(U_MARKED));
	assert_joined(&u, K, 3, U_MARKED, 4);
	cs_stitch_free(st);

	memset(&u, 0, sizeof(u));
	st = user_part_of(CS_STITCH_JOINED, &u, &stats, ips, 3, true);
	assert_int_equal(u.user_nr, 0);
	assert_joined(&u, K, 3, U_MARKED, 4);
	feed_late(st, 2);
	assert_joined(&u, K2, 2, U_MARKED, 4);
	cs_stitch_free(st);
}

static int refuse_decode(void *ctx, const void *bytes, size_t size,
			 uint64_t offset, bool filed, unsigned int evsel,
			 struct cs_event *ev)
{
	(void)ctx;
	(void)filed;
	(void)evsel;
	(void)bytes;
	(void)size;
	(void)offset;
	(void)ev;
	return -EBADMSG;
}

static void decode_error_of_a_waiting_sample_is_returned(void **state)
{
	struct fix *f = fix_new(true);
	struct cs_stitch *st;

	(void)state;
	/* the same samples, but a stitcher whose hook refuses them */
	assert_int_equal(cs_stitch_new(true, CS_STITCH_PARTS, collect, f, refuse_decode, NULL,
				       &f->stats, &st), 0);
	cs_stitch_free(f->st);
	f->st = st;
	feed_sample(f, TID, COOKIE, K, 3);
	assert_int_equal(feed_deferred_cpu(f, TID, COOKIE, U, 3, 0), -EBADMSG);
	assert_int_equal(f->n, 0);
	feed_sample(f, TID + 1, COOKIE, K, 3);
	assert_int_equal(cs_stitch_flush(f->st), -EBADMSG);
	assert_int_equal(f->n, 0);
	fix_free(f);
}

/* what deep_kernel_parts_are_whole saw: every chain checked at once */
struct deep_seen {
	uint64_t nk[2];
	int n;
};

static int collect_deep(void *ctx, const struct cs_stitched *s)
{
	struct deep_seen *d = ctx;
	/* in two parts, or joined: the user part after the kernel one */
	uint64_t nk = s->user_nr ? s->chain_nr : s->chain_nr - 1 - 3;
	const uint64_t *user = s->user_nr ? s->user : s->chain + nk;

	assert_true(d->n < 2);
	d->nk[d->n++] = nk;
	assert_int_equal(s->chain[0], CS_CONTEXT_KERNEL);
	for (uint64_t i = 1; i < nk; i++)
		assert_int_equal(s->chain[i], 0xffffffff81000000ULL + i);
	assert_true(!s->user_nr || s->user_nr == 1 + 3);
	assert_int_equal(user[0], CS_CONTEXT_USER);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(user[1 + i], U[i]);
	return 0;
}

/* A kernel part longer than the room the stitcher keeps before a
 * record's user part when it joins them, then a short one: both come out
 * whole, joined or in two parts. */
static void deep_kernel_parts_come_out_whole(bool parts)
{
	enum { DEEP = 700 };
	struct cs_stats stats = { 0 };
	struct deep_seen seen = { 0 };
	uint64_t *chain = calloc(DEEP + 2, sizeof(*chain));
	uint64_t *rec = calloc(4 + DEEP + 2, sizeof(*rec));
	uint64_t *rec2 = calloc(4 + 5, sizeof(*rec2));
	struct cs_event ev, d = { .type = CS_RECORD_CALLCHAIN_DEFERRED,
				  .has_id = true };
	struct cs_stitch *st;
	size_t size;

	assert_non_null(chain);
	assert_non_null(rec);
	assert_non_null(rec2);
	assert_int_equal(cs_stitch_new(true, parts ? CS_STITCH_PARTS : CS_STITCH_JOINED, collect_deep, &seen,
				       test_decode, NULL, &stats, &st), 0);
	chain[0] = CS_CONTEXT_KERNEL;
	for (size_t i = 1; i < DEEP; i++)
		chain[i] = 0xffffffff81000000ULL + i;
	chain[DEEP] = CS_CONTEXT_USER_DEFERRED;
	chain[DEEP + 1] = COOKIE;
	size = test_record(rec, TID, 1, chain, DEEP + 2);
	test_decode(NULL, rec, size, 0, false, 0, &ev);
	assert_int_equal(cs_stitch_event_stable(st, &ev), 0);
	chain[3] = CS_CONTEXT_USER_DEFERRED;
	chain[4] = COOKIE;
	size = test_record(rec2, TID, 2, chain, 5);
	test_decode(NULL, rec2, size, 0, false, 0, &ev);
	assert_int_equal(cs_stitch_event_stable(st, &ev), 0);
	d.id.tid = TID;
	d.deferred.cookie = COOKIE;
	d.deferred.nr = 3;
	d.deferred.ips = U;
	assert_int_equal(cs_stitch_event(st, &d), 0);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.nk[0], DEEP);
	assert_int_equal(seen.nk[1], 3);
	/* late (the record was seen): a deep one goes out at once */
	chain[3] = 0xffffffff81000003ULL;
	chain[4] = 0xffffffff81000004ULL;
	size = test_record(rec, TID, 3, chain, DEEP + 2);
	test_decode(NULL, rec, size, 0, false, 0, &ev);
	seen.n = 1;
	assert_int_equal(cs_stitch_event_stable(st, &ev), 0);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.nk[1], DEEP);
	assert_int_equal(stats.stitched, 2);
	assert_int_equal(stats.stitched_late, 1);
	cs_stitch_free(st);
	free(chain);
	free(rec);
	free(rec2);
}

static void deep_kernel_parts_are_whole(void **state)
{
	(void)state;
	deep_kernel_parts_come_out_whole(false);
	deep_kernel_parts_come_out_whole(true);
}

static void unmerged_mode_delivers_samples_as_recorded(void **state)
{
	struct fix *f = fix_new(false);

	(void)state;
	feed_sample(f, TID, COOKIE, K, 3);
	assert_int_equal(f->n, 1);
	assert_int_equal(delivered(f, 0)->state, CS_CHAIN_UNMERGED);
	assert_int_equal(delivered(f, 0)->cookie, COOKIE);
	assert_int_equal(delivered(f, 0)->chain_nr, 5);
	assert_int_equal(delivered(f, 0)->chain[3], CS_CONTEXT_USER_DEFERRED);
	assert_int_equal(delivered(f, 0)->chain[4], COOKIE);
	feed_deferred(f, TID, COOKIE, U, 3);
	assert_int_equal(f->n, 1);
	assert_int_equal(f->stats.deferred_records, 1);
	assert_int_equal(f->stats.samples_deferred, 1);
	assert_int_equal(cs_stitch_pending(f->st), 0);
	assert_stats_add_up(&f->stats);
	fix_free(f);
}

static void callback_error_stops_and_is_returned(void **state)
{
	struct fix *f = fix_new(true);
	int err;

	(void)state;
	feed_sample(f, TID, COOKIE, K, 3);
	feed_sample(f, TID, COOKIE, K, 3);
	f->fail_at = 1;
	assert_int_equal(feed_deferred_cpu(f, TID, COOKIE, U, 3, 0), 5);
	f->fail_at = 2;
	feed_chain(f, TID, K, 3, &err);
	assert_int_equal(err, 5);
	fix_free(f);			/* what still waits is freed: ASan checks */
}

/* ---- stress against a naive model ---- */

static uint64_t rng = 0x2545f4914f6cdd1dULL;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

#define NTID 40

/* The rules once more, written plainly: one global list of waiting
 * samples, scanned; the last record per tid in a plain array. */
struct model {
	struct mwait {
		uint64_t id, cookie, seq_lost;
		uint32_t tid;
		uint64_t k[4];
		size_t nk;
	} *wait;
	size_t nwait;
	struct { bool has; uint64_t cookie; uint64_t ips[8]; size_t nr; } rec[NTID];
	uint64_t lost;
	struct out *out;
	size_t n;
};

static void model_out(struct model *m, const struct mwait *w,
		      enum cs_chain_state st, enum cs_missing_reason why,
		      const uint64_t *ips, size_t nr)
{
	struct out *o = &m->out[m->n++];

	memset(o, 0, sizeof(*o));
	o->id = w->id;
	o->tid = w->tid;
	o->state = st;
	o->missing = why;
	o->cookie = w->cookie;
	memcpy(o->chain, w->k, w->nk * 8);
	o->chain_nr = w->nk;
	if (st == CS_CHAIN_STITCHED || st == CS_CHAIN_STITCHED_LATE) {
		if (nr && ips[0] != CS_CONTEXT_USER)
			o->chain[o->chain_nr++] = CS_CONTEXT_USER;
		memcpy(o->chain + o->chain_nr, ips, nr * 8);
		o->chain_nr += nr;
	}
}

/* releases the tid's waiting samples, those of `cookie` only if match */
static void model_release(struct model *m, uint32_t tid, bool by_record,
			  enum cs_missing_reason why)
{
	size_t j = 0;

	for (size_t i = 0; i < m->nwait; i++) {
		struct mwait *w = &m->wait[i];

		if (w->tid != tid) {
			m->wait[j++] = *w;
			continue;
		}
		if (by_record)
			model_out(m, w, CS_CHAIN_STITCHED, 0, m->rec[tid].ips,
				  m->rec[tid].nr);
		else if (why == CS_MISSING_SUPERSEDED && w->seq_lost != m->lost)
			model_out(m, w, CS_CHAIN_KERNEL_ONLY, CS_MISSING_LOST,
				  NULL, 0);
		else
			model_out(m, w, CS_CHAIN_KERNEL_ONLY, why, NULL, 0);
	}
	m->nwait = j;
}

static const struct mwait *model_waiting(struct model *m, uint32_t tid)
{
	for (size_t i = 0; i < m->nwait; i++)
		if (m->wait[i].tid == tid)
			return &m->wait[i];
	return NULL;
}

static void every_sample_is_delivered_once_under_random_stress(void **state)
{
	enum { EVENTS = 100000 };
	struct fix *f = fix_new(true);
	struct model m = { 0 };
	uint64_t cur[NTID], next_cookie = 1000;
	size_t nsamples = 0;

	(void)state;
	m.wait = calloc(EVENTS, sizeof(*m.wait));
	m.out = calloc(EVENTS, sizeof(*m.out));
	for (int t = 0; t < NTID; t++)
		cur[t] = next_cookie++;

	for (int e = 0; e < EVENTS; e++) {
		uint32_t tid = (uint32_t)(rnd() % NTID);
		unsigned int what = (unsigned int)(rnd() % 100);

		if (what < 50) {		/* a deferred sample of the current entry */
			uint64_t k[4] = { CS_CONTEXT_KERNEL, rnd() | 1ULL << 63,
					  rnd() | 1ULL << 63, rnd() | 1ULL << 63 };
			size_t nk = 1 + rnd() % 3;
			const struct mwait *w = model_waiting(&m, tid);
			struct mwait nw = { .tid = tid, .cookie = cur[tid], .nk = nk };

			nw.id = feed_sample(f, tid, cur[tid], k, nk);
			memcpy(nw.k, k, sizeof(k));
			nsamples++;
			if (w && w->cookie == cur[tid]) {
				nw.seq_lost = w->seq_lost;
				m.wait[m.nwait++] = nw;
			} else if (m.rec[tid].has && m.rec[tid].cookie == cur[tid]) {
				model_out(&m, &nw, CS_CHAIN_STITCHED_LATE, 0,
					  m.rec[tid].ips, m.rec[tid].nr);
			} else {
				model_release(&m, tid, false, CS_MISSING_SUPERSEDED);
				nw.seq_lost = m.lost;
				m.wait[m.nwait++] = nw;
			}
		} else if (what < 70) {		/* the task returns to user */
			uint64_t ips[8];
			size_t nr = rnd() % 6;
			unsigned int fate = (unsigned int)(rnd() % 10);

			for (size_t i = 0; i < nr; i++)
				ips[i] = 0x400000 + (rnd() & 0xffff);
			if (nr && fate == 0)
				ips[0] = CS_CONTEXT_USER;	/* a draft kernel */
			if (fate < 8) {
				int copies = fate == 1 ? 2 : 1;

				for (int c = 0; c < copies; c++) {
					const struct mwait *w = model_waiting(&m, tid);

					feed_deferred(f, tid, cur[tid], ips, nr);
					if (w && w->cookie == cur[tid]) {
						m.rec[tid].has = true;
						m.rec[tid].cookie = cur[tid];
						memcpy(m.rec[tid].ips, ips, sizeof(ips));
						m.rec[tid].nr = nr;
						model_release(&m, tid, true, 0);
					} else if (m.rec[tid].has &&
						   m.rec[tid].cookie == cur[tid]) {
						/* duplicate */
					} else {
						model_release(&m, tid, false,
							      CS_MISSING_SUPERSEDED);
						m.rec[tid].has = true;
						m.rec[tid].cookie = cur[tid];
						memcpy(m.rec[tid].ips, ips, sizeof(ips));
						m.rec[tid].nr = nr;
					}
				}
			} else if (fate == 8) {	/* the record was lost */
				feed_lost(f, CS_RECORD_LOST);
				m.lost++;
			}			/* fate 9: it never came */
			/* late samples of this entry may still follow */
			if (rnd() % 4 == 0)
				cur[tid] = next_cookie++;
		} else if (what < 80) {		/* a new entry, the old one's record lost */
			cur[tid] = next_cookie++;
		} else if (what < 95) {		/* not deferred */
			uint64_t c[3] = { CS_CONTEXT_KERNEL, 0xffffffff81000000ULL,
					  e };
			struct mwait nw = { .tid = tid, .nk = 3 };

			nw.id = feed_chain(f, tid, c, 3, NULL);
			memcpy(nw.k, c, sizeof(c));
			nsamples++;
			model_out(&m, &nw, CS_CHAIN_ORIGINAL, 0, NULL, 0);
			m.out[m.n - 1].cookie = 0;
		} else if (what < 97) {		/* exit */
			feed_exit(f, tid);
			model_release(&m, tid, false, CS_MISSING_EXITED);
			m.rec[tid].has = false;
			cur[tid] = next_cookie++;
		} else {			/* lost records elsewhere */
			feed_lost(f, rnd() % 2 ? CS_RECORD_LOST :
				  CS_RECORD_LOST_SAMPLES);
			m.lost++;
		}
		assert_int_equal(cs_stitch_pending(f->st), m.nwait);
	}
	assert_int_equal(cs_stitch_flush(f->st), 0);
	for (size_t i = 0; i < m.nwait; i++)
		model_out(&m, &m.wait[i], CS_CHAIN_KERNEL_ONLY, CS_MISSING_END,
			  NULL, 0);

	/* same deliveries, in the same order */
	assert_int_equal(f->n, m.n);
	assert_int_equal(f->n, nsamples);
	for (size_t i = 0; i < m.n; i++) {
		const struct out *a = &f->out[i], *b = &m.out[i];

		if (a->state != b->state)
			print_message("at %zu id %lu tid %u: %d/%d vs model %d/%d cookie %lx\n", i,
				      (unsigned long)a->id, a->tid, a->state, a->missing,
				      b->state, b->missing, (unsigned long)a->cookie);
		assert_int_equal(a->id, b->id);
		assert_int_equal(a->state, b->state);
		assert_int_equal(a->missing, b->missing);
		assert_int_equal(a->cookie, b->cookie);
		assert_int_equal(a->chain_nr, b->chain_nr);
		assert_memory_equal(a->chain, b->chain, a->chain_nr * 8);
	}
	/* every sample exactly once */
	uint8_t *seen = calloc(nsamples + 1, 1);
	for (size_t i = 0; i < f->n; i++) {
		assert_true(f->out[i].id >= 1 && f->out[i].id <= nsamples);
		assert_int_equal(seen[f->out[i].id]++, 0);
	}
	free(seen);
	assert_stats_add_up(&f->stats);
	assert_int_equal(f->stats.samples, nsamples);
	/* each kind of outcome happened, or the stress proves little */
	assert_true(f->stats.stitched > 1000);
	assert_true(f->stats.stitched_late > 100);
	assert_true(f->stats.duplicate_records > 100);
	assert_true(f->stats.orphan_records > 100);
	for (int r = CS_MISSING_LOST; r < CS_MISSING__COUNT; r++)
		assert_true(f->stats.kernel_only_by[r] > 0);
	assert_int_equal(cs_stitch_pending(f->st), 0);
	free(m.wait);
	free(m.out);
	fix_free(f);
}

/* Which samples a decode hook was asked for, whether as filed, and with
 * which event index. */
struct filed_log {
	bool filed[4];
	unsigned int evsel[4];
	uint64_t id[4];
	size_t n;
};

static int note_filed(void *ctx, const void *bytes, size_t size,
		      uint64_t offset, bool filed, unsigned int evsel,
		      struct cs_event *ev)
{
	struct filed_log *log = ctx;

	assert_true(log->n < 4);
	log->filed[log->n] = filed;
	log->evsel[log->n] = evsel;
	log->id[log->n++] = ((const uint64_t *)bytes)[2];
	return test_decode(NULL, bytes, size, offset, filed, evsel, ev);
}

static int take_any(void *ctx, const struct cs_stitched *s)
{
	(void)ctx;
	(void)s;
	return 0;
}

/* A sample filed by its key (cs_stitch_park()) reaches the decode hook
 * as filed, with its key's event index, which may then skip the checks
 * and the event's lookup the key's read made; one filed as a decoded
 * event does not, and must be checked. A key without an index (an event
 * of index 0xffff or more) passes that on: look it up. */
static void the_decode_hook_is_told_which_samples_were_filed_by_key(void **state)
{
	static const uint64_t chain[] = { 0xffffffff81000000ULL,
					  CS_CONTEXT_USER_DEFERRED, 42 };
	static const uint64_t ips[] = { 0x401000 };
	struct cs_wait_key k = { .tid = 7, .evsel = 3, .time = 1, .cookie = 42 };
	struct cs_wait_key far = { .tid = 7, .evsel = CS_WAIT_NO_EVSEL,
				   .time = 3, .cookie = 42 };
	struct filed_log log = { .n = 0 };
	struct cs_event ev = { .type = CS_RECORD_CALLCHAIN_DEFERRED };
	struct cs_stats stats = { 0 };
	struct cs_stitch *st;
	uint64_t rec[8], rec2[8], rec3[8];
	size_t size;
	bool waits;

	(void)state;
	assert_int_equal(cs_stitch_new(true, CS_STITCH_PARTS, take_any, NULL, note_filed,
				       &log, &stats, &st), 0);
	size = test_record(rec, 7, 1, chain, 3);
	assert_int_equal(cs_stitch_park(st, &k, rec, size, 0, true, &waits), 0);
	assert_true(waits);
	size = test_record(rec2, 7, 2, chain, 3);
	{
		struct cs_event s;

		test_decode(NULL, rec2, size, 0, false, 0, &s);
		assert_int_equal(cs_stitch_event_stable(st, &s), 0);
	}
	size = test_record(rec3, 7, 3, chain, 3);
	assert_int_equal(cs_stitch_park(st, &far, rec3, size, 0, true, &waits), 0);
	assert_true(waits);
	assert_int_equal(log.n, 0);		/* all three wait */
	ev.has_id = true;
	ev.id.pid = ev.id.tid = 7;
	ev.deferred.cookie = 42;
	ev.deferred.nr = 1;
	ev.deferred.ips = ips;
	assert_int_equal(cs_stitch_event(st, &ev), 0);
	assert_int_equal(log.n, 3);
	assert_int_equal(log.id[0], 1);
	assert_true(log.filed[0]);
	assert_int_equal(log.evsel[0], 3);
	assert_int_equal(log.id[1], 2);
	assert_false(log.filed[1]);
	assert_int_equal(log.id[2], 3);
	assert_true(log.filed[2]);
	assert_int_equal(log.evsel[2], CS_WAIT_NO_EVSEL);
	assert_int_equal(stats.stitched, 3);
	cs_stitch_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(deferred_record_completes_every_waiting_sample_of_its_cookie),
		cmocka_unit_test(match_is_on_tid_and_cookie),
		cmocka_unit_test(late_sample_is_stitched_from_the_last_record),
		cmocka_unit_test(late_sample_after_stitched_ones_uses_the_same_record),
		cmocka_unit_test(duplicate_record_changes_nothing),
		cmocka_unit_test(duplicate_of_an_overtaken_record_changes_nothing),
		cmocka_unit_test(orphan_record_is_counted_and_ignored),
		cmocka_unit_test(newer_cookie_sample_releases_older_waiting_samples),
		cmocka_unit_test(newer_cookie_record_releases_older_waiting_samples),
		cmocka_unit_test(lost_records_mark_superseded_samples_as_lost),
		cmocka_unit_test(exit_releases_waiting_samples),
		cmocka_unit_test(end_of_input_releases_waiting_samples_in_arrival_order),
		cmocka_unit_test(record_from_another_cpu_later_in_time_stitches),
		cmocka_unit_test(samples_without_deferral_pass_through),
		cmocka_unit_test(marker_first_ips_get_no_second_marker),
		cmocka_unit_test(a_count_off_by_one_is_a_mismatch),
		cmocka_unit_test(deferred_ips_above_context_max_are_addresses),
		cmocka_unit_test(user_mode_sample_gets_the_user_stack_alone),
		cmocka_unit_test(waiting_sample_is_copied),
		cmocka_unit_test(stable_waiting_sample_keeps_pointing_at_its_record),
		cmocka_unit_test(decode_error_of_a_waiting_sample_is_returned),
		cmocka_unit_test(deep_kernel_parts_are_whole),
		cmocka_unit_test(unmerged_mode_delivers_samples_as_recorded),
		cmocka_unit_test(callback_error_stops_and_is_returned),
		cmocka_unit_test(every_sample_is_delivered_once_under_random_stress),
		cmocka_unit_test(the_decode_hook_is_told_which_samples_were_filed_by_key),
	};
	/* the forms themselves, each with a stitcher of its own */
	const struct CMUnitTest forms[] = {
		cmocka_unit_test(implied_marker_hands_out_the_stable_records_own_ips),
		cmocka_unit_test(implied_marker_copies_an_unstable_record_as_it_is),
		cmocka_unit_test(implied_marker_keeps_a_drafts_own_marker),
		cmocka_unit_test(stored_marker_and_joined_forms_keep_the_marker),
	};
	static const struct {
		const char *name;
		enum cs_stitch_form form;
		bool stable;
	} modes[] = {
		{ "parts, marker stored", CS_STITCH_PARTS, false },
		{ "parts, marker stored, stable records", CS_STITCH_PARTS, true },
		{ "parts, marker implied", CS_STITCH_PARTS_MARKER_IMPLIED, false },
		{ "parts, marker implied, stable records",
		  CS_STITCH_PARTS_MARKER_IMPLIED, true },
		{ "joined", CS_STITCH_JOINED, false },
		{ "joined, stable records", CS_STITCH_JOINED, true },
	};
	int failed = cmocka_run_group_tests_name("the chain's forms", forms,
						 NULL, NULL);

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		mode.form = modes[i].form;
		mode.stable = modes[i].stable;
		failed += _cmocka_run_group_tests(modes[i].name, tests,
						  sizeof(tests) / sizeof(tests[0]),
						  NULL, NULL);
	}
	return failed;
}
