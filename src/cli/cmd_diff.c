/* cmd_diff.c - `callstitch diff`: two profiles compared, like perf diff. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "outputs/diff.h"
#include "lib/util/jobs.h"

static const char usage_text[] =
	"usage: callstitch diff [OPTIONS] [OLD NEW]\n\n"
	"Compare two profiles entry by entry, like 'perf diff': for each entry\n"
	"(the sort keys at each sample's innermost frame) its share of the event\n"
	"in OLD (Baseline) and how many points it gained or lost in NEW (Delta\n"
	"Abs), biggest change first. OLD and NEW default to perf.data.old and\n"
	"perf.data; events pair up by name. Off-CPU time (record --off-cpu)\n"
	"compares as shares of the time off the CPU.\n\n"
	"  -o, --output FILE     write to FILE instead of stdout\n"
	"  -s, --sort KEYS       entries by KEYS, any of comm,pid,tid,dso,sym,state\n"
	"                        (default dso,sym)\n"
	"      --percent-limit N\n"
	"                        hide entries below N percent in both profiles\n"
	"  -j, --jobs N          threads: with 2 or more OLD and NEW are read at\n"
	"                        the same time, each on a thread of its own (with\n"
	"                        4 or more each reads ahead, decompresses and\n"
	"                        loads symbols on half of them), and the table is\n"
	"                        sorted and formatted in parts on N threads; the\n"
	"                        same table (default: the CPUs available)\n"
	CLI_OFF_CPU_HELP
	CLI_SOURCES_HELP
	"  -h, --help            this help\n";

enum { OPT_PERCENT_LIMIT = 0x2000 };

/* One of the two profiles read at the same time: its session, counted
 * into a comparison of its own. */
struct diff_side {
	struct cli_input in;
	struct cs_session *s;
	struct cs_diff_run run;
	int err;			/* what cs_session_run() returned */
};

static int side_run(void *ctx)
{
	struct diff_side *d = ctx;

	d->err = cs_session_run(d->s, &cs_diff_ops, &d->run);
	return 0;
}

/* Reads OLD on a thread of its own while this one reads NEW, each with
 * half the jobs, then prints what -j 1 prints: OLD's summary (or error)
 * first, and NEW's counts merged after OLD's, as one comparison counts
 * them. Returns the exit status. */
static int diff_both(const struct cli_input *in, const char *old,
		     const char *new, const struct cs_diff_opts *o,
		     struct cs_diff *diff)
{
	struct diff_side side[2];
	struct cs_diff *mine = NULL;
	struct cs_job job;
	int rc = 1;

	for (int i = 0; i < 2; i++) {
		side[i] = (struct diff_side){ .in = *in, .run = { .which = i,
					     .view = in->view } };
		side[i].in.input = i ? new : old;
		side[i].in.name_input = true;
		side[i].in.concurrent = true;
		/* OLD takes the odd one */
		side[i].in.jobs = i ? in->jobs / 2 : (in->jobs + 1) / 2;
	}
	side[0].run.diff = diff;
	if (cs_diff_new(o, &mine)) {	/* the same keys: the same texts */
		cli_error("diff: %s", strerror(ENOMEM));
		return 1;
	}
	side[1].run.diff = mine;
	side[0].s = cli_open(&side[0].in);
	if (!side[0].s)
		goto out;
	side[1].s = cli_open(&side[1].in);
	if (!side[1].s)
		goto out;
	cs_job_start(&job, 2, side_run, &side[0]);
	side_run(&side[1]);
	cs_job_wait(&job);
	rc = cli_run_done(side[0].s, &side[0].in, side[0].err);
	if (!rc)
		rc = cli_run_done(side[1].s, &side[1].in, side[1].err);
	if (!rc && cs_diff_merge(diff, mine)) {
		cli_error("diff: %s", strerror(ENOMEM));
		rc = 1;
	}
out:
	cs_session_free(side[0].s);
	cs_session_free(side[1].s);
	cs_diff_free(mine);
	return rc;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_INPUT_OPTIONS,
		CLI_OFF_CPU_OPTIONS,
		{ "output",        required_argument, NULL, 'o' },
		{ "sort",          required_argument, NULL, 's' },
		{ "percent-limit", required_argument, NULL, OPT_PERCENT_LIMIT },
		{ "jobs",          required_argument, NULL, 'j' },
		{ "help",          no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_input in = { .cmd = "diff", .off_cpu_aware = true };
	struct cs_diff_opts o = { 0 };
	struct cs_report_opts sort = { 0 };
	struct cs_diff_run run = { 0 };
	const char *output = NULL, *old = "perf.data.old", *new = "perf.data";
	FILE *out = NULL;
	char bad[64], *end;
	int c, rc = 129;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:s:j:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 's':
			if (cs_report_parse_sort(&sort, optarg, bad, sizeof(bad))) {
				cli_error("diff: --sort: unknown or repeated key '%s'"
					  " (keys: comm, pid, tid, dso, sym, state)", bad);
				return 129;
			}
			memcpy(o.sort, sort.sort, sizeof(o.sort));
			o.nr_sort = sort.nr_sort;
			break;
		case OPT_PERCENT_LIMIT:
			o.percent_limit = strtod(optarg, &end);
			if (end == optarg || *end || o.percent_limit < 0 ||
			    o.percent_limit > 100) {
				cli_error("diff: --percent-limit '%s': expected a"
					  " percentage", optarg);
				return 129;
			}
			break;
		default:
			if (c == 'i') {
				cli_error("diff: give the two profiles as OLD NEW");
				return 129;
			}
			if (cli_option(&in, c, optarg, usage_text, &rc))
				break;
			return rc;
		}
	}
	if (argc - optind == 2) {
		old = argv[optind];
		new = argv[optind + 1];
	} else if (argc - optind == 1) {
		/* as perf diff FILE: FILE against perf.data.old */
		new = argv[optind];
	} else if (argc - optind > 2) {
		cli_error("diff: compares two profiles, not %d", argc - optind);
		fputs(usage_text, stderr);
		return 129;
	}
	/* one stream cannot be read twice, nor by two readers at once */
	if (old && new && !strcmp(old, "-") && !strcmp(new, "-")) {
		cli_error("diff: OLD and NEW cannot both be standard input");
		return 129;
	}
	in.jobs = in.jobs ? in.jobs : cs_jobs_default();
	o.jobs = in.jobs;
	if (cs_diff_new(&o, &run.diff)) {
		cli_error("diff: %s", strerror(ENOMEM));
		return 1;
	}
	run.view = in.view;
	if (in.jobs >= 2) {
		rc = diff_both(&in, old, new, &o, run.diff);
	} else {
		rc = cli_run_path(&in, old, &cs_diff_ops, &run);
		if (!rc) {
			run.which = 1;
			rc = cli_run_path(&in, new, &cs_diff_ops, &run);
		}
	}
	if (!rc) {
		out = cli_output_open(output);
		if (!out) {
			rc = 1;
		} else {
			int write_err = 0;

			/* the failed write's errno names it (ENOSPC, ...) */
			errno = 0;
			if (cs_diff_write(run.diff, out) == -EIO)
				write_err = errno ? errno : EIO;
			rc = cli_output_close(out, output, write_err, !!write_err);
			out = NULL;
		}
	}
	cs_diff_free(run.diff);
	return rc;
}
