/* stack_health.h - how whole the user stacks are, in words a user can act
 * on: how many reached a root, and where and why the others stopped, with
 * what to do about it ("62% of user stacks stop in libc.so.6, which has
 * no frame pointers: try --call-graph dwarf"). Shared by report's header
 * and --stats.
 */
#ifndef CS_STACK_HEALTH_H
#define CS_STACK_HEALTH_H

#include <stdio.h>

#include <callstitch/callstitch.h>

/* Writes the figures of c: "N user stacks (...): ..." after label on the
 * first line, then at most max_stops lines about where stacks stopped,
 * each after indent. Nothing without user stacks. */
void cs_stack_health_write(FILE *f, const struct cs_completeness *c,
			   const char *label, const char *indent,
			   size_t max_stops);

#endif
