/* flame.c - the call tree (interned frames, one node per distinct path)
 * and the flame graph page written from it. */
#include "outputs/flame.h"
#include "outputs/call_tree.h"
#include "outputs/json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/big_alloc.h"
#include "lib/util/hash.h"
#include "outputs/flame_template.inc"

#define NONE UINT32_MAX

struct fl_frame {
	uint32_t name, dso;		/* string ids; dso NONE if none */
	uint32_t kind;
};

/* An open-addressing set of ids (slot = id + 1, 0 = empty); what the ids
 * mean, and so how to compare keys, is up to the caller. */
struct fl_set {
	uint32_t *slots;
	size_t mask;			/* capacity - 1, a power of two */
	size_t used;
};

/* Its arrays and the sets' slots are big_alloc.h's: a flame graph of an
 * all-distinct profile holds millions of nodes. */
struct cs_flame {
	char *chars;			/* the string arena */
	size_t chars_len, chars_cap;
	uint32_t *str_off, *str_hash;
	size_t nr_strs, strs_cap;
	struct fl_set strs;

	struct fl_frame *frames;
	size_t nr_frames, frames_cap;
	struct fl_set frame_set;

	/* Node 0 is the root ("all"), node i > 0 the call tree's node
	 * i - 1: a path of (parent, frame) interned in call_tree.h */
	struct cs_tree *tree;
	uint32_t root_frame;
	uint64_t *value;		/* per node: samples on its path */
	uint64_t *base;			/* per node: a diff's baseline; NULL
					 * until cs_flame_add_base() */
	size_t values_cap;
};

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static int set_init(struct fl_set *s, size_t cap)
{
	s->slots = cs_big_calloc(cap, sizeof(*s->slots));
	if (!s->slots)
		return -ENOMEM;
	s->mask = cap - 1;
	s->used = 0;
	return 0;
}

/* Grows by rehashing with hash_of(ctx, id); keeps the load under 1/2. */
static int set_reserve(struct fl_set *s, uint32_t (*hash_of)(const struct cs_flame *, uint32_t),
		       const struct cs_flame *f)
{
	size_t cap = (s->mask + 1) * 2;
	uint32_t *slots;

	if ((s->used + 1) * 2 <= s->mask + 1)
		return 0;
	slots = cs_big_calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i <= s->mask; i++) {
		uint32_t id = s->slots[i];
		size_t j;

		if (!id)
			continue;
		for (j = hash_of(f, id - 1) & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = id;
	}
	cs_big_free(s->slots);
	s->slots = slots;
	s->mask = cap - 1;
	return 0;
}

/* ---- strings ---- */

static const char *str_at(const struct cs_flame *f, uint32_t id)
{
	return f->chars + f->str_off[id];
}

static uint32_t str_hash_of(const struct cs_flame *f, uint32_t id)
{
	return f->str_hash[id];
}

static long intern(struct cs_flame *f, const char *s)
{
	uint32_t h = hash_str(s);
	size_t len = strlen(s) + 1, j;

	for (j = h & f->strs.mask; f->strs.slots[j]; j = (j + 1) & f->strs.mask) {
		uint32_t id = f->strs.slots[j] - 1;

		if (f->str_hash[id] == h && !strcmp(str_at(f, id), s))
			return id;
	}
	if (f->nr_strs >= NONE - 1 || len > UINT32_MAX - f->chars_len)
		return -ENOMEM;
	if (set_reserve(&f->strs, str_hash_of, f))
		return -ENOMEM;
	if (cs_big_grow((void **)&f->chars, &f->chars_cap, f->chars_len + len, 1))
		return -ENOMEM;
	if (f->nr_strs + 1 > f->strs_cap) {
		size_t cap = f->strs_cap;

		if (cs_big_grow((void **)&f->str_off, &cap, f->nr_strs + 1,
			    sizeof(*f->str_off)) ||
		    cs_big_grow((void **)&f->str_hash, &f->strs_cap, f->nr_strs + 1,
			    sizeof(*f->str_hash)))
			return -ENOMEM;
	}
	memcpy(f->chars + f->chars_len, s, len);
	f->str_off[f->nr_strs] = (uint32_t)f->chars_len;
	f->str_hash[f->nr_strs] = h;
	f->chars_len += len;
	/* the table grew: find a free slot again */
	for (j = h & f->strs.mask; f->strs.slots[j]; j = (j + 1) & f->strs.mask)
		;
	f->strs.slots[j] = (uint32_t)f->nr_strs + 1;
	f->strs.used++;
	return (long)f->nr_strs++;
}

/* ---- frames ---- */

static uint32_t frame_hash(uint32_t name, uint32_t dso, uint32_t kind)
{
	return (uint32_t)cs_hash_u64(((uint64_t)name << 32 | dso) ^ ((uint64_t)kind << 61));
}

static uint32_t frame_hash_of(const struct cs_flame *f, uint32_t id)
{
	const struct fl_frame *fr = &f->frames[id];

	return frame_hash(fr->name, fr->dso, fr->kind);
}

long cs_flame_frame(struct cs_flame *f, const char *name, const char *dso,
		    enum cs_flame_kind kind)
{
	long nid = intern(f, name ? name : "[unknown]");
	long did = dso ? intern(f, dso) : (long)NONE;
	uint32_t h;
	size_t j;

	if (nid < 0 || did < 0)
		return -ENOMEM;
	h = frame_hash((uint32_t)nid, (uint32_t)did, kind);
	for (j = h & f->frame_set.mask; f->frame_set.slots[j];
	     j = (j + 1) & f->frame_set.mask) {
		const struct fl_frame *fr = &f->frames[f->frame_set.slots[j] - 1];

		if (fr->name == nid && fr->dso == did && fr->kind == kind)
			return f->frame_set.slots[j] - 1;
	}
	if (f->nr_frames >= NONE - 1 || set_reserve(&f->frame_set, frame_hash_of, f))
		return -ENOMEM;
	if (cs_big_grow((void **)&f->frames, &f->frames_cap, f->nr_frames + 1,
		    sizeof(*f->frames)))
		return -ENOMEM;
	f->frames[f->nr_frames] = (struct fl_frame){ (uint32_t)nid, (uint32_t)did, kind };
	for (j = h & f->frame_set.mask; f->frame_set.slots[j];
	     j = (j + 1) & f->frame_set.mask)
		;
	f->frame_set.slots[j] = (uint32_t)f->nr_frames + 1;
	f->frame_set.used++;
	return (long)f->nr_frames++;
}

const char *cs_flame_frame_name(const struct cs_flame *f, uint32_t id)
{
	return id < f->nr_frames ? str_at(f, f->frames[id].name) : NULL;
}

/* ---- nodes ---- */

static size_t nr_nodes(const struct cs_flame *f)
{
	return cs_tree_nr_nodes(f->tree) + 1;
}

/* The parent of node id > 0 */
static uint32_t node_parent(const struct cs_flame *f, uint32_t id)
{
	uint32_t p = cs_tree_parent(f->tree, id - 1);

	return p == CS_TREE_ROOT ? 0 : p + 1;
}

static uint32_t node_frame(const struct cs_flame *f, uint32_t id)
{
	return id ? cs_tree_frame(f->tree, id - 1) : f->root_frame;
}

/* Room in the per-node counters for every node; new ones zero */
static int values_reserve(struct cs_flame *f)
{
	size_t cap = f->values_cap, n = nr_nodes(f);

	if (cs_big_grow_zeroed((void **)&f->value, &cap, n, sizeof(*f->value)))
		return -ENOMEM;
	if (f->base && cs_big_grow_zeroed((void **)&f->base, &f->values_cap, n,
				      sizeof(*f->base)))
		return -ENOMEM;
	f->values_cap = cap;
	return 0;
}

/* Adds count to the nodes of the path frames[0, nr), root first: to
 * their samples, made where new; or to a diff's baseline, along the
 * nodes the tree has. */
static int add_path(struct cs_flame *f, const uint32_t *frames, size_t nr,
		    uint64_t count, bool base)
{
	uint64_t *to;
	uint32_t node = CS_TREE_ROOT;
	int err;

	for (size_t i = 0; i < nr; i++)
		if (frames[i] >= f->nr_frames)
			return -EINVAL;
	if (base && !f->base) {
		f->base = cs_big_calloc(f->values_cap, sizeof(*f->base));
		if (!f->base)
			return -ENOMEM;
	}
	to = base ? f->base : f->value;
	to[0] += count;
	for (size_t i = 0; i < nr; i++) {
		err = base ? cs_tree_find(f->tree, node, frames[i], &node) :
			     cs_tree_intern(f->tree, node, frames[i], &node);
		/* a path the new profile does not have: its weight shows as
		 * the shrinking of the paths it shares */
		if (err == -ENOENT)
			break;
		if (!err)
			err = values_reserve(f);
		if (err)
			return err;
		to = base ? f->base : f->value;
		to[node + 1] += count;
	}
	return 0;
}

int cs_flame_add(struct cs_flame *f, const uint32_t *frames, size_t nr,
		 uint64_t count)
{
	return add_path(f, frames, nr, count, false);
}

int cs_flame_add_base(struct cs_flame *f, const uint32_t *frames, size_t nr,
		      uint64_t count)
{
	return add_path(f, frames, nr, count, true);
}

uint64_t cs_flame_total(const struct cs_flame *f)
{
	return f->value[0];
}

size_t cs_flame_nr_nodes(const struct cs_flame *f)
{
	return nr_nodes(f);
}

int cs_flame_new(struct cs_flame **out)
{
	struct cs_flame *f = calloc(1, sizeof(*f));
	long root;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	if (set_init(&f->strs, 1024) || set_init(&f->frame_set, 1024) ||
	    cs_tree_new(&f->tree))
		goto nomem;
	root = cs_flame_frame(f, "all", NULL, CS_FLAME_OTHER);
	if (root < 0 || values_reserve(f))
		goto nomem;
	f->root_frame = (uint32_t)root;
	*out = f;
	return 0;
nomem:
	cs_flame_free(f);
	return -ENOMEM;
}

void cs_flame_free(struct cs_flame *f)
{
	if (!f)
		return;
	cs_big_free(f->chars);
	cs_big_free(f->str_off);
	cs_big_free(f->str_hash);
	cs_big_free(f->strs.slots);
	cs_big_free(f->frames);
	cs_big_free(f->frame_set.slots);
	cs_tree_free(f->tree);
	cs_big_free(f->value);
	cs_big_free(f->base);
	free(f);
}

/* ---- writing ---- */

static int cmp_frames(const void *a, const void *b, void *ctx)
{
	const struct cs_flame *f = ctx;
	const struct fl_frame *x = &f->frames[*(const uint32_t *)a];
	const struct fl_frame *y = &f->frames[*(const uint32_t *)b];
	int c = strcmp(str_at(f, x->name), str_at(f, y->name));

	if (c)
		return c;
	if (x->dso != y->dso) {
		if (x->dso == NONE || y->dso == NONE)
			return x->dso == NONE ? -1 : 1;
		c = strcmp(str_at(f, x->dso), str_at(f, y->dso));
		if (c)
			return c;
	}
	return (x->kind > y->kind) - (x->kind < y->kind);
}

/* rank[] orders the frames by name; children are sorted by their frame's
 * rank, a plain integer compare */
struct rank_ctx {
	const struct cs_flame *f;
	const uint32_t *rank;
};

static int cmp_by_rank(const void *a, const void *b, void *ctx)
{
	const struct rank_ctx *r = ctx;
	uint32_t x = r->rank[node_frame(r->f, *(const uint32_t *)a)];
	uint32_t y = r->rank[node_frame(r->f, *(const uint32_t *)b)];

	return (x > y) - (x < y);
}

/* Writes the nodes in preorder, children sorted by frame name. Children
 * lists are laid out once (CSR) and the walk uses an explicit stack: stacks
 * can be thousands of frames deep. */
static int write_nodes(const struct cs_flame *f, const struct cs_flame_meta *m,
		       bool base, FILE *out)
{
	uint32_t *order = NULL, *rank = NULL, *kids = NULL, *first = NULL, *stack = NULL;
	size_t n = nr_nodes(f), sp = 0;
	uint32_t root = 0;
	bool sep = false;
	int err = -ENOMEM;

	order = cs_big_alloc(f->nr_frames * sizeof(*order));
	rank = cs_big_alloc(f->nr_frames * sizeof(*rank));
	first = cs_big_calloc(n + 1, sizeof(*first));
	kids = cs_big_alloc(n * sizeof(*kids));
	stack = cs_big_alloc(n * sizeof(*stack));
	if (!order || !rank || !first || !kids || !stack)
		goto out;
	for (uint32_t i = 0; i < f->nr_frames; i++)
		order[i] = i;
	qsort_r(order, f->nr_frames, sizeof(*order), cmp_frames, (void *)f);
	for (uint32_t i = 0; i < f->nr_frames; i++)
		rank[order[i]] = i;

	for (size_t i = 1; i < n; i++)
		first[node_parent(f, (uint32_t)i) + 1]++;
	for (size_t i = 1; i <= n; i++)
		first[i] += first[i - 1];
	/* first[p] .. first[p + 1] will hold p's children */
	{
		uint32_t *fill = stack;	/* borrowed as fill cursors */

		memcpy(fill, first, n * sizeof(*fill));
		for (size_t i = 1; i < n; i++)
			kids[fill[node_parent(f, (uint32_t)i)]++] = (uint32_t)i;
	}
	for (size_t p = 0; p < n; p++)
		if (first[p + 1] - first[p] > 1)
			qsort_r(kids + first[p], first[p + 1] - first[p], sizeof(*kids),
				cmp_by_rank, &(struct rank_ctx){ f, rank });

	if (m && m->fold_single_top && first[1] - first[0] == 1)
		root = kids[first[0]];

	stack[sp++] = root;
	while (sp) {
		uint32_t id = stack[--sp];

		if (sep)
			putc(',', out);
		sep = true;
		if (base) {
			/* a diff's baselines, in the same order as the nodes */
			cs_json_u64(out, f->base ? f->base[id == root ? 0 : id] : 0);
		} else {
			/* a folded top keeps the root's frame ("all") */
			cs_json_u64(out, node_frame(f, id == root ? 0 : id));
			putc(',', out);
			cs_json_u64(out, f->value[id]);
			putc(',', out);
			cs_json_u64(out, first[id + 1] - first[id]);
		}
		for (uint32_t k = first[id + 1]; k > first[id]; k--)
			stack[sp++] = kids[k - 1];
	}
	err = 0;
out:
	cs_big_free(order);
	cs_big_free(rank);
	cs_big_free(first);
	cs_big_free(kids);
	cs_big_free(stack);
	return err;
}

static void put_meta_str(FILE *out, const char *key, const char *v, bool *sep)
{
	if (!v)
		return;
	if (*sep)
		putc(',', out);
	*sep = true;
	fprintf(out, "\"%s\":", key);
	cs_json_str(out, v);
}

static void put_meta_u64(FILE *out, const char *key, uint64_t v, bool *sep)
{
	if (*sep)
		putc(',', out);
	*sep = true;
	fprintf(out, "\"%s\":", key);
	cs_json_u64(out, v);
}

int cs_flame_write_json(const struct cs_flame *f, const struct cs_flame_meta *m,
			FILE *out)
{
	bool sep = false;
	int err;

	fputs("{\"v\":1,\"meta\":{", out);
	if (m) {
		put_meta_str(out, "title", m->title, &sep);
		put_meta_str(out, "events", m->events, &sep);
		put_meta_str(out, "host", m->host, &sep);
		put_meta_str(out, "os_release", m->os_release, &sep);
		put_meta_str(out, "cmdline", m->cmdline, &sep);
	}
	put_meta_u64(out, "samples", cs_flame_total(f), &sep);
	if (f->base)
		put_meta_u64(out, "base_samples", f->base[0], &sep);
	if (m && m->base_title)
		put_meta_str(out, "base_title", m->base_title, &sep);
	if (m && m->unit)
		put_meta_str(out, "unit", m->unit, &sep);
	if (m && m->deferred) {
		fputs(",\"deferred\":true", out);
		put_meta_u64(out, "stitched", m->stitched, &sep);
		put_meta_u64(out, "stitched_late", m->stitched_late, &sep);
		put_meta_u64(out, "kernel_only", m->kernel_only, &sep);
	}
	fputs("},\n\"strings\":[", out);
	for (size_t i = 0; i < f->nr_strs; i++) {
		if (i)
			putc(',', out);
		cs_json_str(out, str_at(f, (uint32_t)i));
	}
	fputs("],\n\"frames\":[", out);
	for (size_t i = 0; i < f->nr_frames; i++) {
		const struct fl_frame *fr = &f->frames[i];

		if (i)
			putc(',', out);
		cs_json_u64(out, fr->name);
		if (fr->dso == NONE)
			fputs(",-1,", out);
		else {
			putc(',', out);
			cs_json_u64(out, fr->dso);
			putc(',', out);
		}
		cs_json_u64(out, fr->kind);
	}
	fputs("],\n\"nodes\":[", out);
	err = write_nodes(f, m, false, out);
	if (err)
		return err;
	if (f->base) {
		fputs("],\n\"base\":[", out);
		err = write_nodes(f, m, true, out);
		if (err)
			return err;
	}
	fputs("]}", out);
	return ferror(out) ? -EIO : 0;
}

static void put_html_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: putc(*s, out);
		}
	}
}

/* The template is the page with two kinds of marker, @@TITLE@@ and
 * @@DATA@@ (flame_template.sh guarantees the CSS and JS have no "@@"). */
int cs_flame_write_html(const struct cs_flame *f, const struct cs_flame_meta *m,
			FILE *out)
{
	const char *p = flame_template, *at;
	const char *title = m && m->title ? m->title : "Flame graph";

	while ((at = strstr(p, "@@"))) {
		fwrite(p, 1, (size_t)(at - p), out);
		if (!strncmp(at, "@@TITLE@@", 9)) {
			put_html_text(out, title);
			p = at + 9;
		} else if (!strncmp(at, "@@DATA@@", 8)) {
			int err = cs_flame_write_json(f, m, out);

			if (err)
				return err;
			p = at + 8;
		} else {
			return -EINVAL;	/* a template we did not write */
		}
	}
	fputs(p, out);
	return ferror(out) ? -EIO : 0;
}
