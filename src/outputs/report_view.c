/* report_view.c - an event's entries, worked out once every sample is
 * counted: each stack of the event walked once, Self at its innermost
 * frame and Children once per stack for every entry it holds, and the
 * occurrences that the entries drawing a call graph need (see
 * report_int.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/big_alloc.h"
#include "lib/util/hash.h"
#include "outputs/report_int.h"

static bool sorts_by(const struct cs_report *r, enum cs_report_key k)
{
	for (size_t i = 0; i < r->o.nr_sort; i++)
		if (r->o.sort[i] == k)
			return true;
	return false;
}

int report_thread_part_id(const struct cs_report *r, uint32_t thread,
			  struct cs_agg *names, struct cs_agg *parts,
			  uint32_t *out)
{
	uint64_t pt = report_thread_pidtid(r, thread);
	uint32_t key[CS_REPORT__NR_KEYS];
	uint32_t nr = 0;
	struct cs_agg_key nk;
	int err = 0;

	for (size_t i = 0; !err && i < r->o.nr_sort; i++) {
		switch (r->o.sort[i]) {
		case CS_REPORT_COMM:
			nk = (struct cs_agg_key){ .sym = report_thread_comm(r, thread) };
			err = cs_agg_frame(names, &nk, NULL, &key[nr++]);
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
	return err ? err : cs_agg_add(parts, 0, key, nr, 0, 0, out);
}

/* The id of what a thread's keys say, worked out once per thread */
static int thread_part(struct view *v, uint32_t thread, uint32_t *out)
{
	int err;

	if (v->thread_part[thread] != UINT32_MAX) {
		*out = v->thread_part[thread];
		return 0;
	}
	err = report_thread_part_id(v->r, thread, v->names, v->keys, out);
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

#define GROW_AHEAD 16

static int map_grow(struct view *v)
{
	size_t cap = v->map_cap ? v->map_cap * 2 : 4096;
	uint32_t *map = cs_big_calloc(cap, sizeof(*map)), bits = cs_slot_hash_bits(cap);

	if (!map)
		return -ENOMEM;
	for (size_t i = 0; i < v->nr_e; i++) {
		uint64_t h = cs_hash_u64(entry_key(v, &v->e[i]));
		size_t s;

		/* the entries are read in order, their slots at random: the
		 * slot of the one GROW_AHEAD on is asked for early */
		if (i + GROW_AHEAD < v->nr_e)
			__builtin_prefetch(&map[cs_hash_u64(entry_key(v,
				&v->e[i + GROW_AHEAD])) & (cap - 1)]);
		for (s = h & (cap - 1); map[s]; s = (s + 1) & (cap - 1))
			;
		map[s] = cs_slot_make(bits, h, i);
	}
	cs_big_free(v->map);
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
	h = cs_hash_u64(key);
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
		struct entry *e = cs_big_realloc(v->e, n * sizeof(*e), false);
		struct entry_work *w;

		if (!e)
			return -ENOMEM;
		v->e = e;
		w = cs_big_realloc(v->work, n * sizeof(*w), false);
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

	v->thread_part = cs_big_alloc((nt ? nt : 1) * sizeof(*v->thread_part));
	if (!v->thread_part)
		return -ENOMEM;
	memset(v->thread_part, 0xff, nt * sizeof(*v->thread_part));
	v->by_sym = sorts_by(r, CS_REPORT_SYM);
	if (sorts_by(r, CS_REPORT_DSO) && !v->by_sym) {
		v->frame_part = cs_big_alloc((nf ? nf : 1) * sizeof(*v->frame_part));
		if (!v->frame_part)
			return -ENOMEM;
		memset(v->frame_part, 0xff, nf * sizeof(*v->frame_part));
	}
	return 0;
}

static void view_parts_free(struct view *v)
{
	cs_big_free(v->thread_part);
	cs_big_free(v->frame_part);
	cs_big_free(v->map);
	v->thread_part = v->frame_part = NULL;
	v->map = NULL;
}

/* r->inlined, once every frame is added. Returns 0 or -ENOMEM. */
int report_mark_inlined(struct cs_report *r)
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
bool report_draws_graph(const struct view *v, const struct entry *e)
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
		hash[i] = cs_hash_u64((uint64_t)tp << 32 | fp);
		__builtin_prefetch(&v->map[hash[i] & (v->map_cap - 1)]);
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t slot = v->map[hash[i] & (v->map_cap - 1)];

		if (slot && cs_slot_may_be(v->map_hash_bits, slot, hash[i])) {
			uint32_t id = cs_slot_index(v->map_hash_bits, slot);

			report_prefetch_entry(&v->e[id]);
			__builtin_prefetch(&v->work[id]);
			__builtin_prefetch((const char *)&v->work[id + 1] - 1);
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
				if (report_draws_graph(v, &v->e[i]))
					off += v->work[i].occ_nr;
				if (off > UINT32_MAX) {
					err = -ENOMEM;
					break;
				}
			}
			if (err || !off)
				break;
			v->nr_occ = off;
			v->occ = cs_big_alloc(off * sizeof(*v->occ));
			v->occ_off = cs_big_alloc((v->nr_e + 1) * sizeof(*v->occ_off));
			if (!v->occ || !v->occ_off) {
				err = -ENOMEM;
				break;
			}
			off = 0;
			for (size_t i = 0; i < v->nr_e; i++) {
				v->occ_off[i] = (uint32_t)off;
				if (report_draws_graph(v, &v->e[i]))
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

int report_view_entries(struct view *v)
{
	int err = cs_agg_new(&v->keys);

	if (!err)
		err = cs_agg_new(&v->names);
	if (!err)
		err = view_parts(v);
	if (!err)
		err = view_build(v);
	/* entries are found: their index is not needed any more */
	view_parts_free(v);
	cs_agg_free(v->keys);
	v->keys = NULL;
	return err;
}

void report_view_free(struct view *v)
{
	cs_big_free(v->e);
	cs_big_free(v->work);
	cs_big_free(v->occ);
	cs_big_free(v->occ_off);
	view_parts_free(v);
	cs_agg_free(v->keys);
	cs_agg_free(v->names);
	v->e = NULL;
	v->work = NULL;
	v->occ = NULL;
	v->occ_off = NULL;
	v->keys = v->names = NULL;
}
