/* keysort.h - sorts millions of small fixed-size keys, on threads.
 *
 * A key is 1 to 6 u64 words, the first the most significant: a caller
 * packs what it sorts by (and, to break ties, an id) into bits, so that
 * comparing two keys is comparing integers. qsort() would call a function
 * per comparison and malloc() a buffer as big as the array, which glibc
 * then keeps in each sorting thread's arena; this sort compares inline
 * and merges through one buffer of half the keys, freed when it returns.
 */
#ifndef CS_KEYSORT_H
#define CS_KEYSORT_H

#include <stddef.h>
#include <stdint.h>

#define CS_KEYSORT_MAX_WORDS 6

/* Sorts keys[0, nr) (nr keys of `words` u64s each, laid out one after
 * the other) into ascending order. jobs > 1 sorts that many parts at
 * once, on threads, before merging them. Returns 0,
 * -EINVAL (words not in 1..CS_KEYSORT_MAX_WORDS) or -ENOMEM (keys then
 * unchanged). */
int cs_keysort(uint64_t *keys, size_t nr, size_t words, unsigned int jobs);

#endif
