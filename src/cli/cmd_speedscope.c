/* cmd_speedscope.c - `callstitch speedscope`: the profile as speedscope's
 * JSON, one profile per thread, for its time-order, left-heavy and
 * sandwich views. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "outputs/report_opts.h"
#include "outputs/speedscope.h"

static const char usage_text[] =
	"usage: callstitch speedscope [OPTIONS] [-o FILE]\n\n"
	"Write the profile in speedscope's file format (JSON): one sampled\n"
	"profile per thread, heaviest first, its stitched stacks in the order\n"
	"they were taken and weighted by their period (nanoseconds for\n"
	"cpu-clock and task-clock), so speedscope shows a timeline, a\n"
	"left-heavy flame graph and a sandwich view. Open the file at\n"
	"speedscope's page or with 'speedscope FILE' (npm's speedscope).\n\n"
	CLI_INPUT_HELP
	"  -o, --output FILE     where to write (default speedscope.json; - for stdout)\n"
	"      --no-inline       no frames for inlined functions (from DWARF)\n"
	CLI_FILTER_HELP
	CLI_JOBS_COUNTING_HELP("", "file")
	"  -h, --help            this help\n";

enum {
	OPT_NO_INLINE = 0x2000,
};

int cmd_speedscope(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_INPUT_OPTIONS,
		{ "output",    required_argument, NULL, 'o' },
		{ "no-inline", no_argument,       NULL, OPT_NO_INLINE },
		CLI_FILTER_OPTIONS,
		{ "jobs",      required_argument, NULL, 'j' },
		{ "help",      no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_filter filt = { 0 };
	struct cli_input in = { .cmd = "speedscope", .filter = &filt };
	struct cs_speedscope_run run = { 0 };
	struct cs_session *s = NULL;
	const char *output = "speedscope.json", *base;
	int c, rc = 129;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:j:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case OPT_NO_INLINE:
			run.no_inline = true;
			break;
		default:
			if (cli_option(&in, c, optarg, usage_text, &rc))
				break;
			goto out;
		}
	}
	if (!cli_no_operands("speedscope", argc, argv, usage_text))
		goto out;
	rc = 1;
	run.pids = filt.pids.nr ? &filt.pids : NULL;
	run.tids = filt.tids.nr ? &filt.tids : NULL;
	/* the page shows the file's name; the input's base name says most */
	run.name = cli_input_path(&in);
	base = strrchr(run.name, '/');
	if (base)
		run.name = base + 1;
	run.exporter = "callstitch " CS_VERSION;
	cli_jobs_counting(&in);
	/* without a filter every sample's stack is resolved (whole): its
	 * binaries may load ahead */
	if (!run.pids && !run.tids)
		in.preload = CS_PRELOAD_SYMBOLS |
			     (run.no_inline ? 0 : CS_PRELOAD_INLINES);
	if (cs_speedscope_new(in.jobs, &run.speedscope)) {
		cli_error("speedscope: %s", strerror(ENOMEM));
		goto out;
	}
	s = cli_open(&in);
	if (!s)
		goto out;
	run.out = cli_output_open(output);
	if (!run.out)
		goto out;
	rc = cli_run(s, &in, &cs_speedscope_ops, &run);
out:
	rc = cli_output_close(run.out, output, run.write_err, rc);
	/* before the session: a run stopped by an error may have samples
	 * still being counted, whose keys name the session's strings */
	cs_speedscope_free(run.speedscope);
	cs_session_free(s);
	cs_speedscope_run_release(&run);
	cli_filter_free(&filt);
	return rc;
}
