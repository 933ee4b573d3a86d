/* grow.c - arrays that grow by doubling (see grow.h). */
#include "grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int cs_grow_cap(size_t cap, size_t need, size_t elem, size_t *new_cap)
{
	size_t n = cap ? cap : 64;

	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (n > SIZE_MAX / elem)
		return -ENOMEM;
	*new_cap = n;
	return 0;
}

int cs_grow_realloc(void **arr, size_t *cap, size_t need, size_t elem,
		    bool zero)
{
	size_t n;
	void *p;

	if (cs_grow_cap(*cap, need, elem, &n))
		return -ENOMEM;
	if (n <= *cap)
		return 0;
	p = realloc(*arr, n * elem);
	if (!p)
		return -ENOMEM;
	if (zero)
		memset((char *)p + *cap * elem, 0, (n - *cap) * elem);
	*arr = p;
	*cap = n;
	return 0;
}
