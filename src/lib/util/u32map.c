/* u32map.c - see u32map.h. */
#include "lib/util/u32map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define EMPTY CS_U32MAP_EMPTY

/* The slot of key in ent[cap]: its own, or the empty one it would take. */
static struct cs_u32map_ent *slot_of(struct cs_u32map_ent *ent, size_t cap,
				     uint64_t key)
{
	size_t i;

	for (i = cs_hash_u32((uint32_t)key) & (cap - 1);
	     ent[i].key != EMPTY && ent[i].key != key; i = (i + 1) & (cap - 1))
		;
	return &ent[i];
}

static int grow(struct cs_u32map *map)
{
	size_t cap = map->cap ? map->cap * 2 : 256;
	struct cs_u32map_ent *ent;

	if (cap > SIZE_MAX / sizeof(*ent))
		return -ENOMEM;
	ent = malloc(cap * sizeof(*ent));
	if (!ent)
		return -ENOMEM;
	memset(ent, 0xff, cap * sizeof(*ent));	/* every key EMPTY */
	for (size_t k = 0; k < map->cap; k++)
		if (map->ent[k].key != EMPTY)
			*slot_of(ent, cap, map->ent[k].key) = map->ent[k];
	free(map->ent);
	map->ent = ent;
	map->cap = cap;
	return 0;
}

int cs_u32map_put(struct cs_u32map *map, uint32_t key, void *val)
{
	struct cs_u32map_ent *e;

	if ((map->nr + 1) * 4 > map->cap * 3) {
		int err = grow(map);

		if (err)
			return err;
	}
	e = slot_of(map->ent, map->cap, key);
	if (e->key == EMPTY)
		map->nr++;
	e->key = key;
	e->val = val;
	return 0;
}

void *cs_u32map_get_new(struct cs_u32map *map, uint32_t key, size_t size,
			bool *created)
{
	void *val = cs_u32map_get(map, key);

	*created = false;
	if (val)
		return val;
	val = calloc(1, size);
	if (!val || cs_u32map_put(map, key, val)) {
		free(val);
		return NULL;
	}
	*created = true;
	return val;
}

int cs_u32map_each(const struct cs_u32map *map,
		   int (*fn)(void *val, void *ctx), void *ctx)
{
	for (size_t i = 0; i < map->cap; i++) {
		int err;

		if (map->ent[i].key == EMPTY)
			continue;
		err = fn(map->ent[i].val, ctx);
		if (err)
			return err;
	}
	return 0;
}

void cs_u32map_free(struct cs_u32map *map, void (*free_val)(void *))
{
	for (size_t i = 0; free_val && i < map->cap; i++)
		if (map->ent[i].key != EMPTY)
			free_val(map->ent[i].val);
	free(map->ent);
	memset(map, 0, sizeof(*map));
}
