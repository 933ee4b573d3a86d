/* u32map.h - a map from 32-bit ids (pids, tids) to the caller's pointers.
 *
 * Processes and threads are looked up once a record, and a profile or a
 * recording sees at most tens of thousands of them: open addressing with a
 * key and its value side by side, so that a probe is one cache line.
 * Entries are never removed (a task's entry keeps what its exit must still
 * tell); the map owns its slots, the caller owns the values.
 */
#ifndef CS_U32MAP_H
#define CS_U32MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util/hash.h"

struct cs_u32map_ent {
	uint64_t key;			/* CS_U32MAP_EMPTY: empty */
	void *val;
};

/* Zero-initialised is an empty map. */
struct cs_u32map {
	struct cs_u32map_ent *ent;	/* power-of-two size, at most 3/4 full */
	size_t cap, nr;
};

#define CS_U32MAP_EMPTY UINT64_MAX

/* The value of key, or NULL. Inline: the machine asks once a sample. */
static inline void *cs_u32map_get(const struct cs_u32map *map, uint32_t key)
{
	size_t i;

	if (!map->cap)
		return NULL;
	for (i = cs_hash_u32(key) & (map->cap - 1);
	     map->ent[i].key != CS_U32MAP_EMPTY; i = (i + 1) & (map->cap - 1))
		if (map->ent[i].key == key)
			return map->ent[i].val;
	return NULL;
}

/* Sets key's value (val must not be NULL: NULL means absent). Returns 0,
 * or -ENOMEM with the map unchanged. */
int cs_u32map_put(struct cs_u32map *map, uint32_t key, void *val);

/* The value of key; when there is none, a new one of size bytes, zeroed,
 * put in its place (*created set, for the caller to fill in; it is the
 * caller's, as every value is). NULL when out of memory, the map as it
 * was. */
void *cs_u32map_get_new(struct cs_u32map *map, uint32_t key, size_t size,
			bool *created);

/* Calls fn(value, ctx) for every entry, in the slots' order (which
 * depends on the keys and the map's size only); stops at the first
 * non-zero return and returns it, else 0. fn must not put into the map. */
int cs_u32map_each(const struct cs_u32map *map,
		   int (*fn)(void *val, void *ctx), void *ctx);

/* Calls free_val (if not NULL) on every value and frees the slots; the
 * map is empty and reusable afterwards. */
void cs_u32map_free(struct cs_u32map *map, void (*free_val)(void *));

#endif
