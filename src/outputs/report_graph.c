/* report_graph.c - the call graph printed under a report entry (see
 * report_int.h). */
#include <errno.h>
#include <stdlib.h>

#include "lib/util/grow.h"
#include "outputs/call_tree.h"
#include "outputs/report_int.h"

/* A tree of the stacks that reach one entry; node ids come from a table
 * keyed by (parent, frame), whose counters hold each node's cumulative
 * period and samples. */
struct graph {
	const struct cs_report *r;
	struct cs_tree *nodes;
	uint64_t *count, *period;	/* per node */
	size_t cap;
	uint32_t *frames;		/* a stack's, being added */
	uint32_t *child_off, *child_nr, *child;	/* children of node i */
	uint32_t *root_child, nr_root;
	uint64_t total;			/* the event's period: percentages */
	double min_percent;		/* branches below are hidden */
};

static void node_info(const struct graph *g, uint32_t id, uint32_t *parent,
		      uint32_t *frame, uint64_t *period)
{
	*parent = cs_tree_parent(g->nodes, id);
	*frame = cs_tree_frame(g->nodes, id);
	*period = g->period[id];
}

static uint64_t node_period(const struct graph *g, uint32_t id)
{
	return g->period[id];
}

/* Adds a stack's count and period to node id, its cumulative ones. */
static int node_add(struct graph *g, uint32_t id, const struct cs_agg_stack *st)
{
	size_t cap = g->cap;

	if (cs_grow_zeroed((void **)&g->count, &cap, (size_t)id + 1,
			   sizeof(*g->count)) ||
	    cs_grow_zeroed((void **)&g->period, &g->cap, (size_t)id + 1,
			   sizeof(*g->period)))
		return -ENOMEM;
	g->count[id] += st->count;
	g->period[id] += st->period;
	return 0;
}

/* Siblings of equal weight: perf keeps them in the descending order of its
 * callchain keys (its rbtree of a node's children puts a greater key to
 * the left), the dso and then the symbol's address. Within a dso that is
 * the symbols' order, highest address first; between dsos it is the order
 * of perf's dso objects in its memory, where the kernel's, made first,
 * mostly comes last: user before kernel, then the addresses. */
static int node_tie(const struct graph *g, uint32_t a, uint32_t b)
{
	uint32_t pa, pb, fa, fb;
	uint64_t x;
	const struct cs_agg_key *ka, *kb;

	node_info(g, a, &pa, &fa, &x);
	node_info(g, b, &pb, &fb, &x);
	ka = cs_agg_frame_key(g->r->stacks, fa);
	kb = cs_agg_frame_key(g->r->stacks, fb);
	if ((ka->flags & F_KERNEL) != (kb->flags & F_KERNEL))
		return ka->flags & F_KERNEL ? 1 : -1;
	if (g->r->sym_start[fa] != g->r->sym_start[fb])
		return g->r->sym_start[fa] > g->r->sym_start[fb] ? -1 : 1;
	return a < b ? -1 : a > b;
}

static int cmp_node(const void *pa, const void *pb, void *ctx)
{
	const struct graph *g = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	uint64_t x = node_period(g, a), y = node_period(g, b);

	if (x != y)
		return x > y ? -1 : 1;
	return node_tie(g, a, b);
}

/* Which frames of a stack an entry's call graph shows, as perf does: the
 * samples the entry is innermost in bring their whole stack; the samples
 * it is a caller in (Children) bring the part from the entry to the
 * innermost frame. Caller order runs outermost first, callee the reverse.
 * Frames are stored innermost first, so index 0 is the innermost. */
static void chain_span(uint32_t nr, const struct occurrence *oc,
		       enum cs_report_graph order, uint32_t *from, uint32_t *to)
{
	uint32_t outer = oc->self ? nr - 1 : oc->pos;

	if (order == CS_REPORT_GRAPH_CALLER) {
		*from = outer;
		*to = 0;
	} else {
		*from = 0;
		*to = outer;
	}
}

static int graph_build(struct graph *g, const struct view *v,
		       const struct entry *e)
{
	const struct cs_report *r = v->r;
	struct cs_agg_stack st;
	size_t nr;
	int err = cs_tree_new(&g->nodes);

	g->frames = malloc((cs_agg_max_depth(r->stacks) + 1) * sizeof(*g->frames));
	if (!g->frames)
		err = -ENOMEM;
	size_t id = (size_t)(e - v->e);

	for (size_t i = v->occ_off[id]; !err && i < v->occ_off[id + 1]; i++) {
		const struct occurrence *oc = &v->occ[i];
		uint32_t parent = CS_TREE_ROOT;
		uint32_t from, to;
		int step;

		cs_agg_stack(r->stacks, oc->stack, g->frames, &st);
		chain_span(st.nr, oc, r->o.graph, &from, &to);
		step = from > to ? -1 : 1;
		for (uint32_t j = from;; j += step) {
			err = cs_tree_intern(g->nodes, parent, st.frames[j], &parent);
			if (!err)
				err = node_add(g, parent, &st);
			if (err || j == to)
				break;
		}
	}
	if (err)
		return err;
	nr = cs_tree_nr_nodes(g->nodes);
	g->child_off = calloc(nr + 1, sizeof(uint32_t));
	g->child_nr = calloc(nr + 1, sizeof(uint32_t));
	g->child = calloc(nr + 1, sizeof(uint32_t));
	g->root_child = calloc(nr + 1, sizeof(uint32_t));
	if (!g->child_off || !g->child_nr || !g->child || !g->root_child)
		return -ENOMEM;
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t p, f;
		uint64_t per;

		node_info(g, i, &p, &f, &per);
		if (p == CS_TREE_ROOT)
			g->root_child[g->nr_root++] = i;
		else
			g->child_nr[p]++;
	}
	for (uint32_t i = 0, off = 0; i < nr; i++) {
		g->child_off[i] = off;
		off += g->child_nr[i];
		g->child_nr[i] = 0;
	}
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t p, f;
		uint64_t per;

		node_info(g, i, &p, &f, &per);
		if (p != CS_TREE_ROOT)
			g->child[g->child_off[p] + g->child_nr[p]++] = i;
	}
	for (uint32_t i = 0; i < nr; i++)
		qsort_r(g->child + g->child_off[i], g->child_nr[i],
			sizeof(uint32_t), cmp_node, g);
	qsort_r(g->root_child, g->nr_root, sizeof(uint32_t), cmp_node, g);
	return 0;
}

static void graph_free(struct graph *g)
{
	cs_tree_free(g->nodes);
	free(g->count);
	free(g->period);
	free(g->frames);
	free(g->child_off);
	free(g->child_nr);
	free(g->child);
	free(g->root_child);
}

/* ---- drawing ------------------------------------------------------------- */

static uint64_t gnode_period(const struct report_graph *g, uint32_t id)
{
	return g->node[id].period;
}

/* The children of a node that are drawn: those above the threshold. */
static uint32_t shown_children(const struct report_graph *g, const uint32_t *c,
			       uint32_t n)
{
	uint32_t k = 0;

	/* sorted by period: the shown ones come first */
	while (k < n && report_pct(gnode_period(g, c[k]), g->total) >= g->min_percent)
		k++;
	return k;
}

/* A run of nodes drawn as one block: it goes on while a node has exactly
 * one child and no stack ends in it (perf's callchain nodes). A child of
 * the node's own count has all of its samples, so it is the only child
 * and it weighs the same: that is all a graph holding only the nodes
 * above the threshold can tell, and all it needs to. Returns the last
 * node of the run. */
static uint32_t run_end(const struct report_graph *g, uint32_t n)
{
	for (;;) {
		const struct report_gnode *x = &g->node[n];

		if (!x->child_nr || g->node[g->child[x->child_off]].count != x->count)
			return n;
		n = g->child[x->child_off];
	}
}

static uint32_t run_next(const struct report_graph *g, uint32_t n)
{
	return g->child[g->node[n].child_off];
}

static void margin(FILE *out, int left)
{
	fprintf(out, "%*s", left, "");
}

/* Which levels still have siblings to come, and so draw a '|'. Levels past
 * 63 never do: a graph that deep is not read by its pipes. */
static bool level_open(uint64_t mask, int i)
{
	return i < 64 && (mask & (1ULL << i));
}

static uint64_t level_bit(int i)
{
	return i < 64 ? 1ULL << i : 0;
}

static void graph_line(FILE *out, int left, int depth, uint64_t mask)
{
	margin(out, left);
	for (int i = 0; i < depth; i++)
		fputs(level_open(mask, i) ? "|          " : "           ", out);
	fputc('\n', out);
}

static void graph_children(const struct report_graph *g, FILE *out,
			   const uint32_t *c, uint32_t nr, int depth,
			   uint64_t mask, int left)
{
	uint32_t shown = shown_children(g, c, nr);
	char text[1024];

	for (uint32_t k = 0; k < shown; k++) {
		uint64_t new_mask = mask;
		uint32_t n = c[k], last = run_end(g, n);
		bool first = true;

		if (k + 1 == shown)
			new_mask &= ~level_bit(depth - 1);
		graph_line(out, left, depth, mask);
		for (;;) {
			const struct report_gnode *x = &g->node[n];

			margin(out, left);
			for (int i = 0; i < depth; i++) {
				fputc(level_open(new_mask, i) ? '|' : ' ', out);
				if (first && i == depth - 1)
					fprintf(out, "--%.2f%%--", report_pct(x->period, g->total));
				else
					fputs("          ", out);
			}
			fprintf(out, "%s\n", report_frame_sym_text(x->key, text,
								    sizeof(text)));
			first = false;
			if (n == last)
				break;
			n = run_next(g, n);
		}
		graph_children(g, out, g->child + g->node[last].child_off,
			       g->node[last].child_nr, depth + 1,
			       new_mask | level_bit(depth), left);
	}
}

void report_graph_draw(const struct report_graph *g, uint64_t entry_period,
		       FILE *out)
{
	int left = 12;
	const uint32_t *roots = g->root;
	uint32_t nr_roots = shown_children(g, g->root, g->nr_root);
	char text[1024];

	if (!nr_roots)
		return;
	/* one root holding the whole entry: its run is drawn without a
	 * percentage, after "---", and the branches follow */
	if (nr_roots == 1 && g->one_root &&
	    gnode_period(g, roots[0]) == entry_period) {
		uint32_t n = roots[0], last = run_end(g, n);

		margin(out, left);
		fputs("|\n", out);
		for (bool first = true;; first = false) {
			margin(out, left);
			fprintf(out, "%s%s\n", first ? "---" : "   ",
				report_frame_sym_text(g->node[n].key, text,
						      sizeof(text)));
			if (n == last)
				break;
			n = run_next(g, n);
		}
		left += 3;
		graph_children(g, out, g->child + g->node[last].child_off,
			       g->node[last].child_nr, 1, 1, left);
	} else {
		graph_children(g, out, roots, g->nr_root, 1, 1, left);
	}
	fputc('\n', out);
}

int report_graph_print(const struct view *v, const struct entry *e,
		       uint64_t entry_period, FILE *out)
{
	struct graph g = { .r = v->r, .total = v->total_period,
			   .min_percent = v->r->o.graph_min_percent };
	struct report_gnode *node = NULL;
	size_t nr;
	int err;

	err = graph_build(&g, v, e);
	nr = g.nodes ? cs_tree_nr_nodes(g.nodes) : 0;
	if (!err && !(node = malloc((nr ? nr : 1) * sizeof(*node))))
		err = -ENOMEM;
	if (!err) {
		struct report_graph rg = {
			.node = node, .child = g.child, .root = g.root_child,
			.nr_root = g.nr_root, .one_root = g.nr_root == 1,
			.total = g.total, .min_percent = g.min_percent,
		};

		for (uint32_t i = 0; i < nr; i++)
			node[i] = (struct report_gnode){
				.key = cs_agg_frame_key(g.r->stacks,
							cs_tree_frame(g.nodes, i)),
				.period = g.period[i], .count = g.count[i],
				.child_off = g.child_off[i], .child_nr = g.child_nr[i],
			};
		report_graph_draw(&rg, entry_period, out);
	}
	free(node);
	graph_free(&g);
	return err;
}
