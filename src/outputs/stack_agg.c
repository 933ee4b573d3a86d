/* stack_agg.c - interned frames and stacks (see stack_agg.h). */
#include "outputs/stack_agg.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct agg_frame {
	struct cs_agg_key key;
	uint64_t hash;
};

struct agg_stack {
	uint64_t hash;
	size_t off;		/* into a->ids */
	uint32_t nr;
	uint32_t tag;
	uint64_t count;
	uint64_t period;
};

/* Open addressing, linear probing; slots hold index + 1 (0 = empty). The
 * table is kept at most half full so probes stay short. */
struct agg_index {
	uint32_t *slots;
	size_t mask;		/* capacity - 1; capacity is a power of two */
	size_t used;
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

	struct agg_stack *stacks;
	size_t nr_stacks, cap_stacks;
	struct agg_index stack_index;

	uint32_t *ids;		/* the frame ids of every stack, back to back */
	size_t nr_ids, cap_ids;

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

static uint64_t hash_stack(uint32_t tag, const uint32_t *f, uint32_t nr)
{
	uint64_t h = mix(0x243f6a8885a308d3ULL, ((uint64_t)tag << 32) | nr);
	uint32_t i = 0;

	for (; i + 1 < nr; i += 2)
		h = mix(h, ((uint64_t)f[i] << 32) | f[i + 1]);
	if (i < nr)
		h = mix(h, f[i]);
	return h;
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

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2 / size)
			return -ENOMEM;
		n *= 2;
	}
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* grow(), with the new elements zeroed: for arrays that start late */
static int grow_zeroed(void **p, size_t *cap, size_t need, size_t size)
{
	size_t had = *cap;
	int err = grow(p, cap, need, size);

	if (!err && *cap > had)
		memset((char *)*p + had * size, 0, (*cap - had) * size);
	return err;
}

/* Doubles the index when it would pass half full; hashes come from
 * the entries, so nothing is rehashed from scratch. */
static int index_reserve(struct agg_index *ix, const uint64_t *hashes,
			 size_t stride, size_t nr)
{
	size_t cap = ix->slots ? ix->mask + 1 : 0, ncap;
	uint32_t *slots;

	if ((ix->used + 1) * 2 <= cap)
		return 0;
	if (nr >= UINT32_MAX - 1)
		return -ENOMEM;
	ncap = cap ? cap * 2 : 256;
	slots = calloc(ncap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		uint64_t h = *(const uint64_t *)((const char *)hashes + i * stride);
		size_t s = h & (ncap - 1);

		while (slots[s])
			s = (s + 1) & (ncap - 1);
		slots[s] = (uint32_t)(i + 1);
	}
	free(ix->slots);
	ix->slots = slots;
	ix->mask = ncap - 1;
	return 0;
}

int cs_agg_new(struct cs_agg **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
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
	free(a->frames);
	free(a->str_hashes);
	free(a->locs);
	free(a->owned);
	free(a->frame_index.slots);
	free(a->stacks);
	free(a->stack_index.slots);
	free(a->ids);
	free(a);
}

static int frame_intern(struct cs_agg *a, const struct cs_agg_key *key,
			const struct cs_location *loc, bool copy, uint32_t *id)
{
	uint64_t h = hash_key(a, key, !copy);
	struct agg_index *ix = &a->frame_index;
	struct agg_frame *f;
	size_t s;
	int err;

	if (ix->slots) {
		for (s = h & ix->mask; ix->slots[s]; s = (s + 1) & ix->mask) {
			f = &a->frames[ix->slots[s] - 1];
			if (f->hash == h && key_eq(&f->key, key)) {
				*id = ix->slots[s] - 1;
				return 0;
			}
		}
	}
	err = grow((void **)&a->frames, &a->cap_frames, a->nr_frames + 1,
		   sizeof(*a->frames));
	if (!err)
		err = index_reserve(ix, &a->frames[0].hash, sizeof(*a->frames),
				    a->nr_frames);
	if (err)
		return err;
	if (loc || a->locs) {
		err = grow_zeroed((void **)&a->locs, &a->cap_locs, a->nr_frames + 1,
				  sizeof(*a->locs));
		if (err)
			return err;
		if (loc)
			a->locs[a->nr_frames] = *loc;
	}
	if (copy || a->owned) {
		err = grow_zeroed((void **)&a->owned, &a->cap_owned,
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
	ix->slots[s] = (uint32_t)(a->nr_frames + 1);
	ix->used++;
	*id = (uint32_t)a->nr_frames++;
	return 0;
}

int cs_agg_frame(struct cs_agg *a, const struct cs_agg_key *key,
		 const struct cs_location *loc, uint32_t *id)
{
	return frame_intern(a, key, loc, false, id);
}

int cs_agg_frame_copy(struct cs_agg *a, const struct cs_agg_key *key,
		      uint32_t *id)
{
	return frame_intern(a, key, NULL, true, id);
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

static bool stack_eq(const struct cs_agg *a, const struct agg_stack *st,
		     uint64_t h, uint32_t tag, const uint32_t *f, uint32_t nr)
{
	return st->hash == h && st->tag == tag && st->nr == nr &&
	       (nr == 0 || !memcmp(a->ids + st->off, f, nr * sizeof(*f)));
}

static long find_stack(const struct cs_agg *a, uint64_t h, uint32_t tag,
		       const uint32_t *f, uint32_t nr, size_t *slot)
{
	const struct agg_index *ix = &a->stack_index;
	size_t s;

	if (!ix->slots)
		return -1;
	for (s = h & ix->mask; ix->slots[s]; s = (s + 1) & ix->mask) {
		uint32_t i = ix->slots[s] - 1;

		if (stack_eq(a, &a->stacks[i], h, tag, f, nr))
			return i;
	}
	*slot = s;
	return -1;
}

int cs_agg_find(const struct cs_agg *a, uint32_t tag, const uint32_t *frames,
		uint32_t nr, uint32_t *id)
{
	size_t slot;
	long i = find_stack(a, hash_stack(tag, frames, nr), tag, frames, nr, &slot);

	if (i < 0)
		return -ENOENT;
	*id = (uint32_t)i;
	return 0;
}

int cs_agg_add(struct cs_agg *a, uint32_t tag, const uint32_t *frames,
	       uint32_t nr, uint64_t count, uint64_t period, uint32_t *id)
{
	uint64_t h = hash_stack(tag, frames, nr);
	struct agg_index *ix = &a->stack_index;
	struct agg_stack *st;
	size_t slot;
	long i = find_stack(a, h, tag, frames, nr, &slot);
	int err;

	a->total_count += count;
	a->total_period += period;
	if (i >= 0) {
		a->stacks[i].count += count;
		a->stacks[i].period += period;
		if (id)
			*id = (uint32_t)i;
		return 0;
	}
	err = grow((void **)&a->stacks, &a->cap_stacks, a->nr_stacks + 1,
		   sizeof(*a->stacks));
	if (!err && nr > SIZE_MAX - a->nr_ids)
		err = -ENOMEM;
	if (!err)
		err = grow((void **)&a->ids, &a->cap_ids, a->nr_ids + nr,
			   sizeof(*a->ids));
	if (!err)
		err = index_reserve(ix, &a->stacks[0].hash, sizeof(*a->stacks),
				    a->nr_stacks);
	if (err) {
		a->total_count -= count;
		a->total_period -= period;
		return err;
	}
	st = &a->stacks[a->nr_stacks];
	st->hash = h;
	st->off = a->nr_ids;
	st->nr = nr;
	st->tag = tag;
	st->count = count;
	st->period = period;
	if (nr)
		memcpy(a->ids + a->nr_ids, frames, nr * sizeof(*frames));
	a->nr_ids += nr;
	/* the index may have been rebuilt: probe again for a free slot */
	for (slot = h & ix->mask; ix->slots[slot]; slot = (slot + 1) & ix->mask)
		;
	ix->slots[slot] = (uint32_t)(a->nr_stacks + 1);
	ix->used++;
	if (id)
		*id = (uint32_t)a->nr_stacks;
	a->nr_stacks++;
	return 0;
}

size_t cs_agg_nr_stacks(const struct cs_agg *a)
{
	return a->nr_stacks;
}

void cs_agg_stack(const struct cs_agg *a, uint32_t id, struct cs_agg_stack *out)
{
	const struct agg_stack *st = &a->stacks[id];

	out->frames = st->nr ? a->ids + st->off : NULL;
	out->nr = st->nr;
	out->tag = st->tag;
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
