/* report.c - perf report --stdio style profile (see report.h). */
#include "outputs/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "abi/perf_abi.h"
#include "lib/util/grow.h"
#include "outputs/call_tree.h"
#include "outputs/out_inlines.h"
#include "outputs/out_names.h"
#include "outputs/stack_agg.h"
#include "lib/util/handoff.h"
#include "lib/util/hash.h"
#include "lib/util/jobs.h"
#include "lib/util/keysort.h"
#include "outputs/report_int.h"

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
	cs_agg_free(r->stacks);
	cs_agg_free(r->threads);
	free(r->ids);
	free(r->frame_keys);
	free(r->frame_sym_start);
	free(r->sym_start);
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

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
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
	st = &r->seen_threads[mix64(k.addr ^ k.flags ^ (uintptr_t)k.sym) >>
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
	if (cs_grow((void **)&r->sym_start, &r->cap_sym_start, (size_t)id + 1,
		    sizeof(*r->sym_start)))
		return -ENOMEM;
	r->sym_start[id] = start;
	return 0;
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
	r->ev_samples[evsel]++;
	r->ev_period[evsel] += period;
	if (state != CS_OFF_CPU_NONE)
		r->ev_off_cpu[evsel] = true;
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
	if (!err && in->slots) {
		err = walked_ids(r, in);
	} else if (!err) {
		err = cs_agg_frames(r->stacks, in->keys, in->nr, r->ids);
		for (size_t i = 0; !err && i < in->nr; i++)
			err = keep_sym_start(r, r->ids[i], in->sym_start[i]);
	}
	return err ? err : add_stack(r, in->evsel, in->state, thread, in->nr,
				     in->period);
}

/* A sample in a batch of the hand-off: this header, its keys, their
 * sym_start, its slots (walked), then its comm and a NUL. */
struct sample_rec {
	uint64_t period;
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
		.period = in->period, .evsel = in->evsel, .pid = in->pid,
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
	uint64_t h = mix64(f->addr ^ space * 0x9e3779b97f4a7c15ULL ^ f->cpumode);

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

int cs_report_flush(struct cs_report *r)
{
	int err = cs_handoff_finish(r->handoff);

	r->handoff = NULL;
	r->flushed = true;
	return err;
}

uint64_t cs_report_samples(const struct cs_report *r, unsigned int evsel)
{
	return evsel < r->nr_ev ? r->ev_samples[evsel] : 0;
}

uint64_t cs_report_period(const struct cs_report *r, unsigned int evsel)
{
	return evsel < r->nr_ev ? r->ev_period[evsel] : 0;
}

static bool sorts_by(const struct cs_report *r, enum cs_report_key k)
{
	for (size_t i = 0; i < r->o.nr_sort; i++)
		if (r->o.sort[i] == k)
			return true;
	return false;
}

/* The id of what a thread's keys (comm, pid, tid, state) say, the same for
 * threads that show the same. */
static int thread_part(struct view *v, uint32_t thread, uint32_t *out)
{
	const struct cs_report *r = v->r;
	uint64_t pt = report_thread_pidtid(r, thread);
	uint32_t key[CS_REPORT__NR_KEYS];
	uint32_t nr = 0;
	struct cs_agg_key nk;
	int err = 0;

	if (v->thread_part[thread] != UINT32_MAX) {
		*out = v->thread_part[thread];
		return 0;
	}
	for (size_t i = 0; !err && i < r->o.nr_sort; i++) {
		switch (r->o.sort[i]) {
		case CS_REPORT_COMM:
			nk = (struct cs_agg_key){ .sym = report_thread_comm(r, thread) };
			err = cs_agg_frame(v->names, &nk, NULL, &key[nr++]);
			break;
		case CS_REPORT_PID:
			key[nr++] = (uint32_t)(pt >> 32);
			break;
		case CS_REPORT_TID:
			key[nr++] = (uint32_t)pt;
			break;
		case CS_REPORT_STATE:
			key[nr++] = (uint32_t)report_thread_state(r, thread);
			break;
		default:
			break;
		}
	}
	if (!err)
		err = cs_agg_add(v->keys, 0, key, nr, 0, 0, out);
	if (!err)
		v->thread_part[thread] = *out;
	return err;
}

/* The id of what a frame's keys (dso, sym) say: the frame itself when
 * sorting by symbol (a frame has one dso), its dso's name when only by
 * dso, else 0. */
static int frame_part(struct view *v, uint32_t frame, uint32_t *out)
{
	const struct cs_report *r = v->r;
	struct cs_agg_key nk;
	int err;

	if (v->by_sym) {
		*out = frame;
		return 0;
	}
	if (!v->frame_part) {
		*out = 0;
		return 0;
	}
	if (v->frame_part[frame] != UINT32_MAX) {
		*out = v->frame_part[frame];
		return 0;
	}
	nk = (struct cs_agg_key){
		.dso = report_dso_short(cs_agg_frame_key(r->stacks, frame)->dso),
		.flags = 1 };
	err = cs_agg_frame(v->names, &nk, NULL, out);
	if (!err)
		v->frame_part[frame] = *out;
	return err;
}

/* An entry's key: the parts its thread and frame show (worked out when
 * the entry was made), thread part << 32 | frame part */
static uint64_t entry_key(const struct view *v, const struct entry *e)
{
	uint32_t fp = v->by_sym ? e->frame :
		      v->frame_part ? v->frame_part[e->frame] : 0;

	return (uint64_t)v->thread_part[e->thread] << 32 | fp;
}

static int map_grow(struct view *v)
{
	size_t cap = v->map_cap ? v->map_cap * 2 : 4096;
	uint32_t *map = calloc(cap, sizeof(*map)), bits = cs_slot_hash_bits(cap);

	if (!map)
		return -ENOMEM;
	for (size_t i = 0; i < v->nr_e; i++) {
		uint64_t h = mix64(entry_key(v, &v->e[i]));
		size_t s;

		for (s = h & (cap - 1); map[s]; s = (s + 1) & (cap - 1))
			;
		map[s] = cs_slot_make(bits, h, i);
	}
	free(v->map);
	v->map = map;
	v->map_cap = cap;
	v->map_hash_bits = bits;
	return 0;
}

static int view_entry(struct view *v, uint32_t thread, uint32_t frame,
		      uint32_t *id)
{
	uint32_t tp, fp, bits;
	uint64_t key, h;
	size_t s;
	int err = thread_part(v, thread, &tp);

	if (!err)
		err = frame_part(v, frame, &fp);
	if (!err && v->nr_e >= UINT32_MAX / 2)
		err = -ENOMEM;
	if (!err && (v->nr_e + 1) * 2 > v->map_cap)
		err = map_grow(v);
	if (err)
		return err;
	key = (uint64_t)tp << 32 | fp;
	h = mix64(key);
	bits = v->map_hash_bits;
	for (s = h & (v->map_cap - 1); v->map[s]; s = (s + 1) & (v->map_cap - 1)) {
		uint32_t i;

		if (!cs_slot_may_be(bits, v->map[s], h))
			continue;
		i = cs_slot_index(bits, v->map[s]);
		if (entry_key(v, &v->e[i]) == key) {
			*id = i;
			return 0;
		}
	}
	if (v->nr_e == v->cap_e) {
		size_t n = v->cap_e ? v->cap_e * 2 : 256;
		struct entry *e = realloc(v->e, n * sizeof(*e));
		struct entry_work *w;

		if (!e)
			return -ENOMEM;
		v->e = e;
		w = realloc(v->work, n * sizeof(*w));
		if (!w)
			return -ENOMEM;
		v->work = w;
		v->cap_e = n;
	}
	memset(&v->e[v->nr_e], 0, sizeof(v->e[0]));
	memset(&v->work[v->nr_e], 0, sizeof(v->work[0]));
	v->e[v->nr_e].thread = thread;
	v->e[v->nr_e].frame = frame;
	*id = (uint32_t)v->nr_e++;
	v->map[s] = cs_slot_make(bits, h, *id);
	return 0;
}

/* The parts' tables for a view: before view_build(). */
static int view_parts(struct view *v)
{
	const struct cs_report *r = v->r;
	size_t nt = cs_agg_nr_frames(r->threads), nf = cs_agg_nr_frames(r->stacks);

	v->thread_part = malloc((nt ? nt : 1) * sizeof(*v->thread_part));
	if (!v->thread_part)
		return -ENOMEM;
	memset(v->thread_part, 0xff, nt * sizeof(*v->thread_part));
	v->by_sym = sorts_by(r, CS_REPORT_SYM);
	if (sorts_by(r, CS_REPORT_DSO) && !v->by_sym) {
		v->frame_part = malloc((nf ? nf : 1) * sizeof(*v->frame_part));
		if (!v->frame_part)
			return -ENOMEM;
		memset(v->frame_part, 0xff, nf * sizeof(*v->frame_part));
	}
	return 0;
}

static void view_parts_free(struct view *v)
{
	free(v->thread_part);
	free(v->frame_part);
	free(v->map);
	v->thread_part = v->frame_part = NULL;
	v->map = NULL;
}

/* r->inlined, once every frame is added. Returns 0 or -ENOMEM. */
static int mark_inlined(struct cs_report *r)
{
	size_t nf = cs_agg_nr_frames(r->stacks);

	free(r->inlined);
	r->cap_inlined = nf / 64 + 1;
	r->inlined = calloc(r->cap_inlined, sizeof(*r->inlined));
	if (!r->inlined) {
		r->cap_inlined = 0;
		return -ENOMEM;
	}
	for (size_t i = 0; i < nf; i++)
		if (cs_agg_frame_key(r->stacks, (uint32_t)i)->flags &
		    (F_INLINED | F_INLINED_SAME))
			r->inlined[i / 64] |= 1ULL << (i % 64);
	return 0;
}

static bool is_inlined(const struct cs_report *r, uint32_t frame)
{
	return frame / 64 < r->cap_inlined &&
	       (r->inlined[frame / 64] >> (frame % 64) & 1);
}

static bool wants_graph(const struct cs_report *r)
{
	return r->o.graph != CS_REPORT_GRAPH_NONE;
}

/* The entry is weighty enough for a call graph under it. No branch of a
 * graph outweighs its entry: below the threshold there is nothing to
 * draw. */
static bool draws_graph(const struct view *v, const struct entry *e)
{
	const struct cs_report *r = v->r;
	uint64_t weight = r->o.no_children ? e->self_period : e->child_period;

	return wants_graph(r) &&
	       report_pct(weight, v->total_period) >= r->o.graph_min_percent;
}

/* Asks early for what view_entry() will read for each of a stack's
 * frames[0, n): their slots of the map, then the entries the slots name,
 * so that the cache misses of a stack's frames overlap. */
static void view_prefetch(struct view *v, uint32_t thread,
			  const uint32_t *frames, size_t n, uint64_t *hash)
{
	uint32_t tp, fp;

	if (!v->map_cap || thread_part(v, thread, &tp))
		return;
	for (size_t i = 0; i < n; i++) {
		hash[i] = 0;
		if (frame_part(v, frames[i], &fp))
			return;
		hash[i] = mix64((uint64_t)tp << 32 | fp);
		__builtin_prefetch(&v->map[hash[i] & (v->map_cap - 1)]);
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t slot = v->map[hash[i] & (v->map_cap - 1)];

		if (slot && cs_slot_may_be(v->map_hash_bits, slot, hash[i])) {
			uint32_t id = cs_slot_index(v->map_hash_bits, slot);

			__builtin_prefetch(&v->e[id]);
			__builtin_prefetch(&v->work[id]);
		}
	}
}

/* Pass over every stack of the event: self at the innermost frame, children
 * once per stack for each entry in it. Occurrences are
 * counted first and then filed per entry (a counting sort), so the call
 * graphs need no per-entry lists. */
static int view_build(struct view *v)
{
	struct cs_report *r = v->r;
	size_t nr = cs_agg_nr_stacks(r->stacks);
	bool children = !r->o.no_children;
	size_t room = cs_agg_max_depth(r->stacks) + 1;
	uint32_t *frames = malloc(room * sizeof(*frames));
	uint32_t *todo = malloc(room * sizeof(*todo));
	uint64_t *hash = malloc(room * sizeof(*hash));
	struct cs_agg_stack st;
	int err = frames && todo && hash ? 0 : -ENOMEM;

	for (int pass = 0; pass < 2 && !err; pass++) {
		for (size_t s = 0; s < nr && !err; s++) {
			uint32_t depth, leaf;

			cs_agg_stack(r->stacks, (uint32_t)s, frames, &st);
			if (THREAD_EVSEL(cs_agg_frame_key(r->threads, st.tag)->flags) !=
			    v->evsel)
				continue;
			if (pass == 0) {
				v->total_count += st.count;
				v->total_period += st.period;
			}
			/* inlined functions are frames of the graphs, never
			 * entries: the innermost entry is the first real frame */
			leaf = 0;
			while (leaf + 1 < st.nr && is_inlined(r, st.frames[leaf]))
				leaf++;
			depth = !st.nr ? 0 : children ? st.nr - leaf : 1;
			if (depth > 1) {
				uint32_t n = 0;

				for (uint32_t k = 0; k < depth; k++)
					if (k == 0 || !is_inlined(r, st.frames[leaf + k]))
						todo[n++] = st.frames[leaf + k];
				view_prefetch(v, st.tag, todo, n, hash);
			}
			/* the innermost frame first; then, as perf walks the
			 * chain, outermost first for caller graphs, so that a
			 * recursive function's graph starts at its outermost
			 * call (innermost first for callee graphs) */
			for (uint32_t k = 0; k < depth; k++) {
				uint32_t pos = k == 0 ? leaf :
					r->o.graph == CS_REPORT_GRAPH_CALLEE ?
					leaf + k : st.nr - k;
				uint32_t id;
				struct entry *e;
				struct entry_work *w;

				if (k && is_inlined(r, st.frames[pos]))
					continue;

				err = view_entry(v, st.tag, st.frames[pos], &id);
				if (err)
					break;
				e = &v->e[id];
				w = &v->work[id];
				if (pass == 0 && k == 0) {
					e->self_count += st.count;
					e->self_period += st.period;
				}
				if (w->stamp == s + 1)
					continue;
				w->stamp = (uint32_t)(s + 1);
				if (pass == 0) {
					uint32_t len = k ? pos + 1 : st.nr;

					e->child_count += st.count;
					e->child_period += st.period;
					w->occ_nr++;
					if (len > w->max_depth)
						w->max_depth = (uint16_t)len;
				} else if (v->occ_off[id + 1] > v->occ_off[id]) {
					v->occ[v->occ_off[id] + w->occ_nr++] = (struct occurrence){
						(uint32_t)s, pos, k == 0 };
				}
			}
		}
		if (pass == 0 && !err && wants_graph(r)) {
			size_t off = 0;

			/* only entries that draw a graph need their stacks */
			for (size_t i = 0; i < v->nr_e; i++) {
				if (draws_graph(v, &v->e[i]))
					off += v->work[i].occ_nr;
				if (off > UINT32_MAX) {
					err = -ENOMEM;
					break;
				}
			}
			if (err || !off)
				break;
			v->nr_occ = off;
			v->occ = malloc(off * sizeof(*v->occ));
			v->occ_off = malloc((v->nr_e + 1) * sizeof(*v->occ_off));
			if (!v->occ || !v->occ_off) {
				err = -ENOMEM;
				break;
			}
			off = 0;
			for (size_t i = 0; i < v->nr_e; i++) {
				v->occ_off[i] = (uint32_t)off;
				if (draws_graph(v, &v->e[i]))
					off += v->work[i].occ_nr;
				v->work[i].occ_nr = 0;
				v->work[i].stamp = 0;
			}
			v->occ_off[v->nr_e] = (uint32_t)off;
		} else if (pass == 0) {
			break;
		}
	}
	free(frames);
	free(todo);
	free(hash);
	return err;
}

/* ---- text --------------------------------------------------------------- */

const char *report_frame_sym_text(const struct cs_report *r, uint32_t frame,
				  char *buf, size_t len)
{
	const struct cs_agg_key *k = cs_agg_frame_key(r->stacks, frame);

	if (k->flags & F_MISSING)
		return cs_out_missing_user_name((enum cs_missing_reason)(k->flags >> 8));
	if (k->flags & F_COOKIE) {
		snprintf(buf, len, "[cookie %#" PRIx64 "]", k->addr);
		return buf;
	}
	if (k->flags & F_INLINED) {
		snprintf(buf, len, "%s (inlined)", k->sym);
		return buf;
	}
	if (k->sym)
		return k->sym;
	snprintf(buf, len, "%#" PRIx64, k->addr);
	return buf;
}

/* Copies s (n bytes) into buf as snprintf("%s") would: at most len - 1
 * bytes and a NUL. Returns the bytes copied. */
static size_t copy_text(char *buf, size_t len, const char *s, size_t n)
{
	if (n > len - 1)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return n;
}

static size_t dec_text(char *buf, size_t len, uint64_t v)
{
	char tmp[24];
	size_t n = 0;

	do {
		tmp[sizeof(tmp) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return copy_text(buf, len, tmp + sizeof(tmp) - n, n);
}

/* The Symbol column: "[k] name" or "[.] name", perf's way. Returns the
 * text's length. */
size_t report_entry_sym_text(const struct cs_report *r, uint32_t frame,
			     char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const struct cs_agg_key *k = cs_agg_frame_key(r->stacks, frame);
	char text[40], *p = text;
	const char *name;

	*p++ = '[';
	*p++ = k->flags & F_KERNEL ? 'k' : '.';
	*p++ = ']';
	*p++ = ' ';
	if (k->sym || (k->flags & (F_MISSING | F_COOKIE))) {
		char tmp[64];
		size_t n;

		name = report_frame_sym_text(r, frame, tmp, sizeof(tmp));
		n = copy_text(buf + 4, len - 4, name, strlen(name));
		memcpy(buf, text, 4);
		return n + 4;
	}
	/* perf's "%-#.*llx": 16 digits, and no 0x before a zero */
	if (k->addr) {
		*p++ = '0';
		*p++ = 'x';
	}
	for (int i = 15; i >= 0; i--)
		*p++ = hex[(k->addr >> (4 * i)) & 15];
	return copy_text(buf, len, text, (size_t)(p - text));
}

/* A key column's text into buf (as snprintf would cut it); returns its
 * length. */
size_t report_entry_col_text(const struct view *v, const struct entry *e,
			     enum cs_report_key key, char *buf, size_t len)
{
	const struct cs_report *r = v->r;
	const char *s;

	switch (key) {
	case CS_REPORT_COMM:
		s = report_thread_comm(r, e->thread);
		return copy_text(buf, len, s, strlen(s));
	case CS_REPORT_PID:
		return dec_text(buf, len,
				(uint32_t)(report_thread_pidtid(r, e->thread) >> 32));
	case CS_REPORT_TID:
		return dec_text(buf, len, (uint32_t)report_thread_pidtid(r, e->thread));
	case CS_REPORT_DSO:
		s = report_dso_short(cs_agg_frame_key(r->stacks, e->frame)->dso);
		return copy_text(buf, len, s, strlen(s));
	case CS_REPORT_SYM:
		return report_entry_sym_text(r, e->frame, buf, len);
	case CS_REPORT_STATE:
		s = report_state_text(report_thread_state(r, e->thread));
		return copy_text(buf, len, s, strlen(s));
	case CS_REPORT__NR_KEYS:
		break;
	}
	buf[0] = '\0';
	return 0;
}

/* One line of the table, built whole and written at once. */
struct line {
	char text[8192];
	size_t len;
};

static void line_put(struct line *l, const char *s, size_t n)
{
	if (n > sizeof(l->text) - l->len)
		n = sizeof(l->text) - l->len;
	memcpy(l->text + l->len, s, n);
	l->len += n;
}

static void line_pad(struct line *l, size_t n)
{
	if (n > sizeof(l->text) - l->len)
		n = sizeof(l->text) - l->len;
	memset(l->text + l->len, ' ', n);
	l->len += n;
}

/* "%*s" and "%-*s" */
static void line_right(struct line *l, const char *s, size_t n, size_t width)
{
	if (n < width)
		line_pad(l, width - n);
	line_put(l, s, n);
}

static void line_left(struct line *l, const char *s, size_t n, size_t width)
{
	line_put(l, s, n);
	if (n < width)
		line_pad(l, width - n);
}

/* "%.2f%%" of part, remembered: neighbours in the table mostly weigh the
 * same */
struct pct_text {
	uint64_t part;
	bool valid;
	size_t len;
	char text[32];
};

static const struct pct_text *pct_text(struct pct_text *c, uint64_t part,
				       uint64_t total)
{
	if (!c->valid || c->part != part) {
		int n = snprintf(c->text, sizeof(c->text), "%.2f%%", report_pct(part, total));

		c->len = n > 0 ? (size_t)n : 0;
		c->part = part;
		c->valid = true;
	}
	return c;
}

static const char *const key_header[CS_REPORT__NR_KEYS] = {
	[CS_REPORT_COMM] = "Command", [CS_REPORT_PID] = "Pid",
	[CS_REPORT_TID] = "Tid", [CS_REPORT_DSO] = "Shared Object",
	[CS_REPORT_SYM] = "Symbol", [CS_REPORT_STATE] = "State",
};

/* ---- the table ---------------------------------------------------------- */

#define MAX_COLS (CS_REPORT__NR_KEYS + 3)

/* Entries are written in their sorted order, scattered over memory: the
 * one AHEAD places on and, once that is in, its frame's key are asked
 * for early, so that their cache misses overlap. */
#define AHEAD 16

static void prefetch_entry(const struct view *v, const uint32_t *order,
			   size_t i, size_t end)
{
	if (i + AHEAD < end)
		__builtin_prefetch(&v->e[order[i + AHEAD]]);
	if (i + AHEAD / 2 < end)
		__builtin_prefetch(cs_agg_frame_key(v->r->stacks,
						    v->e[order[i + AHEAD / 2]].frame));
}

/* The table's lines (and graphs) for entries order[begin, end): a chunk of
 * cs_jobs_ordered(), so it only reads what they share. */
struct table {
	const struct view *v;
	const uint32_t *order;
	const size_t *width;
	size_t nc;
	bool children;
	bool off_cpu;			/* a Seconds column */
};

static int table_lines(void *ctx, size_t begin, size_t end, FILE *out)
{
	const struct table *t = ctx;
	const struct view *v = t->v;
	const struct cs_report *r = v->r;
	const size_t *width = t->width;
	struct pct_text pct_child = { 0 }, pct_self = { 0 };
	struct line l;
	char text[1024];
	int err = 0;

	for (size_t i = begin; i < end && !err; i++) {
		const struct entry *e = &v->e[t->order[i]];
		uint64_t total = v->total_period;
		uint64_t weight = t->children ? e->child_period : e->self_period;
		const struct pct_text *pt;
		size_t c = 0;

		prefetch_entry(v, t->order, i, end);
		l.len = 0;
		line_put(&l, " ", 1);
		if (t->children) {
			pt = pct_text(&pct_child, e->child_period, total);
			line_put(&l, " ", 1);
			line_right(&l, pt->text, pt->len, width[c++]);
			pt = pct_text(&pct_self, e->self_period, total);
			line_put(&l, "  ", 2);
			line_right(&l, pt->text, pt->len, width[c++]);
		} else {
			pt = pct_text(&pct_self, e->self_period, total);
			line_put(&l, " ", 1);
			line_right(&l, pt->text, pt->len, width[c++]);
		}
		if (t->off_cpu) {
			int n = snprintf(text, sizeof(text), "%.6f", weight / 1e9);

			line_put(&l, "  ", 2);
			line_right(&l, text, (size_t)n, width[c++]);
		}
		if (r->o.show_nr_samples) {
			size_t n = dec_text(text, sizeof(text), t->children ?
					    e->child_count : e->self_count);

			line_put(&l, "  ", 2);
			line_right(&l, text, n, width[c++]);
		}
		for (size_t k = 0; k < r->o.nr_sort; k++) {
			size_t n = report_entry_col_text(v, e, r->o.sort[k], text,
						  sizeof(text));

			line_put(&l, "  ", 2);
			if (k + 1 == r->o.nr_sort)
				line_put(&l, text, n);
			else
				line_left(&l, text, n, width[t->nc + k]);
		}
		line_put(&l, "\n", 1);
		fwrite(l.text, 1, l.len, out);
		if (draws_graph(v, e))
			err = report_graph_print(v, e, weight, out);
	}
	return err;
}

/* An entry is shown unless it weighs too little, or nothing at all: the
 * table ends at the first that does not, in sorted order */
static bool entry_shown(const struct view *v, const struct entry *e,
			bool children)
{
	uint64_t p = children ? e->child_period : e->self_period;

	if (!p && !e->self_count && !(children && e->child_count))
		return false;
	return report_pct(p, v->total_period) >= v->r->o.percent_limit;
}

/* The columns' widths over the entries shown: a part of cs_jobs_split()
 * each, widened from the headers' in width[part]. With order, over
 * order[begin, end); without, over the entries [begin, end) that
 * entry_shown(), counted in shown[part], and in odd[part] whether one
 * of them weighs nothing. */
struct widths {
	const struct view *v;
	const struct ranks *rk;
	const uint32_t *order;
	size_t nc;
	bool children, off_cpu;
	size_t width[CS_JOBS_MAX_PARTS][MAX_COLS];
	size_t shown[CS_JOBS_MAX_PARTS];
	bool odd[CS_JOBS_MAX_PARTS];
};

static void widen(struct widths *w, size_t *width, const struct entry *e)
{
	const struct view *v = w->v;
	const struct cs_report *r = v->r;
	size_t nc = w->nc;
	char text[64];

	if (w->off_cpu) {
		int n = snprintf(text, sizeof(text), "%.6f",
				 (w->children ? e->child_period :
				  e->self_period) / 1e9);
		if ((size_t)n > width[w->children ? 2 : 1])
			width[w->children ? 2 : 1] = (size_t)n;
	}
	if (r->o.show_nr_samples) {
		int n = snprintf(text, sizeof(text), "%" PRIu64,
				 w->children ? e->child_count : e->self_count);
		if ((size_t)n > width[nc - 1])
			width[nc - 1] = (size_t)n;
	}
	for (size_t k = 0; k < r->o.nr_sort; k++) {
		size_t n = report_col_width(v, w->rk, e, r->o.sort[k]);

		if (n > width[nc + k])
			width[nc + k] = n;
	}
}

static int widths_part(void *ctx, unsigned int part, size_t begin, size_t end)
{
	struct widths *w = ctx;
	const struct view *v = w->v;
	size_t *width = w->width[part];

	for (size_t i = begin; i < end; i++) {
		const struct entry *e;

		if (w->order) {
			e = &v->e[w->order[i]];
			prefetch_entry(v, w->order, i, end);
		} else {
			e = &v->e[i];
			if (!entry_shown(v, e, w->children))
				continue;
			w->shown[part]++;
			if (!(w->children ? e->child_period : e->self_period))
				w->odd[part] = true;
		}
		if (i + AHEAD / 2 < end) {
			uint32_t f = v->e[w->order ? w->order[i + AHEAD / 2] :
					  i + AHEAD / 2].frame;

			__builtin_prefetch(&w->rk->sym_len[f]);
			__builtin_prefetch(&w->rk->dso_len[f]);
		}
		widen(w, width, e);
	}
	return 0;
}

/* How many entries the table shows, in *nr_show (the first of order),
 * and the columns' widths over them, widened from width[0, MAX_COLS).
 * The order sorts by weight first: the entries shown are those that
 * entry_shown(), found - and measured - in the entries' own order, where
 * the sorted one would read them scattered over memory. Only entries of
 * no weight may be shown and not (no samples) in any order: with one of
 * them shown, the sorted order is walked as the table is. */
static void shown_widths(const struct view *v, const struct ranks *rk,
			 const uint32_t *order, size_t nc, bool children,
			 bool off_cpu, size_t *width, size_t *nr_show)
{
	struct widths w = { .v = v, .rk = rk, .nc = nc, .children = children,
			    .off_cpu = off_cpu };
	size_t n = 0;
	bool odd = false;
	int parts;

	for (size_t p = 0; p < CS_JOBS_MAX_PARTS; p++)
		memcpy(w.width[p], width, sizeof(w.width[p]));
	parts = cs_jobs_split(v->nr_e, 65536, v->r->o.jobs, widths_part, &w);
	for (int p = 0; p < parts; p++) {
		n += w.shown[p];
		odd |= w.odd[p];
	}
	if (odd) {
		for (n = 0; n < v->nr_e && entry_shown(v, &v->e[order[n]], children);)
			n++;
		w.order = order;
		for (size_t p = 0; p < CS_JOBS_MAX_PARTS; p++)
			memcpy(w.width[p], width, sizeof(w.width[p]));
		parts = cs_jobs_split(n, 65536, v->r->o.jobs, widths_part, &w);
	}
	for (int p = 0; p < parts; p++)
		for (size_t c = 0; c < MAX_COLS; c++)
			if (w.width[p][c] > width[c])
				width[c] = w.width[p][c];
	*nr_show = n;
}

static int write_event(struct cs_report *r, unsigned int evsel,
		       const char *name, FILE *out)
{
	struct view v = { .r = r, .evsel = evsel };
	bool children = !r->o.no_children;
	bool off_cpu = r->ev_off_cpu[evsel];
	uint32_t *order = NULL;
	struct ranks rk = { 0 };
	struct cs_job ranks;
	size_t nr_show = 0, width[MAX_COLS] = { 0 }, nc = 0;
	int err, rk_err;

	/* the keys' ranks and the entries both only read the tables: with
	 * jobs to spare, the ranks are worked out beside the entries */
	rk.r = r;
	cs_job_start(&ranks, r->o.jobs, report_ranks_make, &rk);
	err = cs_agg_new(&v.keys);
	if (!err)
		err = cs_agg_new(&v.names);
	if (!err)
		err = view_parts(&v);
	if (!err)
		err = view_build(&v);
	/* entries are found: their index is not needed any more */
	view_parts_free(&v);
	cs_agg_free(v.keys);
	v.keys = NULL;
	rk_err = cs_job_wait(&ranks);
	if (!err)
		err = rk_err;
	if (err)
		goto out;
	err = report_entries_sort(&v, &rk, &order);
	if (err)
		goto out;
	if (off_cpu) {
		fprintf(out, "#\n# Samples: %" PRIu64 " of event '%s': off-CPU time "
			"(each switch-out weighted by the time until its task ran "
			"again)\n", v.total_count, name);
		fprintf(out, "# Event count (approx.): %" PRIu64 " ns, %.6f s off "
			"the CPU\n#\n", v.total_period, v.total_period / 1e9);
	} else {
		fprintf(out, "#\n# Samples: %" PRIu64 " of event '%s'\n",
			v.total_count, name);
		fprintf(out, "# Event count (approx.): %" PRIu64 "\n#\n",
			v.total_period);
	}

	/* columns: percentages (seconds off the CPU, samples), then the sort
	 * keys */
	if (children) {
		width[nc++] = 8;
		width[nc++] = 8;
	} else {
		width[nc++] = 8;
	}
	if (off_cpu)
		width[nc++] = 10;
	if (r->o.show_nr_samples)
		width[nc++] = 7;
	for (size_t k = 0; k < r->o.nr_sort; k++)
		width[nc + k] = strlen(key_header[r->o.sort[k]]);
	shown_widths(&v, &rk, order, nc, children, off_cpu, width, &nr_show);
	fputs("#", out);
	{
		size_t c = 0;

		if (children) {
			fprintf(out, " %*s  %*s", (int)width[0], "Children",
				(int)width[1], "Self");
			c = 2;
		} else {
			fprintf(out, " %-*s", (int)width[0], "Overhead");
			c = 1;
		}
		if (off_cpu)
			fprintf(out, "  %*s", (int)width[c++], "Seconds");
		if (r->o.show_nr_samples)
			fprintf(out, "  %*s", (int)width[c++], "Samples");
		for (size_t k = 0; k < r->o.nr_sort; k++)
			fprintf(out, "  %-*s", (int)width[nc + k],
				key_header[r->o.sort[k]]);
		fputs("\n#", out);
		for (size_t i = 0; i < nc + r->o.nr_sort; i++) {
			fputs(i ? "  " : " ", out);
			for (size_t j = 0; j < width[i]; j++)
				fputc('.', out);
		}
		fputs("\n#\n", out);
	}
	{
		struct table t = { .v = &v, .order = order, .width = width,
				   .nc = nc, .children = children, .off_cpu = off_cpu };

		/* a few hundred entries per chunk: graphs make some long */
		err = cs_jobs_ordered(nr_show, 256, r->o.jobs, table_lines, &t, out);
	}
	fputs("\n\n", out);
out:
	report_ranks_free(&rk);
	free(order);
	free(v.e);
	free(v.work);
	free(v.occ);
	free(v.occ_off);
	view_parts_free(&v);
	cs_agg_free(v.keys);
	cs_agg_free(v.names);
	return err;
}

int cs_report_write(struct cs_report *r, FILE *out, const char *const *names,
		    size_t nr_names)
{
	char buf[32];
	int err = cs_report_flush(r);

	if (err)
		return err;
	/* inlined functions are never entries: which frames are, asked
	 * for every frame of every stack, is kept apart */
	if (r->has_inlined)
		err = mark_inlined(r);
	if (err)
		return err;
	/* everything is added: the entries and their sort need the memory
	 * more than the index of frames and stacks */
	cs_agg_trim(r->stacks);
	for (unsigned int ev = 0; ev < r->nr_ev && !err; ev++) {
		const char *name = ev < nr_names ? names[ev] : NULL;

		if (!r->ev_samples[ev])
			continue;
		if (!name) {
			snprintf(buf, sizeof(buf), "event %u", ev);
			name = buf;
		}
		err = write_event(r, ev, name, out);
	}
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
	return err;
}
