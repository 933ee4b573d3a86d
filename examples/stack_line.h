/* stack_line.h - a stitched sample's stack as one folded line,
 * "root;...;leaf", with frames named as `callstitch folded --no-inline`
 * names them: the symbol without its argument list, else the binary's
 * base name in brackets, else [unknown]; a sample whose user stack never
 * came ends in "[user stack missing: why]". Shared by the examples; uses
 * only the public API.
 */
#ifndef STACK_LINE_H
#define STACK_LINE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <callstitch/callstitch.h>

/* Writes sym as flame graph tools want it: no argument list (every
 * overload would be a frame of its own), no quotes, ';' as ':'. */
static void put_symbol(FILE *f, const char *sym)
{
	for (const char *p = sym; *p; p++) {
		if (*p == '(' && strncmp(p + 1, "anonymous namespace)", 20))
			break;
		if (*p == '"' || *p == '\'')
			continue;
		fputc(*p == ';' ? ':' : *p, f);
	}
}

static void put_frame(FILE *f, const struct cs_frame *fr)
{
	const char *dso = fr->loc.dso_name, *base;

	if (fr->kind == CS_FRAME_MISSING_USER) {
		fprintf(f, "[user stack missing: %s]",
			cs_missing_reason_name(fr->missing));
	} else if (fr->kind == CS_FRAME_ADDR && fr->loc.sym && fr->loc.sym[0]) {
		put_symbol(f, fr->loc.sym);
	} else if (fr->kind == CS_FRAME_ADDR && dso) {
		base = strrchr(dso, '/');
		fprintf(f, "[%s]", base ? base + 1 : dso);
	} else {
		fputs("[unknown]", f);
	}
}

/* The line for st, in a string the caller frees, or NULL when out of
 * memory. frames is the caller's array of CS_FRAMES_MAX. */
static char *stack_line(struct cs_machine *m, const struct cs_stitched *st,
			struct cs_frame *frames)
{
	size_t n = cs_frames_resolve(m, st, frames, CS_FRAMES_MAX), len;
	char *line = NULL;
	FILE *f = open_memstream(&line, &len);

	if (!f)
		return NULL;
	if (n > CS_FRAMES_MAX)
		n = CS_FRAMES_MAX;
	/* frames come innermost first; a folded line starts at the root */
	for (size_t i = n; i-- > 0;) {
		put_frame(f, &frames[i]);
		if (i)
			fputc(';', f);
	}
	if (!n)
		fputs("[kernel]", f);	/* a chain that held nothing to show */
	if (fclose(f)) {
		free(line);
		return NULL;
	}
	return line;
}

#endif
