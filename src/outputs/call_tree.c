/* call_tree.c - an interned tree of (parent, frame) nodes (see call_tree.h). */
#include "outputs/call_tree.h"

#include <errno.h>
#include <stdlib.h>

#include "lib/util/big_alloc.h"
#include "lib/util/hash.h"

struct tree_node {
	uint32_t parent;
	uint32_t frame;
};

/* Open addressing, linear probing, at most half full. A slot holds node
 * id + 1 and bits of the node's hash (cs_slot_*, lib/util/hash.h), so
 * that a probe passes other nodes without reading them: a new node, most
 * of a profile of distinct stacks, then costs one cache miss. A node's
 * hash comes from its key, so a bigger index is filled from the nodes
 * without keeping hashes. */
struct cs_tree {
	struct tree_node *nodes;
	size_t nr, cap;
	uint32_t *slots;
	size_t mask;		/* slots - 1, a power of two less one */
	uint32_t hash_bits;	/* the slots' bits that hold hash bits */
};

/* At most 2^31 - 1 nodes: the index then has at most 2^32 slots */
#define MAX_NODES ((1u << 31) - 1)

static uint64_t node_hash(uint32_t parent, uint32_t frame)
{
	return cs_hash_u64((uint64_t)parent << 32 | frame);
}

int cs_tree_new(struct cs_tree **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void cs_tree_free(struct cs_tree *t)
{
	if (!t)
		return;
	cs_big_free(t->nodes);
	cs_big_free(t->slots);
	free(t);
}

/* The slot of (parent, frame): the node's, or the empty one where it
 * goes; *h is the node's hash. */
static size_t probe(const struct cs_tree *t, uint32_t parent, uint32_t frame,
		    uint64_t *h)
{
	size_t s;

	*h = node_hash(parent, frame);
	for (s = *h & t->mask; t->slots[s]; s = (s + 1) & t->mask) {
		const struct tree_node *n;

		if (!cs_slot_may_be(t->hash_bits, t->slots[s], *h))
			continue;
		n = &t->nodes[cs_slot_index(t->hash_bits, t->slots[s])];
		if (n->parent == parent && n->frame == frame)
			break;
	}
	return s;
}

#define GROW_AHEAD 16

/* A bigger index, or after cs_tree_trim() one that fits the nodes, with
 * room for `more` new ones */
static int index_grow(struct cs_tree *t, size_t more)
{
	size_t cap = t->slots ? (t->mask + 1) * 2 : 1024;

	while (cap < (t->nr + more) * 2)
		cap *= 2;
	uint32_t *slots = cs_big_calloc(cap, sizeof(*slots));
	uint64_t h;

	if (!slots)
		return -ENOMEM;
	cs_big_free(t->slots);
	t->slots = slots;
	t->mask = cap - 1;
	t->hash_bits = cs_slot_hash_bits(cap);
	for (size_t i = 0; i < t->nr; i++) {
		size_t s;

		/* the nodes are read in order, their slots at random: the slot
		 * of the node GROW_AHEAD on is asked for early */
		if (i + GROW_AHEAD < t->nr)
			__builtin_prefetch(&t->slots[node_hash(t->nodes[i + GROW_AHEAD].parent,
							       t->nodes[i + GROW_AHEAD].frame) &
						     t->mask]);
		s = probe(t, t->nodes[i].parent, t->nodes[i].frame, &h);
		t->slots[s] = cs_slot_make(t->hash_bits, h, i);
	}
	return 0;
}

int cs_tree_find(struct cs_tree *t, uint32_t parent, uint32_t frame,
		 uint32_t *id)
{
	uint64_t h;
	size_t s;
	int err;

	if (!t->slots && !t->nr)
		return -ENOENT;
	if (!t->slots && (err = index_grow(t, 1)))
		return err;
	s = probe(t, parent, frame, &h);
	if (!t->slots[s])
		return -ENOENT;
	*id = cs_slot_index(t->hash_bits, t->slots[s]);
	return 0;
}

int cs_tree_intern(struct cs_tree *t, uint32_t parent, uint32_t frame,
		   uint32_t *id)
{
	uint64_t h = 0;
	size_t s = 0;
	int err;

	if (!t->slots && t->nr && (err = index_grow(t, 1)))
		return err;
	if (t->slots) {
		s = probe(t, parent, frame, &h);
		if (t->slots[s]) {
			*id = cs_slot_index(t->hash_bits, t->slots[s]);
			return 0;
		}
	}
	if (t->nr >= MAX_NODES)
		return -ENOMEM;
	if (cs_big_grow((void **)&t->nodes, &t->cap, t->nr + 1, sizeof(*t->nodes)))
		return -ENOMEM;
	if ((t->nr + 1) * 2 > (t->slots ? t->mask + 1 : 0)) {
		err = index_grow(t, 1);
		if (err)
			return err;
		s = probe(t, parent, frame, &h);
	}
	t->nodes[t->nr] = (struct tree_node){ parent, frame };
	t->slots[s] = cs_slot_make(t->hash_bits, h, t->nr);
	*id = (uint32_t)t->nr++;
	return 0;
}

/* Room for n more nodes, in the array and in the index */
static int reserve(struct cs_tree *t, size_t n)
{
	if (n > MAX_NODES - t->nr)
		return -ENOMEM;
	if (cs_big_grow((void **)&t->nodes, &t->cap, t->nr + n, sizeof(*t->nodes)))
		return -ENOMEM;
	if ((t->nr + n) * 2 > (t->slots ? t->mask + 1 : 0))
		return index_grow(t, n);
	return 0;
}

/* A batch of new nodes whose slots are asked for at once */
#define CHAIN_BATCH 32

int cs_tree_intern_path(struct cs_tree *t, uint32_t parent,
			const uint32_t *frames, size_t n, uint32_t *ids)
{
	uint64_t h[CHAIN_BATCH];
	size_t i = 0;
	int err;

	for (; i < n; i++) {
		err = cs_tree_find(t, parent, frames[i], &parent);
		if (err == -ENOENT)
			break;
		if (err)
			return err;
		ids[i] = parent;
	}
	if (i == n)
		return 0;
	/* under a new node every node is new, and its id is known ahead:
	 * the hashes of the rest of the path are, and their slots can be
	 * asked for together, not one cache miss after another */
	err = reserve(t, n - i);
	if (err)
		return err;
	for (size_t at = i; at < n; at += CHAIN_BATCH) {
		size_t m = n - at < CHAIN_BATCH ? n - at : CHAIN_BATCH;

		for (size_t j = 0; j < m; j++) {
			uint32_t p = j ? (uint32_t)(t->nr + j - 1) : parent;

			h[j] = node_hash(p, frames[at + j]);
			__builtin_prefetch(&t->slots[h[j] & t->mask]);
		}
		for (size_t j = 0; j < m; j++) {
			size_t s = h[j] & t->mask;

			while (t->slots[s])
				s = (s + 1) & t->mask;
			t->nodes[t->nr] = (struct tree_node){ parent, frames[at + j] };
			t->slots[s] = cs_slot_make(t->hash_bits, h[j], t->nr);
			parent = (uint32_t)t->nr++;
			ids[at + j] = parent;
		}
	}
	return 0;
}

void cs_tree_trim(struct cs_tree *t)
{
	cs_big_free(t->slots);
	t->slots = NULL;
	t->mask = 0;
}

size_t cs_tree_nr_nodes(const struct cs_tree *t)
{
	return t->nr;
}

uint32_t cs_tree_parent(const struct cs_tree *t, uint32_t id)
{
	return t->nodes[id].parent;
}

uint32_t cs_tree_frame(const struct cs_tree *t, uint32_t id)
{
	return t->nodes[id].frame;
}

size_t cs_tree_index_step(const struct cs_tree *t, size_t n)
{
	size_t cap = t->slots ? t->mask + 1 : 0, step = 0;

	/* as index_grow() doubles it, one node at a time */
	for (size_t ncap = cap; (t->nr + n) * 2 > ncap;) {
		ncap = ncap ? ncap * 2 : 1024;
		step += ncap * sizeof(*t->slots);
	}
	return step;
}

size_t cs_tree_memory(const struct cs_tree *t)
{
	return sizeof(*t) + t->nr * sizeof(*t->nodes) +
	       (t->slots ? (t->mask + 1) * sizeof(*t->slots) : 0);
}
