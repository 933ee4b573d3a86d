/* names.h - hostile names for the flame and pprof harnesses.
 *
 * The input is text-like: a first line of header strings, then one stack
 * per line, fields separated by ';' (the first the process, then frames,
 * root first); a frame is "name" or "name\tdso", and a name starting with
 * 'k' is a kernel frame. Any byte may appear in a name (a NUL ends it, as
 * it ends a C string).
 */
#ifndef CS_FUZZ_NAMES_H
#define CS_FUZZ_NAMES_H

#include <stddef.h>
#include <stdint.h>

#define NAMES_MAX_FRAMES 64
#define NAMES_MAX_META 4

struct names_frame {
	const char *name, *dso;		/* dso may be NULL */
	uint64_t addr;			/* a hash of the name */
	int kernel;
};

struct names_stack {
	const char *comm;
	struct names_frame frames[NAMES_MAX_FRAMES];	/* root first */
	size_t nr;
};

struct names_input {
	char *text;			/* the input, NUL-terminated and cut up */
	const char *meta[NAMES_MAX_META];	/* title, host, cmdline, events */
	char *next;			/* the next stack line */
};

/* Copies data; returns 0, or -1 without memory. */
int names_open(struct names_input *in, const uint8_t *data, size_t size);
/* The next stack into *st: 1, or 0 at the end. */
int names_next(struct names_input *in, struct names_stack *st);
void names_close(struct names_input *in);

/* Aborts unless text[0..n) is one well-formed JSON value. */
void names_check_json(const char *text, size_t n);

#endif
