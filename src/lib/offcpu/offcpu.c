/* offcpu.c - switch-outs held until their task runs again, then delivered
 * as off-CPU time. */
#include "lib/offcpu/offcpu.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "abi/perf_abi.h"
#include "lib/stitch/parts.h"
#include "lib/trace/tracepoints.h"
#include "lib/util/u32map.h"

#define MAX_EVSELS 4096		/* evsel indexes classified; beyond: never */

/* sched_switch's prev_state (TASK_REPORT bits): 0 or only the "+" bit
 * above them is a preempted, still runnable task */
#define PREV_STATE_MASK		0xff
#define TASK_S			0x01
#define TASK_D			0x02
#define TASK_I			0x80

enum kind { KIND_UNKNOWN = 0, KIND_SWITCH, KIND_OTHER };

struct evsel_info {
	enum kind kind;
	const struct cs_tp_field *prev_state, *next_pid;
};

/* One switch-out of a task, from its sample until it went out. */
struct pend {
	uint64_t t_out;
	uint64_t ns;			/* time off the CPU, once ended */
	enum cs_off_cpu_state state;
	bool ended;
	bool stitched;			/* held holds the stitched sample */
	struct cs_stitched held;	/* its event and chain pointers are set
					 * when it goes out: entries move */
	struct cs_event held_ev;
	uint64_t *chain;		/* held's chain, malloc'd */
	size_t chain_cap;
};

/* A task's switch-outs, oldest first. */
struct thr {
	uint32_t n, cap;
	struct pend *v;
};

struct cs_offcpu {
	cs_offcpu_fn fn;
	void *ctx;
	struct cs_stats *stats;
	struct evsel_info *evsels;	/* MAX_EVSELS, by index */
	struct cs_u32map thr;		/* tid -> struct thr, ours */
	uint64_t last_time;
};

const char *cs_off_cpu_state_name(enum cs_off_cpu_state s)
{
	switch (s) {
	case CS_OFF_CPU_SLEEPING:	return "sleeping";
	case CS_OFF_CPU_BLOCKED:	return "blocked on I/O";
	case CS_OFF_CPU_PREEMPTED:	return "preempted";
	case CS_OFF_CPU_OTHER:		return "other";
	default:			return "";
	}
}

int cs_offcpu_new(cs_offcpu_fn fn, void *ctx, struct cs_stats *stats,
		  struct cs_offcpu **out)
{
	struct cs_offcpu *oc = calloc(1, sizeof(*oc));

	*out = NULL;
	if (!oc)
		return -ENOMEM;
	oc->evsels = calloc(MAX_EVSELS, sizeof(*oc->evsels));
	if (!oc->evsels) {
		cs_offcpu_free(oc);
		return -ENOMEM;
	}
	oc->fn = fn;
	oc->ctx = ctx;
	oc->stats = stats;
	*out = oc;
	return 0;
}

static void thr_free(void *val)
{
	struct thr *t = val;

	/* spare slots keep their chain buffers too */
	for (uint32_t k = 0; k < t->cap; k++)
		free(t->v[k].chain);
	free(t->v);
	free(t);
}

void cs_offcpu_free(struct cs_offcpu *oc)
{
	if (!oc)
		return;
	cs_u32map_free(&oc->thr, thr_free);
	free(oc->evsels);
	free(oc);
}

/* ---- what is a switch-out ------------------------------------------------ */

/* A sched:sched_switch event with stacks and raw data, whose prev_state
 * the formats in the file let us read. Decided at its first sample. */
static struct evsel_info *classify(struct cs_offcpu *oc, const struct cs_evsel *e,
				   struct cs_tracepoints *tp)
{
	struct evsel_info *info;
	const char *name;

	if (!e || e->index >= MAX_EVSELS)
		return NULL;
	info = &oc->evsels[e->index];
	if (info->kind != KIND_UNKNOWN)
		return info->kind == KIND_SWITCH ? info : NULL;
	info->kind = KIND_OTHER;
	if (e->type != CS_PERF_TYPE_TRACEPOINT || !tp ||
	    (e->sample_type & (CS_SAMPLE_CALLCHAIN | CS_SAMPLE_RAW | CS_SAMPLE_TID |
			       CS_SAMPLE_TIME)) !=
	    (CS_SAMPLE_CALLCHAIN | CS_SAMPLE_RAW | CS_SAMPLE_TID | CS_SAMPLE_TIME))
		return NULL;
	name = cs_tracepoints_name(tp, e->config);
	if (!name || strcmp(name, "sched:sched_switch"))
		return NULL;
	info->prev_state = cs_tracepoints_field(tp, e->config, "prev_state");
	info->next_pid = cs_tracepoints_field(tp, e->config, "next_pid");
	if (!info->prev_state)
		return NULL;
	info->kind = KIND_SWITCH;
	return info;
}

/* The classification of an evsel already seen by cs_offcpu_event(). */
static const struct evsel_info *known(const struct cs_offcpu *oc,
				      const struct cs_evsel *e)
{
	if (!e || e->index >= MAX_EVSELS || oc->evsels[e->index].kind != KIND_SWITCH)
		return NULL;
	return &oc->evsels[e->index];
}

static enum cs_off_cpu_state state_of(uint64_t prev_state)
{
	uint64_t s = prev_state & PREV_STATE_MASK;

	if (!s)
		return CS_OFF_CPU_PREEMPTED;
	if (s & (TASK_S | TASK_I))
		return CS_OFF_CPU_SLEEPING;
	if (s & TASK_D)
		return CS_OFF_CPU_BLOCKED;
	return CS_OFF_CPU_OTHER;
}

/* ---- tasks ------------------------------------------------------------- */

static struct thr *thr_find(struct cs_offcpu *oc, uint32_t tid)
{
	return cs_u32map_get(&oc->thr, tid);
}

/* Tasks stay in the map once seen: a task that switches out once
 * switches out again, and its entry keeps its array. */
static struct thr *thr_get(struct cs_offcpu *oc, uint32_t tid)
{
	bool created;

	return cs_u32map_get_new(&oc->thr, tid, sizeof(struct thr), &created);
}

/* ---- delivery ----------------------------------------------------------- */

/* The stitched sample s (of p) as off-CPU time, to the output. */
static int send(struct cs_offcpu *oc, const struct pend *p,
		const struct cs_stitched *s)
{
	struct cs_event ev = *s->event;
	struct cs_stitched out = *s;

	ev.sample.period = p->ns;
	out.event = &ev;
	out.off_cpu = p->state;
	oc->stats->off_cpu_samples++;
	oc->stats->off_cpu_ns += p->ns;
	return oc->fn(oc->ctx, &out);
}

/* Forgets t's entry k; its chain buffer goes to the spare slot. */
static void forget(struct thr *t, uint32_t k)
{
	uint64_t *chain = t->v[k].chain;
	size_t cap = t->v[k].chain_cap;

	memmove(&t->v[k], &t->v[k + 1], (t->n - k - 1) * sizeof(*t->v));
	t->n--;
	t->v[t->n].chain = chain;
	t->v[t->n].chain_cap = cap;
}

/* Delivers and forgets t's entry k, which is ended and held. */
static int release(struct cs_offcpu *oc, struct thr *t, uint32_t k)
{
	struct pend *p = &t->v[k];
	int err;

	/* the entries move (realloc, memmove): point the copy at its parts */
	p->held.event = &p->held_ev;
	p->held.chain = p->chain;
	err = send(oc, p, &p->held);

	forget(t, k);
	return err;
}

/* Ends t's waits that began by `time`: ns is time - t_out, or 0 when unknown. */
static int end_waits(struct cs_offcpu *oc, struct thr *t, uint64_t time,
		     bool known_time)
{
	for (uint32_t k = 0; k < t->n;) {
		struct pend *p = &t->v[k];

		if (p->ended || p->t_out > time) {
			k++;
			continue;
		}
		p->ended = true;
		p->ns = known_time ? time - p->t_out : 0;
		if (!known_time)
			oc->stats->off_cpu_unknown++;
		if (p->stitched) {
			int err = release(oc, t, k);

			if (err)
				return err;
			continue;
		}
		k++;
	}
	return 0;
}

static int switch_in(struct cs_offcpu *oc, uint32_t tid, uint64_t time)
{
	struct thr *t = thr_find(oc, tid);

	return t && t->n ? end_waits(oc, t, time, true) : 0;
}

static int switch_out(struct cs_offcpu *oc, uint32_t tid, uint64_t time,
		      enum cs_off_cpu_state state)
{
	struct thr *t = thr_get(oc, tid);
	struct pend *p;
	int err;

	if (!t)
		return -ENOMEM;
	/* it went out again, so it ran: a wait still open never saw its end */
	err = end_waits(oc, t, time, false);
	if (err)
		return err;
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 4;
		struct pend *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + t->cap, 0, (cap - t->cap) * sizeof(*v));
		t->v = v;
		t->cap = cap;
	}
	p = &t->v[t->n++];
	p->t_out = time;
	p->ns = 0;
	p->state = state;
	p->ended = p->stitched = false;
	return 0;
}

int cs_offcpu_event(struct cs_offcpu *oc, const struct cs_event *ev,
		    struct cs_tracepoints *tp)
{
	const struct cs_sample *smp = &ev->sample;
	const struct evsel_info *info;
	uint64_t v;
	int err;

	switch (ev->type) {
	case CS_RECORD_SAMPLE:
		if (smp->time > oc->last_time)
			oc->last_time = smp->time;
		info = classify(oc, ev->evsel, tp);
		if (!info)
			return 0;
		/* a system-wide sched_switch also says who comes in */
		if (info->next_pid && smp->raw &&
		    !cs_tp_field_read(info->next_pid, smp->raw, smp->raw_size, &v) &&
		    (uint32_t)v) {
			err = switch_in(oc, (uint32_t)v, smp->time);
			if (err)
				return err;
		}
		if (!smp->tid || !smp->raw ||
		    cs_tp_field_read(info->prev_state, smp->raw, smp->raw_size, &v))
			return 0;
		return switch_out(oc, smp->tid, smp->time, state_of(v));
	case CS_RECORD_SWITCH:
	case CS_RECORD_SWITCH_CPU_WIDE:
		if (!ev->has_id)
			return 0;
		if (ev->id.time > oc->last_time)
			oc->last_time = ev->id.time;
		if (ev->misc & CS_MISC_SWITCH_OUT)
			return 0;
		return switch_in(oc, ev->id.tid, ev->id.time);
	case CS_RECORD_EXIT: {
		struct thr *t = thr_find(oc, ev->fork.tid);

		return t && t->n ? end_waits(oc, t, UINT64_MAX, false) : 0;
	}
	default:
		if (ev->has_id && ev->id.time > oc->last_time)
			oc->last_time = ev->id.time;
		return 0;
	}
}

/* A copy of s that outlives the stitcher's buffers: the event and the
 * chain, its two parts joined; the record's other arrays are not kept. */
static int hold(struct pend *p, const struct cs_stitched *s)
{
	uint64_t nr = cs_parts_nr(s);

	if (p->chain_cap < nr) {
		uint64_t *c = realloc(p->chain, (size_t)nr * sizeof(*c));

		if (!c)
			return -ENOMEM;
		p->chain = c;
		p->chain_cap = (size_t)nr;
	}
	cs_parts_join(s, p->chain);
	p->held_ev = *s->event;
	p->held_ev.bytes = NULL;
	memset(&p->held_ev.sample, 0, sizeof(p->held_ev.sample));
	p->held_ev.sample.ip = s->event->sample.ip;
	p->held_ev.sample.pid = s->event->sample.pid;
	p->held_ev.sample.tid = s->event->sample.tid;
	p->held_ev.sample.time = s->event->sample.time;
	p->held_ev.sample.cpu = s->event->sample.cpu;
	p->held_ev.sample.id = s->event->sample.id;
	p->held_ev.sample.misc = s->event->sample.misc;
	p->held = *s;
	p->held.chain_nr = nr;
	p->held.user = NULL;
	p->held.user_nr = 0;
	p->stitched = true;
	return 0;
}

int cs_offcpu_sample(void *ctx, const struct cs_stitched *s)
{
	struct cs_offcpu *oc = ctx;
	const struct cs_sample *smp = &s->event->sample;
	struct thr *t;
	int err;

	if (!known(oc, s->event->evsel))
		return oc->fn(oc->ctx, s);
	t = smp->tid ? thr_find(oc, smp->tid) : NULL;
	for (uint32_t k = 0; t && k < t->n; k++) {
		struct pend *p = &t->v[k];

		if (p->stitched || p->t_out != smp->time)
			continue;
		if (!p->ended) {
			/* held where it is: the entry's chain buffer */
			return hold(p, s);
		}
		err = send(oc, p, s);
		forget(t, k);
		return err;
	}
	/* the idle task, or a switch-out whose raw data could not be read:
	 * not a wait */
	return 0;
}

/* Delivers what task t still holds, as the recording ended. */
static int flush_thr(void *val, void *ctx)
{
	struct cs_offcpu *oc = ctx;
	struct thr *t = val;

	for (uint32_t k = 0; k < t->n;) {
		struct pend *p = &t->v[k];
		int err;

		if (!p->stitched) {
			/* the stitcher has flushed: never comes */
			k++;
			continue;
		}
		if (!p->ended) {
			/* still off the CPU when the recording stopped */
			p->ended = true;
			p->ns = oc->last_time > p->t_out ? oc->last_time - p->t_out : 0;
			oc->stats->off_cpu_at_end++;
		}
		err = release(oc, t, k);
		if (err)
			return err;
	}
	return 0;
}

int cs_offcpu_flush(struct cs_offcpu *oc)
{
	return cs_u32map_each(&oc->thr, flush_thr, oc);
}
