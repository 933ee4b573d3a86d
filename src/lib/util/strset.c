/* strset.c - interned strings in an open-addressing hash set. */
#include "lib/util/strset.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/hash.h"

static char **slot_of(char **slots, size_t cap, const char *s)
{
	size_t i = (size_t)cs_hash_str(s) & (cap - 1);

	while (slots[i] && strcmp(slots[i], s))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

/* Doubles the table (kept at most half full, so probes stay short). */
static int grow(struct cs_strset *set)
{
	size_t cap = set->cap ? set->cap * 2 : 64;
	char **slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < set->cap; i++)
		if (set->slots[i])
			*slot_of(slots, cap, set->slots[i]) = set->slots[i];
	free(set->slots);
	set->slots = slots;
	set->cap = cap;
	return 0;
}

const char *cs_strset_intern(struct cs_strset *set, const char *s)
{
	char **slot;

	if ((set->nr + 1) * 2 > set->cap && grow(set))
		return NULL;
	slot = slot_of(set->slots, set->cap, s);
	if (!*slot) {
		*slot = strdup(s);
		if (!*slot)
			return NULL;
		set->nr++;
	}
	return *slot;
}

void cs_strset_free(struct cs_strset *set)
{
	for (size_t i = 0; i < set->cap; i++)
		free(set->slots[i]);
	free(set->slots);
	set->slots = NULL;
	set->cap = set->nr = 0;
}
