/* cmd_report.c - `callstitch report`: a profile summary by symbol, with call
 * graphs, in the layout of `perf report --stdio`. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "lib/util/jobs.h"
#include "outputs/report.h"
#include "outputs/report_opts.h"

static const char usage_text[] =
	"usage: callstitch report [OPTIONS]\n\n"
	"Summarise a profile by symbol, with the stitched call graph under each\n"
	"entry, like 'perf report --stdio'. A header tells how the recording was\n"
	"made and how many samples got their user stack back. Switch-outs\n"
	"(record --off-cpu) show as off-CPU time, in their own section, next to\n"
	"the on-CPU samples.\n\n"
	CLI_INPUT_HELP
	"      --no-merge-callchains  keep deferred callchains as recorded\n"
	"  -o, --output FILE     write to FILE instead of stdout\n"
	"      --stdio           text output (the only kind; for perf's muscle memory)\n"
	"      --children        Children and Self columns (default)\n"
	"      --no-children     Self only\n"
	"  -s, --sort KEYS       entries by KEYS, any of comm,pid,tid,dso,sym,state\n"
	"                        (default comm,dso,sym; state: why an off-CPU\n"
	"                        switch-out waited)\n"
	"  -g, --call-graph ARG  caller (root first, default), callee, none, and\n"
	"                        optionally the least percentage of a branch\n"
	"                        (e.g. caller,0.5 or graph,0.5,callee)\n"
	"      --percent-limit N hide entries below N percent\n"
	"      --no-inline       no frames for inlined functions (from DWARF)\n"
	"  -n, --show-nr-samples a Samples column\n"
	"      --memory BYTES    the memory the report's tables may hold (K, M, G;\n"
	"                        default 256M, or $CALLSTITCH_REPORT_MEMORY): past\n"
	"                        it the stacks go to a temporary file in $TMPDIR\n"
	"                        and the report is made from there (same output;\n"
	"                        with $CALLSTITCH_REPORT_VERBOSE=1 a line on\n"
	"                        stderr says which way and why)\n"
	"  -j, --jobs N          threads for counting the samples while the next\n"
	"                        are read, sorting, formatting, decompressing,\n"
	"                        loading symbols ahead of their first use and\n"
	"                        (with 3 or more) reading the file ahead\n"
	"                        (default: the CPUs available); the output is the\n"
	"                        same for any N\n"
	CLI_OFF_CPU_HELP
	CLI_FILTER_HELP
	"      --comm NAME[,NAME] only these command names\n"
	"  -h, --help            this help\n";

enum {
	OPT_STDIO = 0x2000,
	OPT_CHILDREN,
	OPT_NO_CHILDREN,
	OPT_PERCENT_LIMIT,
	OPT_NO_INLINE,
	OPT_MEMORY,
};

/* "N", "NK", "NM", "NG": bytes into *out; false if not that */
static bool parse_bytes(const char *arg, size_t *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (end == arg || errno || arg[0] == '-')
		return false;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end || !v || v > (SIZE_MAX >> shift))
		return false;
	*out = (size_t)v << shift;
	return true;
}

/* "caller", "callee", "none", "graph", a number, comma-separated. */
static int parse_graph(struct cs_report_opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int err = copy ? 0 : -ENOMEM;

	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		char *end;
		double v;

		if (!strcmp(tok, "caller"))
			o->graph = CS_REPORT_GRAPH_CALLER;
		else if (!strcmp(tok, "callee"))
			o->graph = CS_REPORT_GRAPH_CALLEE;
		else if (!strcmp(tok, "none"))
			o->graph = CS_REPORT_GRAPH_NONE;
		else if (!strcmp(tok, "graph"))
			;
		else if ((v = strtod(tok, &end)), end != tok && !*end &&
			 v >= 0 && v <= 100)
			o->graph_min_percent = v;
		else
			err = -EINVAL;
	}
	free(copy);
	return err;
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_INPUT_OPTIONS,
		{ "no-merge-callchains", no_argument, NULL, CLI_OPT_NO_MERGE },
		{ "output",          required_argument, NULL, 'o' },
		{ "stdio",           no_argument,       NULL, OPT_STDIO },
		{ "children",        no_argument,       NULL, OPT_CHILDREN },
		{ "no-children",     no_argument,       NULL, OPT_NO_CHILDREN },
		{ "sort",            required_argument, NULL, 's' },
		{ "call-graph",      optional_argument, NULL, 'g' },
		{ "percent-limit",   required_argument, NULL, OPT_PERCENT_LIMIT },
		{ "show-nr-samples", no_argument,       NULL, 'n' },
		{ "jobs",            required_argument, NULL, 'j' },
		CLI_FILTER_OPTIONS,
		CLI_OFF_CPU_OPTIONS,
		{ "comm",            required_argument, NULL, CLI_OPT_COMM },
		{ "no-inline",       no_argument,       NULL, OPT_NO_INLINE },
		{ "memory",          required_argument, NULL, OPT_MEMORY },
		{ "help",            no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cs_report_opts o = { .graph_min_percent = 0.5,
				    .jobs = cs_jobs_default() };
	struct cli_filter filt = { 0 };
	struct cli_input in = { .cmd = "report", .filter = &filt,
				.off_cpu_aware = true };
	struct cs_report_run run = { 0 };
	struct cs_session *s = NULL;
	const char *output = NULL;
	char bad[64];
	const char *env = getenv("CALLSTITCH_REPORT_MEMORY");
	int c, rc = 129;

	if (env && *env && !parse_bytes(env, &o.memory)) {
		cli_error("report: CALLSTITCH_REPORT_MEMORY '%s': expected bytes"
			  " (K, M or G after the number)", env);
		return rc;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:s:g::nj:qh", longopts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'o':		output = optarg; break;
		case OPT_STDIO:		break;
		case OPT_CHILDREN:	o.no_children = false; break;
		case OPT_NO_CHILDREN:	o.no_children = true; break;
		case 'n':		o.show_nr_samples = true; break;
		case 'j':
			if (!cli_jobs_option("report", optarg, &o.jobs))
				goto out;
			break;
		case OPT_NO_INLINE:	run.no_inline = true; break;
		case OPT_MEMORY:
			if (!parse_bytes(optarg, &o.memory)) {
				cli_error("report: --memory '%s': expected bytes"
					  " (K, M or G after the number)", optarg);
				goto out;
			}
			break;
		case 's':
			if (cs_report_parse_sort(&o, optarg, bad, sizeof(bad))) {
				cli_error("report: --sort: unknown or repeated key '%s'"
					  " (keys: comm, pid, tid, dso, sym, state)", bad);
				goto out;
			}
			break;
		case 'g':
			/* perf takes "-g caller" as well as "-gcaller" */
			if (!optarg && optind < argc && argv[optind][0] != '-' &&
			    !parse_graph(&o, argv[optind])) {
				optind++;
				break;
			}
			if (optarg && parse_graph(&o, optarg)) {
				cli_error("report: --call-graph '%s': expected caller,"
					  " callee or none, and a percentage", optarg);
				goto out;
			}
			if (!optarg && o.graph == CS_REPORT_GRAPH_NONE)
				o.graph = CS_REPORT_GRAPH_CALLER;
			break;
		case OPT_PERCENT_LIMIT:
			o.percent_limit = strtod(optarg, &end);
			if (end == optarg || *end || o.percent_limit < 0 ||
			    o.percent_limit > 100) {
				cli_error("report: --percent-limit '%s': expected a"
					  " percentage", optarg);
				goto out;
			}
			break;
		default:
			if (cli_option(&in, c, optarg, usage_text, &rc))
				break;
			goto out;
		}
	}
	if (!cli_no_operands("report", argc, argv, usage_text))
		goto out;
	rc = 1;
	run.pids = filt.pids.nr ? &filt.pids : NULL;
	run.tids = filt.tids.nr ? &filt.tids : NULL;
	run.comms = filt.comms.nr ? &filt.comms : NULL;
	run.view = in.view;
	if (cs_report_new(&o, &run.report)) {
		cli_error("report: %s", strerror(ENOMEM));
		goto out;
	}
	run.out = cli_output_open(output);
	if (!run.out)
		goto out;
	in.completeness = true;		/* the header tells how stacks end */
	in.jobs = o.jobs;
	in.output_threads = o.jobs >= 2;	/* the counting thread */
	/* without a filter every sample's stack is resolved: its binaries
	 * may load ahead */
	if (!run.pids && !run.tids && !run.comms && run.view == CS_VIEW_ALL)
		in.preload = CS_PRELOAD_SYMBOLS |
			     (run.no_inline ? 0 : CS_PRELOAD_INLINES);
	s = cli_open(&in);
	if (!s)
		goto out;
	rc = cli_run(s, &in, &cs_report_ops, &run);
	if (rc && cs_report_error(run.report))
		cli_error("report: %s", cs_report_error(run.report));
	/* how it was made, for whoever weighs the memory budget */
	if (cli_env_on("CALLSTITCH_REPORT_VERBOSE") &&
	    cs_report_memory_note(run.report))
		fprintf(stderr, "callstitch: report: %s\n",
			cs_report_memory_note(run.report));
out:
	rc = cli_output_close(run.out, output, run.write_err, rc);
	/* before the session: the report's keys point at its names, and a
	 * run stopped by an error may have samples still being counted */
	cs_report_free(run.report);
	cs_session_free(s);
	cs_report_run_release(&run);
	cli_filter_free(&filt);
	return rc;
}
