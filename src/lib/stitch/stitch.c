/* stitch.c - joins deferred user callchains to the samples that wait.
 *
 * State is per thread, in an open-addressing table keyed by tid: the samples
 * of the one kernel entry (cookie) that still wait for their user stack, and
 * the last deferred record seen, whose ips are kept to stitch late samples
 * (where they are, when the record is stable and the output takes the
 * user marker implied; else copied).
 * A thread waits for one cookie at a time: a sample or record with another
 * cookie means the task has left that kernel entry, so its record will not
 * come any more.
 *
 * A waiting sample keeps only its record's place, in an array of its
 * thread's that is read in order when they go out and reused (the bytes
 * themselves, when they are not stable, in a slot from per-size free
 * lists), so a steady stream of samples allocates nothing. It is decoded
 * by the caller's hook when it goes out: its record is read for its
 * callchain then anyway.
 */
#include "lib/stitch/stitch.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "abi/perf_abi.h"
#include "lib/stitch/parts.h"
#include "lib/util/grow.h"
#include "lib/util/select.h"

/* Slot sizes: steps of 128 bytes up to 4 KiB, so that a typical waiting
 * sample (~550 bytes) takes 640, not the 1 KiB a power of two would: the
 * samples that wait are what the stitcher's cache misses are made of.
 * Then powers of two up to 1 MiB; larger ones are plain malloc. */
#define SLOT_STEP_SHIFT	7
#define SLOT_STEPS	32		/* 128 B .. 4 KiB */
#define SLOT_POW_MIN	13		/* 8 KiB */
#define SLOT_POW_MAX	20		/* 1 MiB */
#define SLOT_CLASSES	(SLOT_STEPS + SLOT_POW_MAX - SLOT_POW_MIN + 1)
/* A duplicate copy of a record comes with the same timestamp as the first,
 * so it follows it closely; a few older cookies per thread recognise one
 * that another record of the thread overtook. */
#define OLD_COOKIES	3

/* A waiting sample: where its record is. Those of a thread all wait for
 * its wait_cookie. */
struct pend {
	const void *bytes;		/* the caller's, or a copy's data */
	uint64_t offset;
	uint64_t seq;			/* arrival order, for the end flush */
	uint32_t size;
	bool copied;			/* bytes are the data of a struct copy */
	bool filed;			/* by its key (cs_stitch_park()) */
	uint16_t evsel;			/* then the key's event (cs_wait_key) */
};				/* 32 bytes: two to a cache line, none across */

/* A record that was not stable, copied into a slot. */
struct copy {
	unsigned int cls;		/* SLOT_CLASSES: malloc'd to size */
	uint64_t data[];
};

/* A thread's entry in the table. What filing a sample reads (tid down to
 * rec_cookie) lies in its first 56 bytes; entries aligned to a cache line
 * make that one line, where 104-byte entries straddled two most of the
 * time. */
struct thr {
	uint32_t tid;
	bool used;
	bool has_rec;
	uint8_t nr_old;
	uint32_t wait_first, wait_nr;	/* waiting samples: wait[first, nr), */
	uint32_t wait_cap;		/* oldest first */
	struct pend *wait;
	uint64_t wait_cookie;
	uint64_t wait_lost;		/* lost_seq when the first one began to wait */
	uint64_t rec_cookie;		/* last deferred record seen */
	uint64_t old_cookies[OLD_COOKIES];	/* the records before it */
	/* its user part as it goes out: rec_buf, or a stable record's own
	 * ips (the marker implied, lib/stitch/parts.h) */
	const uint64_t *user;
	uint64_t user_nr;
	uint64_t *rec_buf;		/* a copy of a record's ips, owned */
	size_t rec_cap;
	uint64_t wait_since;		/* the first waiting sample's time */
} __attribute__((aligned(64)));

/* Free slots of one size, as a stack of pointers: taking one reads only
 * the stack, not the (cold) slot, as a list through the slots would. */
struct slot_stack {
	struct copy **slot;
	size_t nr, cap;
};

struct cs_stitch {
	bool merge;
	enum cs_stitch_form form;
	cs_stitched_fn fn;
	void *ctx;
	cs_stitch_decode_fn decode;
	void *decode_ctx;
	struct cs_event ev;		/* a waiting sample, decoded again */
	struct cs_stats *stats;

	struct thr *tab;
	size_t tab_cap, tab_used;	/* power of two; at most half used */

	size_t pending;
	uint64_t seq;
	uint64_t lost_seq;		/* LOST and LOST_SAMPLES records seen */
	struct slot_stack free_slots[SLOT_CLASSES];
	struct pend *spare_wait;		/* an exited thread's array, for */
	uint32_t spare_cap;			/* the next thread's samples */

	/* CS_STITCH_JOINED: merged chains are joined here, the user part
	 * (marker and ips) written once for the samples of a record, each
	 * kernel part in front of it */
	uint64_t *chain;
	size_t chain_cap;
	size_t user_at;			/* where the user part is */
	uint64_t joined_nr;		/* its entries there, the marker too */
	const uint64_t *user;		/* what they are a copy of */
	uint64_t user_nr;
};

const char *cs_missing_reason_name(enum cs_missing_reason r)
{
	switch (r) {
	case CS_MISSING_NONE:		return "none";
	case CS_MISSING_LOST:		return "lost";
	case CS_MISSING_SUPERSEDED:	return "superseded";
	case CS_MISSING_EXITED:		return "exited";
	case CS_MISSING_END:		return "end";
	case CS_MISSING__COUNT:		break;
	}
	return "unknown";
}

/* cap zeroed entries, aligned as struct thr asks; NULL on -ENOMEM */
static struct thr *tab_alloc(size_t cap)
{
	struct thr *tab;

	if (cap > SIZE_MAX / sizeof(*tab))
		return NULL;
	tab = aligned_alloc(_Alignof(struct thr), cap * sizeof(*tab));
	if (tab)
		memset(tab, 0, cap * sizeof(*tab));
	return tab;
}

int cs_stitch_new(bool merge, enum cs_stitch_form form, cs_stitched_fn fn,
		  void *ctx, cs_stitch_decode_fn decode, void *decode_ctx,
		  struct cs_stats *stats, struct cs_stitch **out)
{
	struct cs_stitch *st = calloc(1, sizeof(*st));

	*out = NULL;
	if (!st)
		return -ENOMEM;
	st->merge = merge;
	st->form = form;
	st->fn = fn;
	st->ctx = ctx;
	st->decode = decode;
	st->decode_ctx = decode_ctx;
	st->stats = stats;
	st->tab_cap = 64;
	st->tab = tab_alloc(st->tab_cap);
	if (!st->tab) {
		free(st);
		return -ENOMEM;
	}
	*out = st;
	return 0;
}

size_t cs_stitch_pending(const struct cs_stitch *st)
{
	return st->pending;
}

/* ---- thread table ---- */

static inline size_t tid_hash(uint32_t tid, size_t cap)
{
	return (size_t)(((uint64_t)tid * 0x9e3779b97f4a7c15ULL) >> 32) & (cap - 1);
}

static inline bool waiting(const struct thr *t)
{
	return t->wait_first < t->wait_nr;
}

static inline struct thr *thr_find(struct cs_stitch *st, uint32_t tid)
{
	size_t mask = st->tab_cap - 1;

	for (size_t i = tid_hash(tid, st->tab_cap);; i = (i + 1) & mask) {
		struct thr *t = &st->tab[i];

		if (!t->used)
			return NULL;
		if (t->tid == tid)
			return t;
	}
}

bool cs_stitch_waiting_since(struct cs_stitch *st, uint32_t tid, uint64_t *time)
{
	const struct thr *t = thr_find(st, tid);

	if (!t || !waiting(t))
		return false;
	*time = t->wait_since;
	return true;
}

static int thr_grow(struct cs_stitch *st)
{
	size_t cap = st->tab_cap * 2;
	struct thr *tab = tab_alloc(cap);

	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < st->tab_cap; i++) {
		struct thr *t = &st->tab[i];
		size_t j;

		if (!t->used)
			continue;
		for (j = tid_hash(t->tid, cap); tab[j].used; j = (j + 1) & (cap - 1))
			;
		tab[j] = *t;
	}
	free(st->tab);
	st->tab = tab;
	st->tab_cap = cap;
	return 0;
}

/* A new thread's empty state; NULL on -ENOMEM. */
static __attribute__((noinline)) struct thr *thr_add(struct cs_stitch *st,
						     uint32_t tid)
{
	struct thr *t;
	size_t i;

	if ((st->tab_used + 1) * 2 > st->tab_cap && thr_grow(st))
		return NULL;
	for (i = tid_hash(tid, st->tab_cap); st->tab[i].used;
	     i = (i + 1) & (st->tab_cap - 1))
		;
	t = &st->tab[i];
	memset(t, 0, sizeof(*t));
	t->used = true;
	t->tid = tid;
	st->tab_used++;
	return t;
}

/* The thread's state, created empty if new; NULL on -ENOMEM. The pointer
 * is good until the next thr_get() or thr_drop(). Inline: every sample
 * comes here. */
static inline struct thr *thr_get(struct cs_stitch *st, uint32_t tid)
{
	struct thr *t = thr_find(st, tid);

	return t ? t : thr_add(st, tid);
}

/* Removes a thread (no samples may wait) and closes the gap it leaves so
 * that lookups need no tombstones. */
static void thr_drop(struct cs_stitch *st, struct thr *t)
{
	size_t mask = st->tab_cap - 1;
	size_t i = (size_t)(t - st->tab), j = i;

	free(t->rec_buf);
	/* threads come and go; their arrays of waiting samples stay */
	if (t->wait_cap > st->spare_cap) {
		free(st->spare_wait);
		st->spare_wait = t->wait;
		st->spare_cap = t->wait_cap;
	} else {
		free(t->wait);
	}
	for (;;) {
		j = (j + 1) & mask;
		if (!st->tab[j].used)
			break;
		size_t home = tid_hash(st->tab[j].tid, st->tab_cap);
		/* move j into the hole i unless its home lies in (i, j] */
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && (home <= i && home > j))) {
			st->tab[i] = st->tab[j];
			i = j;
		}
	}
	memset(&st->tab[i], 0, sizeof(st->tab[i]));
	st->tab_used--;
}

/* ---- waiting-sample slots ---- */

static inline unsigned int slot_class(size_t size)
{
	unsigned int k;

	if (size <= (size_t)SLOT_STEPS << SLOT_STEP_SHIFT)
		return (unsigned int)((size + (1u << SLOT_STEP_SHIFT) - 1) >>
				      SLOT_STEP_SHIFT) - 1;
	k = (unsigned int)(64 - __builtin_clzll((uint64_t)size - 1));
	if (k > SLOT_POW_MAX)
		return SLOT_CLASSES;
	return SLOT_STEPS + k - SLOT_POW_MIN;
}

static inline size_t slot_size(unsigned int cls)
{
	if (cls < SLOT_STEPS)
		return (size_t)(cls + 1) << SLOT_STEP_SHIFT;
	return (size_t)1 << (cls - SLOT_STEPS + SLOT_POW_MIN);
}

static struct copy *slot_get(struct cs_stitch *st, size_t size)
{
	unsigned int cls = slot_class(size);
	struct copy *c;

	if (cls < SLOT_CLASSES && st->free_slots[cls].nr)
		return st->free_slots[cls].slot[--st->free_slots[cls].nr];
	c = malloc(cls < SLOT_CLASSES ? slot_size(cls) : size);
	if (c)
		c->cls = cls;
	return c;
}

/* Makes room in a stack of free slots for one more: it grows to the most
 * samples that waited at once. Returns false if it cannot. */
static __attribute__((noinline)) bool slot_stack_grow(struct slot_stack *s)
{
	size_t cap = s->cap ? 2 * s->cap : 64;
	struct copy **n = realloc(s->slot, cap * sizeof(*n));

	if (!n)
		return false;
	s->slot = n;
	s->cap = cap;
	return true;
}

static void slot_put(struct cs_stitch *st, struct copy *c)
{
	struct slot_stack *s;

	if (c->cls >= SLOT_CLASSES) {
		free(c);
		return;
	}
	s = &st->free_slots[c->cls];
	if (s->nr == s->cap && !slot_stack_grow(s)) {
		free(c);	/* a slot less to reuse, no harm */
		return;
	}
	s->slot[s->nr++] = c;
}

static inline struct copy *copy_of(const struct pend *p)
{
	return (struct copy *)(void *)((char *)(uintptr_t)p->bytes -
				       offsetof(struct copy, data));
}

/* Gives back what a sample that went out kept. */
static inline void pend_done(struct cs_stitch *st, const struct pend *p)
{
	if (p->copied)
		slot_put(st, copy_of(p));
}

/* Makes room for one more waiting sample of t: a new thread takes the
 * array an exited one left, if any. Returns 0 or -ENOMEM. */
static __attribute__((noinline)) int wait_grow(struct cs_stitch *st,
					       struct thr *t)
{
	uint32_t cap = t->wait_cap ? 2 * t->wait_cap : 16;
	struct pend *n;

	if (!t->wait_cap && st->spare_wait) {
		t->wait = st->spare_wait;
		t->wait_cap = st->spare_cap;
		st->spare_wait = NULL;
		st->spare_cap = 0;
		return 0;
	}
	if (cap < t->wait_cap)
		return -ENOMEM;
	/* aligned, so that no place straddles two cache lines */
	n = aligned_alloc(64, cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	if (t->wait_nr)
		memcpy(n, t->wait, t->wait_nr * sizeof(*n));
	free(t->wait);
	t->wait = n;
	t->wait_cap = cap;
	return 0;
}

/* ---- delivery ---- */

static int chain_reserve(struct cs_stitch *st, size_t n)
{
	return cs_grow((void **)&st->chain, &st->chain_cap, n,
		       sizeof(*st->chain));
}

/* Room for a kernel part before the user part in st->chain: the kernel
 * keeps 127 frames by default (kernel.perf_event_max_stack). */
#define KERNEL_ROOM	256

/* For joined chains (CS_STITCH_JOINED): writes the user part t keeps
 * into st->chain after room slots, behind its marker unless it has one;
 * the samples that go out with one record then write only their kernel
 * parts, each just before it. */
static int place_user(struct cs_stitch *st, size_t room, const uint64_t *user,
		      uint64_t nr)
{
	const struct cs_stitched part = { .user = user, .user_nr = nr };
	bool marker = cs_parts_marker_implied(&part);
	int err = chain_reserve(st, room + marker + nr);

	if (err)
		return err;
	if (marker)
		st->chain[room] = CS_CONTEXT_USER;
	if (nr)
		memcpy(st->chain + room + marker, user, nr * sizeof(*user));
	st->user_at = room;
	st->joined_nr = marker + nr;
	st->user = user;
	st->user_nr = nr;
	return 0;
}

/* A deferred sample stitched to t's record: its kernel part as recorded,
 * then the record's user part as t keeps it. Neither is copied when the
 * output takes the two parts (cs_stitched.user); else the kernel part is
 * written in front of the user part place_user() put in st->chain. */
static int deliver_merged(struct cs_stitch *st, const struct cs_event *ev,
			  const struct thr *t, enum cs_chain_state state)
{
	uint64_t nk = ev->sample.callchain_nr - 2;
	struct cs_stitched out = {
		.event = ev,
		.chain = ev->sample.callchain,
		.chain_nr = nk,
		.state = state,
		.cookie = t->rec_cookie,
		.user = t->user,
		.user_nr = t->user_nr,
	};
	int err;

	if (st->form == CS_STITCH_JOINED) {
		if (nk > st->user_at) {	/* a deeper kernel part than room for */
			err = place_user(st, nk + KERNEL_ROOM, st->user,
					 st->user_nr);
			if (err)
				return err;
		}
		out.chain = st->chain + st->user_at - nk;
		out.chain_nr = nk + st->joined_nr;
		out.user = NULL;
		out.user_nr = 0;
		memcpy((uint64_t *)out.chain, ev->sample.callchain,
		       nk * sizeof(*out.chain));
	}
	if (state == CS_CHAIN_STITCHED)
		st->stats->stitched++;
	else
		st->stats->stitched_late++;
	return st->fn(st->ctx, &out);
}

static int deliver_kernel_only(struct cs_stitch *st, const struct cs_event *ev,
			       uint64_t cookie, enum cs_missing_reason why)
{
	struct cs_stitched out = {
		.event = ev,
		.chain = ev->sample.callchain,
		.chain_nr = ev->sample.callchain_nr - 2,
		.state = CS_CHAIN_KERNEL_ONLY,
		.missing = why,
		.cookie = cookie,
	};

	st->stats->kernel_only++;
	st->stats->kernel_only_by[why]++;
	return st->fn(st->ctx, &out);
}

/* A waiting sample's event, decoded again from its record into st->ev. */
static inline int pend_decode(struct cs_stitch *st, const struct pend *p)
{
	return st->decode(st->decode_ctx, p->bytes, p->size, p->offset,
			  p->filed, p->evsel, &st->ev);
}

#define PREFETCH_AHEAD	4

static inline void prefetch_record(const struct pend *p)
{
	__builtin_prefetch(p->bytes);
	__builtin_prefetch((const char *)p->bytes + 64);
	__builtin_prefetch((const char *)p->bytes + p->size - 8);
}

/* Samples wait long enough to leave the cache: a release asks for the
 * first PREFETCH_AHEAD records at its start, then for each the one that
 * many samples ahead as it takes it (wait_take()). */
static inline void wait_prefetch(const struct thr *t)
{
	for (uint32_t k = t->wait_first;
	     k < t->wait_nr && k < t->wait_first + PREFETCH_AHEAD; k++)
		prefetch_record(&t->wait[k]);
}

/* The next waiting sample of t, taken off its queue. The one
 * PREFETCH_AHEAD on is asked for, or the last when fewer wait: asking
 * again for one on its way costs less than the test, which mispredicts
 * with the few samples a kernel entry usually has. */
static inline const struct pend *wait_take(struct cs_stitch *st, struct thr *t)
{
	const struct pend *p = &t->wait[t->wait_first++];
	uint32_t ahead = t->wait_first + PREFETCH_AHEAD - 1;
	uint32_t last = t->wait_nr - 1;

	prefetch_record(&t->wait[ahead < last ? ahead : last]);
	st->pending--;
	return p;
}

/* An emptied queue starts again at its first slot */
static inline void wait_reset(struct thr *t)
{
	if (!waiting(t))
		t->wait_first = t->wait_nr = 0;
}

/* release() of samples stitched to t's record when the output takes the
 * chain in parts: one cs_stitched for them all, of which only the event's
 * kernel part changes from one sample to the next. */
static int release_parts(struct cs_stitch *st, struct thr *t)
{
	struct cs_stitched out = {
		.event = &st->ev,
		.state = CS_CHAIN_STITCHED,
		.cookie = t->rec_cookie,
		.user = t->user,
		.user_nr = t->user_nr,
	};
	int err = 0;

	wait_prefetch(t);
	while (!err && waiting(t)) {
		const struct pend *p = wait_take(st, t);

		err = pend_decode(st, p);
		if (!err) {
			out.chain = st->ev.sample.callchain;
			out.chain_nr = st->ev.sample.callchain_nr - 2;
			st->stats->stitched++;
			err = st->fn(st->ctx, &out);
		}
		pend_done(st, p);
	}
	wait_reset(t);
	return err;
}

/* Hands out every waiting sample of t: stitched with the thread's record
 * when why is CS_MISSING_NONE, else kernel-only for that reason. */
static int release(struct cs_stitch *st, struct thr *t,
		   enum cs_missing_reason why)
{
	int err = 0;

	if (st->form != CS_STITCH_JOINED && why == CS_MISSING_NONE)
		return release_parts(st, t);

	if (why == CS_MISSING_NONE && waiting(t)) {
		err = place_user(st, KERNEL_ROOM, t->user, t->user_nr);
		if (err)
			return err;
	}
	wait_prefetch(t);
	while (!err && waiting(t)) {
		const struct pend *p = wait_take(st, t);

		err = pend_decode(st, p);
		if (!err && why == CS_MISSING_NONE)
			err = deliver_merged(st, &st->ev, t,
					     CS_CHAIN_STITCHED);
		else if (!err)
			err = deliver_kernel_only(st, &st->ev, t->wait_cookie,
						  why);
		pend_done(st, p);
	}
	wait_reset(t);
	return err;
}

/* The task left the entry its samples wait for: their record is not coming. */
static int release_superseded(struct cs_stitch *st, struct thr *t)
{
	if (!waiting(t))
		return 0;
	return release(st, t, st->lost_seq != t->wait_lost ?
		       CS_MISSING_LOST : CS_MISSING_SUPERSEDED);
}

/* Keeps a deferred record's ips as the user part of the chains stitched
 * to it, for as long as samples of its entry may come. A user marker goes
 * before them, which drafts of the feature put first themselves and
 * released kernels do not (their ips are addresses only, which a JIT may
 * place at or above CONTEXT_MAX): stored in front of a copy when the
 * output wants it stored (CS_STITCH_PARTS), else implied. A stable
 * record's ips are then kept where they are, others (a pipe's, a
 * decompressed or byte-swapped copy's) copied as they are. */
static int remember(struct cs_stitch *st, struct thr *t, uint64_t cookie,
		    const uint64_t *ips, uint64_t nr, bool stable)
{
	const struct cs_stitched part = { .user = ips, .user_nr = nr };
	bool marker = st->form == CS_STITCH_PARTS &&
		      cs_parts_marker_implied(&part);
	int err;

	if (stable && !marker) {
		t->user = ips;
		t->user_nr = nr;
	} else {
		if ((err = cs_grow((void **)&t->rec_buf, &t->rec_cap,
				   nr + marker, sizeof(*t->rec_buf))))
			return err;
		if (marker)
			t->rec_buf[0] = CS_CONTEXT_USER;
		if (nr)
			memcpy(t->rec_buf + marker, ips, nr * sizeof(*ips));
		t->user = t->rec_buf;
		t->user_nr = marker + nr;
	}
	if (t->has_rec && t->rec_cookie != cookie) {
		memmove(t->old_cookies + 1, t->old_cookies,
			(OLD_COOKIES - 1) * sizeof(*t->old_cookies));
		t->old_cookies[0] = t->rec_cookie;
		if (t->nr_old < OLD_COOKIES)
			t->nr_old++;
	}
	t->rec_cookie = cookie;
	t->has_rec = true;
	return 0;
}

/* Whether the thread's records included cookie (another copy of one). */
static bool seen_record(const struct thr *t, uint64_t cookie)
{
	if (!t->has_rec)
		return false;
	if (t->rec_cookie == cookie)
		return true;
	for (unsigned int i = 0; i < t->nr_old; i++)
		if (t->old_cookies[i] == cookie)
			return true;
	return false;
}

/* ---- events ---- */

/* Whether a deferred sample of t with cookie comes after its record: it
 * goes out at once with the record's user part. */
static inline bool stitched_late(const struct thr *t, uint64_t cookie)
{
	/* one branch on the answer (the caller's), not one per term: each
	 * term depends on the record's data */
	return (!waiting(t) | (t->wait_cookie != cookie)) &
	       t->has_rec & (t->rec_cookie == cookie);
}

/* Files a deferred sample of t behind the others that wait for cookie;
 * those that wait for another one cannot get their record any more. */
static inline __attribute__((always_inline)) int
wait(struct cs_stitch *st, struct thr *t, uint64_t cookie,
		uint64_t time, const void *bytes, size_t size, uint64_t offset,
		bool stable, bool filed, uint16_t evsel)
{
	/* the first sample of an entry: every other sample of a short one
	 * (a jump on it mispredicted as often), so its state is selected */
	bool first = !waiting(t) | (t->wait_cookie != cookie);
	struct pend *p;
	int err;

	if (waiting(t) & (t->wait_cookie != cookie)) {
		err = release_superseded(st, t);
		if (err)
			return err;
	}
	t->wait_cookie = cookie;
	t->wait_lost = cs_select_u64(first, st->lost_seq, t->wait_lost);
	t->wait_since = cs_select_u64(first, time, t->wait_since);
	if (t->wait_nr == t->wait_cap && wait_grow(st, t))
		return -ENOMEM;
	p = &t->wait[t->wait_nr];
	p->bytes = bytes;
	p->copied = !stable;
	p->filed = filed;
	p->evsel = evsel;
	if (!stable) {
		struct copy *c = slot_get(st, sizeof(*c) + size);

		if (!c)
			return -ENOMEM;
		p->bytes = memcpy(c->data, bytes, size);
	}
	p->offset = offset;
	p->seq = st->seq++;
	p->size = (uint32_t)size;
	t->wait_nr++;
	if (++st->pending > st->stats->max_pending)
		st->stats->max_pending = st->pending;
	return 0;
}

static int on_sample(struct cs_stitch *st, const struct cs_event *ev,
		     bool stable)
{
	const struct cs_sample *s = &ev->sample;
	uint64_t n = s->callchain_nr, cookie;
	struct thr *t;
	int err;

	st->stats->samples++;
	if (n < 2 || s->callchain[n - 2] != CS_CONTEXT_USER_DEFERRED ||
	    !st->merge) {
		struct cs_stitched out = {
			.event = ev,
			.chain = s->callchain,
			.chain_nr = n,
			.state = CS_CHAIN_ORIGINAL,
		};

		if (n >= 2 && s->callchain[n - 2] == CS_CONTEXT_USER_DEFERRED) {
			out.state = CS_CHAIN_UNMERGED;
			out.cookie = s->callchain[n - 1];
			st->stats->samples_deferred++;
		}
		st->stats->original++;
		return st->fn(st->ctx, &out);
	}
	cookie = s->callchain[n - 1];
	st->stats->samples_deferred++;

	t = thr_get(st, s->tid);
	if (!t)
		return -ENOMEM;
	if (stitched_late(t, cookie)) {
		if (st->form == CS_STITCH_JOINED &&
		    (err = place_user(st, KERNEL_ROOM, t->user, t->user_nr)))
			return err;
		return deliver_merged(st, ev, t, CS_CHAIN_STITCHED_LATE);
	}
	return wait(st, t, cookie, ev->sample.time, ev->bytes, ev->size,
		    ev->offset, stable, false, CS_WAIT_NO_EVSEL);
}

int cs_stitch_park(struct cs_stitch *st, const struct cs_wait_key *k,
		   const void *bytes, size_t size, uint64_t offset, bool stable,
		   bool *waits)
{
	struct thr *t;

	*waits = false;
	if (!st->merge)
		return 0;
	t = thr_get(st, k->tid);
	if (!t)
		return -ENOMEM;
	if (stitched_late(t, k->cookie))
		return 0;		/* goes out now: the caller decodes it */
	st->stats->samples++;
	st->stats->samples_deferred++;
	*waits = true;
	return wait(st, t, k->cookie, k->time, bytes, size, offset, stable,
		    true, k->evsel);
}

static int on_deferred(struct cs_stitch *st, const struct cs_event *ev,
		       bool stable)
{
	const struct cs_deferred *d = &ev->deferred;
	struct thr *t;
	int err;

	st->stats->deferred_records++;
	if (!st->merge) {
		st->stats->deferred_used++;	/* the output shows it */
		return 0;
	}
	if (!ev->has_id) {
		/* no sample_id trailer: no tid to match on */
		st->stats->orphan_records++;
		return 0;
	}
	t = thr_get(st, ev->id.tid);
	if (!t)
		return -ENOMEM;
	if (waiting(t) && t->wait_cookie == d->cookie) {
		st->stats->deferred_used++;
		err = remember(st, t, d->cookie, d->ips, d->nr, stable);
		if (err)
			return err;
		return release(st, t, CS_MISSING_NONE);
	}
	if (seen_record(t, d->cookie)) {
		st->stats->duplicate_records++;
		return 0;
	}
	/* the task is back in user space from another entry than the one its
	 * samples wait for; kept for late samples of this entry */
	st->stats->orphan_records++;
	err = release_superseded(st, t);
	if (err)
		return err;
	return remember(st, t, d->cookie, d->ips, d->nr, stable);
}

static int on_task_exit(struct cs_stitch *st, const struct cs_event *ev)
{
	struct thr *t;
	int err;

	if (!st->merge)
		return 0;
	t = thr_find(st, ev->fork.tid);
	if (!t)
		return 0;
	err = release(st, t, CS_MISSING_EXITED);
	if (err)
		return err;
	thr_drop(st, t);
	return 0;
}

static inline int stitch_event(struct cs_stitch *st, const struct cs_event *ev,
			       bool stable)
{
	switch (ev->type) {
	case CS_RECORD_SAMPLE:
		return on_sample(st, ev, stable);
	case CS_RECORD_CALLCHAIN_DEFERRED:
		return on_deferred(st, ev, stable);
	case CS_RECORD_EXIT:
		return on_task_exit(st, ev);
	case CS_RECORD_LOST:
	case CS_RECORD_LOST_SAMPLES:
		st->lost_seq++;
		return 0;
	}
	return 0;
}

int cs_stitch_event(struct cs_stitch *st, const struct cs_event *ev)
{
	return stitch_event(st, ev, false);
}

int cs_stitch_event_stable(struct cs_stitch *st, const struct cs_event *ev)
{
	return stitch_event(st, ev, true);
}

struct flushed {
	const struct pend *p;
	uint64_t cookie;
};

static int flushed_cmp(const void *a, const void *b)
{
	const struct pend *x = ((const struct flushed *)a)->p;
	const struct pend *y = ((const struct flushed *)b)->p;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int cs_stitch_flush(struct cs_stitch *st)
{
	struct flushed *all;
	size_t n = 0;
	int err = 0;

	if (!st->pending)
		return 0;
	all = malloc(st->pending * sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < st->tab_cap; i++) {
		struct thr *t = &st->tab[i];

		if (!t->used)
			continue;
		for (uint32_t k = t->wait_first; k < t->wait_nr; k++) {
			all[n].p = &t->wait[k];
			all[n++].cookie = t->wait_cookie;
		}
		t->wait_first = t->wait_nr = 0;
	}
	/* in arrival order, so that the output stays in time order */
	qsort(all, n, sizeof(*all), flushed_cmp);
	for (size_t i = 0; i < n; i++) {
		st->pending--;
		if (!err)
			err = pend_decode(st, all[i].p);
		if (!err)
			err = deliver_kernel_only(st, &st->ev, all[i].cookie,
						  CS_MISSING_END);
		pend_done(st, all[i].p);
	}
	free(all);
	return err;
}

void cs_stitch_free(struct cs_stitch *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->tab_cap; i++) {
		struct thr *t = &st->tab[i];

		if (!t->used)
			continue;
		for (uint32_t k = t->wait_first; k < t->wait_nr; k++)
			if (t->wait[k].copied)
				free(copy_of(&t->wait[k]));
		free(t->wait);
		free(t->rec_buf);
	}
	for (int c = 0; c < SLOT_CLASSES; c++) {
		struct slot_stack *s = &st->free_slots[c];

		while (s->nr)
			free(s->slot[--s->nr]);
		free(s->slot);
	}
	free(st->spare_wait);
	free(st->tab);
	free(st->chain);
	free(st);
}

const char *cs_stats_mismatch(const struct cs_stats *st)
{
	uint64_t by = 0;

	for (int r = 0; r < CS_MISSING__COUNT; r++)
		by += st->kernel_only_by[r];
	if (by != st->kernel_only)
		return "kernel-only samples differ from their sum by reason";
	if (st->samples != st->stitched + st->stitched_late +
	    st->kernel_only + st->original)
		return "samples read differ from stitched + stitched late + "
		       "kernel-only + as recorded";
	if (st->deferred_records != st->deferred_used +
	    st->duplicate_records + st->orphan_records)
		return "deferred records read differ from used + duplicate + "
		       "orphan";
	return NULL;
}
