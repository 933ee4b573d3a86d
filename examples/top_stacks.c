/* top_stacks.c - the heaviest stacks of a profile, written with
 * libcallstitch's pull interface: a loop that asks for the next stitched
 * sample.
 *
 *   top_stacks [-n N] [-k KALLSYMS] [-s SYMFS] [PERF.DATA]   (default 10, perf.data)
 *
 * Prints the N stacks with the most samples, heaviest first (ties in
 * strcmp order), each as "SAMPLES PERCENT% root;...;leaf" - the lines of
 * `callstitch folded --no-inline`, ranked - and how many samples got their
 * deferred user stack back.
 *
 * Build: cc top_stacks.c $(pkg-config --cflags --libs callstitch) -o top_stacks
 */
#define _GNU_SOURCE		/* tdestroy(), open_memstream() */
#include <search.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <callstitch/callstitch.h>

#include "stack_count.h"
#include "stack_line.h"

/* twalk() has no context argument: the walk fills this array */
static struct stack_count **ranked;
static size_t nr_ranked;

static void collect(const void *node, VISIT when, int depth)
{
	(void)depth;
	if (when == postorder || when == leaf)
		ranked[nr_ranked++] = *(struct stack_count *const *)node;
}

static int heaviest_first(const void *a, const void *b)
{
	const struct stack_count *x = *(struct stack_count *const *)a;
	const struct stack_count *y = *(struct stack_count *const *)b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->line, y->line);
}

int main(int argc, char **argv)
{
	const struct cs_stitched *st;
	const struct cs_stats *stats;
	struct cs_frame *frames;
	struct cs_session *s = NULL;
	const char *kallsyms = NULL, *symfs = NULL;
	void *stacks = NULL;
	size_t top = 10, nr_stacks = 0;
	uint64_t total = 0;
	int c, err, rc = 1;

	while ((c = getopt(argc, argv, "n:k:s:h")) != -1) {
		switch (c) {
		case 'n': top = strtoul(optarg, NULL, 10); break;
		case 'k': kallsyms = optarg; break;
		case 's': symfs = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-n N] [-k KALLSYMS] [-s SYMFS] [PERF.DATA]\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	CS_SESSION_OPTS(o, .path = optind < argc ? argv[optind] : "perf.data",
			.kallsyms = kallsyms, .symfs = symfs);

	frames = malloc(CS_FRAMES_MAX * sizeof(*frames));
	if (!frames)
		return 1;
	err = cs_session_open(&o, &s);
	/* each call returns one sample, with the machine (maps, names) as it
	 * stood at that sample: resolve it now */
	while (!err && (err = cs_session_next(s, &st)) == 1) {
		char *line = stack_line(cs_session_machine(s), st, frames);
		int added = line ? stack_add(&stacks, line, 1) : -1;

		if (added < 0) {
			fprintf(stderr, "top_stacks: out of memory\n");
			goto out;
		}
		nr_stacks += (size_t)added;
		total++;
		err = 0;
	}
	if (err < 0) {
		fprintf(stderr, "top_stacks: %s\n", cs_session_error(s));
		goto out;
	}

	ranked = malloc((nr_stacks ? nr_stacks : 1) * sizeof(*ranked));
	if (!ranked)
		goto out;
	twalk(stacks, collect);
	qsort(ranked, nr_ranked, sizeof(*ranked), heaviest_first);
	stats = cs_session_stats(s);
	printf("# %llu samples, %zu unique stacks; %llu of %llu deferred "
	       "samples got their user stack back\n",
	       (unsigned long long)total, nr_ranked,
	       (unsigned long long)(stats->stitched + stats->stitched_late),
	       (unsigned long long)stats->samples_deferred);
	for (size_t i = 0; i < nr_ranked && i < top; i++)
		printf("%llu %.2f%% %s\n", (unsigned long long)ranked[i]->count,
		       100.0 * (double)ranked[i]->count / (double)total,
		       ranked[i]->line);
	rc = fflush(stdout) ? 1 : 0;
out:
	free(ranked);
	tdestroy(stacks, stack_free);
	cs_session_free(s);
	free(frames);
	return rc;
}
