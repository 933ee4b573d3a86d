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
 *   - call graphs: from the nodes above the threshold, found without
 *     holding the tree (report_ext_graph.c).
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

#include "outputs/report_ext.h"

/* An entry reached by one record, in a partition file */
struct ext_occ {
	struct cs_agg_key fk;		/* the frame that shows it */
	uint64_t count, period, seq;
	uint32_t tpart, thread;
	uint32_t sym_id, dso_id;	/* fk's names in the report's */
	uint16_t k, len;		/* walk index; chain length */
	uint8_t self;
};

/* In a partition an occurrence is coded as ten numbers (tpart is the
 * thread's): the flags with self in bit 0, the key's names' ids and
 * address, count, period, seq, thread, k and len - ~25 bytes, not 72 */
#define OCC_NUMS	10

static int occ_write(struct report_tmp *f, const struct ext_occ *o)
{
	const uint64_t v[OCC_NUMS] = {
		(uint64_t)o->fk.flags << 1 | o->self,
		o->sym_id, o->dso_id, o->fk.addr, o->count, o->period, o->seq, o->thread, o->k, o->len,
	};
	uint8_t buf[OCC_NUMS * REPORT_VARINT_MAX];

	return report_tmp_write(f, buf, report_varints_put(buf, v, OCC_NUMS));
}

/* 0, 1 at the end, or -EBADMSG (the line in rd->f->err) */
static int occ_read(const struct ext *x, struct report_tmp_reader *rd,
		    struct ext_occ *o)
{
	uint64_t at = report_tmp_reader_tell(rd), v[OCC_NUMS];
	int err = report_varints_get(rd, at, v, OCC_NUMS);

	if (err)
		return err;
	if (v[0] >> 1 > UINT32_MAX || v[7] >= cs_agg_nr_frames(x->r->threads) ||
	    v[8] >= CS_FRAMES_MAX || v[9] > CS_FRAMES_MAX)
		return report_tmp_bad(rd, at, -EBADMSG, "an occurrence's flags, "
				      "thread or place is out of range");
	*o = (struct ext_occ){
		.fk = { .addr = v[3], .flags = (uint32_t)(v[0] >> 1) },
		.count = v[4], .period = v[5], .seq = v[6],
		.tpart = x->tpart[v[7]], .thread = (uint32_t)v[7],
		.sym_id = (uint32_t)v[1], .dso_id = (uint32_t)v[2],
		.k = (uint16_t)v[8], .len = (uint16_t)v[9], .self = v[0] & 1,
	};
	if (!report_names_get(&x->r->names, v[1], &o->fk.sym) ||
	    !report_names_get(&x->r->names, v[2], &o->fk.dso))
		return report_tmp_bad(rd, at, -EBADMSG, "an occurrence's name "
				      "is not one of the report's");
	return 0;
}

/* ---- keys ----------------------------------------------------------------- */

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
void ext_frame_hash(struct ext *x, const struct cs_agg_key *k, uint64_t *h1,
		       uint64_t *h2)
{
	uint64_t s1, s2, d1, d2;

	str_hashes(x, k->sym, &s1, &s2);
	str_hashes(x, k->dso, &d1, &d2);
	*h1 = ext_mix(ext_mix(ext_mix(ext_mix(1, s1), d1), k->addr), k->flags);
	*h2 = ext_mix(ext_mix(ext_mix(ext_mix(2, s2 * 3), d2 * 5), ~k->addr), (uint64_t)k->flags << 7);
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

bool ext_frame_eq(const struct cs_agg_key *a, const struct cs_agg_key *b)
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
		ext_frame_hash(x, fk, &h1, &h2);
	else if (x->by_dso)
		str_hashes(x, report_dso_short(fk->dso), &h1, &h2);
	return ext_mix(h1, tpart);
}

static bool entry_eq(const struct ext *x, uint32_t ta, const struct cs_agg_key *a,
		     uint32_t tb, const struct cs_agg_key *b)
{
	if (ta != tb)
		return false;
	if (x->by_sym)
		return ext_frame_eq(a, b);
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
	for (size_t t = 0; t < nt && !err; t++)
		err = report_thread_part_id(r, (uint32_t)t, names, keys,
					    &x->tpart[t]);
	cs_agg_free(names);
	cs_agg_free(keys);
	return err;
}

/* In a run an entry is coded as fourteen numbers and its hash (tpart is the thread's;
 * the hash is stored whole): ~45 bytes, not 104 */
#define RUN_NUMS	14

static int run_write(struct report_tmp *f, const struct ext_entry *e)
{
	const uint64_t v[RUN_NUMS] = {
		e->e.thread, e->e.self_count, e->e.self_period,
		e->e.child_count, e->e.child_period,
		e->sym_id, e->dso_id, e->fk.addr, e->fk.flags, e->seq,
		(uint32_t)(e->graph + 1),	/* NONE: 0 */
		e->k, e->max_depth, e->e.frame,
	};
	uint8_t buf[RUN_NUMS * REPORT_VARINT_MAX + sizeof(e->h)];
	size_t n = report_varints_put(buf, v, RUN_NUMS);

	memcpy(buf + n, &e->h, sizeof(e->h));
	return report_tmp_write(f, buf, n + sizeof(e->h));
}

/* 0, 1 at the end of the run, or -EBADMSG (the line in rd->f->err) */
static int run_read(const struct ext *x, struct report_tmp_reader *rd,
		    struct ext_entry *e)
{
	uint64_t at = report_tmp_reader_tell(rd), v[RUN_NUMS];
	int err = report_varints_get(rd, at, v, RUN_NUMS);

	if (err)
		return err;
	err = report_tmp_read(rd, &e->h, sizeof(e->h));
	if (err == 1)
		err = report_tmp_bad(rd, at, -EBADMSG, "it ends inside the entry");
	if (err)
		return err;
	if (v[0] >= cs_agg_nr_frames(x->r->threads) || v[8] > UINT32_MAX ||
	    v[10] > x->nr_drawn || v[11] > UINT16_MAX || v[12] > UINT16_MAX ||
	    v[13] > UINT32_MAX)
		return report_tmp_bad(rd, at, -EBADMSG, "an entry's thread, "
				      "flags, graph or place is out of range");
	e->e = (struct entry){
		.thread = (uint32_t)v[0], .frame = (uint32_t)v[13],
		.self_count = v[1], .self_period = v[2],
		.child_count = v[3], .child_period = v[4],
	};
	e->fk = (struct cs_agg_key){ .addr = v[7], .flags = (uint32_t)v[8] };
	if (!report_names_get(&x->r->names, v[5], &e->fk.sym) ||
	    !report_names_get(&x->r->names, v[6], &e->fk.dso))
		return report_tmp_bad(rd, at, -EBADMSG, "an entry's name is "
				      "not one of the report's");
	e->sym_id = (uint32_t)v[5];
	e->dso_id = (uint32_t)v[6];
	e->seq = v[9];
	e->graph = (uint32_t)v[10] - 1;
	e->tpart = x->tpart[v[0]];
	e->k = (uint16_t)v[11];
	e->max_depth = (uint16_t)v[12];
	return 0;
}

/* ---- reading and walking records ---------------------------------------- */

/* The next record into x->rec and x->frames: 0, 1 at the end, or an error */
int ext_read_rec(struct ext *x, struct report_tmp_reader *rd)
{
	return report_spill_rec_read(rd, (uint32_t)cs_agg_nr_frames(x->r->threads),
				     &x->r->names, &x->rec, x->frames);
}

bool ext_rec_of_event(const struct ext *x)
{
	return THREAD_EVSEL(cs_agg_frame_key(x->r->threads, x->rec.thread)->flags) ==
	       x->evsel;
}

/* The record's entries, each at its first place in view_build()'s walk:
 * the innermost real frame first, then outermost first for caller
 * graphs (innermost first for callee ones), inlined frames skipped; into
 * x->occ. */
void ext_walk(struct ext *x)
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
	int err = report_spill_reader_open(&rd, x->r, 1 << 20);

	while (!err && !(err = ext_read_rec(x, &rd))) {
		if (!ext_rec_of_event(x))
			continue;
		x->total_count += x->rec.count;
		x->total_period += x->rec.period;
		ext_walk(x);
		for (size_t i = 0; i < x->nr_occ && !err; i++) {
			const struct walk_occ *o = &x->occ[i];
			struct ext_occ e = {
				.fk = x->frames[o->pos].key, .count = x->rec.count,
				.period = x->rec.period, .seq = x->rec.seq,
				.tpart = x->tpart[x->rec.thread],
				.thread = x->rec.thread,
				.sym_id = x->frames[o->pos].sym_id,
				.dso_id = x->frames[o->pos].dso_id,
				.k = (uint16_t)o->k,
				.len = (uint16_t)o->len, .self = o->k == 0,
			};

			err = occ_write(&x->part[(o->h >> 32) % x->nr_part], &e);
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
uint32_t ext_drawn_find(const struct ext *x, uint32_t tpart,
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

	while (!err && !(err = occ_read(x, &rd, &o))) {
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
				.sym_id = o.sym_id, .dso_id = o.dso_id,
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
		err = run_write(&x->runs, shown[i]);
	x->nr_show += nr_shown;
	x->run_off[p + 1] = x->runs.size;
	free(shown);
	free(e);
	return err;
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
		if (!err && !(err = run_read(x, &heads[p].rd, &heads[p].e)))
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
			ext_graph_print(x, &t->e, out);
		err = run_read(x, &t->rd, &t->e);
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
 * many as frames in the files (counted as written: coded, their bytes
 * no longer say) */
static unsigned int partitions(const struct cs_report *r)
{
	uint64_t frames = r->spill_items;
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
		err = report_tmp_open(&x.part[p], 64 << 10, r->err,
				      &r->tmp_written);
	if (!err)
		err = report_tmp_open(&x.runs, 1 << 20, r->err,
				      &r->tmp_written);
	if (!err)
		err = entries_pass(&x);
	x.nc = report_cols_init(r, x.children, off_cpu, x.width);
	for (unsigned int p = 0; p < x.nr_part && !err; p++)
		err = count_part(&x, p);
	if (!err && r->o.graph != CS_REPORT_GRAPH_NONE)
		err = ext_graphs_find(&x);
	if (!err) {
		report_event_head(r, off_cpu, x.total_count, x.total_period, name, out);
		report_cols_head(r, x.width, x.nc, x.children, off_cpu, out);
		err = merge_runs(&x, out);
		fputs("\n\n", out);
	}
	ext_free(&x);
	return err;
}
