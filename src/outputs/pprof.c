/* pprof.c - pprof profile.proto output (see pprof.h).
 *
 * Field numbers are those of github.com/google/pprof proto/profile.proto.
 */
#include "outputs/pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "abi/perf_abi.h"
#include "lib/util/grow.h"
#include "lib/util/handoff.h"
#include "outputs/out_names.h"
#include "outputs/protobuf.h"
#include "outputs/stack_agg.h"

enum {					/* message Profile */
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};
enum { VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };
enum { LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3 };
enum {
	MAPPING_ID = 1, MAPPING_START = 2, MAPPING_LIMIT = 3, MAPPING_OFFSET = 4,
	MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7,
};
enum { LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3,
       LOCATION_LINE = 4 };
enum { LINE_FUNCTION_ID = 1 };
enum { FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3,
       FUNCTION_FILENAME = 4 };

/* location key flags: what kind of frame, so a marker never merges with
 * an address */
#define F_COOKIE	(1u << 0)
#define F_MISSING	(1u << 1)	/* reason in bits 8.. */
#define F_KERNEL	(1u << 2)
#define F_OFF_CPU	(1u << 3)	/* off-CPU leaf; state in bits 8.. */

/* a thread key's flags: the event, and why an off-CPU sample waited */
#define THREAD_FLAGS(evsel, state)	((evsel) | (uint32_t)(state) << 24)
#define THREAD_EVSEL(flags)		((flags) & 0xffffffu)
#define THREAD_STATE(flags)		((enum cs_off_cpu_state)((flags) >> 24))

struct cs_pprof {
	struct cs_pprof_opts o;
	struct cs_agg *locs;		/* frames = locations, stacks = samples */
	struct cs_agg *threads;		/* comm, addr = pid << 32 | tid,
					 * flags = THREAD_FLAGS(event, state) */
	uint32_t *ids;
	/* functions inlined at each location, innermost first: location i
	 * has inl_names[inl_off[i] .. inl_off[i] + inl_nr[i]) */
	uint32_t *inl_off, *inl_nr;
	size_t cap_locs;
	const char **inl_names;
	size_t nr_inl, cap_inl;
	uint64_t samples;
	uint64_t first_time, last_time;
	unsigned int nr_ev;		/* highest event index seen + 1 */
	bool *ev_off_cpu;		/* per event: its samples are off-CPU time */
	/* to the counting thread: everything above but o is its own until
	 * cs_pprof_flush() */
	struct cs_handoff *handoff;
	bool flushed;			/* no hand-off (any more) */
};

int cs_pprof_new(const struct cs_pprof_opts *o, struct cs_pprof **out)
{
	struct cs_pprof *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->o = *o;
	p->first_time = UINT64_MAX;
	p->ids = malloc(CS_FRAMES_MAX * sizeof(*p->ids));
	if (!p->ids || cs_agg_new(&p->locs) || cs_agg_new(&p->threads)) {
		cs_pprof_free(p);
		return -ENOMEM;
	}
	*out = p;
	return 0;
}

void cs_pprof_free(struct cs_pprof *p)
{
	if (!p)
		return;
	cs_pprof_flush(p);
	cs_agg_free(p->locs);
	cs_agg_free(p->threads);
	free(p->ids);
	free(p->ev_off_cpu);
	free(p->inl_off);
	free(p->inl_nr);
	free(p->inl_names);
	free(p);
}

static void location_key(const struct cs_frame *f, struct cs_agg_key *k)
{
	memset(k, 0, sizeof(*k));
	k->addr = f->addr;
	switch (f->kind) {
	case CS_FRAME_MISSING_USER:
		k->addr = 0;	/* one location per reason, not per cookie */
		k->flags = F_MISSING | ((uint32_t)f->missing << 8);
		return;
	case CS_FRAME_COOKIE:
		k->flags = F_COOKIE;
		return;
	case CS_FRAME_ADDR:
		break;
	}
	k->sym = f->loc.sym && f->loc.sym[0] ? f->loc.sym : NULL;
	k->dso = f->loc.dso_name;
	if (f->cpumode == CS_MISC_KERNEL || f->cpumode == CS_MISC_GUEST_KERNEL ||
	    f->loc.kernel)
		k->flags |= F_KERNEL;
}

/* Remembers the functions inlined at a new location (the frames before
 * it in the expanded stack). */
static int note_inlines(struct cs_pprof *p, uint32_t loc,
			const struct cs_frame *inl, size_t n)
{
	size_t cap = p->cap_locs;

	if (cs_grow_zeroed((void **)&p->inl_off, &cap, (size_t)loc + 1,
			   sizeof(*p->inl_off)) ||
	    cs_grow_zeroed((void **)&p->inl_nr, &p->cap_locs, (size_t)loc + 1,
			   sizeof(*p->inl_nr)))
		return -ENOMEM;
	if (!n)
		return 0;
	if (cs_grow((void **)&p->inl_names, &p->cap_inl, p->nr_inl + n,
		    sizeof(*p->inl_names)))
		return -ENOMEM;
	p->inl_off[loc] = (uint32_t)p->nr_inl;
	p->inl_nr[loc] = (uint32_t)n;
	for (size_t j = 0; j < n; j++)
		p->inl_names[p->nr_inl++] = inl[j].loc.sym;
	return 0;
}

int cs_pprof_add(struct cs_pprof *p, unsigned int evsel, uint32_t pid,
		 uint32_t tid, const char *comm, uint64_t time,
		 const struct cs_frame *frames, size_t nr, uint64_t period)
{
	return cs_pprof_add_inlined(p, evsel, pid, tid, comm, time, frames,
				    NULL, nr, period);
}

int cs_pprof_add_inlined(struct cs_pprof *p, unsigned int evsel, uint32_t pid,
			 uint32_t tid, const char *comm, uint64_t time,
			 const struct cs_frame *frames, const uint8_t *inlined,
			 size_t nr, uint64_t period)
{
	return cs_pprof_add_off_cpu(p, evsel, CS_OFF_CPU_NONE, pid, tid, comm,
				    time, frames, inlined, nr, period);
}

/* Counts a sample into the tables: on the counting thread, if there is
 * one. evsel and nr are within bounds. */
static int pprof_count(struct cs_pprof *p, unsigned int evsel,
		       enum cs_off_cpu_state state, uint32_t pid, uint32_t tid,
		       const char *comm, uint64_t time,
		       const struct cs_frame *frames, const uint8_t *inlined,
		       size_t nr, uint64_t period)
{
	struct cs_agg_key k = {
		.sym = comm ? comm : "[unknown]",
		.addr = (uint64_t)pid << 32 | tid,
		.flags = THREAD_FLAGS(evsel, state),
	};
	uint32_t thread, n = 0;
	int err = cs_agg_frame_copy(p->threads, &k, &thread);

	if (!err && state != CS_OFF_CPU_NONE) {
		k = (struct cs_agg_key){ .flags = F_OFF_CPU | (uint32_t)state << 8 };
		err = cs_agg_frame(p->locs, &k, NULL, &p->ids[n]);
		if (!err)
			err = note_inlines(p, p->ids[n++], NULL, 0);
	}
	for (size_t i = 0, first = 0; !err && i < nr; i++) {
		size_t before = cs_agg_nr_frames(p->locs);

		/* inlined functions are lines of the next real frame's location */
		if (inlined && inlined[i])
			continue;
		location_key(&frames[i], &k);
		err = cs_agg_frame(p->locs, &k, &frames[i].loc, &p->ids[n]);
		if (!err && cs_agg_nr_frames(p->locs) > before)
			err = note_inlines(p, p->ids[n], frames + first, i - first);
		n++;
		first = i + 1;
	}
	if (!err)
		err = cs_agg_add(p->locs, thread, p->ids, n, 1, period, NULL);
	if (err)
		return err;
	if (evsel >= p->nr_ev) {
		bool *o = realloc(p->ev_off_cpu, (evsel + 1) * sizeof(*o));

		if (!o)
			return -ENOMEM;
		memset(o + p->nr_ev, 0, (evsel + 1 - p->nr_ev) * sizeof(*o));
		p->ev_off_cpu = o;
		p->nr_ev = evsel + 1;
	}
	if (state != CS_OFF_CPU_NONE)
		p->ev_off_cpu[evsel] = true;
	p->samples++;
	if (time < p->first_time)
		p->first_time = time;
	if (time > p->last_time)
		p->last_time = time;
	return 0;
}

/* A sample on its way to the counting thread: this header, its frames
 * (struct cs_frame, copied: the caller reuses its array), with has_inlined
 * the frames' cs_out_inline kinds (a byte each), then the comm and its
 * NUL. The frames' strings are the session's, which outlives p. */
struct pprof_rec {
	uint64_t time, period;
	uint32_t evsel, state, pid, tid;
	uint32_t nr;
	uint32_t comm_len;
	uint8_t has_comm, has_inlined;
};

static size_t rec_size(size_t nr, bool has_inlined, size_t comm_len)
{
	return cs_handoff_record_size(sizeof(struct pprof_rec) +
				      nr * sizeof(struct cs_frame) +
				      (has_inlined ? nr : 0) + comm_len + 1);
}

/* The counting thread: the samples of a batch, in the order they came. */
static int count_batch(void *ctx, const void *buf, size_t len)
{
	const char *at = buf, *end = at + len;
	int err = 0;

	while (at < end && !err) {
		const struct pprof_rec *r = (const void *)at;
		const struct cs_frame *frames = (const void *)(r + 1);
		const uint8_t *inlined = (const uint8_t *)(frames + r->nr);
		const char *comm = (const char *)inlined +
				   (r->has_inlined ? r->nr : 0);

		err = pprof_count(ctx, r->evsel, (enum cs_off_cpu_state)r->state,
				  r->pid, r->tid, r->has_comm ? comm : NULL,
				  r->time, frames, r->has_inlined ? inlined : NULL,
				  r->nr, r->period);
		at += rec_size(r->nr, r->has_inlined, r->comm_len);
	}
	return err;
}

/* Copies the sample into the hand-off's batch. Returns 0, -ENOMEM or the
 * counting thread's error. */
static int pprof_send(struct cs_pprof *p, unsigned int evsel,
		      enum cs_off_cpu_state state, uint32_t pid, uint32_t tid,
		      const char *comm, uint64_t time,
		      const struct cs_frame *frames, const uint8_t *inlined,
		      size_t nr, uint64_t period)
{
	size_t comm_len = comm ? strlen(comm) : 0;
	struct pprof_rec *r;
	char *at;

	r = cs_handoff_append(p->handoff, rec_size(nr, inlined, comm_len));
	if (!r)
		return -ENOMEM;
	*r = (struct pprof_rec){
		.time = time, .period = period, .evsel = evsel,
		.state = (uint32_t)state, .pid = pid, .tid = tid,
		.nr = (uint32_t)nr, .comm_len = (uint32_t)comm_len,
		.has_comm = !!comm, .has_inlined = !!inlined,
	};
	at = (char *)(r + 1);
	if (nr)		/* frames may be NULL then */
		memcpy(at, frames, nr * sizeof(*frames));
	at += nr * sizeof(*frames);
	if (inlined && nr) {
		memcpy(at, inlined, nr);
		at += nr;
	}
	memcpy(at, comm ? comm : "", comm_len + 1);
	return cs_handoff_error(p->handoff);
}

int cs_pprof_add_off_cpu(struct cs_pprof *p, unsigned int evsel,
			 enum cs_off_cpu_state state, uint32_t pid,
			 uint32_t tid, const char *comm, uint64_t time,
			 const struct cs_frame *frames, const uint8_t *inlined,
			 size_t nr, uint64_t period)
{
	if (evsel > THREAD_EVSEL(UINT32_MAX))
		return -EINVAL;
	/* room for the off-CPU leaf */
	if (nr > CS_FRAMES_MAX - 1)
		nr = CS_FRAMES_MAX - 1;
	/* with jobs to spare, the tables are filled on a thread of their own
	 * while this one reads and resolves the next samples */
	if (p->o.jobs > 1 && !p->handoff && !p->flushed)
		p->flushed = cs_handoff_new(count_batch, p, &p->handoff) != 0;
	if (p->handoff)
		return pprof_send(p, evsel, state, pid, tid, comm, time, frames,
				  inlined, nr, period);
	return pprof_count(p, evsel, state, pid, tid, comm, time, frames,
			   inlined, nr, period);
}

int cs_pprof_flush(struct cs_pprof *p)
{
	int err = cs_handoff_finish(p->handoff);

	p->handoff = NULL;
	p->flushed = true;
	return err;
}

uint64_t cs_pprof_samples(const struct cs_pprof *p)
{
	return p->samples;
}

/* ---- encoding ----------------------------------------------------------- */

struct enc {
	struct cs_pprof *p;
	struct pb_buf b;
	struct cs_agg *strings;		/* string -> index */
	struct cs_agg *maps;		/* (file, start) -> id - 1 */
	struct cs_agg *funcs;		/* (name, file) -> id - 1 */
	uint32_t *loc_map, *loc_func;	/* per location: mapping, function id */
	uint32_t *inl_func;		/* per inlined name: function id */
	uint32_t *map_order;		/* mappings in the order written */
	uint32_t *map_rank;		/* mapping -> its id in the file - 1 */
	int err;
	/* with a compressing thread: where the bytes written so far go as
	 * soon as they are final (whole top-level messages), and how many
	 * went */
	struct cs_handoff *sink;
	size_t sent;
};

static int64_t str_index(struct enc *e, const char *s, bool copy)
{
	struct cs_agg_key k = { .sym = s ? s : "" };
	uint32_t id = 0;
	int err = copy ? cs_agg_frame_copy(e->strings, &k, &id)
		       : cs_agg_frame(e->strings, &k, NULL, &id);

	if (err && !e->err)
		e->err = err;
	return id;
}

static bool is_clock(const char *name)
{
	return name && (!strcmp(name, "cpu-clock") || !strcmp(name, "task-clock") ||
			!strncmp(name, "cpu-clock:", 10) ||
			!strncmp(name, "task-clock:", 11));
}

static void value_type(struct enc *e, uint32_t field, const char *type,
		       const char *unit)
{
	size_t at = pb_begin(&e->b);

	pb_int64(&e->b, VALUETYPE_TYPE, str_index(e, type, false));
	pb_int64(&e->b, VALUETYPE_UNIT, str_index(e, unit, false));
	pb_end(&e->b, field, at);
}

static void event_type(struct enc *e, uint32_t field,
		       const struct cs_pprof_event *ev, bool off_cpu)
{
	if (off_cpu)
		value_type(e, field, "off_cpu", "nanoseconds");
	else if (is_clock(ev->name))
		value_type(e, field, "cpu", "nanoseconds");
	else
		value_type(e, field, ev->name ? ev->name : "events", "count");
}

static const char *location_name(const struct cs_agg_key *k)
{
	if (k->flags & F_MISSING)
		return cs_out_missing_user_name((enum cs_missing_reason)(k->flags >> 8));
	if (k->flags & F_COOKIE)
		return "[cookie]";
	if (k->flags & F_OFF_CPU)
		return cs_out_off_cpu_name((enum cs_off_cpu_state)(k->flags >> 8));
	return k->sym;
}

/* Mappings and functions of every location, interned. */
static void resolve_locations(struct enc *e)
{
	struct cs_agg *locs = e->p->locs;
	size_t nr = cs_agg_nr_frames(locs);

	e->loc_map = calloc(nr ? nr : 1, sizeof(*e->loc_map));
	e->loc_func = calloc(nr ? nr : 1, sizeof(*e->loc_func));
	e->inl_func = calloc(e->p->nr_inl ? e->p->nr_inl : 1, sizeof(*e->inl_func));
	if (!e->loc_map || !e->loc_func || !e->inl_func) {
		e->err = -ENOMEM;
		return;
	}
	/* pprof takes the first mapping for the main binary: user space first */
	for (size_t n = 0; n < 2 * nr && !e->err; n++) {
		size_t i = n % nr;
		const struct cs_agg_key *k = cs_agg_frame_key(locs, (uint32_t)i);
		const struct cs_location *l = cs_agg_frame_loc(locs, (uint32_t)i);
		const char *name = location_name(k);
		struct cs_agg_key mk = { .dso = l->dso_name, .addr = l->map_start,
					 .flags = (uint32_t)l->map_pgoff };
		struct cs_agg_key fk = { .sym = name, .dso = l->dso_name };
		uint32_t id;
		int err = 0;

		if ((n < nr) == !!(k->flags & F_KERNEL))
			continue;
		if (k->dso && !(k->flags & (F_MISSING | F_COOKIE | F_OFF_CPU))) {
			err = cs_agg_frame(e->maps, &mk, l, &id);
			e->loc_map[i] = id + 1;
		}
		if (!err && name) {
			err = cs_agg_frame(e->funcs, &fk, NULL, &id);
			e->loc_func[i] = id + 1;
		}
		for (uint32_t j = 0; !err && i < e->p->cap_locs &&
		     j < e->p->inl_nr[i]; j++) {
			uint32_t at = e->p->inl_off[i] + j;

			fk.sym = e->p->inl_names[at];
			err = cs_agg_frame(e->funcs, &fk, NULL, &id);
			e->inl_func[at] = id + 1;
		}
		if (err)
			e->err = err;
	}
}

struct map_weight {
	uint64_t samples;
	uint32_t id;
	int kind;			/* 0 program, 1 library, 2 [vdso].., 3 kernel */
};

static int map_kind(const struct cs_location *l)
{
	const char *base = l->dso_name ? strrchr(l->dso_name, '/') : NULL;

	base = base ? base + 1 : l->dso_name ? l->dso_name : "";
	if (l->kernel || !strncmp(base, "[kernel", 7))
		return 3;
	if (base[0] == '[')
		return 2;
	return strstr(base, ".so") ? 1 : 0;
}

static int cmp_map(const void *pa, const void *pb)
{
	const struct map_weight *a = pa, *b = pb;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* pprof calls the first mapping the profile's binary: programs first (not
 * a .so), then libraries, then [vdso] and the like, the kernel last; each
 * by the number of samples it is in. */
static void order_mappings(struct enc *e)
{
	struct cs_agg *locs = e->p->locs;
	size_t nr = cs_agg_nr_frames(e->maps);
	struct map_weight *w = calloc(nr ? nr : 1, sizeof(*w));
	uint32_t *stamp = calloc(nr ? nr : 1, sizeof(*stamp));
	uint32_t *frames = malloc((cs_agg_max_depth(locs) + 1) * sizeof(*frames));
	struct cs_agg_stack st;

	e->map_order = calloc(nr ? nr : 1, sizeof(*e->map_order));
	e->map_rank = calloc(nr ? nr : 1, sizeof(*e->map_rank));
	if (!w || !stamp || !frames || !e->map_order || !e->map_rank) {
		e->err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		w[i].id = (uint32_t)i;
		w[i].kind = map_kind(cs_agg_frame_loc(e->maps, (uint32_t)i));
	}
	for (size_t s = 0; s < cs_agg_nr_stacks(locs); s++) {
		cs_agg_stack(locs, (uint32_t)s, frames, &st);
		for (uint32_t j = 0; j < st.nr; j++) {
			uint32_t m = e->loc_map[st.frames[j]];

			if (m && stamp[m - 1] != s + 1) {
				stamp[m - 1] = (uint32_t)(s + 1);
				w[m - 1].samples += st.count;
			}
		}
	}
	qsort(w, nr, sizeof(*w), cmp_map);
	for (size_t i = 0; i < nr; i++) {
		e->map_order[i] = w[i].id;
		e->map_rank[w[i].id] = (uint32_t)i;
	}
out:
	free(w);
	free(stamp);
	free(frames);
}

/* What the encoder hands the compressing thread at a time: a copy, in a
 * batch of the hand-off (the buffer it is written into moves as it grows) */
#define SINK_CHUNK	(64 * 1024)

/* The bytes encoded since the last call, all final, to the sink. */
static void sink_send(struct enc *e)
{
	size_t n = e->b.len - e->sent;
	void *room;

	if (!n || e->err || e->b.err)
		return;
	/* a record: its length, then the bytes (records are padded) */
	room = cs_handoff_append(e->sink, sizeof(uint64_t) + n);
	if (!room || cs_handoff_error(e->sink)) {
		e->err = room ? cs_handoff_error(e->sink) : -ENOMEM;
		return;
	}
	*(uint64_t *)room = n;
	memcpy((uint64_t *)room + 1, e->b.p + e->sent, n);
	e->sent += n;
}

static void put_samples(struct enc *e, const int *value_of, size_t nr_values)
{
	struct cs_agg *locs = e->p->locs;
	struct cs_agg_stack st;
	int64_t *values = calloc(nr_values, sizeof(*values));
	uint32_t *frames = malloc((cs_agg_max_depth(locs) + 1) * sizeof(*frames));

	if (!values || !frames) {
		free(values);
		free(frames);
		e->err = -ENOMEM;
		return;
	}
	for (size_t s = 0; s < cs_agg_nr_stacks(locs) && !e->err && !e->b.err; s++) {
		const struct cs_agg_key *t;
		size_t at, packed;
		int vi;

		cs_agg_stack(locs, (uint32_t)s, frames, &st);
		t = cs_agg_frame_key(e->p->threads, st.tag);
		vi = value_of[THREAD_EVSEL(t->flags)];
		memset(values, 0, nr_values * sizeof(*values));
		values[0] = (int64_t)st.count;
		values[vi] = (int64_t)st.period;

		at = pb_begin(&e->b);
		packed = pb_begin(&e->b);
		for (uint32_t j = 0; j < st.nr; j++)
			pb_varint(&e->b, (uint64_t)st.frames[j] + 1);
		pb_end(&e->b, SAMPLE_LOCATION_ID, packed);
		packed = pb_begin(&e->b);
		for (size_t j = 0; j < nr_values; j++)
			pb_varint(&e->b, (uint64_t)values[j]);
		pb_end(&e->b, SAMPLE_VALUE, packed);

		packed = pb_begin(&e->b);
		pb_int64(&e->b, LABEL_KEY, str_index(e, "comm", false));
		pb_int64(&e->b, LABEL_STR, str_index(e, t->sym, false));
		pb_end(&e->b, SAMPLE_LABEL, packed);
		if (THREAD_STATE(t->flags) != CS_OFF_CPU_NONE) {
			packed = pb_begin(&e->b);
			pb_int64(&e->b, LABEL_KEY, str_index(e, "state", false));
			pb_int64(&e->b, LABEL_STR, str_index(e, cs_off_cpu_state_name(
						 THREAD_STATE(t->flags)), false));
			pb_end(&e->b, SAMPLE_LABEL, packed);
		}
		packed = pb_begin(&e->b);
		pb_int64(&e->b, LABEL_KEY, str_index(e, "pid", false));
		pb_int64(&e->b, LABEL_NUM, (int64_t)(t->addr >> 32));
		pb_end(&e->b, SAMPLE_LABEL, packed);
		packed = pb_begin(&e->b);
		pb_int64(&e->b, LABEL_KEY, str_index(e, "tid", false));
		pb_int64(&e->b, LABEL_NUM, (int64_t)(uint32_t)t->addr);
		pb_end(&e->b, SAMPLE_LABEL, packed);
		pb_end(&e->b, PROFILE_SAMPLE, at);
		if (e->sink && e->b.len - e->sent >= SINK_CHUNK)
			sink_send(e);
	}
	free(values);
	free(frames);
}

static void put_mappings(struct enc *e)
{
	char hex[2 * 20 + 1];

	for (size_t i = 0; i < cs_agg_nr_frames(e->maps) && !e->err; i++) {
		const struct cs_location *l = cs_agg_frame_loc(e->maps, e->map_order[i]);
		size_t at = pb_begin(&e->b);
		uint64_t limit = l->map_end > l->map_start ? l->map_end : l->map_start;

		pb_uint64(&e->b, MAPPING_ID, i + 1);
		pb_uint64_opt(&e->b, MAPPING_START, l->map_start);
		pb_uint64_opt(&e->b, MAPPING_LIMIT, limit);
		pb_uint64_opt(&e->b, MAPPING_OFFSET, l->map_pgoff);
		pb_int64_opt(&e->b, MAPPING_FILENAME, str_index(e, l->dso_name, false));
		if (l->build_id && l->build_id_size) {
			size_t n = l->build_id_size > 20 ? 20 : l->build_id_size;

			for (size_t j = 0; j < n; j++)
				snprintf(hex + 2 * j, 3, "%02x", l->build_id[j]);
			pb_int64(&e->b, MAPPING_BUILD_ID, str_index(e, hex, true));
		}
		/* symbolized here: pprof must not look the addresses up again */
		pb_bool(&e->b, MAPPING_HAS_FUNCTIONS, 1);
		pb_end(&e->b, PROFILE_MAPPING, at);
	}
}

static void put_locations(struct enc *e)
{
	struct cs_agg *locs = e->p->locs;

	for (size_t i = 0; i < cs_agg_nr_frames(locs) && !e->err; i++) {
		const struct cs_agg_key *k = cs_agg_frame_key(locs, (uint32_t)i);
		size_t at = pb_begin(&e->b), line;

		pb_uint64(&e->b, LOCATION_ID, i + 1);
		if (e->loc_map[i])
			pb_uint64(&e->b, LOCATION_MAPPING_ID,
				  e->map_rank[e->loc_map[i] - 1] + 1);
		pb_uint64_opt(&e->b, LOCATION_ADDRESS, k->addr);
		/* innermost first; the last line is the function they are in */
		for (uint32_t j = 0; i < e->p->cap_locs && j < e->p->inl_nr[i]; j++) {
			line = pb_begin(&e->b);
			pb_uint64(&e->b, LINE_FUNCTION_ID,
				  e->inl_func[e->p->inl_off[i] + j]);
			pb_end(&e->b, LOCATION_LINE, line);
		}
		if (e->loc_func[i]) {
			line = pb_begin(&e->b);
			pb_uint64(&e->b, LINE_FUNCTION_ID, e->loc_func[i]);
			pb_end(&e->b, LOCATION_LINE, line);
		}
		pb_end(&e->b, PROFILE_LOCATION, at);
		if (e->sink && e->b.len - e->sent >= SINK_CHUNK)
			sink_send(e);
	}
}

static void put_functions(struct enc *e)
{
	for (size_t i = 0; i < cs_agg_nr_frames(e->funcs) && !e->err; i++) {
		const struct cs_agg_key *k = cs_agg_frame_key(e->funcs, (uint32_t)i);
		size_t at = pb_begin(&e->b);
		int64_t name = str_index(e, k->sym, false);

		pb_uint64(&e->b, FUNCTION_ID, i + 1);
		pb_int64(&e->b, FUNCTION_NAME, name);
		pb_int64(&e->b, FUNCTION_SYSTEM_NAME, name);
		pb_int64_opt(&e->b, FUNCTION_FILENAME, str_index(e, k->dso, false));
		pb_end(&e->b, PROFILE_FUNCTION, at);
		if (e->sink && e->b.len - e->sent >= SINK_CHUNK)
			sink_send(e);
	}
}

/* cs_pprof_encode(), handing the bytes over to sink (if not NULL) as
 * they become final: *sent of them went there. */
static int encode(struct cs_pprof *p, const struct cs_pprof_event *events,
		  size_t nr_events, struct cs_handoff *sink, uint8_t **data,
		  size_t *len, size_t *sent)
{
	struct enc e = { .p = p, .sink = sink };
	const struct cs_pprof_event *first = NULL;
	bool first_off_cpu = false;
	int *value_of = NULL;
	bool *used = NULL;
	struct cs_pprof_event unnamed = { 0 };
	size_t nr_values = 1;

	*data = NULL;
	*len = 0;
	/* every sample counted first: the events seen are known then */
	e.err = cs_pprof_flush(p);
	if (e.err)
		goto out;
	value_of = calloc(p->nr_ev + 1, sizeof(*value_of));
	used = calloc(p->nr_ev + 1, sizeof(*used));
	if (!value_of || !used || cs_agg_new(&e.strings) || cs_agg_new(&e.maps) ||
	    cs_agg_new(&e.funcs)) {
		e.err = -ENOMEM;
		goto out;
	}
	str_index(&e, "", false);		/* index 0 must be "" */

	/* one value column per event that has samples, after the count */
	for (size_t i = 0; i < cs_agg_nr_frames(p->threads); i++)
		used[THREAD_EVSEL(cs_agg_frame_key(p->threads, (uint32_t)i)->flags)] = true;
	value_type(&e, PROFILE_SAMPLE_TYPE, "samples", "count");
	for (unsigned int ev = 0; ev < p->nr_ev; ev++) {
		const struct cs_pprof_event *d = ev < nr_events ? &events[ev] : &unnamed;

		if (!used[ev])
			continue;
		value_of[ev] = (int)nr_values++;
		event_type(&e, PROFILE_SAMPLE_TYPE, d, p->ev_off_cpu[ev]);
		if (!first) {
			first = d;
			first_off_cpu = p->ev_off_cpu[ev];
		}
	}
	resolve_locations(&e);
	if (!e.err)
		order_mappings(&e);
	if (!e.err)
		put_samples(&e, value_of, nr_values);
	put_mappings(&e);
	put_locations(&e);
	put_functions(&e);

	if (p->samples) {
		int64_t span = (int64_t)(p->last_time - p->first_time);

		if (p->o.end_nanos > span)
			pb_int64(&e.b, PROFILE_TIME_NANOS, p->o.end_nanos - span);
		pb_int64_opt(&e.b, PROFILE_DURATION_NANOS, span);
	}
	if (first) {
		/* off-CPU time has no sampling period */
		uint64_t period = first_off_cpu ? 0 : first->period;

		event_type(&e, PROFILE_PERIOD_TYPE, first, first_off_cpu);
		if (!period && first->freq && is_clock(first->name))
			period = 1000000000ULL / first->freq;
		pb_int64_opt(&e.b, PROFILE_PERIOD, (int64_t)period);
		pb_int64(&e.b, PROFILE_DEFAULT_SAMPLE_TYPE,
			 str_index(&e, first_off_cpu ? "off_cpu" :
				   is_clock(first->name) ? "cpu" :
				   first->name ? first->name : "events", false));
	}
	/* last: every string above has been interned by now */
	for (size_t i = 0; i < cs_agg_nr_frames(e.strings) && !e.err; i++)
		pb_string(&e.b, PROFILE_STRING_TABLE,
			  cs_agg_frame_key(e.strings, (uint32_t)i)->sym);
out:
	if (!e.err)
		e.err = e.b.err;
	if (!e.err) {
		*data = e.b.p;
		*len = e.b.len;
	} else {
		pb_free(&e.b);
	}
	*sent = e.sent;
	free(e.loc_map);
	free(e.loc_func);
	free(e.inl_func);
	free(e.map_order);
	free(e.map_rank);
	free(value_of);
	free(used);
	cs_agg_free(e.strings);
	cs_agg_free(e.maps);
	cs_agg_free(e.funcs);
	return e.err;
}

int cs_pprof_encode(struct cs_pprof *p, const struct cs_pprof_event *events,
		    size_t nr_events, uint8_t **data, size_t *len)
{
	size_t sent;

	return encode(p, events, nr_events, NULL, data, len, &sent);
}

/* The gzip stream being written: on the compressing thread until its
 * hand-off is finished, then on the caller's. */
struct gz {
	z_stream z;
	FILE *out;
	int write_errno;		/* of a failed write: errno is per thread */
	uint8_t chunk[65536];
};

/* Compresses in[0, n) and writes what comes out; with Z_FINISH, to the
 * end of the stream. Returns 0 or -EIO. */
static int gz_feed(struct gz *g, const uint8_t *in, size_t n, int flush)
{
	int zr;

	g->z.next_in = (Bytef *)in;
	g->z.avail_in = (uInt)n;
	do {
		size_t have;

		g->z.next_out = g->chunk;
		g->z.avail_out = sizeof(g->chunk);
		zr = deflate(&g->z, flush);
		if (zr == Z_STREAM_ERROR)
			return -EIO;
		have = sizeof(g->chunk) - g->z.avail_out;
		if (fwrite(g->chunk, 1, have, g->out) != have) {
			g->write_errno = errno;
			return -EIO;
		}
	} while (flush == Z_FINISH ? zr != Z_STREAM_END : g->z.avail_out == 0);
	return 0;
}

/* The compressing thread: a batch of encoded bytes. deflate() makes the
 * same stream whichever pieces its input comes in, without a flush. */
static int gz_batch(void *ctx, const void *buf, size_t len)
{
	const char *at = buf, *end = at + len;
	int err = 0;

	while (at < end && !err) {
		uint64_t n = *(const uint64_t *)at;

		err = gz_feed(ctx, (const uint8_t *)at + sizeof(n), n, Z_NO_FLUSH);
		at += cs_handoff_record_size(sizeof(n) + n);
	}
	return err;
}

int cs_pprof_write(struct cs_pprof *p, const struct cs_pprof_event *events,
		   size_t nr_events, FILE *out)
{
	struct gz *g = calloc(1, sizeof(*g));
	struct cs_handoff *sink = NULL;
	uint8_t *data = NULL;
	size_t len = 0, sent = 0;
	int err;

	if (!g)
		return -ENOMEM;
	g->out = out;
	/* windowBits 15 + 16: a gzip wrapper, as pprof expects. Level 1 by
	 * default, as Go's runtime/pprof writes its own (gzip.BestSpeed):
	 * on a system-wide profile it takes half of level 6's time for a
	 * file a tenth larger. */
	if (deflateInit2(&g->z, p->o.compression ? p->o.compression : 1,
			 Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return -ENOMEM;
	}
	/* with jobs to spare, what is encoded is compressed and written on
	 * a thread of its own while the rest is encoded */
	if (p->o.jobs > 1 && cs_handoff_new(gz_batch, g, &sink))
		sink = NULL;
	err = encode(p, events, nr_events, sink, &data, &len, &sent);
	if (sink) {
		int e = cs_handoff_finish(sink);

		if (!err)
			err = e;
	}
	if (!err && len - sent > UINT32_MAX)	/* one deflate() call takes it */
		err = -EFBIG;
	if (!err)
		err = gz_feed(g, data + sent, len - sent, Z_FINISH);
	if (err == -EIO && g->write_errno)
		errno = g->write_errno;
	deflateEnd(&g->z);
	free(data);
	free(g);
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
	return err;
}
