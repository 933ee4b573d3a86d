/* strset.h - interned strings: one stable copy of each distinct string.
 *
 * Command names, symbol names: few distinct values seen many times. The set
 * owns its copies; they live until cs_strset_free(), so callers may keep
 * and compare the pointers.
 */
#ifndef CS_STRSET_H
#define CS_STRSET_H

#include <stddef.h>

struct cs_strset {
	char **slots;			/* open addressing, power-of-two size */
	size_t cap, nr;
};

/* The set's copy of s (made on first sight), or NULL when out of memory. */
const char *cs_strset_intern(struct cs_strset *set, const char *s);

/* Frees every copy; the set is empty and reusable afterwards. */
void cs_strset_free(struct cs_strset *set);

#endif
