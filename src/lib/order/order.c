/* order.c - time ordering by merging the sorted runs a perf.data file holds.
 *
 * A round of a perf.data file is the concatenation of what each ring buffer
 * (one per CPU and event) held, and each buffer is already in time order. So
 * instead of sorting, the queue remembers where each sorted run begins; a
 * flush merges the deliverable prefix of every run - up to FEW_RUNS runs by
 * a scan of their head times compiled for their count, up to WIDE_RUNS by a
 * scan in two levels, more with a heap, where a run that does not compete
 * with the others is drained without comparisons. A fully unsorted input degenerates into one run per record,
 * which the heap still merges in O(n log n).
 *
 * Entries live in one array in arrival order; runs are index ranges of it.
 * After a flush the undelivered suffixes are packed to the front, so the
 * array holds about what is queued. Record bytes that are not stable are
 * copied into chunks that count their live records and are recycled when
 * the last one has gone out.
 */
#include "lib/order/order.h"
#include "lib/util/select.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_SIZE	(1u << 20)
#define SPARE_CHUNKS	2
/* Records a merge picks before it delivers them: a power of two. */
#define MERGE_LAG	4
/* Up to this many runs to merge, a scan of their heads beats a heap. */
#define FEW_RUNS	16
/* Up to this many, a scan in two levels: groups of GROUP runs, and the
 * least head of each group (a system-wide profile of a big machine). */
#define GROUP		8
#define WIDE_RUNS	(GROUP * GROUP)

struct chunk {
	struct chunk *next;		/* on the spare list */
	size_t used, cap;
	size_t live;			/* queued records stored here */
	unsigned char data[];
};

struct entry {
	uint64_t time;
	const void *bytes;
	uint64_t offset;
	struct chunk *chunk;		/* NULL: the caller's stable bytes */
	size_t size;
};

struct run {
	size_t start, end;		/* undelivered entries [start, end) */
};

/* A heap entry carries its run's head time, so that comparing two runs
 * reads the heap alone, not the entries it points at. */
struct head {
	uint64_t time;
	size_t run;
};

struct cs_order {
	cs_order_fn deliver;
	void *ctx;

	struct entry *ent;
	size_t nr, cap;
	struct run *runs;
	size_t nr_runs, runs_cap;
	struct head *heap;		/* runs that have something to deliver */
	size_t heap_cap;
	size_t queued;

	uint64_t max_time;		/* largest time pushed so far */
	uint64_t limit;			/* largest time before the last round end */
	bool paused;			/* a delivery up to paused_limit stopped */
	uint64_t paused_limit;

	struct chunk *cur;		/* where copies go */
	struct chunk *spare;
	size_t nr_spare;
};

int cs_order_new(cs_order_fn deliver, void *ctx, struct cs_order **out)
{
	struct cs_order *q = calloc(1, sizeof(*q));

	*out = NULL;
	if (!q)
		return -ENOMEM;
	q->deliver = deliver;
	q->ctx = ctx;
	*out = q;
	return 0;
}

size_t cs_order_queued(const struct cs_order *q)
{
	return q->queued;
}

/* ---- chunked storage for records that must be copied ---- */

static void chunk_recycle(struct cs_order *q, struct chunk *c)
{
	if (q->nr_spare < SPARE_CHUNKS && c->cap == CHUNK_SIZE) {
		c->used = 0;
		c->next = q->spare;
		q->spare = c;
		q->nr_spare++;
		return;
	}
	free(c);
}

static void *chunk_copy(struct cs_order *q, const void *bytes, size_t size,
			struct chunk **owner)
{
	size_t need = (size + 7) & ~(size_t)7;
	struct chunk *c = q->cur;
	void *p;

	if (!c || c->cap - c->used < need) {
		if (q->spare && need <= CHUNK_SIZE) {
			c = q->spare;
			q->spare = c->next;
			q->nr_spare--;
		} else {
			size_t cap = need > CHUNK_SIZE ? need : CHUNK_SIZE;

			c = malloc(sizeof(*c) + cap);
			if (!c)
				return NULL;
			c->cap = cap;
			c->used = 0;
		}
		c->live = 0;
		/* the old chunk goes when its last record does */
		if (q->cur && !q->cur->live)
			chunk_recycle(q, q->cur);
		q->cur = c;
	}
	p = c->data + c->used;
	memcpy(p, bytes, size);
	c->used += need;
	c->live++;
	*owner = c;
	return p;
}

static void chunk_release(struct cs_order *q, struct chunk *c)
{
	if (!c || --c->live)
		return;
	if (c == q->cur)
		c->used = 0;	/* empty: refill it from the start, while cache-hot */
	else
		chunk_recycle(q, c);
}

/* ---- queueing ---- */

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 256;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		n *= 2;
	}
	p = realloc(*arr, n * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

/* Everything cs_order_push() does not do inline: the first entry, a full
 * array, a record to copy, a new run. Out of line, so that the usual push
 * saves no registers. */
static __attribute__((noinline)) int push_slow(struct cs_order *q,
					       uint64_t time, const void *bytes,
					       size_t size, uint64_t offset,
					       bool stable)
{
	struct entry *e;
	struct run *last;
	int err;

	if (q->nr == q->cap) {
		err = grow((void **)&q->ent, &q->cap, q->nr + 1, sizeof(*q->ent));
		if (err)
			return err;
	}
	e = &q->ent[q->nr];
	e->time = time;
	e->offset = offset;
	e->size = size;
	e->chunk = NULL;
	e->bytes = bytes;
	if (!stable) {
		e->bytes = chunk_copy(q, bytes, size, &e->chunk);
		if (!e->bytes)
			return -ENOMEM;
	}

	last = q->nr_runs ? &q->runs[q->nr_runs - 1] : NULL;
	if (last && last->end == q->nr && q->ent[q->nr - 1].time <= time) {
		last->end++;
	} else {
		err = grow((void **)&q->runs, &q->runs_cap, q->nr_runs + 1,
			   sizeof(*q->runs));
		if (err) {
			chunk_release(q, e->chunk);
			return err;
		}
		q->runs[q->nr_runs].start = q->nr;
		q->runs[q->nr_runs].end = q->nr + 1;
		q->nr_runs++;
	}
	q->nr++;
	q->queued++;
	if (time > q->max_time)
		q->max_time = time;
	return 0;
}

/* The usual record (stable, with a time, after the last one of the open
 * run, room in the array) appended with the fewest steps: every record of
 * a mapped file comes here. Inlined by the link (LTO) into the session's
 * read loop, which then keeps the queue's fields in registers across
 * records: 36 -> 31 instructions a record, the call's saves gone. */
__attribute__((always_inline)) inline int
cs_order_push(struct cs_order *q, uint64_t time, const void *bytes,
		  size_t size, uint64_t offset, bool stable)
{
	struct entry *e;
	struct run *last;

	/* without a time there is nothing to order by: perf delivers at once */
	if (time == UINT64_MAX)
		return q->deliver(q->ctx, bytes, size, offset, stable);
	if (!stable || !q->nr_runs || q->nr == q->cap)
		return push_slow(q, time, bytes, size, offset, stable);
	last = &q->runs[q->nr_runs - 1];
	e = &q->ent[q->nr];
	if (last->end != q->nr || e[-1].time > time)
		return push_slow(q, time, bytes, size, offset, stable);
	e->time = time;
	e->bytes = bytes;
	e->offset = offset;
	e->chunk = NULL;
	e->size = size;
	last->end++;
	q->nr++;
	q->queued++;
	if (time > q->max_time)
		q->max_time = time;
	return 0;
}

/* ---- merging ---- */

/* a goes before b: earlier time, or on a tie the earlier run (runs are in
 * arrival order, so this keeps equal times in file order) */
static inline bool head_before(const struct head *a, const struct head *b)
{
	return a->time < b->time || (a->time == b->time && a->run < b->run);
}

static void sift_down(struct head *h, size_t i, size_t n)
{
	struct head x = h[i];

	for (;;) {
		size_t l = 2 * i + 1, m;

		if (l >= n)
			break;
		m = l;
		if (l + 1 < n && head_before(&h[l + 1], &h[l]))
			m = l + 1;
		if (!head_before(&h[m], &x))
			break;
		h[i] = h[m];
		i = m;
	}
	h[i] = x;
}

static inline int deliver_entry(struct cs_order *q, const struct entry *e)
{
	int err = q->deliver(q->ctx, e->bytes, e->size, e->offset, !e->chunk);

	q->queued--;
	chunk_release(q, e->chunk);
	return err;
}

/* Drops the runs that are done and joins neighbouring runs that are in
 * order with each other. The undelivered suffixes are packed to the front
 * of the array only once they hold less than half of it: moving them
 * after every round copied a round's entries each time. */
static void compact(struct cs_order *q)
{
	size_t dst = 0, nr_runs = 0, live = 0;
	bool pack;

	for (size_t r = 0; r < q->nr_runs; r++)
		live += q->runs[r].end - q->runs[r].start;
	pack = live <= q->nr / 2;
	for (size_t r = 0; r < q->nr_runs; r++) {
		struct run run = q->runs[r];
		size_t len = run.end - run.start;

		if (!len)
			continue;
		if (!pack)
			dst = run.start;
		else if (run.start != dst)
			memmove(&q->ent[dst], &q->ent[run.start],
				len * sizeof(*q->ent));
		if (nr_runs && q->runs[nr_runs - 1].end == dst &&
		    q->ent[dst - 1].time <= q->ent[dst].time) {
			q->runs[nr_runs - 1].end = dst + len;
		} else {
			q->runs[nr_runs].start = dst;
			q->runs[nr_runs].end = dst + len;
			nr_runs++;
		}
		dst += len;
	}
	if (pack || !nr_runs)
		q->nr = dst;
	q->nr_runs = nr_runs;

	/* give back what a burst (a file without rounds) made us take */
	if (q->cap > 65536 && q->nr < q->cap / 8) {
		size_t cap = q->cap / 4;
		struct entry *p = realloc(q->ent, cap * sizeof(*p));

		if (p) {
			q->ent = p;
			q->cap = cap;
		}
	}
}

/* Delivers run r's entries from its start while they stay before stop
 * (ties go out when take_equal). Returns what deliver returned. */
static inline int drain(struct cs_order *q, struct run *run, uint64_t stop,
			bool take_equal)
{
	const struct entry *e = &q->ent[run->start];
	const struct entry *end = &q->ent[run->end];
	int err;

	do {
		err = deliver_entry(q, e++);
	} while (!err && e < end && (e->time < stop ||
				     (take_equal && e->time == stop)));
	run->start = (size_t)(e - q->ent);
	return err;
}

/* What the merges of a few and of many runs share: each run's next
 * entry and end, the records picked and not yet delivered. Their helpers
 * are always_inline, so that each merge keeps the counts in registers. */
struct merge {
	const struct entry *at[WIDE_RUNS], *end[WIDE_RUNS];	/* per run */
	const struct entry *due[MERGE_LAG];	/* picked, not delivered */
	unsigned char due_run[MERGE_LAG];
	size_t picked, sent;
};

/* Starts a merge of the n runs of heads h at their first entries; their
 * head times into t. */
static inline __attribute__((always_inline)) void
merge_start(struct cs_order *q, struct merge *mg, const struct head *h,
	    size_t n, uint64_t *t)
{
	for (size_t i = 0; i < n; i++) {
		const struct run *run = &q->runs[h[i].run];

		t[i] = h[i].time;
		mg->at[i] = &q->ent[run->start];
		mg->end[i] = &q->ent[run->end];
	}
	mg->picked = mg->sent = 0;
}

/* Takes run m's head as the next record due. Returns the run's new head
 * time, UINT64_MAX once it has nothing more due by limit. */
static inline __attribute__((always_inline)) uint64_t
merge_pick(struct merge *mg, size_t m, uint64_t limit)
{
	uint64_t next = UINT64_MAX;
	const struct entry *e;

	mg->due[mg->picked % MERGE_LAG] = mg->at[m]++;
	mg->due_run[mg->picked % MERGE_LAG] = (unsigned char)m;
	mg->picked++;
	/* read before the record goes out, not after it */
	e = mg->at[m];
	if (e < mg->end[m]) {
		next = e->time;
		/* the run's new head goes out within a few records: its
		 * first and last lines are what is read first */
		__builtin_prefetch(e->bytes);
		__builtin_prefetch((const char *)e->bytes + e->size - 8);
	}
	return next <= limit ? next : UINT64_MAX;
}

/* Delivers the oldest record picked once MERGE_LAG are. */
static inline __attribute__((always_inline)) int
merge_send(struct cs_order *q, struct merge *mg)
{
	if (mg->picked - mg->sent < MERGE_LAG)
		return 0;
	return deliver_entry(q, mg->due[mg->sent++ % MERGE_LAG]);
}

/* Ends a merge of the n runs of heads h that err stopped (or 0: that
 * found nothing more due): delivers what is picked, unless stopped, and
 * tells each run where it now starts. A delivery that stopped the merge
 * leaves the records picked after it queued: each run starts again at
 * its first one. Returns err, or what a delivery returned. */
static inline __attribute__((always_inline)) int
merge_end(struct cs_order *q, struct merge *mg, const struct head *h,
	  size_t n, int err)
{
	while (!err && mg->sent < mg->picked)
		err = deliver_entry(q, mg->due[mg->sent++ % MERGE_LAG]);
	for (size_t k = mg->sent; k < mg->picked; k++)
		mg->at[mg->due_run[k % MERGE_LAG]]--;
	for (size_t i = 0; i < n; i++)
		q->runs[h[i].run].start = (size_t)(mg->at[i] - q->ent);
	return err;
}

/* Merges a few runs (n <= FEW_RUNS heads, in run order) by scanning
 * their head times for the least, one record at a time. No branch depends
 * on the times (the scan is conditional moves; a run's head time turns
 * UINT64_MAX, which no queued record has, once it has nothing more due),
 * where a heap's sift mispredicts about every record when the runs
 * interleave finely, as per-CPU buffers do. Ties go to the earlier run:
 * the scan keeps the first least time.
 *
 * The picks run MERGE_LAG records ahead of the deliveries: each pick
 * waits for the head time the one before it loaded (a chain of loads),
 * and a delivery that needed the pick just made would wait for that
 * chain too, and again after every branch of its own it mispredicts. */
static inline __attribute__((always_inline)) int
merge_runs(struct cs_order *q, const struct head *h, size_t n, uint64_t limit)
{
	uint64_t t[FEW_RUNS];
	struct merge mg;
	int err = 0;

	merge_start(q, &mg, h, n, t);
	for (;;) {
		uint64_t best = t[0], m = 0;

		/* conditional moves (util/select.h), not ?:, which gcc made
		 * a jump that mispredicts as the runs interleave */
		for (size_t i = 1; i < n; i++)
			cs_least_step(t[i], i, &best, &m);
		if (best == UINT64_MAX)
			break;
		t[m] = merge_pick(&mg, m, limit);
		err = merge_send(q, &mg);
		if (err)
			break;
	}
	return merge_end(q, &mg, h, n, err);
}

/* merge_runs() for each count of runs, known to the compiler: its scan is
 * then straight conditional moves, with no exit test per run (and gcc
 * keeps the count and the run state where it would otherwise guess). */
static int merge_few(struct cs_order *q, const struct head *h, size_t n,
		     uint64_t limit)
{
	switch (n) {
	case 2: return merge_runs(q, h, 2, limit);
	case 3: return merge_runs(q, h, 3, limit);
	case 4: return merge_runs(q, h, 4, limit);
	case 5: return merge_runs(q, h, 5, limit);
	case 6: return merge_runs(q, h, 6, limit);
	case 7: return merge_runs(q, h, 7, limit);
	case 8: return merge_runs(q, h, 8, limit);
	case 9: return merge_runs(q, h, 9, limit);
	case 10: return merge_runs(q, h, 10, limit);
	case 11: return merge_runs(q, h, 11, limit);
	case 12: return merge_runs(q, h, 12, limit);
	case 13: return merge_runs(q, h, 13, limit);
	case 14: return merge_runs(q, h, 14, limit);
	case 15: return merge_runs(q, h, 15, limit);
	default: return merge_runs(q, h, FEW_RUNS, limit);
	}
}

/* The least of GROUP times, the first of equal ones; its index in *at. */
static inline __attribute__((always_inline)) uint64_t
least_of_group(const uint64_t *t, size_t *at)
{
	uint64_t best = t[0], m = 0;

	for (size_t i = 1; i < GROUP; i++)
		cs_least_step(t[i], i, &best, &m);
	*at = (size_t)m;
	return best;
}

/* merge_runs() for FEW_RUNS < n <= WIDE_RUNS runs: a scan of every head
 * per record would take n steps, and the heap's sift mispredicts about
 * every record when the runs interleave finely. The runs are taken in
 * GROUP groups of GROUP (the missing ones never due); each group keeps
 * its least head, and a pick scans the groups' least heads, then rescans
 * only the group it took from: two scans of GROUP conditional moves, the
 * same whatever n is. The first least group holds the first least run
 * (groups are in run order), so ties still go to the earlier run. */
static __attribute__((noinline)) int
merge_wide(struct cs_order *q, const struct head *h, size_t n, uint64_t limit)
{
	uint64_t t[WIDE_RUNS], group_t[GROUP];
	unsigned char group_m[GROUP];		/* its least run, in the group */
	struct merge mg;
	int err = 0;

	merge_start(q, &mg, h, n, t);
	for (size_t i = n; i < WIDE_RUNS; i++) {
		t[i] = UINT64_MAX;
		mg.at[i] = mg.end[i] = NULL;
	}
	for (size_t g = 0; g < GROUP; g++) {
		size_t m;

		group_t[g] = least_of_group(t + g * GROUP, &m);
		group_m[g] = (unsigned char)m;
	}
	for (;;) {
		size_t g, m, k;
		uint64_t best = least_of_group(group_t, &g);

		if (best == UINT64_MAX)
			break;
		m = g * GROUP + group_m[g];
		t[m] = merge_pick(&mg, m, limit);
		group_t[g] = least_of_group(t + g * GROUP, &k);
		group_m[g] = (unsigned char)k;
		err = merge_send(q, &mg);
		if (err)
			break;
	}
	return merge_end(q, &mg, h, n, err);
}

/* Merges n runs (heads h, any number) with a heap of their head times;
 * a run goes out without comparisons up to its runner-up's time. */
static __attribute__((noinline)) int merge_many(struct cs_order *q,
						struct head *h, size_t n,
						uint64_t limit)
{
	int err = 0;

	for (size_t i = n / 2; i-- > 0;)
		sift_down(h, i, n);

	while (n && !err) {
		size_t r = h[0].run;
		struct run *run = &q->runs[r];

		if (n == 1) {
			err = drain(q, run, limit, true);
		} else {
			/* the runner-up bounds how far r can go without
			 * comparing; its head time is <= limit */
			const struct head *rival = &h[1];

			if (n > 2 && head_before(&h[2], rival))
				rival = &h[2];
			err = drain(q, run, rival->time, r < rival->run);
		}
		if (run->start < run->end && q->ent[run->start].time <= limit) {
			h[0].time = q->ent[run->start].time;
		} else {
			h[0] = h[--n];
		}
		sift_down(h, 0, n);
	}
	return err;
}

/* Delivers, in time order, every queued entry with time <= limit. */
static int deliver_upto(struct cs_order *q, uint64_t limit)
{
	struct head *h;
	size_t n = 0;
	int err = 0;

	if (!q->queued)
		return 0;
	err = grow((void **)&q->heap, &q->heap_cap, q->nr_runs,
		   sizeof(*q->heap));
	if (err)
		return err;
	h = q->heap;
	for (size_t r = 0; r < q->nr_runs; r++) {
		const struct run *run = &q->runs[r];

		if (run->start < run->end && q->ent[run->start].time <= limit) {
			h[n].time = q->ent[run->start].time;
			h[n].run = r;
			n++;
		}
	}
	if (n > 1 && n <= FEW_RUNS)
		err = merge_few(q, h, n, limit);
	else if (n > FEW_RUNS && n <= WIDE_RUNS)
		err = merge_wide(q, h, n, limit);
	else if (n)
		err = merge_many(q, h, n, limit);
	if (err == CS_ORDER_PAUSE) {
		/* runs know where they stand: the next call picks up there,
		 * and packing waits for the end of the delivery */
		q->paused = true;
		q->paused_limit = limit;
		return err;
	}
	compact(q);
	return err;
}

int cs_order_round_end(struct cs_order *q)
{
	uint64_t limit = q->limit;

	q->limit = q->max_time;
	return deliver_upto(q, limit);
}

bool cs_order_paused(const struct cs_order *q)
{
	return q->paused;
}

int cs_order_resume(struct cs_order *q)
{
	q->paused = false;
	return deliver_upto(q, q->paused_limit);
}

int cs_order_flush(struct cs_order *q)
{
	return deliver_upto(q, UINT64_MAX);
}

void cs_order_free(struct cs_order *q)
{
	struct chunk *c;

	if (!q)
		return;
	/* chunks still holding queued records are reached through entries */
	for (size_t r = 0; r < q->nr_runs; r++)
		for (size_t i = q->runs[r].start; i < q->runs[r].end; i++) {
			c = q->ent[i].chunk;
			if (c && c != q->cur && !--c->live)
				free(c);
		}
	free(q->cur);
	while ((c = q->spare)) {
		q->spare = c->next;
		free(c);
	}
	free(q->ent);
	free(q->runs);
	free(q->heap);
	free(q);
}
