/* cmd_folded.c - `callstitch folded`: folded stacks for flame graph tools. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "outputs/folded.h"
#include "outputs/report_opts.h"

static const char usage_text[] =
	"usage: callstitch folded [OPTIONS]\n\n"
	"Print one line per unique stack, 'root;...;leaf COUNT', as FlameGraph's\n"
	"flamegraph.pl and inferno read (frames named like stackcollapse-perf.pl).\n"
	"A sample whose user stack never came ends in a '[user stack missing: why]'\n"
	"frame.\n\n"
	CLI_INPUT_HELP
	"  -o, --output FILE     write to FILE instead of stdout\n"
	"      --kernel          include kernel frames (default)\n"
	"      --no-kernel       drop kernel frames\n"
	"      --no-user         drop user frames\n"
	"      --comm            put the process name first, as the root frame\n"
	"      --annotate        append _[k] to kernel frames\n"
	"      --period          count the sample period, not samples\n"
	"      --no-inline       no frames for inlined functions (from DWARF)\n"
	CLI_JOBS_COUNTING_HELP("", "output")
	CLI_OFF_CPU_HELP
	"                        (--off-cpu counts microseconds; the default\n"
	"                        folds the on-CPU samples)\n"
	CLI_FILTER_HELP
	"  -h, --help            this help\n";

enum {
	OPT_KERNEL = 0x2000,
	OPT_NO_KERNEL,
	OPT_NO_USER,
	OPT_COMM,
	OPT_ANNOTATE,
	OPT_PERIOD,
	OPT_NO_INLINE,
};

int cmd_folded(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_INPUT_OPTIONS,
		{ "output",    required_argument, NULL, 'o' },
		{ "kernel",    no_argument,       NULL, OPT_KERNEL },
		{ "no-kernel", no_argument,       NULL, OPT_NO_KERNEL },
		{ "no-user",   no_argument,       NULL, OPT_NO_USER },
		{ "comm",      no_argument,       NULL, OPT_COMM },
		{ "annotate",  no_argument,       NULL, OPT_ANNOTATE },
		{ "period",    no_argument,       NULL, OPT_PERIOD },
		CLI_FILTER_OPTIONS,
		CLI_OFF_CPU_OPTIONS,
		{ "no-inline", no_argument,       NULL, OPT_NO_INLINE },
		{ "jobs",      required_argument, NULL, 'j' },
		{ "help",      no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_filter filt = { 0 };
	struct cli_input in = { .cmd = "folded", .filter = &filt,
				.off_cpu_aware = true };
	struct cs_folded_opts o = { 0 };
	struct cs_folded_run run = { 0 };
	struct cs_session *s = NULL;
	const char *output = NULL;
	int c, rc = 129;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:j:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':		output = optarg; break;
		case OPT_KERNEL:	o.no_kernel = false; break;
		case OPT_NO_KERNEL:	o.no_kernel = true; break;
		case OPT_NO_USER:	o.no_user = true; break;
		case OPT_COMM:		o.comm = true; break;
		case OPT_ANNOTATE:	o.annotate = true; break;
		case OPT_PERIOD:	o.use_period = true; break;
		case OPT_NO_INLINE:	run.no_inline = true; break;
		default:
			if (cli_option(&in, c, optarg, usage_text, &rc))
				break;
			goto out;
		}
	}
	if (!cli_no_operands("folded", argc, argv, usage_text))
		goto out;
	if (o.no_kernel && o.no_user) {
		cli_error("folded: --no-kernel and --no-user leave no frames");
		goto out;
	}
	rc = 1;
	o.pids = filt.pids.nr ? &filt.pids : NULL;
	o.tids = filt.tids.nr ? &filt.tids : NULL;
	o.jobs = cli_jobs_counting(&in);
	/* one count per line: on-CPU samples, or off-CPU microseconds */
	run.view = in.view == CS_VIEW_OFF_CPU ? CS_VIEW_OFF_CPU : CS_VIEW_ON_CPU;
	if (run.view == CS_VIEW_OFF_CPU) {
		o.use_period = true;
		o.period_div = 1000;
	}
	if (cs_folded_new(&o, &run.folded)) {
		cli_error("folded: %s", strerror(ENOMEM));
		goto out;
	}
	run.out = cli_output_open(output);
	if (!run.out)
		goto out;
	/* without a filter every on-CPU sample's stack is resolved (whole:
	 * --no-kernel and --no-user drop frames after): its binaries may
	 * load ahead; the off-CPU switch-outs left out are tracepoints */
	if (!o.pids && !o.tids && run.view == CS_VIEW_ON_CPU)
		in.preload = CS_PRELOAD_SYMBOLS | CS_PRELOAD_NOT_TRACEPOINTS |
			     (run.no_inline ? 0 : CS_PRELOAD_INLINES);
	s = cli_open(&in);
	if (!s)
		goto out;
	rc = cli_run(s, &in, &cs_folded_ops, &run);
	if (!rc && run.left_out && !in.quiet)
		cli_warn("%" PRIu64 " %s left out: %s", run.left_out,
			 run.view == CS_VIEW_OFF_CPU ? "on-CPU samples" :
			 "off-CPU switch-outs",
			 run.view == CS_VIEW_OFF_CPU ? "without --off-cpu they fold" :
			 "--off-cpu folds their time");
out:
	rc = cli_output_close(run.out, output, run.write_err, rc);
	/* before the session: the table's keys point at its names, and a
	 * run stopped by an error may have samples still being counted */
	cs_folded_free(run.folded);
	if (s)
		cs_session_free(s);
	cs_folded_run_release(&run);
	cli_filter_free(&filt);
	return rc;
}
