/* report_external.c - an event's section of the report made from spill
 * mode's temporary file (report_spill.c) in bounded memory, byte for byte
 * what the tables give (report_view.c, report_ranks.c, report_table.c,
 * report_graph.c):
 *
 *   - entries: one pass walks each record as view_build() walks a stack
 *     and writes an occurrence of every entry it reaches (once per record)
 *     to one of P partition files by the hash of the entry's key; each
 *     partition is counted in memory, its shown entries sorted in the
 *     output's order and written as a run; a P-way merge of the runs is
 *     the table;
 *   - call graphs: only entries above the graph threshold T draw one, and
 *     only their nodes of period >= T print. A pass adds every chain
 *     node's period to a count-min sketch keyed by (entry, hash of the
 *     path); a second counts exactly the nodes whose estimate is >= T and
 *     whose parent's was (a node never outweighs its parent, and the
 *     sketch only overcounts); those are all the printer needs
 *     (report_graph_draw()).
 *
 * The entries' order is report_ranks.c's packed key as comparisons: the
 * ranks compare the keys' texts, and the entry's id - the order of first
 * sight - is (record seq, walk index), in which view_build() makes
 * entries since stack ids are in the order of first sight.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/hash.h"
#include "outputs/report_int.h"

#define NONE		UINT32_MAX
#define MAX_PARTS	256
#define SKETCH_ROWS	4

/* An entry reached by one record, in a partition file */
struct ext_occ {
	struct cs_agg_key fk;		/* the frame that shows it */
	uint64_t count, period, seq;
	uint32_t tpart, thread;
	uint16_t k, len;		/* walk index; chain length */
	uint8_t self;
};

/* An entry counted; in a run, as it is written */
struct ext_entry {
	struct entry e;			/* thread and counts (frame unused) */
	struct cs_agg_key fk;
	uint64_t h;			/* its key's hash */
	uint64_t seq;			/* first sight: (seq, k) */
	uint32_t tpart;
	uint32_t graph;			/* its graph among the drawn, or NONE */
	uint16_t k, max_depth;
};

/* A node of a call graph above the sketch's threshold */
struct ext_node {
	struct cs_agg_key fk;
	uint64_t h1, h2;		/* its path's hash */
	uint64_t period, count, seq;	/* seq: the first record through it */
	uint64_t sym_start;
	uint32_t graph, parent;
	uint32_t kept;			/* index among the shown, or NONE */
};

/* A string's two hashes, remembered by its address (the session's
 * strings never change) */
#define MEMO_SLOTS 4096
struct memo {
	const char *s;
	uint64_t h1, h2;
};

/* One occurrence of a walk: the first place of an entry in a record */
struct walk_occ {
	uint32_t pos, k, len;
	uint32_t slot;			/* in ext.seen */
	uint64_t h;			/* the entry key's hash */
};

struct ext {
	struct cs_report *r;
	unsigned int evsel;
	bool children, callee, by_sym, by_dso;
	uint32_t *tpart;		/* per thread: what its keys show */
	struct memo *memo;
	uint64_t total_count, total_period;

	/* a record being read */
	struct report_spill_rec rec;
	struct report_spill_frame *frames;	/* CS_FRAMES_MAX */
	struct walk_occ *occ;		/* CS_FRAMES_MAX */
	size_t nr_occ;
	uint32_t *seen;			/* 2 CS_FRAMES_MAX slots: occ + 1 */

	/* entries */
	unsigned int nr_part;
	struct report_tmp part[MAX_PARTS];
	struct report_tmp runs;
	uint64_t run_off[MAX_PARTS + 1];
	size_t width[REPORT_MAX_COLS], nc, nr_show;

	/* the entries that draw a graph, found by their key */
	struct ext_entry *drawn;
	size_t nr_drawn, cap_drawn;
	uint32_t *drawn_map;		/* index + 1 */
	size_t drawn_cap;

	/* call graphs */
	uint64_t *sketch;		/* SKETCH_ROWS x sketch_w */
	size_t sketch_w;
	struct ext_node *node;
	size_t nr_node, cap_node;
	uint32_t *node_map;		/* index + 1 */
	size_t node_cap;
	struct report_gnode *gnode;	/* the nodes shown, by graph */
	uint32_t *gchild, *groot;
	uint32_t *root_off;		/* per graph: its roots in groot */
};

/* ---- keys ----------------------------------------------------------------- */

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	return cs_hash_u64(h ^ v) + 0x9e3779b97f4a7c15ULL;
}

static void str_hashes(struct ext *x, const char *s, uint64_t *h1, uint64_t *h2)
{
	struct memo *m;

	if (!s) {
		*h1 = 0x51ed27;
		*h2 = 0x2545f491;
		return;
	}
	m = &x->memo[((uintptr_t)s >> 3 ^ (uintptr_t)s >> 15) & (MEMO_SLOTS - 1)];
	if (m->s != s) {
		uint64_t a = 14695981039346656037ULL, b = 0x84222325cbf29ce4ULL;

		for (const char *p = s; *p; p++) {
			a = (a ^ (uint8_t)*p) * 1099511628211ULL;
			b = (b + (uint8_t)*p) * 0x100000001b3ULL ^ (b >> 31);
		}
		m->s = s;
		m->h1 = cs_hash_u64(a);
		m->h2 = cs_hash_u64(b ^ 0x27d4eb2f165667c5ULL);
	}
	*h1 = m->h1;
	*h2 = m->h2;
}

/* A frame's key by content, 128 bits */
static void frame_hash(struct ext *x, const struct cs_agg_key *k, uint64_t *h1,
		       uint64_t *h2)
{
	uint64_t s1, s2, d1, d2;

	str_hashes(x, k->sym, &s1, &s2);
	str_hashes(x, k->dso, &d1, &d2);
	*h1 = mix(mix(mix(mix(1, s1), d1), k->addr), k->flags);
	*h2 = mix(mix(mix(mix(2, s2 * 3), d2 * 5), ~k->addr), (uint64_t)k->flags << 7);
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool frame_eq(const struct cs_agg_key *a, const struct cs_agg_key *b)
{
	return a->addr == b->addr && a->flags == b->flags &&
	       str_eq(a->sym, b->sym) && str_eq(a->dso, b->dso);
}

static bool is_inlined(const struct cs_agg_key *k)
{
	return k->flags & (F_INLINED | F_INLINED_SAME);
}

/* An entry's key is what its thread's keys show (tpart) and what its
 * frame's do: the frame itself when sorting by symbol, its dso's short
 * name when only by dso, else nothing; compared by content, as the
 * tables compare frames and names. */
static uint64_t entry_hash(struct ext *x, uint32_t tpart, const struct cs_agg_key *fk)
{
	uint64_t h1 = 0, h2;

	if (x->by_sym)
		frame_hash(x, fk, &h1, &h2);
	else if (x->by_dso)
		str_hashes(x, report_dso_short(fk->dso), &h1, &h2);
	return mix(h1, tpart);
}

static bool entry_eq(const struct ext *x, uint32_t ta, const struct cs_agg_key *a,
		     uint32_t tb, const struct cs_agg_key *b)
{
	if (ta != tb)
		return false;
	if (x->by_sym)
		return frame_eq(a, b);
	if (x->by_dso)
		return !strcmp(report_dso_short(a->dso), report_dso_short(b->dso));
	return true;
}

/* tpart[t]: one id per distinct (comm text, pid, tid, state) as the sort
 * keys show them, the event's threads only */
static int thread_parts(struct ext *x)
{
	const struct cs_report *r = x->r;
	size_t nt = cs_agg_nr_frames(r->threads);
	struct cs_agg *names = NULL, *keys = NULL;
	int err = cs_agg_new(&names);

	if (!err)
		err = cs_agg_new(&keys);
	if (!err && !(x->tpart = malloc((nt ? nt : 1) * sizeof(*x->tpart))))
		err = -ENOMEM;
	for (size_t t = 0; t < nt && !err; t++) {
		uint64_t pt = report_thread_pidtid(r, (uint32_t)t);
		uint32_t key[CS_REPORT__NR_KEYS], nr = 0;
		struct cs_agg_key nk;

		for (size_t i = 0; !err && i < r->o.nr_sort; i++) {
			switch (r->o.sort[i]) {
			case CS_REPORT_COMM:
				nk = (struct cs_agg_key){ .sym = report_thread_comm(r, (uint32_t)t) };
				err = cs_agg_frame(names, &nk, NULL, &key[nr++]);
				break;
			case CS_REPORT_PID:
				key[nr++] = (uint32_t)(pt >> 32);
				break;
			case CS_REPORT_TID:
				key[nr++] = (uint32_t)pt;
				break;
			case CS_REPORT_STATE:
				key[nr++] = (uint32_t)report_thread_state(r, (uint32_t)t);
				break;
			default:
				break;
			}
		}
		if (!err)
			err = cs_agg_add(keys, 0, key, nr, 0, 0, &x->tpart[t]);
	}
	cs_agg_free(names);
	cs_agg_free(keys);
	return err;
}

/* ---- reading and walking records ---------------------------------------- */

/* The next record into x->rec and x->frames: 0, 1 at the end, or an error */
static int read_rec(struct ext *x, struct report_tmp_reader *rd)
{
	int err = report_tmp_read(rd, &x->rec, sizeof(x->rec));

	if (err)
		return err;
	if (x->rec.nr > CS_FRAMES_MAX) {
		snprintf(x->r->err, REPORT_ERR_LEN, "temporary file %s: a record "
			 "claims %" PRIu32 " frames (at most %d were written)",
			 rd->f->path, x->rec.nr, CS_FRAMES_MAX);
		return -EBADMSG;
	}
	err = report_tmp_read(rd, x->frames, x->rec.nr * sizeof(*x->frames));
	if (err == 1) {
		snprintf(x->r->err, REPORT_ERR_LEN, "temporary file %s: it ends "
			 "inside a record", rd->f->path);
		return -EIO;
	}
	return err;
}

static bool rec_of_event(const struct ext *x)
{
	return THREAD_EVSEL(cs_agg_frame_key(x->r->threads, x->rec.thread)->flags) ==
	       x->evsel;
}

/* The record's entries, each at its first place in view_build()'s walk:
 * the innermost real frame first, then outermost first for caller
 * graphs (innermost first for callee ones), inlined frames skipped; into
 * x->occ. */
static void walk(struct ext *x)
{
	const struct report_spill_frame *f = x->frames;
	uint32_t nr = x->rec.nr, leaf = 0, depth;
	uint32_t tp = x->tpart[x->rec.thread];
	size_t mask = 2 * CS_FRAMES_MAX - 1;

	x->nr_occ = 0;
	while (leaf + 1 < nr && is_inlined(&f[leaf].key))
		leaf++;
	depth = !nr ? 0 : x->children ? nr - leaf : 1;
	for (uint32_t k = 0; k < depth; k++) {
		uint32_t pos = k == 0 ? leaf : x->callee ? leaf + k : nr - k;
		uint64_t h;
		size_t s;
		bool dup = false;

		if (k && is_inlined(&f[pos].key))
			continue;
		h = entry_hash(x, tp, &f[pos].key);
		for (s = h & mask; x->seen[s]; s = (s + 1) & mask) {
			const struct walk_occ *o = &x->occ[x->seen[s] - 1];

			if (o->h == h && entry_eq(x, tp, &f[o->pos].key, tp, &f[pos].key)) {
				dup = true;
				break;
			}
		}
		if (dup)
			continue;
		x->occ[x->nr_occ] = (struct walk_occ){ pos, k, k ? pos + 1 : nr,
						       (uint32_t)s, h };
		x->seen[s] = (uint32_t)++x->nr_occ;
	}
	/* emptied for the next record */
	for (size_t i = 0; i < x->nr_occ; i++)
		x->seen[x->occ[i].slot] = 0;
}

/* ---- entries -------------------------------------------------------------- */

/* The output's order (report_ranks.c's packed key): first column
 * descending, depth (callee graphs ascending), Self descending, the sort
 * keys' ranks, first sight. */
static int cmp_entries(const void *pa, const void *pb, void *ctx)
{
	const struct ext *x = ctx;
	const struct cs_report *r = x->r;
	const struct ext_entry *a = pa, *b = pb;
	uint64_t fa = x->children ? a->e.child_period : a->e.self_period;
	uint64_t fb = x->children ? b->e.child_period : b->e.self_period;

	if (fa != fb)
		return fa > fb ? -1 : 1;
	if (x->children && a->max_depth != b->max_depth)
		return (a->max_depth < b->max_depth) == x->callee ? -1 : 1;
	if (a->e.self_period != b->e.self_period)
		return a->e.self_period > b->e.self_period ? -1 : 1;
	for (size_t i = 0; i < r->o.nr_sort; i++) {
		uint64_t pa_ = report_thread_pidtid(r, a->e.thread);
		uint64_t pb_ = report_thread_pidtid(r, b->e.thread);
		uint32_t va = 0, vb = 0;
		int c = 0;

		switch (r->o.sort[i]) {
		case CS_REPORT_COMM:
			c = strcmp(report_thread_comm(r, a->e.thread),
				   report_thread_comm(r, b->e.thread));
			break;
		case CS_REPORT_PID:
			va = (uint32_t)(pa_ >> 32);
			vb = (uint32_t)(pb_ >> 32);
			break;
		case CS_REPORT_TID:
			va = (uint32_t)pa_;
			vb = (uint32_t)pb_;
			break;
		case CS_REPORT_DSO:
			c = strcmp(report_dso_short(a->fk.dso), report_dso_short(b->fk.dso));
			break;
		case CS_REPORT_SYM:
			c = report_sym_cmp(&a->fk, &b->fk);
			break;
		case CS_REPORT_STATE:
			va = report_state_rank(report_thread_state(r, a->e.thread));
			vb = report_state_rank(report_thread_state(r, b->e.thread));
			break;
		case CS_REPORT__NR_KEYS:
			break;
		}
		if (!c && va != vb)
			c = va < vb ? -1 : 1;
		if (c)
			return c < 0 ? -1 : 1;
	}
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return a->k < b->k ? -1 : a->k > b->k;
}

static int cmp_entry_ptrs(const void *pa, const void *pb, void *ctx)
{
	return cmp_entries(*(const struct ext_entry *const *)pa,
			   *(const struct ext_entry *const *)pb, ctx);
}

/* Pass 1: totals, and every record's entries to the partitions */
static int entries_pass(struct ext *x)
{
	struct report_tmp_reader rd;
	int err = report_tmp_reader_open(&rd, x->r->spill, 0, x->r->spill->size,
					 1 << 20);

	while (!err && !(err = read_rec(x, &rd))) {
		if (!rec_of_event(x))
			continue;
		x->total_count += x->rec.count;
		x->total_period += x->rec.period;
		walk(x);
		for (size_t i = 0; i < x->nr_occ && !err; i++) {
			const struct walk_occ *o = &x->occ[i];
			struct ext_occ e = {
				.fk = x->frames[o->pos].key, .count = x->rec.count,
				.period = x->rec.period, .seq = x->rec.seq,
				.tpart = x->tpart[x->rec.thread],
				.thread = x->rec.thread, .k = (uint16_t)o->k,
				.len = (uint16_t)o->len, .self = o->k == 0,
			};

			err = report_tmp_write(&x->part[(o->h >> 32) % x->nr_part],
					       &e, sizeof(e));
		}
	}
	report_tmp_reader_close(&rd);
	return err == 1 ? 0 : err;
}

static int drawn_add(struct ext *x, struct ext_entry *e)
{
	size_t mask;

	if ((x->nr_drawn + 1) * 2 > x->drawn_cap) {
		size_t cap = x->drawn_cap ? x->drawn_cap * 2 : 64;
		uint32_t *map = calloc(cap, sizeof(*map));

		if (!map)
			return -ENOMEM;
		for (size_t i = 0; i < x->nr_drawn; i++) {
			size_t s;

			for (s = x->drawn[i].h & (cap - 1); map[s]; s = (s + 1) & (cap - 1))
				;
			map[s] = (uint32_t)i + 1;
		}
		free(x->drawn_map);
		x->drawn_map = map;
		x->drawn_cap = cap;
	}
	if (x->nr_drawn == x->cap_drawn) {
		size_t cap = x->cap_drawn ? x->cap_drawn * 2 : 16;
		struct ext_entry *d = realloc(x->drawn, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		x->drawn = d;
		x->cap_drawn = cap;
	}
	e->graph = (uint32_t)x->nr_drawn;
	x->drawn[x->nr_drawn] = *e;
	mask = x->drawn_cap - 1;
	{
		size_t s;

		for (s = e->h & mask; x->drawn_map[s]; s = (s + 1) & mask)
			;
		x->drawn_map[s] = (uint32_t)++x->nr_drawn;
	}
	return 0;
}

/* The drawn entry of key (tpart, fk) whose hash is h, or NONE */
static uint32_t drawn_find(const struct ext *x, uint32_t tpart,
			   const struct cs_agg_key *fk, uint64_t h)
{
	size_t mask = x->drawn_cap - 1;

	if (!x->drawn_cap)
		return NONE;
	for (size_t s = h & mask; x->drawn_map[s]; s = (s + 1) & mask) {
		const struct ext_entry *d = &x->drawn[x->drawn_map[s] - 1];

		if (d->h == h && entry_eq(x, d->tpart, &d->fk, tpart, fk))
			return d->graph;
	}
	return NONE;
}

/* A partition counted in memory; its shown entries measured, sorted and
 * written as run p, those that draw a graph kept in x->drawn. */
static int count_part(struct ext *x, unsigned int p)
{
	struct cs_report *r = x->r;
	struct view v = { .r = r, .evsel = x->evsel, .total_period = x->total_period };
	struct report_cols cols = { .r = r, .width = x->width, .nc = x->nc,
				    .children = x->children,
				    .off_cpu = r->ev_off_cpu[x->evsel],
				    .total = x->total_period };
	struct report_tmp_reader rd;
	struct ext_entry *e = NULL, **shown = NULL;
	uint32_t *map = NULL;
	size_t nr = 0, cap = 0, map_cap = 0, nr_shown = 0;
	struct ext_occ o;
	int err = report_tmp_reader_open(&rd, &x->part[p], 0, x->part[p].size, 1 << 20);

	while (!err && !(err = report_tmp_read(&rd, &o, sizeof(o)))) {
		uint64_t h = entry_hash(x, o.tpart, &o.fk);
		struct ext_entry *n = NULL;
		size_t s, mask;

		if ((nr + 1) * 2 > map_cap) {
			size_t c = map_cap ? map_cap * 2 : 4096;
			uint32_t *m = calloc(c, sizeof(*m));

			if (!m) {
				err = -ENOMEM;
				break;
			}
			for (size_t i = 0; i < nr; i++) {
				for (s = e[i].h & (c - 1); m[s]; s = (s + 1) & (c - 1))
					;
				m[s] = (uint32_t)i + 1;
			}
			free(map);
			map = m;
			map_cap = c;
		}
		mask = map_cap - 1;
		for (s = h & mask; map[s]; s = (s + 1) & mask) {
			struct ext_entry *c = &e[map[s] - 1];

			if (c->h == h && entry_eq(x, c->tpart, &c->fk, o.tpart, &o.fk)) {
				n = c;
				break;
			}
		}
		if (!n) {
			if (nr == cap) {
				size_t c = cap ? cap * 2 : 1024;
				struct ext_entry *ne = nr >= UINT32_MAX / 2 ? NULL :
						       realloc(e, c * sizeof(*ne));

				if (!ne) {
					err = -ENOMEM;
					break;
				}
				e = ne;
				cap = c;
			}
			n = &e[nr];
			*n = (struct ext_entry){
				.e = { .thread = o.thread }, .fk = o.fk, .h = h,
				.seq = o.seq, .tpart = o.tpart, .graph = NONE,
				.k = o.k,
			};
			map[s] = (uint32_t)++nr;
		}
		/* the occurrences of one entry come in the order of their
		 * records: the first is its first sight */
		if (o.self) {
			n->e.self_count += o.count;
			n->e.self_period += o.period;
		}
		n->e.child_count += o.count;
		n->e.child_period += o.period;
		if (o.len > n->max_depth)
			n->max_depth = o.len;
	}
	report_tmp_reader_close(&rd);
	free(map);
	/* the partition is read: its disk space goes back */
	report_tmp_close(&x->part[p]);
	if (err == 1)
		err = 0;
	if (!err && !(shown = malloc((nr ? nr : 1) * sizeof(*shown))))
		err = -ENOMEM;
	for (size_t i = 0; i < nr && !err; i++) {
		if (!report_entry_shown(r, x->total_period, &e[i].e, x->children))
			continue;
		report_widen(&cols, x->width, &e[i].e, &e[i].fk);
		if (report_draws_graph(&v, &e[i].e))
			err = drawn_add(x, &e[i]);
		shown[nr_shown++] = &e[i];
	}
	if (!err)
		qsort_r(shown, nr_shown, sizeof(*shown), cmp_entry_ptrs, x);
	for (size_t i = 0; i < nr_shown && !err; i++)
		err = report_tmp_write(&x->runs, shown[i], sizeof(*shown[i]));
	x->nr_show += nr_shown;
	x->run_off[p + 1] = x->runs.size;
	free(shown);
	free(e);
	return err;
}

/* ---- call graphs ---------------------------------------------------------- */

static size_t sketch_cell(const struct ext *x, int row, uint64_t h1, uint64_t h2)
{
	return (size_t)row * x->sketch_w +
	       ((h1 + (uint64_t)row * (h2 | 1)) & (x->sketch_w - 1));
}

static uint64_t sketch_get(const struct ext *x, uint64_t h1, uint64_t h2)
{
	uint64_t min = UINT64_MAX;

	for (int row = 0; row < SKETCH_ROWS; row++) {
		uint64_t v = x->sketch[sketch_cell(x, row, h1, h2)];

		if (v < min)
			min = v;
	}
	return min;
}

static bool above(const struct ext *x, uint64_t period)
{
	return report_pct(period, x->total_period) >= x->r->o.graph_min_percent;
}

/* The node (graph, path h1 h2), made the first time (parent, frame fk,
 * the record's seq); its index in *id */
static int node_get(struct ext *x, uint32_t graph, uint32_t parent,
		    const struct cs_agg_key *fk, uint64_t h1, uint64_t h2,
		    uint32_t *id)
{
	size_t s, mask;

	if ((x->nr_node + 1) * 2 > x->node_cap) {
		size_t cap = x->node_cap ? x->node_cap * 2 : 1024;
		uint32_t *map = calloc(cap, sizeof(*map));

		if (!map)
			return -ENOMEM;
		for (size_t i = 0; i < x->nr_node; i++) {
			for (s = x->node[i].h1 & (cap - 1); map[s]; s = (s + 1) & (cap - 1))
				;
			map[s] = (uint32_t)i + 1;
		}
		free(x->node_map);
		x->node_map = map;
		x->node_cap = cap;
	}
	mask = x->node_cap - 1;
	for (s = h1 & mask; x->node_map[s]; s = (s + 1) & mask) {
		const struct ext_node *n = &x->node[x->node_map[s] - 1];

		if (n->h1 == h1 && n->h2 == h2 && n->graph == graph) {
			*id = x->node_map[s] - 1;
			return 0;
		}
	}
	if (x->nr_node == x->cap_node) {
		size_t cap = x->cap_node ? x->cap_node * 2 : 1024;
		struct ext_node *n = x->nr_node >= UINT32_MAX / 4 ? NULL :
				     realloc(x->node, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		x->node = n;
		x->cap_node = cap;
	}
	x->node[x->nr_node] = (struct ext_node){
		.fk = *fk, .h1 = h1, .h2 = h2, .seq = x->rec.seq,
		.graph = graph, .parent = parent, .kept = NONE,
	};
	*id = (uint32_t)x->nr_node;
	x->node_map[s] = (uint32_t)++x->nr_node;
	return 0;
}

/* Passes 2 and 3: each record's chains of the entries that draw a graph
 * (chain_span(): a sample the entry is innermost in brings its whole
 * stack, any other the part from the entry to the innermost frame), into
 * the sketch (count) or, as far as the nodes pass it, exactly. */
static int graph_pass(struct ext *x, bool count)
{
	struct report_tmp_reader rd;
	int err = report_tmp_reader_open(&rd, x->r->spill, 0, x->r->spill->size,
					 1 << 20);

	while (!err && !(err = read_rec(x, &rd))) {
		uint32_t tp;

		if (!rec_of_event(x))
			continue;
		tp = x->tpart[x->rec.thread];
		walk(x);
		for (size_t i = 0; i < x->nr_occ && !err; i++) {
			const struct walk_occ *o = &x->occ[i];
			uint32_t g = drawn_find(x, tp, &x->frames[o->pos].key, o->h);
			uint32_t outer = o->k == 0 ? x->rec.nr - 1 : o->pos;
			uint32_t parent = NONE;
			uint64_t h1 = cs_hash_u64(g + 1), h2 = cs_hash_u64(~(uint64_t)g);
			int step = x->r->o.graph == CS_REPORT_GRAPH_CALLER ? -1 : 1;
			uint32_t j = step < 0 ? outer : 0, to = step < 0 ? 0 : outer;

			if (g == NONE)
				continue;
			for (;; j += step) {
				uint64_t f1, f2;

				frame_hash(x, &x->frames[j].key, &f1, &f2);
				h1 = mix(h1, f1);
				h2 = mix(h2 ^ 0x5bd1e995, f2);
				if (count) {
					for (int row = 0; row < SKETCH_ROWS; row++)
						x->sketch[sketch_cell(x, row, h1, h2)] += x->rec.period;
				} else {
					uint32_t id;

					if (!above(x, sketch_get(x, h1, h2)))
						break;
					err = node_get(x, g, parent, &x->frames[j].key, h1, h2, &id);
					if (err)
						break;
					x->node[id].period += x->rec.period;
					x->node[id].count += x->rec.count;
					parent = id;
				}
				if (j == to)
					break;
			}
		}
	}
	report_tmp_reader_close(&rd);
	return err == 1 ? 0 : err;
}

/* Siblings: period descending, then node_tie(): user before kernel,
 * the higher symbol start first, then first sight */
static int cmp_nodes(const void *pa, const void *pb, void *ctx)
{
	const struct ext *x = ctx;
	const struct ext_node *a = &x->node[*(const uint32_t *)pa];
	const struct ext_node *b = &x->node[*(const uint32_t *)pb];

	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	if ((a->fk.flags & F_KERNEL) != (b->fk.flags & F_KERNEL))
		return a->fk.flags & F_KERNEL ? 1 : -1;
	if (a->sym_start != b->sym_start)
		return a->sym_start > b->sym_start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* The tables keep, per frame, the sym_start of its last sample (any
 * event's): a pass over every record finds it for the frames of the
 * nodes shown. */
static int sym_starts(struct ext *x, const uint32_t *shown, size_t nr)
{
	struct report_tmp_reader rd;
	size_t mask = 1;
	uint32_t *map;
	uint64_t *hash = malloc((nr ? nr : 1) * sizeof(*hash));
	int err;

	while (mask + 1 < nr * 2 + 2)
		mask = mask * 2 + 1;
	map = calloc(mask + 1, sizeof(*map));
	if (!map || !hash) {
		free(map);
		free(hash);
		return -ENOMEM;
	}
	/* the distinct frames; a node points at its first */
	for (size_t i = 0; i < nr; i++) {
		struct ext_node *n = &x->node[shown[i]];
		uint64_t h2;
		size_t s;

		frame_hash(x, &n->fk, &hash[i], &h2);
		for (s = hash[i] & mask; map[s]; s = (s + 1) & mask)
			if (hash[map[s] - 1] == hash[i] &&
			    frame_eq(&x->node[shown[map[s] - 1]].fk, &n->fk))
				break;
		if (!map[s])
			map[s] = (uint32_t)i + 1;
	}
	err = report_tmp_reader_open(&rd, x->r->spill, 0, x->r->spill->size, 1 << 20);
	while (!err && !(err = read_rec(x, &rd))) {
		for (uint32_t j = 0; j < x->rec.nr; j++) {
			const struct report_spill_frame *f = &x->frames[j];
			uint64_t h1, h2;

			frame_hash(x, &f->key, &h1, &h2);
			for (size_t s = h1 & mask; map[s]; s = (s + 1) & mask)
				if (hash[map[s] - 1] == h1 &&
				    frame_eq(&x->node[shown[map[s] - 1]].fk, &f->key)) {
					x->node[shown[map[s] - 1]].sym_start = f->sym_start;
					break;
				}
		}
	}
	report_tmp_reader_close(&rd);
	if (err == 1)
		err = 0;
	/* every node from its frame's first */
	for (size_t i = 0; i < nr && !err; i++) {
		struct ext_node *n = &x->node[shown[i]];

		for (size_t s = hash[i] & mask; map[s]; s = (s + 1) & mask)
			if (hash[map[s] - 1] == hash[i] &&
			    frame_eq(&x->node[shown[map[s] - 1]].fk, &n->fk)) {
				n->sym_start = x->node[shown[map[s] - 1]].sym_start;
				break;
			}
	}
	free(map);
	free(hash);
	return err;
}

/* The nodes shown (period above the threshold), as report_graph_draw()
 * reads them: each graph's roots, each node's children, sorted. */
static int graphs_make(struct ext *x)
{
	size_t nr = 0, nr_root = 0;
	uint32_t *shown = malloc((x->nr_node ? x->nr_node : 1) * sizeof(*shown));
	uint32_t *by = NULL, *root_nr = NULL;
	bool ties = false;
	int err = 0;

	if (!shown)
		return -ENOMEM;
	/* a node shown has its parent shown: no node outweighs its parent */
	for (size_t i = 0; i < x->nr_node; i++)
		if (above(x, x->node[i].period))
			shown[nr++] = (uint32_t)i;
	x->gnode = malloc((nr ? nr : 1) * sizeof(*x->gnode));
	x->gchild = malloc((nr ? nr : 1) * sizeof(*x->gchild));
	x->groot = malloc((nr ? nr : 1) * sizeof(*x->groot));
	x->root_off = calloc(x->nr_drawn + 1, sizeof(*x->root_off));
	root_nr = calloc(x->nr_drawn + 1, sizeof(*root_nr));
	by = calloc(nr + 1, sizeof(*by));
	if (!x->gnode || !x->gchild || !x->groot || !x->root_off || !root_nr || !by) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		struct ext_node *n = &x->node[shown[i]];

		n->kept = (uint32_t)i;
		x->gnode[i] = (struct report_gnode){ .key = &n->fk, .period = n->period,
						     .count = n->count };
	}
	/* children counted, placed (parents come before their children in
	 * x->node: made when first walked to) */
	for (size_t i = 0; i < nr; i++) {
		const struct ext_node *n = &x->node[shown[i]];

		if (n->parent == NONE) {
			root_nr[n->graph]++;
			nr_root++;
		} else {
			x->gnode[x->node[n->parent].kept].child_nr++;
		}
	}
	for (size_t i = 0, off = 0; i < nr; i++) {
		x->gnode[i].child_off = (uint32_t)off;
		off += x->gnode[i].child_nr;
		x->gnode[i].child_nr = 0;
	}
	for (size_t g = 0, off = 0; g < x->nr_drawn; g++) {
		x->root_off[g] = (uint32_t)off;
		off += root_nr[g];
		root_nr[g] = 0;
	}
	x->root_off[x->nr_drawn] = (uint32_t)nr_root;
	for (size_t i = 0; i < nr; i++) {
		const struct ext_node *n = &x->node[shown[i]];

		if (n->parent == NONE) {
			x->groot[x->root_off[n->graph] + root_nr[n->graph]++] = shown[i];
		} else {
			struct report_gnode *p = &x->gnode[x->node[n->parent].kept];

			x->gchild[p->child_off + p->child_nr++] = shown[i];
		}
	}
	/* siblings of one period are told apart by their symbols' starts:
	 * found only when some are */
	for (size_t i = 0; i < nr && !ties; i++) {
		const struct report_gnode *p = &x->gnode[i];

		for (uint32_t a = 0; a < p->child_nr && !ties; a++)
			for (uint32_t b = a + 1; b < p->child_nr && !ties; b++)
				ties = x->node[x->gchild[p->child_off + a]].period ==
				       x->node[x->gchild[p->child_off + b]].period;
	}
	for (size_t g = 0; g < x->nr_drawn && !ties; g++)
		for (uint32_t a = x->root_off[g]; a < x->root_off[g + 1] && !ties; a++)
			for (uint32_t b = a + 1; b < x->root_off[g + 1] && !ties; b++)
				ties = x->node[x->groot[a]].period == x->node[x->groot[b]].period;
	if (ties)
		err = sym_starts(x, shown, nr);
	if (err)
		goto out;
	for (size_t i = 0; i < nr; i++)
		qsort_r(x->gchild + x->gnode[i].child_off, x->gnode[i].child_nr,
			sizeof(uint32_t), cmp_nodes, x);
	for (size_t g = 0; g < x->nr_drawn; g++)
		qsort_r(x->groot + x->root_off[g], x->root_off[g + 1] - x->root_off[g],
			sizeof(uint32_t), cmp_nodes, x);
	/* from x->node's indexes to the shown ones' */
	for (size_t i = 0; i < nr_root; i++)
		x->groot[i] = x->node[x->groot[i]].kept;
	for (size_t i = 0; i < nr - nr_root; i++)
		x->gchild[i] = x->node[x->gchild[i]].kept;
out:
	free(shown);
	free(by);
	free(root_nr);
	return err;
}

static int graphs_find(struct ext *x)
{
	size_t bytes = x->r->budget / 4, w = 1024;
	int err;

	if (!x->nr_drawn)
		return 0;
	while (w * 2 * SKETCH_ROWS * sizeof(*x->sketch) <= bytes && w < ((size_t)1 << 21))
		w *= 2;
	x->sketch_w = w;
	x->sketch = calloc(w * SKETCH_ROWS, sizeof(*x->sketch));
	if (!x->sketch)
		return -ENOMEM;
	err = graph_pass(x, true);
	if (!err)
		err = graph_pass(x, false);
	free(x->sketch);
	x->sketch = NULL;
	free(x->node_map);
	x->node_map = NULL;
	x->node_cap = 0;
	return err ? err : graphs_make(x);
}

static void graph_print(const struct ext *x, const struct ext_entry *e,
			FILE *out)
{
	uint32_t g = e->graph;
	const uint32_t *root = x->groot + x->root_off[g];
	uint32_t nr_root = x->root_off[g + 1] - x->root_off[g];
	struct report_graph rg = {
		.node = x->gnode, .child = x->gchild, .root = root,
		.nr_root = nr_root,
		/* every stack of the entry passes through its root */
		.one_root = nr_root && x->gnode[root[0]].count == e->e.child_count,
		.total = x->total_period, .min_percent = x->r->o.graph_min_percent,
	};

	report_graph_draw(&rg, x->children ? e->e.child_period : e->e.self_period,
			  out);
}

/* ---- the table ------------------------------------------------------------ */

struct head {
	struct report_tmp_reader rd;
	struct ext_entry e;
};

static void heap_down(struct ext *x, struct head **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < n && cmp_entries(&h[l]->e, &h[m]->e, x) < 0)
			m = l;
		if (l + 1 < n && cmp_entries(&h[l + 1]->e, &h[m]->e, x) < 0)
			m = l + 1;
		if (m == i)
			return;
		struct head *t = h[i];

		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* The runs merged: the table's lines, a graph under those that draw one */
static int merge_runs(struct ext *x, FILE *out)
{
	struct cs_report *r = x->r;
	struct report_cols cols = { .r = r, .width = x->width, .nc = x->nc,
				    .children = x->children,
				    .off_cpu = r->ev_off_cpu[x->evsel],
				    .total = x->total_period };
	struct report_pct pct[2] = { { 0 } };
	struct head *heads = calloc(x->nr_part, sizeof(*heads));
	struct head **h = calloc(x->nr_part, sizeof(*h));
	size_t n = 0, opened = 0;
	int err = heads && h ? 0 : -ENOMEM;

	for (unsigned int p = 0; p < x->nr_part && !err; p++) {
		err = report_tmp_reader_open(&heads[p].rd, &x->runs, x->run_off[p],
					     x->run_off[p + 1], 64 << 10);
		if (!err)
			opened++;
		if (!err && !(err = report_tmp_read(&heads[p].rd, &heads[p].e,
						    sizeof(heads[p].e))))
			h[n++] = &heads[p];
		if (err == 1)
			err = 0;
	}
	for (size_t i = n; i-- > 0 && !err;)
		heap_down(x, h, n, i);
	while (n && !err) {
		struct head *t = h[0];

		report_entry_line(&cols, pct, &t->e.e, &t->e.fk, out);
		if (t->e.graph != NONE)
			graph_print(x, &t->e, out);
		err = report_tmp_read(&t->rd, &t->e, sizeof(t->e));
		if (err == 1) {
			err = 0;
			h[0] = h[--n];
		}
		heap_down(x, h, n, 0);
	}
	for (size_t p = 0; p < opened; p++)
		report_tmp_reader_close(&heads[p].rd);
	free(heads);
	free(h);
	return err;
}

/* How many partitions: each, counted, should take at most half the
 * budget; an entry costs ~128 bytes counted, and there are at most as
 * many as frames in the file */
static unsigned int partitions(const struct cs_report *r)
{
	uint64_t frames = r->spill->size / sizeof(struct report_spill_frame);
	uint64_t per = r->budget / 2 / 128;
	uint64_t p = per ? frames / per + 1 : MAX_PARTS;

	return p > MAX_PARTS ? MAX_PARTS : (unsigned int)p;
}

static void ext_free(struct ext *x)
{
	for (unsigned int p = 0; p < MAX_PARTS; p++)
		report_tmp_close(&x->part[p]);
	report_tmp_close(&x->runs);
	free(x->tpart);
	free(x->memo);
	free(x->frames);
	free(x->occ);
	free(x->seen);
	free(x->drawn);
	free(x->drawn_map);
	free(x->sketch);
	free(x->node);
	free(x->node_map);
	free(x->gnode);
	free(x->gchild);
	free(x->groot);
	free(x->root_off);
}

int report_external_write(struct cs_report *r, unsigned int evsel,
			  const char *name, FILE *out)
{
	struct ext x = {
		.r = r, .evsel = evsel, .children = !r->o.no_children,
		.callee = r->o.graph == CS_REPORT_GRAPH_CALLEE,
	};
	bool off_cpu = r->ev_off_cpu[evsel];
	int err = 0;

	for (unsigned int p = 0; p < MAX_PARTS; p++)
		x.part[p].fd = -1;
	x.runs.fd = -1;
	for (size_t i = 0; i < r->o.nr_sort; i++) {
		x.by_sym |= r->o.sort[i] == CS_REPORT_SYM;
		x.by_dso |= r->o.sort[i] == CS_REPORT_DSO;
	}
	x.memo = calloc(MEMO_SLOTS, sizeof(*x.memo));
	x.frames = malloc(CS_FRAMES_MAX * sizeof(*x.frames));
	x.occ = malloc(CS_FRAMES_MAX * sizeof(*x.occ));
	x.seen = calloc(2 * CS_FRAMES_MAX, sizeof(*x.seen));
	if (!x.memo || !x.frames || !x.occ || !x.seen)
		err = -ENOMEM;
	if (!err)
		err = thread_parts(&x);
	x.nr_part = partitions(r);
	for (unsigned int p = 0; p < x.nr_part && !err; p++)
		err = report_tmp_open(&x.part[p], 64 << 10, r->err);
	if (!err)
		err = report_tmp_open(&x.runs, 1 << 20, r->err);
	if (!err)
		err = entries_pass(&x);
	x.nc = report_cols_init(r, x.children, off_cpu, x.width);
	for (unsigned int p = 0; p < x.nr_part && !err; p++)
		err = count_part(&x, p);
	if (!err && r->o.graph != CS_REPORT_GRAPH_NONE)
		err = graphs_find(&x);
	if (!err) {
		report_event_head(r, off_cpu, x.total_count, x.total_period, name, out);
		report_cols_head(r, x.width, x.nc, x.children, off_cpu, out);
		err = merge_runs(&x, out);
		fputs("\n\n", out);
	}
	ext_free(&x);
	return err;
}
