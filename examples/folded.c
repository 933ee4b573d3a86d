/* folded.c - folded stacks of a profile, for flame graph tools, written
 * with libcallstitch's push interface: the session calls us once per
 * stitched sample.
 *
 *   folded [-k KALLSYMS] [-s SYMFS] [PERF.DATA]   (default perf.data; - = stdin)
 *   folded perf.data | flamegraph.pl > profile.svg
 *
 * One line per unique stack, "root;...;leaf COUNT", sorted; the same lines
 * as `callstitch folded --no-inline`.
 *
 * Build: cc folded.c $(pkg-config --cflags --libs callstitch) -o folded
 */
#define _GNU_SOURCE		/* tdestroy(), open_memstream() */
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <callstitch/callstitch.h>

#include "stack_count.h"
#include "stack_line.h"

struct folded {
	struct cs_machine *machine;
	struct cs_frame *frames;
	void *stacks;			/* tsearch tree of struct stack_count */
};

static int begin(void *ctx, struct cs_session *s)
{
	struct folded *f = ctx;

	f->machine = cs_session_machine(s);
	return 0;
}

/* Called for every sample, once its whole stack is known. Returning
 * non-zero would stop the run. */
static int sample(void *ctx, const struct cs_stitched *st)
{
	struct folded *f = ctx;
	char *line = stack_line(f->machine, st, f->frames);

	if (!line || stack_add(&f->stacks, line, 1) < 0)
		return -1;
	return 0;
}

static void print(const void *node, VISIT when, int depth)
{
	const struct stack_count *c = *(struct stack_count *const *)node;

	(void)depth;
	if (when == postorder || when == leaf)	/* in order: sorted */
		printf("%s %llu\n", c->line, (unsigned long long)c->count);
}

int main(int argc, char **argv)
{
	static const struct cs_output_ops ops = { .begin = begin, .sample = sample };
	struct folded f = { 0 };
	const char *kallsyms = NULL, *symfs = NULL;
	struct cs_session *s = NULL;
	int c, err, rc = 1;

	while ((c = getopt(argc, argv, "k:s:h")) != -1) {
		switch (c) {
		case 'k': kallsyms = optarg; break;
		case 's': symfs = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-k KALLSYMS] [-s SYMFS] [PERF.DATA]\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	CS_SESSION_OPTS(o, .path = optind < argc ? argv[optind] : "perf.data",
			.kallsyms = kallsyms, .symfs = symfs);

	f.frames = malloc(CS_FRAMES_MAX * sizeof(*f.frames));
	if (!f.frames)
		goto out;
	err = cs_session_open(&o, &s);
	if (!err)
		err = cs_session_run(s, &ops, &f);
	if (err) {
		/* a callback's -1 is ours: out of memory */
		fprintf(stderr, "folded: %s\n", err == -1 ? "out of memory" :
			cs_session_error(s));
		goto out;
	}
	twalk(f.stacks, print);
	rc = fflush(stdout) ? 1 : 0;
out:
	tdestroy(f.stacks, stack_free);
	cs_session_free(s);
	free(f.frames);
	return rc;
}
