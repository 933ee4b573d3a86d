/* stack_health.c - the completeness figures as text (see stack_health.h). */
#include "outputs/stack_health.h"
#include "lib/completeness/completeness.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static double pct(uint64_t n, uint64_t of)
{
	return of ? 100.0 * (double)n / (double)of : 0.0;
}

/* "libc.so.6" for "/usr/lib/x86_64-linux-gnu/libc.so.6" */
static const char *short_name(const char *dso)
{
	const char *slash;

	if (!dso)
		return "[unknown]";
	slash = strrchr(dso, '/');
	return slash && slash[1] ? slash + 1 : dso;
}

static void advice(FILE *f, const struct cs_stack_stop *s)
{
	const char *dso = short_name(s->dso);

	switch (s->end) {
	case CS_STACK_FP_BROKEN:
		if (s->kind == CS_STACK_KIND_DEFERRED)
			fprintf(f, "stop in %s: the kernel's deferred unwinder "
				"walks frame pointers, which %s does not keep: "
				"try --call-graph dwarf", dso, dso);
		else
			fprintf(f, "stop in %s, which has no frame pointers: "
				"try --call-graph dwarf", dso);
		break;
	case CS_STACK_COPY_TOO_SMALL:
		fprintf(f, "were cut where the stack copy ended: record a "
			"bigger one, e.g. --call-graph dwarf,32768 (at most 65528)");
		break;
	case CS_STACK_NO_CFI:
		fprintf(f, "stop in %s, which has no CFI for the pc (.eh_frame or "
			".debug_frame): install its debug file", dso);
		break;
	case CS_STACK_NO_BINARY:
		fprintf(f, "stop in %s, which was not found: see --symfs", dso);
		break;
	case CS_STACK_BAD_CFI:
		fprintf(f, "stop in %s, whose CFI leads to no caller", dso);
		break;
	case CS_STACK_UNKNOWN_CODE:
		if (s->dso)
			fprintf(f, "stop at code with no symbol in %s", dso);
		else
			fprintf(f, "stop at code outside any binary (JIT code "
				"without a /tmp/perf-PID.map, or a bad return "
				"address)");
		break;
	case CS_STACK_TOO_DEEP:
		fprintf(f, "hit the unwinder's frame limit");
		break;
	default:
		fprintf(f, "%s", cs_stack_end_name(s->end));
		break;
	}
}

/* Whether the advice for stops of this end names their binary: those
 * that do not (a stack copy too small, the frame limit) read the same
 * for every binary, and are one line. */
static bool advice_names_binary(const struct cs_stack_stop *s)
{
	return s->end != CS_STACK_COPY_TOO_SMALL && s->end != CS_STACK_TOO_DEEP;
}

/* The stops as lines: c's, those whose advice does not name a binary
 * summed into one line per end and kind, in the library's order
 * (cs_stack_stop_order()). Returns their number, and a copy in *out that
 * the caller frees; NULL and 0 without memory. */
static size_t stop_lines(const struct cs_completeness *c,
			 struct cs_stack_stop **out)
{
	struct cs_stack_stop *v = malloc((c->nr_stops ? c->nr_stops : 1) * sizeof(*v));
	size_t n = 0;

	*out = v;
	if (!v)
		return 0;
	for (size_t i = 0; i < c->nr_stops; i++) {
		const struct cs_stack_stop *s = &c->stops[i];
		size_t k = n;

		if (!advice_names_binary(s))
			for (k = 0; k < n; k++)
				if (v[k].end == s->end && v[k].kind == s->kind)
					break;
		if (k < n) {
			v[k].stacks += s->stacks;
			continue;
		}
		v[n] = *s;
		if (!advice_names_binary(s))
			v[n].dso = NULL;
		n++;
	}
	qsort(v, n, sizeof(*v), cs_stack_stop_order);
	return n;
}

void cs_stack_health_write(FILE *f, const struct cs_completeness *c,
			   const char *label, const char *indent,
			   size_t max_stops)
{
	const struct cs_stack_stop *stops;
	struct cs_stack_stop *lines;
	uint64_t n, early;
	size_t shown = 0, nr_lines;

	if (!c || !c->user_stacks)
		return;
	n = c->user_stacks;
	early = n - c->by_end[CS_STACK_ROOT] - c->by_end[CS_STACK_MISSING];
	fprintf(f, "%s%" PRIu64 " user stacks (", label, n);
	for (int k = 0, first = 1; k < CS_STACK_KIND__COUNT; k++) {
		if (!c->by_kind[k])
			continue;
		fprintf(f, "%s%" PRIu64 " %s", first ? "" : ", ", c->by_kind[k],
			cs_stack_kind_name((enum cs_stack_kind)k));
		first = 0;
	}
	fprintf(f, "): %" PRIu64 " reached a root (%.1f%%), %" PRIu64
		" stopped early (%.1f%%)", c->by_end[CS_STACK_ROOT],
		pct(c->by_end[CS_STACK_ROOT], n), early, pct(early, n));
	if (c->by_end[CS_STACK_MISSING])
		fprintf(f, ", %" PRIu64 " never came (%.1f%%)",
			c->by_end[CS_STACK_MISSING],
			pct(c->by_end[CS_STACK_MISSING], n));
	fputc('\n', f);
	nr_lines = stop_lines(c, &lines);
	if (!lines)			/* no memory: c's stops as they are */
		nr_lines = c->nr_stops;
	stops = lines ? lines : c->stops;
	for (size_t i = 0; i < nr_lines && shown < max_stops; i++, shown++) {
		const struct cs_stack_stop *s = &stops[i];

		fprintf(f, "%s%.1f%% of user stacks (%" PRIu64 ") ", indent,
			pct(s->stacks, n), s->stacks);
		advice(f, s);
		fputc('\n', f);
	}
	if (nr_lines > shown) {
		uint64_t rest = 0;

		for (size_t i = shown; i < nr_lines; i++)
			rest += stops[i].stacks;
		fprintf(f, "%s%.1f%% of user stacks (%" PRIu64 ") stop in %zu "
			"other places\n", indent, pct(rest, n), rest,
			nr_lines - shown);
	}
	free(lines);
}
