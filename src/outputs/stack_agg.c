/* stack_agg.c - interned frames and stacks (see stack_agg.h). */
#include "outputs/stack_agg.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/big_alloc.h"
#include "lib/util/grow.h"
#include "lib/util/handoff.h"
#include "lib/util/hash.h"
#include "outputs/call_tree.h"

struct agg_frame {
	struct cs_agg_key key;
	uint64_t hash;
};

/* A stack is the path from its leaf up to its tag's node in a->tree */
struct agg_stack {
	uint32_t leaf;
	uint32_t nr;		/* frames, the tag's node not counted */
	uint64_t count;
	uint64_t period;
};

#define NO_STACK UINT32_MAX

/* Open addressing, linear probing; slots hold index + 1 and hash bits
 * (cs_slot_*, lib/util/hash.h). The table is kept at most half full so
 * probes stay short. */
struct agg_index {
	uint32_t *slots;
	size_t mask;		/* capacity - 1; capacity is a power of two */
	size_t used;
	uint32_t hash_bits;
};

#define STR_HASHES 4096

struct str_hash {
	const char *s;
	uint64_t h;
};

struct cs_agg {
	struct str_hash *str_hashes;	/* STR_HASHES, on first use */
	struct agg_frame *frames;
	size_t nr_frames, cap_frames;
	/* frame locations, only for tables given any: most are not, and a
	 * location is twice the size of the rest of a frame */
	struct cs_location *locs;
	size_t cap_locs;
	uint8_t *owned;		/* per frame: key strings are our copies;
				 * NULL until a key is copied */
	size_t cap_owned;
	struct agg_index frame_index;

	struct cs_tree *tree;	/* the stacks' frames */
	uint32_t *node_stack;	/* per tree node: the stack that ends there,
				 * or NO_STACK */
	size_t cap_node_stack;
	/* the last stack added (stack_leaf()), its path from the top: the
	 * frames (the tag first) and their nodes */
	uint32_t *path_frame, *path_node;
	size_t path_nr, cap_path;
	struct agg_stack *stacks;
	size_t nr_stacks, cap_stacks;
	uint32_t max_depth;

	uint64_t total_count, total_period;
};

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	if (!s)
		return 0x51ed27;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return mix(h, 0xff);
}

/* A string's hash, remembered by its address when the table does not copy
 * it: such strings outlive the table and never change, and a profile
 * names the same few thousand symbols millions of times. */
static uint64_t hash_str_at(struct cs_agg *a, const char *s, bool stable)
{
	struct str_hash *c;

	if (!s || !stable)
		return hash_str(s);
	if (!a->str_hashes) {
		a->str_hashes = calloc(STR_HASHES, sizeof(*a->str_hashes));
		if (!a->str_hashes)
			return hash_str(s);
	}
	c = &a->str_hashes[((uintptr_t)s >> 3 ^ (uintptr_t)s >> 15) &
			   (STR_HASHES - 1)];
	if (c->s != s) {
		c->s = s;
		c->h = hash_str(s);
	}
	return c->h;
}

static uint64_t hash_key(struct cs_agg *a, const struct cs_agg_key *k,
			 bool stable)
{
	uint64_t h = mix(hash_str_at(a, k->sym, stable), hash_str_at(a, k->dso, stable));

	h = mix(h, k->addr);
	return mix(h, k->flags);
}

static bool str_eq(const char *a, const char *b)
{
	if (a == b)
		return true;
	return a && b && !strcmp(a, b);
}

static bool key_eq(const struct cs_agg_key *a, const struct cs_agg_key *b)
{
	return a->addr == b->addr && a->flags == b->flags &&
	       str_eq(a->sym, b->sym) && str_eq(a->dso, b->dso);
}

#define INDEX_AHEAD 16

/* Doubles the index when it would pass half full; hashes come from
 * the entries, so nothing is rehashed from scratch. */
static int index_reserve(struct agg_index *ix, const uint64_t *hashes,
			 size_t stride, size_t nr)
{
	size_t cap = ix->slots ? ix->mask + 1 : 0, ncap;
	uint32_t *slots, hash_bits;

	if ((ix->used + 1) * 2 <= cap)
		return 0;
	if (nr >= UINT32_MAX / 2)
		return -ENOMEM;
	/* after cs_agg_trim(): big enough for every entry at once */
	for (ncap = cap ? cap * 2 : 256; ncap < (nr + 1) * 2;)
		ncap *= 2;
	slots = cs_big_calloc(ncap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	hash_bits = cs_slot_hash_bits(ncap);
	for (size_t i = 0; i < nr; i++) {
		uint64_t h = *(const uint64_t *)((const char *)hashes + i * stride);
		size_t s = h & (ncap - 1);

		/* the hashes are read in order, the slots at random: the slot
		 * of the entry INDEX_AHEAD on is asked for early */
		if (i + INDEX_AHEAD < nr)
			__builtin_prefetch(&slots[*(const uint64_t *)((const char *)hashes +
				(i + INDEX_AHEAD) * stride) & (ncap - 1)]);
		while (slots[s])
			s = (s + 1) & (ncap - 1);
		slots[s] = cs_slot_make(hash_bits, h, i);
	}
	cs_big_free(ix->slots);
	ix->slots = slots;
	ix->mask = ncap - 1;
	ix->hash_bits = hash_bits;
	return 0;
}

int cs_agg_new(struct cs_agg **out)
{
	struct cs_agg *a = calloc(1, sizeof(*a));

	*out = NULL;
	if (!a || cs_tree_new(&a->tree)) {
		free(a);
		return -ENOMEM;
	}
	*out = a;
	return 0;
}

void cs_agg_free(struct cs_agg *a)
{
	if (!a)
		return;
	for (size_t i = 0; a->owned && i < a->nr_frames; i++)
		if (a->owned[i]) {
			free((char *)a->frames[i].key.sym);
			free((char *)a->frames[i].key.dso);
		}
	cs_big_free(a->frames);
	free(a->str_hashes);
	cs_big_free(a->locs);
	cs_big_free(a->owned);
	cs_big_free(a->frame_index.slots);
	cs_tree_free(a->tree);
	cs_big_free(a->node_stack);
	free(a->path_frame);
	free(a->path_node);
	cs_big_free(a->stacks);
	free(a);
}

/* Interns key, whose hash_key() is h */
static int frame_intern(struct cs_agg *a, const struct cs_agg_key *key,
			uint64_t h, const struct cs_location *loc, bool copy,
			uint32_t *id)
{
	struct agg_index *ix = &a->frame_index;
	struct agg_frame *f;
	size_t s;
	int err;

	/* after cs_agg_trim(), the index is built again */
	if (!ix->slots && a->nr_frames &&
	    (err = index_reserve(ix, &a->frames[0].hash, sizeof(*a->frames),
				 a->nr_frames)))
		return err;
	if (ix->slots) {
		for (s = h & ix->mask; ix->slots[s]; s = (s + 1) & ix->mask) {
			if (!cs_slot_may_be(ix->hash_bits, ix->slots[s], h))
				continue;
			f = &a->frames[cs_slot_index(ix->hash_bits, ix->slots[s])];
			if (f->hash == h && key_eq(&f->key, key)) {
				*id = cs_slot_index(ix->hash_bits, ix->slots[s]);
				return 0;
			}
		}
	}
	err = cs_big_grow((void **)&a->frames, &a->cap_frames, a->nr_frames + 1,
		      sizeof(*a->frames));
	if (!err)
		err = index_reserve(ix, &a->frames[0].hash, sizeof(*a->frames),
				    a->nr_frames);
	if (err)
		return err;
	if (loc || a->locs) {
		err = cs_big_grow_zeroed((void **)&a->locs, &a->cap_locs,
				     a->nr_frames + 1, sizeof(*a->locs));
		if (err)
			return err;
		if (loc)
			a->locs[a->nr_frames] = *loc;
	}
	if (copy || a->owned) {
		err = cs_big_grow_zeroed((void **)&a->owned, &a->cap_owned,
				     a->nr_frames + 1, sizeof(*a->owned));
		if (err)
			return err;
		a->owned[a->nr_frames] = copy;
	}
	f = &a->frames[a->nr_frames];
	f->key = *key;
	f->hash = h;
	if (copy) {
		f->key.sym = key->sym ? strdup(key->sym) : NULL;
		f->key.dso = key->dso ? strdup(key->dso) : NULL;
		if ((key->sym && !f->key.sym) || (key->dso && !f->key.dso)) {
			free((char *)f->key.sym);
			free((char *)f->key.dso);
			return -ENOMEM;
		}
	}
	for (s = h & ix->mask; ix->slots[s]; s = (s + 1) & ix->mask)
		;
	ix->slots[s] = cs_slot_make(ix->hash_bits, h, a->nr_frames);
	ix->used++;
	*id = (uint32_t)a->nr_frames++;
	return 0;
}

int cs_agg_frame(struct cs_agg *a, const struct cs_agg_key *key,
		 const struct cs_location *loc, uint32_t *id)
{
	return frame_intern(a, key, hash_key(a, key, true), loc, false, id);
}

/* A batch of cs_agg_frames(): its keys' hashes */
#define FRAMES_BATCH 64

int cs_agg_frames(struct cs_agg *a, const struct cs_agg_key *keys, size_t nr,
		  uint32_t *ids)
{
	const struct agg_index *ix = &a->frame_index;
	uint64_t h[FRAMES_BATCH];
	int err = 0;

	for (size_t at = 0; at < nr && !err; at += FRAMES_BATCH) {
		size_t n = nr - at < FRAMES_BATCH ? nr - at : FRAMES_BATCH;

		/* the keys' slots asked for at once, then the frames the
		 * slots name: their cache misses overlap */
		for (size_t i = 0; i < n; i++) {
			h[i] = hash_key(a, &keys[at + i], true);
			if (ix->slots)
				__builtin_prefetch(&ix->slots[h[i] & ix->mask]);
		}
		for (size_t i = 0; ix->slots && i < n; i++) {
			uint32_t slot = ix->slots[h[i] & ix->mask];

			if (slot && cs_slot_may_be(ix->hash_bits, slot, h[i]))
				__builtin_prefetch(&a->frames[cs_slot_index(ix->hash_bits,
									    slot)]);
		}
		for (size_t i = 0; i < n && !err; i++)
			err = frame_intern(a, &keys[at + i], h[i], NULL, false,
					   &ids[at + i]);
	}
	return err;
}

int cs_agg_frame_copy(struct cs_agg *a, const struct cs_agg_key *key,
		      uint32_t *id)
{
	return frame_intern(a, key, hash_key(a, key, false), NULL, true, id);
}

size_t cs_agg_nr_frames(const struct cs_agg *a)
{
	return a->nr_frames;
}

const struct cs_agg_key *cs_agg_frame_key(const struct cs_agg *a, uint32_t id)
{
	return &a->frames[id].key;
}

const struct cs_location *cs_agg_frame_loc(const struct cs_agg *a, uint32_t id)
{
	static const struct cs_location none;

	return a->locs ? &a->locs[id] : &none;
}

/* A stack's path runs from a node for its tag down to its leaf, the node
 * of its first frame: the last frame is the outermost, and stacks share
 * nodes from there. Step k of the path is the tag's node for k = 0, else
 * frame nr - k's. */
static uint32_t path_frame(uint32_t tag, const uint32_t *frames, uint32_t nr,
			   size_t k)
{
	return k ? frames[nr - k] : tag;
}

/* The stack's leaf, its nodes made where new. The steps it shares with
 * the last stack added (a thread's next sample mostly shares its outer
 * frames) are taken from a->path_node without a probe. Returns 0 or -ENOMEM. */
static int stack_leaf(struct cs_agg *a, uint32_t tag, const uint32_t *frames,
		      uint32_t nr, uint32_t *leaf)
{
	size_t k = 0, cap = a->cap_path;
	int err = cs_grow((void **)&a->path_frame, &cap, (size_t)nr + 1,
			  sizeof(*a->path_frame));

	if (!err)
		err = cs_grow((void **)&a->path_node, &a->cap_path,
			      (size_t)nr + 1, sizeof(*a->path_node));
	if (err)
		return err;
	while (k < a->path_nr && k <= nr &&
	       a->path_frame[k] == path_frame(tag, frames, nr, k))
		k++;
	a->path_nr = k;
	for (size_t j = k; j <= nr; j++)
		a->path_frame[j] = path_frame(tag, frames, nr, j);
	err = cs_tree_intern_path(a->tree, k ? a->path_node[k - 1] : CS_TREE_ROOT,
				  a->path_frame + k, nr + 1 - k, a->path_node + k);
	if (err)
		return err;
	a->path_nr = (size_t)nr + 1;
	*leaf = a->path_node[nr];
	return 0;
}

/* node_stack covers every node of the tree; after cs_agg_trim() it is
 * filled again from the stacks. Returns 0 or -ENOMEM. */
static int node_stack_reserve(struct cs_agg *a)
{
	size_t had = a->cap_node_stack;
	bool trimmed = !a->node_stack && a->nr_stacks;
	int err = cs_big_grow((void **)&a->node_stack, &a->cap_node_stack,
			  cs_tree_nr_nodes(a->tree), sizeof(*a->node_stack));

	if (err)
		return err;
	if (a->cap_node_stack > had)
		memset(a->node_stack + had, 0xff,
		       (a->cap_node_stack - had) * sizeof(*a->node_stack));
	for (size_t i = 0; trimmed && i < a->nr_stacks; i++)
		a->node_stack[a->stacks[i].leaf] = (uint32_t)i;
	return 0;
}

int cs_agg_find(struct cs_agg *a, uint32_t tag, const uint32_t *frames,
		uint32_t nr, uint32_t *id)
{
	uint32_t leaf = CS_TREE_ROOT;
	int err;

	for (size_t k = 0; k <= nr; k++) {
		err = cs_tree_find(a->tree, leaf, path_frame(tag, frames, nr, k), &leaf);
		if (err)
			return err;
	}
	err = node_stack_reserve(a);
	if (err)
		return err;
	if (a->node_stack[leaf] == NO_STACK)
		return -ENOENT;
	*id = a->node_stack[leaf];
	return 0;
}

int cs_agg_add(struct cs_agg *a, uint32_t tag, const uint32_t *frames,
	       uint32_t nr, uint64_t count, uint64_t period, uint32_t *id)
{
	struct agg_stack *st;
	uint32_t leaf;
	int err = stack_leaf(a, tag, frames, nr, &leaf);

	if (!err)
		err = node_stack_reserve(a);
	if (err)
		return err;
	if (a->node_stack[leaf] == NO_STACK) {
		if (a->nr_stacks >= NO_STACK)
			return -ENOMEM;
		err = cs_big_grow((void **)&a->stacks, &a->cap_stacks, a->nr_stacks + 1,
			      sizeof(*a->stacks));
		if (err)
			return err;
		a->stacks[a->nr_stacks] = (struct agg_stack){ .leaf = leaf, .nr = nr };
		a->node_stack[leaf] = (uint32_t)a->nr_stacks++;
		if (nr > a->max_depth)
			a->max_depth = nr;
	}
	st = &a->stacks[a->node_stack[leaf]];
	st->count += count;
	st->period += period;
	a->total_count += count;
	a->total_period += period;
	if (id)
		*id = a->node_stack[leaf];
	return 0;
}

void cs_agg_trim(struct cs_agg *a)
{
	cs_big_free(a->frame_index.slots);
	a->frame_index.slots = NULL;
	a->frame_index.mask = 0;
	cs_big_free(a->node_stack);
	a->node_stack = NULL;
	a->cap_node_stack = 0;
	free(a->path_frame);
	free(a->path_node);
	a->path_frame = a->path_node = NULL;
	a->path_nr = a->cap_path = 0;
	cs_tree_trim(a->tree);
}

size_t cs_agg_memory(const struct cs_agg *a)
{
	/* the elements in use: an array's room past them is not touched
	 * (pages never written are not resident) */
	return sizeof(*a) + (a->str_hashes ? STR_HASHES * sizeof(*a->str_hashes) : 0) +
	       a->nr_frames * sizeof(*a->frames) +
	       (a->locs ? a->nr_frames * sizeof(*a->locs) : 0) +
	       (a->owned ? a->nr_frames : 0) + (a->frame_index.slots ?
			       (a->frame_index.mask + 1) * sizeof(uint32_t) : 0) +
	       (a->tree ? cs_tree_memory(a->tree) : 0) +
	       a->cap_node_stack * sizeof(*a->node_stack) +
	       a->cap_path * 2 * sizeof(uint32_t) +
	       a->nr_stacks * sizeof(*a->stacks);
}

size_t cs_agg_step(const struct cs_agg *a, uint32_t nr)
{
	const struct agg_index *ix = &a->frame_index;
	size_t cap = ix->slots ? ix->mask + 1 : 0, step = 0;
	size_t nodes = a->tree ? cs_tree_nr_nodes(a->tree) : 0;

	/* as index_reserve() doubles it, one frame at a time */
	for (size_t ncap = cap; (ix->used + nr) * 2 > ncap;) {
		ncap = ncap ? ncap * 2 : 256;
		step += ncap * sizeof(*ix->slots);
	}
	/* every frame a new node, and the tag's */
	if (a->tree)
		step += cs_tree_index_step(a->tree, (size_t)nr + 1);
	/* node_stack doubles, zeroed */
	if (nodes + nr + 1 > a->cap_node_stack) {
		size_t ncap = a->cap_node_stack ? a->cap_node_stack : 64;

		while (ncap < nodes + nr + 1)
			ncap *= 2;
		step += ncap * sizeof(*a->node_stack);
	}
	return step;
}

size_t cs_agg_nr_stacks(const struct cs_agg *a)
{
	return a->nr_stacks;
}

size_t cs_agg_max_depth(const struct cs_agg *a)
{
	return a->max_depth;
}

void cs_agg_stack(const struct cs_agg *a, uint32_t id, uint32_t *buf,
		  struct cs_agg_stack *out)
{
	const struct agg_stack *st = &a->stacks[id];
	uint32_t node = st->leaf;

	for (uint32_t i = 0; i < st->nr; i++) {
		buf[i] = cs_tree_frame(a->tree, node);
		node = cs_tree_parent(a->tree, node);
	}
	out->frames = st->nr ? buf : NULL;
	out->nr = st->nr;
	out->tag = cs_tree_frame(a->tree, node);
	out->count = st->count;
	out->period = st->period;
}

uint64_t cs_agg_total_count(const struct cs_agg *a)
{
	return a->total_count;
}

uint64_t cs_agg_total_period(const struct cs_agg *a)
{
	return a->total_period;
}

static size_t rec_size(size_t room, size_t str_len)
{
	return cs_handoff_record_size(sizeof(struct cs_agg_rec) +
				      room * sizeof(struct cs_agg_key) +
				      str_len + 1);
}

struct cs_agg_rec *cs_agg_rec_append(struct cs_handoff *h, size_t room,
				     const char *str, size_t len)
{
	struct cs_agg_rec *r = cs_handoff_append(h, rec_size(room, len));

	if (!r)
		return NULL;
	*r = (struct cs_agg_rec){ .room = (uint32_t)room, .str_len = (uint32_t)len };
	memcpy((char *)cs_agg_rec_str(r), str, len);
	((char *)cs_agg_rec_str(r))[len] = '\0';
	return r;
}

int cs_agg_rec_walk(const void *buf, size_t len, cs_agg_rec_fn fn, void *ctx)
{
	const char *p = buf, *end = p + len;
	int err = 0;

	while (p < end && !err) {
		const struct cs_agg_rec *r = (const void *)p;

		err = fn(ctx, cs_agg_rec_keys(r), r->nr, cs_agg_rec_str(r), r->period);
		p += rec_size(r->room, r->str_len);
	}
	return err;
}
