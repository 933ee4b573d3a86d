/* report.c - perf report --stdio style profile (see report.h): the
 * samples counted as they come, per unique stack, on this thread or on a
 * thread of their own; cs_report_write() hands each event to
 * report_view.c (entries), report_ranks.c (their order) and
 * report_table.c (the text). */
#include "outputs/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "abi/perf_abi.h"
#include "lib/util/big_alloc.h"
#include "lib/util/grow.h"
#include "lib/util/handoff.h"
#include "lib/util/hash.h"
#include "outputs/report_int.h"
#include "outputs/stack_agg.h"

/* A frame of cs_report_add_walked() by its address: most of a profile's
 * frames are addresses seen before in the same address space, whose
 * resolution, key and interning need not be done again */
#define SEEN_FRAME_BITS 16
struct seen_frame {
	uint64_t space, addr;		/* space 0: empty */
	uint64_t sym_start;		/* what r->sym_start keeps for it */
	uint32_t id;
	uint8_t cpumode;
};

/* A thread's id by what its samples give (a system-wide profile's
 * threads take turns on the CPUs) */
#define SEEN_THREAD_BITS 8
struct seen_thread {
	uint64_t addr;			/* its key's */
	uint32_t flags, id;		/* id UINT32_MAX: empty */
};

int cs_report_parse_sort(struct cs_report_opts *o, const char *arg,
			 char *bad, size_t len)
{
	static const char *const names[CS_REPORT__NR_KEYS] = {
		[CS_REPORT_COMM] = "comm", [CS_REPORT_PID] = "pid",
		[CS_REPORT_TID] = "tid", [CS_REPORT_DSO] = "dso",
		[CS_REPORT_SYM] = "sym", [CS_REPORT_STATE] = "state",
	};
	const char *p = arg;
	size_t nr = 0;

	for (;;) {
		size_t n = strcspn(p, ","), k;

		for (k = 0; k < CS_REPORT__NR_KEYS; k++)
			if (strlen(names[k]) == n && !strncmp(p, names[k], n))
				break;
		if (k == CS_REPORT__NR_KEYS || nr == CS_REPORT__NR_KEYS) {
			snprintf(bad, len, "%.*s", (int)n, p);
			return -EINVAL;
		}
		for (size_t i = 0; i < nr; i++)
			if (o->sort[i] == (enum cs_report_key)k) {
				snprintf(bad, len, "%.*s", (int)n, p);
				return -EINVAL;
			}
		o->sort[nr++] = (enum cs_report_key)k;
		if (!p[n])
			break;
		p += n + 1;
	}
	o->nr_sort = nr;
	return 0;
}

int cs_report_new(const struct cs_report_opts *o, struct cs_report **out)
{
	struct cs_report *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->o = *o;
	r->budget = o->memory ? o->memory : (size_t)256 << 20;
	/* a small budget is looked at after every sample, so that tests
	 * can have every stack spilled */
	r->check_every = r->budget < ((size_t)64 << 20) ? 1 : 1024;
	if (!r->o.nr_sort) {
		r->o.sort[0] = CS_REPORT_COMM;
		r->o.sort[1] = CS_REPORT_DSO;
		r->o.sort[2] = CS_REPORT_SYM;
		r->o.nr_sort = 3;
	}
	for (size_t i = 0; i < r->o.nr_sort; i++)
		if (r->o.sort[i] == CS_REPORT_PID)
			r->pidtid_shown |= 0xffffffff00000000ULL;
		else if (r->o.sort[i] == CS_REPORT_TID)
			r->pidtid_shown |= 0xffffffffULL;
	r->ids = malloc(CS_FRAMES_MAX * sizeof(*r->ids));
	r->frame_keys = malloc(CS_FRAMES_MAX * sizeof(*r->frame_keys));
	r->frame_sym_start = malloc(CS_FRAMES_MAX * sizeof(*r->frame_sym_start));
	r->slots = malloc(CS_FRAMES_MAX * sizeof(*r->slots));
	if (!r->ids || !r->frame_keys || !r->frame_sym_start || !r->slots ||
	    cs_agg_new(&r->stacks) || cs_agg_new(&r->threads)) {
		cs_report_free(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

void cs_report_free(struct cs_report *r)
{
	if (!r)
		return;
	cs_report_flush(r);
	report_spill_free(r);
	cs_agg_free(r->stacks);
	cs_agg_free(r->threads);
	free(r->ids);
	free(r->frame_keys);
	free(r->frame_sym_start);
	cs_big_free(r->sym_start);
	free(r->inlined);
	free(r->seen);
	free(r->seen_read);
	free(r->slots);
	free(r->seen_threads);
	free(r->ev_samples);
	free(r->ev_off_cpu);
	free(r->ev_period);
	free(r);
}

static bool is_kernel(const struct cs_frame *f)
{
	return f->cpumode == CS_MISC_KERNEL ||
	       f->cpumode == CS_MISC_GUEST_KERNEL || f->loc.kernel;
}

/* Frames are the same when their symbol (name and start) and dso are; an
 * address without a symbol is its own frame, as in perf. */
static void frame_key(const struct cs_frame *f, uint8_t inl,
		      struct cs_agg_key *k)
{
	memset(k, 0, sizeof(*k));
	if (inl) {
		k->sym = f->loc.sym;
		k->dso = f->loc.dso_name;
		k->flags = inl == CS_OUT_INLINED ? F_INLINED : F_INLINED_SAME;
		return;
	}
	switch (f->kind) {
	case CS_FRAME_MISSING_USER:
		k->flags = F_MISSING | ((uint32_t)f->missing << 8);
		return;
	case CS_FRAME_COOKIE:
		k->flags = F_COOKIE;
		k->addr = f->addr;
		return;
	case CS_FRAME_ADDR:
		break;
	}
	k->dso = f->loc.dso_name;
	if (f->loc.sym && f->loc.sym[0]) {
		/* local symbols of one name (a static function in several
		 * files, kallsyms' ".constprop.0"s) are different functions:
		 * perf tells them apart by their start */
		k->sym = f->loc.sym;
		k->addr = f->loc.sym_start;
	} else
		k->addr = f->loc.dso_name ? f->loc.dso_addr : f->addr;
	if (is_kernel(f))
		k->flags |= F_KERNEL;
}

static int ev_reserve(struct cs_report *r, unsigned int evsel)
{
	size_t n = (size_t)evsel + 1, cap = r->cap_ev, cap2 = r->cap_ev;

	if (n <= r->nr_ev)
		return 0;
	if (n > THREAD_EVSEL(UINT32_MAX))
		return -EINVAL;
	if (cs_grow_zeroed((void **)&r->ev_samples, &cap, n,
			   sizeof(*r->ev_samples)) ||
	    cs_grow_zeroed((void **)&r->ev_period, &cap2, n,
			   sizeof(*r->ev_period)) ||
	    cs_grow_zeroed((void **)&r->ev_off_cpu, &r->cap_ev, n,
			   sizeof(*r->ev_off_cpu)))
		return -ENOMEM;
	r->nr_ev = n;
	return 0;
}

/* The id of the thread a sample is filed under: threads that the sort
 * keys show alike are one (a pid or tid that no key shows would only make
 * more stacks, as many as samples in a profile of many short-lived
 * processes of a few programs) */
static int thread_id(struct cs_report *r, unsigned int evsel,
		     enum cs_off_cpu_state state, uint32_t pid, uint32_t tid,
		     const char *comm, uint32_t *id)
{
	struct cs_agg_key k = {
		.sym = comm ? comm : ":unknown",
		.addr = ((uint64_t)pid << 32 | tid) & r->pidtid_shown,
		.flags = THREAD_FLAGS(evsel, state),
	};
	struct seen_thread *st;
	int err;

	if (!r->seen_threads) {
		r->seen_threads = malloc(sizeof(*r->seen_threads) << SEEN_THREAD_BITS);
		if (!r->seen_threads)
			return -ENOMEM;
		for (size_t i = 0; i < (size_t)1 << SEEN_THREAD_BITS; i++)
			r->seen_threads[i].id = UINT32_MAX;
	}
	/* by the command's address too: the machine's names are interned
	 * (a name in a buffer of the caller's shares its slot, and is
	 * compared) */
	st = &r->seen_threads[cs_hash_u64(k.addr ^ k.flags ^ (uintptr_t)k.sym) >>
			      (64 - SEEN_THREAD_BITS)];
	if (st->id != UINT32_MAX && st->addr == k.addr && st->flags == k.flags &&
	    !strcmp(cs_agg_frame_key(r->threads, st->id)->sym, k.sym)) {
		*id = st->id;
		return 0;
	}
	err = cs_agg_frame_copy(r->threads, &k, id);
	if (!err)
		*st = (struct seen_thread){ k.addr, k.flags, *id };
	return err;
}

/* Records frame id's sym_start: perf compares a frame without a symbol by
 * its address */
static int keep_sym_start(struct cs_report *r, uint32_t id, uint64_t start)
{
	if (cs_big_grow((void **)&r->sym_start, &r->cap_sym_start, (size_t)id + 1,
		    sizeof(*r->sym_start)))
		return -ENOMEM;
	r->sym_start[id] = start;
	return 0;
}

static void count_sample(struct cs_report *r, unsigned int evsel,
			 enum cs_off_cpu_state state, uint64_t period)
{
	r->ev_samples[evsel]++;
	r->ev_period[evsel] += period;
	if (state != CS_OFF_CPU_NONE)
		r->ev_off_cpu[evsel] = true;
}

/* Adds a sample whose frames are r->ids[0, nr) to thread's stacks */
static int add_stack(struct cs_report *r, unsigned int evsel,
		     enum cs_off_cpu_state state, uint32_t thread, size_t nr,
		     uint64_t period)
{
	int err = cs_agg_add(r->stacks, thread, r->ids, (uint32_t)nr, 1,
			     period, NULL);

	if (err)
		return err;
	count_sample(r, evsel, state, period);
	return 0;
}

/* A sample as the aggregation takes it: its frames already turned into
 * keys, so that the thread that resolves frames does that part. */
struct sample_in {
	unsigned int evsel;
	enum cs_off_cpu_state state;
	uint32_t pid, tid;
	const char *comm;
	const struct cs_agg_key *keys;
	const uint64_t *sym_start;	/* per key: what the graphs' order
					 * needs of its location */
	size_t nr;			/* frames */
	size_t nr_keys;			/* nr, or with slots those not seen */
	const uint32_t *slots;		/* NULL, or per frame of
					 * cs_report_add_walked(): its slot of
					 * r->seen, SLOT_SEEN if its id is there
					 * already (else it takes the next key) */
	bool has_inlined;
	uint64_t period;
	uint64_t done, total;		/* cs_report_progress() then */
};

#define SLOT_SEEN	(1u << 31)
#define SLOT_NONE	(SLOT_SEEN - 1)	/* a frame with no address space */

/* The frames' keys into keys[0, nr) and sym_start[0, nr); returns whether
 * one is an inlined function. */
static bool frames_to_keys(const struct cs_frame *frames, const uint8_t *inlined,
			   size_t nr, struct cs_agg_key *keys, uint64_t *sym_start)
{
	bool has_inlined = false;

	for (size_t i = 0; i < nr; i++) {
		if (inlined && inlined[i])
			has_inlined = true;
		frame_key(&frames[i], inlined ? inlined[i] : 0, &keys[i]);
		sym_start[i] = frames[i].loc.sym ? frames[i].loc.sym_start :
			frames[i].addr;
	}
	return has_inlined;
}

/* r->ids[0, in->nr) for a sample of cs_report_add_walked(): a frame seen
 * before takes its id from its slot, any other is interned and fills
 * its slot */
static int walked_ids(struct cs_report *r, const struct sample_in *in)
{
	size_t k = 0;
	int err = 0;

	if (!r->seen &&
	    !(r->seen = calloc((size_t)1 << SEEN_FRAME_BITS, sizeof(*r->seen))))
		return -ENOMEM;
	for (size_t i = 0; !err && i < in->nr; i++) {
		uint32_t slot = in->slots[i];
		struct seen_frame *sf = slot == SLOT_NONE ? NULL :
					&r->seen[slot & ~SLOT_SEEN];

		if (slot & SLOT_SEEN) {
			r->ids[i] = sf->id;
			err = keep_sym_start(r, sf->id, sf->sym_start);
			continue;
		}
		err = cs_agg_frame(r->stacks, &in->keys[k], NULL, &r->ids[i]);
		if (!err)
			err = keep_sym_start(r, r->ids[i], in->sym_start[k]);
		if (!err && sf) {
			sf->id = r->ids[i];
			sf->sym_start = in->sym_start[k];
		}
		k++;
	}
	return err;
}

/* r->seen_keys at the switch to spill mode: each slot's frame by its key,
 * since the frames' ids go with their table */
int report_spill_seen(struct cs_report *r)
{
	size_t nf = cs_agg_nr_frames(r->stacks);

	/* made when samples were set aside, and kept up since */
	if (!r->seen || r->seen_keys)
		return 0;
	r->seen_keys = calloc((size_t)1 << SEEN_FRAME_BITS, sizeof(*r->seen_keys));
	if (!r->seen_keys)
		return -ENOMEM;
	/* a slot never filled is never named as seen: its key is not read */
	for (size_t i = 0; i < (size_t)1 << SEEN_FRAME_BITS; i++)
		if (r->seen[i].id < nf)
			r->seen_keys[i] = *cs_agg_frame_key(r->stacks, r->seen[i].id);
	return 0;
}

/* A sample of spill mode: a record of its own, its frames' keys from the
 * sample or, for frames seen before (cs_report_add_walked()), from their
 * slots */
static int spill_sample(struct cs_report *r, const struct sample_in *in,
			uint32_t thread)
{
	size_t k = 0;
	int err = 0;

	if (in->slots && !r->seen &&
	    !(r->seen = calloc((size_t)1 << SEEN_FRAME_BITS, sizeof(*r->seen))))
		return -ENOMEM;
	if (in->slots && !r->seen_keys &&
	    !(r->seen_keys = calloc((size_t)1 << SEEN_FRAME_BITS, sizeof(*r->seen_keys))))
		return -ENOMEM;
	err = report_spill_rec(r, thread, 1, in->period, (uint32_t)in->nr);
	for (size_t i = 0; !err && i < in->nr; i++) {
		uint32_t slot;

		if (!in->slots) {
			err = report_spill_frame(r, &in->keys[i], in->sym_start[i]);
			continue;
		}
		slot = in->slots[i];
		if (slot & SLOT_SEEN) {
			slot &= ~SLOT_SEEN;
			err = report_spill_frame(r, &r->seen_keys[slot],
						 r->seen[slot].sym_start);
			continue;
		}
		err = report_spill_frame(r, &in->keys[k], in->sym_start[k]);
		if (slot != SLOT_NONE) {
			r->seen_keys[slot] = in->keys[k];
			r->seen[slot].sym_start = in->sym_start[k];
		}
		k++;
	}
	if (!err)
		count_sample(r, in->evsel, in->state, in->period);
	return err;
}

int report_count_keys(struct cs_report *r, uint32_t thread,
		      const struct cs_agg_key *keys, const uint64_t *sym_start,
		      uint32_t nr, uint64_t count, uint64_t period)
{
	int err = cs_agg_frames(r->stacks, keys, nr, r->ids);

	for (uint32_t i = 0; !err && i < nr; i++)
		err = keep_sym_start(r, r->ids[i], sym_start[i]);
	if (!err)
		err = cs_agg_add(r->stacks, thread, r->ids, nr, count, period,
				 NULL);
	return err;
}

/* Before a sample goes into the tables: every check_every samples, and
 * before any that would make an index of theirs grow (a step of up to a
 * quarter of the tables at once, which must not take them past the
 * budget), whether they go on in memory */
static int look(struct cs_report *r, const struct sample_in *in)
{
	size_t step = cs_agg_step(r->stacks, (uint32_t)in->nr);

	if (!step && ++r->since_check < r->check_every)
		return 0;
	r->since_check = 0;
	switch (report_spill_due(r, in->done, in->total, step)) {
	case REPORT_KEEP:
		return 0;
	case REPORT_ASIDE:
		return report_aside_start(r);
	case REPORT_SPILL:
		return report_spill_start(r);
	}
	return 0;
}

/* Counts a sample in the tables: on the aggregation's thread, if it has
 * one. */
static int aggregate(struct cs_report *r, const struct sample_in *in)
{
	uint32_t thread;
	int err;

	err = ev_reserve(r, in->evsel);
	if (!err)
		err = thread_id(r, in->evsel, in->state, in->pid, in->tid,
				in->comm, &thread);
	if (in->has_inlined)
		r->has_inlined = true;
	if (!err && !r->spill && !r->aside)
		err = look(r, in);
	if (!err && r->aside && !r->spill &&
	    ++r->since_check >= r->check_every) {
		r->since_check = 0;
		if (report_aside_due(r))
			err = report_aside_spill(r);
	}
	if (!err && (r->spill || r->aside))
		return spill_sample(r, in, thread);
	if (!err && in->slots) {
		err = walked_ids(r, in);
	} else if (!err) {
		err = cs_agg_frames(r->stacks, in->keys, in->nr, r->ids);
		for (size_t i = 0; !err && i < in->nr; i++)
			err = keep_sym_start(r, r->ids[i], in->sym_start[i]);
	}
	if (!err)
		err = add_stack(r, in->evsel, in->state, thread, in->nr, in->period);
	return err;
}

/* A sample in a batch of the hand-off: this header, its keys, their
 * sym_start, its slots (walked), then its comm and a NUL. */
struct sample_rec {
	uint64_t period, done, total;
	uint32_t evsel, pid, tid, nr, nr_keys;
	uint32_t comm_len;
	uint8_t state;
	bool has_inlined, walked;
};

static size_t sample_rec_size(const struct sample_rec *rec)
{
	return sizeof(*rec) + rec->nr_keys * (sizeof(struct cs_agg_key) +
		sizeof(uint64_t)) + (rec->walked ? rec->nr * sizeof(uint32_t) : 0) +
		rec->comm_len + 1;
}

/* The aggregation's thread: the samples of a batch, in order. */
static int aggregate_batch(void *ctx, const void *buf, size_t len)
{
	struct cs_report *r = ctx;
	const char *p = buf, *end = p + len;
	int err = 0;

	while (p < end && !err) {
		const struct sample_rec *rec = (const void *)p;
		const struct cs_agg_key *keys = (const void *)(rec + 1);
		const uint64_t *sym_start = (const void *)(keys + rec->nr_keys);
		const uint32_t *slots = (const void *)(sym_start + rec->nr_keys);
		struct sample_in in = {
			.evsel = rec->evsel, .state = rec->state,
			.pid = rec->pid, .tid = rec->tid,
			.comm = (const char *)(slots + (rec->walked ? rec->nr : 0)),
			.keys = keys, .sym_start = sym_start, .nr = rec->nr,
			.nr_keys = rec->nr_keys,
			.slots = rec->walked ? slots : NULL,
			.has_inlined = rec->has_inlined, .period = rec->period,
			.done = rec->done, .total = rec->total,
		};

		err = aggregate(r, &in);
		p += cs_handoff_record_size(sample_rec_size(rec));
	}
	return err;
}

/* Whether samples go to the aggregation's thread: with jobs to spare, the
 * tables are filled there while this one reads and resolves the next
 * samples (see cs_report_flush) */
static bool handing_off(struct cs_report *r)
{
	if (r->o.jobs > 1 && !r->handoff && !r->flushed)
		r->flushed = cs_handoff_new(aggregate_batch, r, &r->handoff) != 0;
	return r->handoff;
}

/* Hands a sample over to the aggregation's thread, its keys, sym_start
 * and slots copied from in */
static int hand_off(struct cs_report *r, const struct sample_in *in)
{
	struct sample_rec h = {
		.period = in->period, .done = in->done, .total = in->total,
		.evsel = in->evsel, .pid = in->pid,
		.tid = in->tid, .nr = (uint32_t)in->nr,
		.nr_keys = (uint32_t)in->nr_keys,
		.comm_len = (uint32_t)strlen(in->comm), .state = (uint8_t)in->state,
		.has_inlined = in->has_inlined, .walked = in->slots != NULL,
	};
	struct sample_rec *rec = cs_handoff_append(r->handoff, sample_rec_size(&h));
	char *p;

	if (!rec)
		return -ENOMEM;
	*rec = h;
	p = (char *)(rec + 1);
	memcpy(p, in->keys, in->nr_keys * sizeof(*in->keys));
	p += in->nr_keys * sizeof(*in->keys);
	memcpy(p, in->sym_start, in->nr_keys * sizeof(*in->sym_start));
	p += in->nr_keys * sizeof(*in->sym_start);
	if (in->slots) {
		memcpy(p, in->slots, in->nr * sizeof(*in->slots));
		p += in->nr * sizeof(*in->slots);
	}
	memcpy(p, in->comm, h.comm_len + 1);
	return cs_handoff_error(r->handoff);
}

int cs_report_add(struct cs_report *r, unsigned int evsel, uint32_t pid,
		  uint32_t tid, const char *comm, const struct cs_frame *frames,
		  const uint8_t *inlined, size_t nr, uint64_t period)
{
	return cs_report_add_off_cpu(r, evsel, CS_OFF_CPU_NONE, pid, tid, comm,
				     frames, inlined, nr, period);
}

int cs_report_add_off_cpu(struct cs_report *r, unsigned int evsel,
			  enum cs_off_cpu_state state, uint32_t pid,
			  uint32_t tid, const char *comm,
			  const struct cs_frame *frames, const uint8_t *inlined,
			  size_t nr, uint64_t period)
{
	struct sample_in in = {
		.evsel = evsel, .state = state, .pid = pid, .tid = tid,
		.comm = comm ? comm : ":unknown",
		.keys = r->frame_keys, .sym_start = r->frame_sym_start,
		.nr = nr > CS_FRAMES_MAX ? CS_FRAMES_MAX : nr, .period = period,
		.done = r->input_done, .total = r->input_total,
	};

	if ((size_t)evsel + 1 > THREAD_EVSEL(UINT32_MAX))
		return -EINVAL;
	in.nr_keys = in.nr;
	in.has_inlined = frames_to_keys(frames, inlined, in.nr, r->frame_keys,
					r->frame_sym_start);
	return handing_off(r) ? hand_off(r, &in) : aggregate(r, &in);
}

static uint32_t seen_slot(uint64_t space, const struct cs_frame *f)
{
	uint64_t h = cs_hash_u64(f->addr ^ space * 0x9e3779b97f4a7c15ULL ^ f->cpumode);

	return (uint32_t)(h >> (64 - SEEN_FRAME_BITS));
}

int cs_report_add_walked(struct cs_report *r, unsigned int evsel,
			 enum cs_off_cpu_state state, uint32_t pid,
			 uint32_t tid, const char *comm,
			 struct cs_frame *frames, const uint64_t *space,
			 size_t nr, uint64_t period,
			 cs_report_resolve_fn resolve, void *ctx)
{
	struct sample_in in = {
		.evsel = evsel, .state = state, .pid = pid, .tid = tid,
		.comm = comm ? comm : ":unknown",
		.keys = r->frame_keys, .sym_start = r->frame_sym_start,
		.slots = r->slots,
		.nr = nr > CS_FRAMES_MAX ? CS_FRAMES_MAX : nr, .period = period,
		.done = r->input_done, .total = r->input_total,
	};
	bool apart = handing_off(r);
	struct seen_frame **seen = apart ? &r->seen_read : &r->seen;

	if ((size_t)evsel + 1 > THREAD_EVSEL(UINT32_MAX))
		return -EINVAL;
	/* which frames were seen is known here, their ids where they are
	 * counted: the two keep a table of slots each, the same slots filled
	 * in the same order (one table without a thread of aggregation) */
	if (!*seen && !(*seen = calloc((size_t)1 << SEEN_FRAME_BITS, sizeof(**seen))))
		return -ENOMEM;
	/* the slots of a sample's frames asked for at once: their cache
	 * misses overlap */
	for (size_t i = 0; i < in.nr; i++)
		if (space[i])
			__builtin_prefetch(&(*seen)[seen_slot(space[i], &frames[i])]);
	for (size_t i = 0; i < in.nr; i++) {
		struct cs_frame *f = &frames[i];
		uint32_t slot = space[i] ? seen_slot(space[i], f) : SLOT_NONE;
		struct seen_frame *sf = slot == SLOT_NONE ? NULL : &(*seen)[slot];

		if (sf && sf->space == space[i] && sf->addr == f->addr &&
		    sf->cpumode == f->cpumode) {
			r->slots[i] = slot | SLOT_SEEN;
			continue;
		}
		r->slots[i] = slot;
		resolve(ctx, pid, f);
		frames_to_keys(f, NULL, 1, &r->frame_keys[in.nr_keys],
			       &r->frame_sym_start[in.nr_keys]);
		in.nr_keys++;
		if (sf) {
			sf->space = space[i];
			sf->addr = f->addr;
			sf->cpumode = f->cpumode;
		}
	}
	return apart ? hand_off(r, &in) : aggregate(r, &in);
}

void cs_report_progress(struct cs_report *r, uint64_t done, uint64_t total)
{
	r->input_done = done;
	r->input_total = total;
}

const char *cs_report_memory_note(const struct cs_report *r)
{
	return r->why[0] ? r->why : NULL;
}

int cs_report_flush(struct cs_report *r)
{
	int err = cs_handoff_finish(r->handoff);

	r->handoff = NULL;
	r->flushed = true;
	return err;
}

const char *cs_report_error(const struct cs_report *r)
{
	return r->err[0] ? r->err : NULL;
}

uint64_t cs_report_samples(const struct cs_report *r, unsigned int evsel)
{
	return evsel < r->nr_ev ? r->ev_samples[evsel] : 0;
}

uint64_t cs_report_period(const struct cs_report *r, unsigned int evsel)
{
	return evsel < r->nr_ev ? r->ev_period[evsel] : 0;
}

int cs_report_write(struct cs_report *r, FILE *out, const char *const *names,
		    size_t nr_names)
{
	char buf[32];
	int err = cs_report_flush(r);

	if (!err && r->aside && !r->spill)
		err = report_aside_settle(r);
	if (err)
		return err;
	if (r->spill)
		goto write;
	/* inlined functions are never entries: which frames are, asked
	 * for every frame of every stack, is kept apart */
	if (r->has_inlined)
		err = report_mark_inlined(r);
	if (err)
		return err;
	if (r->aside_back)
		snprintf(r->why, sizeof(r->why), "in memory: tables of %zu "
			 "bytes, the budget %zu; the %" PRIu64 " samples set "
			 "aside past 7/8 of it (%zu bytes) taken back",
			 report_tables_memory(r), r->budget, r->aside_back,
			 r->aside_tables);
	else
		snprintf(r->why, sizeof(r->why), "in memory: tables of %zu "
			 "bytes, the budget %zu", report_tables_memory(r),
			 r->budget);
	/* everything is added: the entries and their sort need the memory
	 * more than the index of frames and stacks */
	cs_agg_trim(r->stacks);
write:
	for (unsigned int ev = 0; ev < r->nr_ev && !err; ev++) {
		const char *name = ev < nr_names ? names[ev] : NULL;

		if (!r->ev_samples[ev])
			continue;
		if (!name) {
			snprintf(buf, sizeof(buf), "event %u", ev);
			name = buf;
		}
		err = r->spill ? report_external_write(r, ev, name, out) :
				 report_write_event(r, ev, name, out);
	}
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
	if (r->tmp_written) {
		size_t len = strlen(r->why);

		snprintf(r->why + len, sizeof(r->why) - len, "; %" PRIu64
			 " bytes of temporary files written (%" PRIu64 " of "
			 "them the samples' records read back; %zu names given "
			 "by id)", r->tmp_written,
			 r->spill ? report_spill_bytes(r) : 0,
			 r->names.nr ? r->names.nr - 1 : 0);
	}
	return err;
}
