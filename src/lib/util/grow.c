/* grow.c - arrays that grow by doubling (see grow.h). */
#include "grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int cs_grow_realloc(void **arr, size_t *cap, size_t need, size_t elem,
		    bool zero)
{
	size_t n = *cap ? *cap : 64;
	void *p;

	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (n <= *cap)
		return 0;
	if (n > SIZE_MAX / elem)
		return -ENOMEM;
	p = realloc(*arr, n * elem);
	if (!p)
		return -ENOMEM;
	if (zero)
		memset((char *)p + *cap * elem, 0, (n - *cap) * elem);
	*arr = p;
	*cap = n;
	return 0;
}
