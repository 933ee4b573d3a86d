/* report_ext_graph.c - the call graphs of an event's section made from
 * spill mode's temporary file (see report_external.c): only entries above
 * the graph threshold T draw one, and only their nodes of period >= T
 * print. A pass adds every chain node's period to a count-min sketch
 * keyed by (entry, 128-bit hash of the path's frames); a second counts
 * exactly the nodes whose estimate is >= T and whose parent's was (a node
 * never outweighs its parent, and the sketch only overcounts); those are
 * all report_graph_draw() reads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "outputs/report_ext.h"

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
	int err = report_spill_reader_open(&rd, x->r, 1 << 20);

	while (!err && !(err = ext_read_rec(x, &rd))) {
		uint32_t tp;

		if (!ext_rec_of_event(x))
			continue;
		tp = x->tpart[x->rec.thread];
		ext_walk(x);
		for (size_t i = 0; i < x->nr_occ && !err; i++) {
			const struct walk_occ *o = &x->occ[i];
			uint32_t g = ext_drawn_find(x, tp, &x->frames[o->pos].key, o->h);
			uint32_t outer = o->k == 0 ? x->rec.nr - 1 : o->pos;
			uint32_t parent = NONE;
			uint64_t h1 = cs_hash_u64(g + 1), h2 = cs_hash_u64(~(uint64_t)g);
			int step = x->r->o.graph == CS_REPORT_GRAPH_CALLER ? -1 : 1;
			uint32_t j = step < 0 ? outer : 0, to = step < 0 ? 0 : outer;

			if (g == NONE)
				continue;
			for (;; j += step) {
				uint64_t f1, f2;

				ext_frame_hash(x, &x->frames[j].key, &f1, &f2);
				h1 = ext_mix(h1, f1);
				h2 = ext_mix(h2 ^ 0x5bd1e995, f2);
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

		ext_frame_hash(x, &n->fk, &hash[i], &h2);
		for (s = hash[i] & mask; map[s]; s = (s + 1) & mask)
			if (hash[map[s] - 1] == hash[i] &&
			    ext_frame_eq(&x->node[shown[map[s] - 1]].fk, &n->fk))
				break;
		if (!map[s])
			map[s] = (uint32_t)i + 1;
	}
	err = report_spill_reader_open(&rd, x->r, 1 << 20);
	while (!err && !(err = ext_read_rec(x, &rd))) {
		for (uint32_t j = 0; j < x->rec.nr; j++) {
			const struct report_spill_frame *f = &x->frames[j];
			uint64_t h1, h2;

			ext_frame_hash(x, &f->key, &h1, &h2);
			for (size_t s = h1 & mask; map[s]; s = (s + 1) & mask)
				if (hash[map[s] - 1] == h1 &&
				    ext_frame_eq(&x->node[shown[map[s] - 1]].fk, &f->key)) {
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
			    ext_frame_eq(&x->node[shown[map[s] - 1]].fk, &n->fk)) {
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
	uint32_t *root_nr = NULL;
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
	if (!x->gnode || !x->gchild || !x->groot || !x->root_off || !root_nr) {
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
	free(root_nr);
	return err;
}

int ext_graphs_find(struct ext *x)
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

void ext_graph_print(const struct ext *x, const struct ext_entry *e,
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
