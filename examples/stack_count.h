/* stack_count.h - counts samples per folded line, in a tsearch(3) tree,
 * which also hands the lines back in strcmp order. Shared by the
 * examples.
 */
#ifndef STACK_COUNT_H
#define STACK_COUNT_H

#include <search.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct stack_count {
	char *line;
	uint64_t count;
};

static int stack_cmp(const void *a, const void *b)
{
	return strcmp(((const struct stack_count *)a)->line,
		      ((const struct stack_count *)b)->line);
}

/* Adds weight to line's count; takes line (freed here if already known).
 * Returns 1 for a new line, 0 for a known one, -1 when out of memory. */
static int stack_add(void **tree, char *line, uint64_t weight)
{
	struct stack_count key = { .line = line }, *c, **found;

	found = tfind(&key, tree, stack_cmp);
	if (found) {
		(*found)->count += weight;
		free(line);
		return 0;
	}
	c = malloc(sizeof(*c));
	if (c) {
		c->line = line;
		c->count = weight;
	}
	if (!c || !tsearch(c, tree, stack_cmp)) {
		free(c);
		free(line);
		return -1;
	}
	return 1;
}

static void stack_free(void *p)
{
	struct stack_count *c = p;

	free(c->line);
	free(c);
}

#endif
