/* speedscope.c - speedscope's sampled-profile JSON (see speedscope.h). */
#include "outputs/speedscope.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "abi/perf_abi.h"
#include "lib/util/grow.h"
#include "lib/util/handoff.h"
#include "outputs/json.h"
#include "outputs/out_names.h"
#include "outputs/stack_agg.h"

/* frame key flags */
#define F_COOKIE	(1u << 0)	/* unmerged cookie entry */
#define F_MISSING	(1u << 1)	/* marker; reason in bits 8.. */
#define F_EMPTY		(1u << 2)	/* a chain with nothing to show */

/* Consecutive samples of one stack, in the order they were taken. */
struct entry {
	uint32_t stack;
	uint64_t weight;
};

struct profile {
	const struct cs_evsel *evsel;
	uint32_t tid;
	char *comm;
	struct entry *e;
	size_t n, cap;
	uint64_t total;
};

struct cs_speedscope {
	struct cs_agg *agg;		/* frames and stacks, interned */
	uint32_t *ids;			/* CS_FRAMES_MAX, reused */
	struct profile *prof;
	size_t nr, cap;
	uint32_t *slots;		/* (evsel, tid) -> profile index + 1 */
	size_t nr_slots;		/* a power of two, at least 2 * nr */
	size_t last;			/* the profile of the last sample */
	struct cs_agg_key *keys;	/* CS_FRAMES_MAX, reused */
	unsigned int jobs;
	/* to the counting thread: everything above but keys and jobs is
	 * its own until cs_speedscope_flush() */
	struct cs_handoff *handoff;
	bool flushed;			/* no hand-off (any more) */
};

int cs_speedscope_new(unsigned int jobs, struct cs_speedscope **out)
{
	struct cs_speedscope *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->jobs = jobs;
	p->ids = malloc(CS_FRAMES_MAX * sizeof(*p->ids));
	p->keys = malloc(CS_FRAMES_MAX * sizeof(*p->keys));
	if (!p->ids || !p->keys || cs_agg_new(&p->agg)) {
		cs_speedscope_free(p);
		return -ENOMEM;
	}
	p->last = SIZE_MAX;
	*out = p;
	return 0;
}

void cs_speedscope_free(struct cs_speedscope *p)
{
	if (!p)
		return;
	cs_speedscope_flush(p);
	for (size_t i = 0; i < p->nr; i++) {
		free(p->prof[i].comm);
		free(p->prof[i].e);
	}
	free(p->prof);
	free(p->slots);
	cs_agg_free(p->agg);
	free(p->ids);
	free(p->keys);
	free(p);
}

/* ---- threads ---- */

static size_t slot_of(const struct cs_speedscope *p,
		      const struct cs_evsel *evsel, uint32_t tid)
{
	uint64_t h = ((uintptr_t)evsel ^ tid) * 0x9e3779b97f4a7c15ULL;
	size_t mask = p->nr_slots - 1, i = (size_t)(h >> 32) & mask;

	for (;; i = (i + 1) & mask) {
		uint32_t v = p->slots[i];

		if (!v || (p->prof[v - 1].evsel == evsel && p->prof[v - 1].tid == tid))
			return i;
	}
}

static int grow_slots(struct cs_speedscope *p)
{
	size_t n = p->nr_slots ? p->nr_slots * 2 : 64;
	uint32_t *old = p->slots;
	size_t old_n = p->nr_slots;

	p->slots = calloc(n, sizeof(*p->slots));
	if (!p->slots) {
		p->slots = old;
		return -ENOMEM;
	}
	p->nr_slots = n;
	for (size_t i = 0; i < old_n; i++)
		if (old[i]) {
			const struct profile *pr = &p->prof[old[i] - 1];

			p->slots[slot_of(p, pr->evsel, pr->tid)] = old[i];
		}
	free(old);
	return 0;
}

/* A thread is named by its last command name, as perf names it (a worker
 * renames itself after it started as a copy of its parent). */
static struct profile *renamed(struct profile *pr, const char *comm)
{
	char *c;

	if (!comm || !strcmp(pr->comm, comm))
		return pr;
	c = strdup(comm);
	if (!c)
		return NULL;
	free(pr->comm);
	pr->comm = c;
	return pr;
}

/* The profile of (evsel, tid), made on first sight. */
static struct profile *profile_of(struct cs_speedscope *p,
				  const struct cs_evsel *evsel, uint32_t tid,
				  const char *comm)
{
	struct profile *pr;
	size_t slot;

	if (p->last < p->nr && p->prof[p->last].evsel == evsel &&
	    p->prof[p->last].tid == tid)
		return renamed(&p->prof[p->last], comm);
	if (2 * (p->nr + 1) > p->nr_slots && grow_slots(p))
		return NULL;
	slot = slot_of(p, evsel, tid);
	if (!p->slots[slot]) {
		if (cs_grow((void **)&p->prof, &p->cap, p->nr + 1,
			    sizeof(*p->prof)))
			return NULL;
		pr = &p->prof[p->nr];
		memset(pr, 0, sizeof(*pr));
		pr->evsel = evsel;
		pr->tid = tid;
		pr->comm = strdup(comm ? comm : "[unknown]");
		if (!pr->comm)
			return NULL;
		p->slots[slot] = (uint32_t)++p->nr;
	}
	p->last = p->slots[slot] - 1;
	return renamed(&p->prof[p->last], comm);
}

/* ---- samples ---- */

static void frame_key(const struct cs_frame *fr, struct cs_agg_key *k)
{
	memset(k, 0, sizeof(*k));
	switch (fr->kind) {
	case CS_FRAME_MISSING_USER:
		k->flags = F_MISSING | ((uint32_t)fr->missing << 8);
		return;
	case CS_FRAME_COOKIE:
		k->flags = F_COOKIE;
		return;
	case CS_FRAME_ADDR:
		break;
	}
	if (fr->loc.sym && fr->loc.sym[0])
		k->sym = fr->loc.sym;
	k->dso = fr->loc.dso_name;
}

/* A sample's frames as keys into keys[] (room for CS_FRAMES_MAX), a
 * marker when it has none. Returns how many. */
static uint32_t speedscope_keys(const struct cs_frame *frames, size_t nr,
				struct cs_agg_key *keys)
{
	uint32_t n = 0;

	if (nr > CS_FRAMES_MAX)
		nr = CS_FRAMES_MAX;
	for (size_t i = 0; i < nr; i++)
		frame_key(&frames[i], &keys[n++]);
	if (!n)
		keys[n++] = (struct cs_agg_key){ .flags = F_EMPTY };
	return n;
}

/* Counts a sample (its keys) in its thread's profile: on the counting
 * thread, if there is one. */
static int speedscope_count(struct cs_speedscope *p,
			    const struct cs_evsel *evsel, uint32_t tid,
			    const char *comm, const struct cs_agg_key *keys,
			    uint32_t n, uint64_t period)
{
	struct profile *pr = profile_of(p, evsel, tid, comm);
	uint64_t weight = period ? period : 1;
	uint32_t stack;
	int err;

	if (!pr)
		return -ENOMEM;
	err = cs_agg_frames(p->agg, keys, n, p->ids);
	if (!err)
		err = cs_agg_add(p->agg, 0, p->ids, n, 1, weight, &stack);
	if (err)
		return err;
	pr->total += weight;
	if (pr->n && pr->e[pr->n - 1].stack == stack) {
		pr->e[pr->n - 1].weight += weight;
		return 0;
	}
	if (cs_grow((void **)&pr->e, &pr->cap, pr->n + 1, sizeof(*pr->e)))
		return -ENOMEM;
	pr->e[pr->n].stack = stack;
	pr->e[pr->n].weight = weight;
	pr->n++;
	return 0;
}

/* A sample on its way to the counting thread: this header, nr keys (their
 * strings are the session's, which outlives p), then the comm and its
 * NUL (the caller's buffer may be reused). */
struct speedscope_rec {
	const struct cs_evsel *evsel;
	uint64_t period;
	uint32_t tid, nr, comm_len;
	uint8_t has_comm;
};

static size_t rec_size(size_t nr, size_t comm_len)
{
	return cs_handoff_record_size(sizeof(struct speedscope_rec) +
				      nr * sizeof(struct cs_agg_key) +
				      comm_len + 1);
}

/* The counting thread: the samples of a batch, in the order they came. */
static int count_batch(void *ctx, const void *buf, size_t len)
{
	const char *at = buf, *end = at + len;
	int err = 0;

	while (at < end && !err) {
		const struct speedscope_rec *r = (const void *)at;
		const struct cs_agg_key *keys = (const void *)(r + 1);
		const char *comm = (const char *)(keys + r->nr);

		err = speedscope_count(ctx, r->evsel, r->tid,
				       r->has_comm ? comm : NULL, keys, r->nr,
				       r->period);
		at += rec_size(r->nr, r->comm_len);
	}
	return err;
}

int cs_speedscope_add(struct cs_speedscope *p, const struct cs_evsel *evsel,
		      uint32_t tid, const char *comm,
		      const struct cs_frame *frames, size_t nr, uint64_t period)
{
	size_t room = (nr > CS_FRAMES_MAX ? CS_FRAMES_MAX : nr) + !nr;
	size_t comm_len = comm ? strlen(comm) : 0;
	struct speedscope_rec *r;
	struct cs_agg_key *keys;

	/* with jobs to spare, the tables are filled on a thread of their own
	 * while this one reads and resolves the next samples */
	if (p->jobs > 1 && !p->handoff && !p->flushed)
		p->flushed = cs_handoff_new(count_batch, p, &p->handoff) != 0;
	if (!p->handoff)
		return speedscope_count(p, evsel, tid, comm, p->keys,
					speedscope_keys(frames, nr, p->keys),
					period);
	/* the keys are made in the batch */
	r = cs_handoff_append(p->handoff, rec_size(room, comm_len));
	if (!r)
		return -ENOMEM;
	keys = (struct cs_agg_key *)(r + 1);
	*r = (struct speedscope_rec){
		.evsel = evsel, .period = period, .tid = tid,
		.nr = speedscope_keys(frames, nr, keys),
		.comm_len = (uint32_t)comm_len, .has_comm = !!comm,
	};
	memcpy(keys + r->nr, comm ? comm : "", comm_len + 1);
	return cs_handoff_error(p->handoff);
}

int cs_speedscope_flush(struct cs_speedscope *p)
{
	int err = cs_handoff_finish(p->handoff);

	p->handoff = NULL;
	p->flushed = true;
	return err;
}

/* ---- writing ---- */

static int heaviest_first(const void *a, const void *b)
{
	const struct profile *x = *(const struct profile *const *)a;
	const struct profile *y = *(const struct profile *const *)b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->evsel != y->evsel)
		return (x->evsel ? x->evsel->index : 0) <
		       (y->evsel ? y->evsel->index : 0) ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void put_frame(FILE *out, const struct cs_agg_key *k)
{
	const char *base;
	char tmp[512];

	fputs("{\"name\":", out);
	if (k->flags & F_MISSING) {
		cs_json_str(out, cs_out_missing_user_name(
				(enum cs_missing_reason)(k->flags >> 8)));
	} else if (k->sym) {
		cs_json_str(out, k->sym);
	} else if (k->dso && !(k->flags & F_COOKIE)) {
		base = strrchr(k->dso, '/');
		snprintf(tmp, sizeof(tmp), "[%s]", base ? base + 1 : k->dso);
		cs_json_str(out, tmp);
	} else {
		cs_json_str(out, "[unknown]");
	}
	if (k->dso) {
		fputs(",\"file\":", out);
		cs_json_str(out, k->dso);
	}
	putc('}', out);
}

/* A clock event's period is nanoseconds of CPU time. */
static bool is_clock(const struct cs_evsel *e)
{
	return e && e->type == CS_PERF_TYPE_SOFTWARE &&
	       (e->config == CS_PERF_COUNT_SW_CPU_CLOCK ||
		e->config == CS_PERF_COUNT_SW_TASK_CLOCK);
}

static void put_profile(FILE *out, const struct cs_speedscope *p,
			const struct profile *pr, bool several_events,
			uint32_t *frames)
{
	const struct cs_evsel *ev = pr->evsel;
	struct cs_agg_stack st;
	char name[256];

	if (several_events)
		snprintf(name, sizeof(name), "%s (tid %u) %s", pr->comm, pr->tid,
			 ev ? ev->name : "?");
	else
		snprintf(name, sizeof(name), "%s (tid %u)", pr->comm, pr->tid);
	fputs("{\"type\":\"sampled\",\"name\":", out);
	cs_json_str(out, name);
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":",
		is_clock(ev) ? "nanoseconds" : "none");
	cs_json_u64(out, pr->total);
	fputs(",\"samples\":[", out);
	for (size_t i = 0; i < pr->n; i++) {
		cs_agg_stack(p->agg, pr->e[i].stack, frames, &st);
		fputs(i ? ",[" : "[", out);
		/* stored innermost first; speedscope wants the root first */
		for (uint32_t j = st.nr; j-- > 0;) {
			cs_json_u64(out, st.frames[j]);
			if (j)
				putc(',', out);
		}
		putc(']', out);
	}
	fputs("],\"weights\":[", out);
	for (size_t i = 0; i < pr->n; i++) {
		if (i)
			putc(',', out);
		cs_json_u64(out, pr->e[i].weight);
	}
	fputs("]}", out);
}

int cs_speedscope_write(struct cs_speedscope *p, const char *name,
			const char *exporter, FILE *out)
{
	int err = cs_speedscope_flush(p);
	const struct profile **order = malloc((p->nr ? p->nr : 1) * sizeof(*order));
	uint32_t *frames = malloc((cs_agg_max_depth(p->agg) + 1) * sizeof(*frames));
	size_t nr_frames = cs_agg_nr_frames(p->agg);
	bool several = false;

	if (err || !order || !frames) {
		free(order);
		free(frames);
		return err ? err : -ENOMEM;
	}
	for (size_t i = 0; i < p->nr; i++) {
		order[i] = &p->prof[i];
		several |= p->prof[i].evsel != p->prof[0].evsel;
	}
	qsort(order, p->nr, sizeof(*order), heaviest_first);

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":", out);
	cs_json_str(out, exporter);
	fputs(",\"name\":", out);
	cs_json_str(out, name);
	fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", out);
	for (size_t i = 0; i < nr_frames; i++) {
		if (i)
			putc(',', out);
		put_frame(out, cs_agg_frame_key(p->agg, (uint32_t)i));
	}
	fputs("]},\"profiles\":[", out);
	for (size_t i = 0; i < p->nr; i++) {
		if (i)
			putc(',', out);
		put_profile(out, p, order[i], several, frames);
	}
	fputs("]}\n", out);
	free(order);
	free(frames);
	return fflush(out) || ferror(out) ? -EIO : 0;
}
