/* report_names.c - the names temporary files give by id (see
 * report_int.h): the strings of symbols and dsos, each pointer once,
 * found by its address. */
#include <errno.h>
#include <stdlib.h>

#include "lib/util/grow.h"
#include "outputs/report_int.h"

/* The map holds ids, at most half of its slots full */
static int names_rehash(struct report_names *t, size_t cap)
{
	uint32_t *map = calloc(cap, sizeof(*map));

	if (!map)
		return -ENOMEM;
	for (uint32_t id = 1; id < t->nr; id++) {
		size_t s = report_names_slot(t->name[id], cap - 1);

		while (map[s])
			s = (s + 1) & (cap - 1);
		map[s] = id;
	}
	free(t->map);
	t->map = map;
	t->mask = cap - 1;
	return 0;
}

int report_names_add(struct report_names *t, const char *s, uint32_t *id)
{
	size_t slot;
	int err;

	if (!t->nr) {
		/* id 0 is no name */
		if (cs_grow((void **)&t->name, &t->cap, 1, sizeof(*t->name)))
			return -ENOMEM;
		t->name[t->nr++] = NULL;
	}
	if (t->nr >= UINT32_MAX)
		return -ENOMEM;
	if ((t->nr + 1) * 2 > t->mask + 1 &&
	    (err = names_rehash(t, t->map ? (t->mask + 1) * 2 : 1024)))
		return err;
	if (cs_grow((void **)&t->name, &t->cap, t->nr + 1, sizeof(*t->name)))
		return -ENOMEM;
	for (slot = report_names_slot(s, t->mask); t->map[slot];
	     slot = (slot + 1) & t->mask)
		;
	t->name[t->nr] = s;
	t->map[slot] = (uint32_t)t->nr;
	*id = (uint32_t)t->nr++;
	return 0;
}

void report_names_free(struct report_names *t)
{
	free(t->name);
	free(t->map);
	*t = (struct report_names){ 0 };
}
