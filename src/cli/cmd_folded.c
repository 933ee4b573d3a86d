/* cmd_folded.c - `callstitch folded`: folded stacks for flame graph tools. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "out/folded.h"
#include "out/report_opts.h"

static void usage(FILE *f)
{
	fprintf(f,
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
		"      --pid PID[,PID]   only these processes\n"
		"      --tid TID[,TID]   only these threads\n"
		"  -h, --help            this help\n");
}

enum {
	OPT_KERNEL = 0x2000,
	OPT_NO_KERNEL,
	OPT_NO_USER,
	OPT_COMM,
	OPT_ANNOTATE,
	OPT_PERIOD,
	OPT_PID,
	OPT_TID,
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
		{ "pid",       required_argument, NULL, OPT_PID },
		{ "tid",       required_argument, NULL, OPT_TID },
		{ "no-inline", no_argument,       NULL, OPT_NO_INLINE },
		{ "help",      no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_input in = { 0 };
	struct cs_folded_opts o = { 0 };
	struct cs_id_list pids = { 0 }, tids = { 0 };
	struct cs_folded_run run = { 0 };
	struct cs_session *s = NULL;
	const char *output = NULL;
	int c, rc = 129, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':		output = optarg; break;
		case OPT_KERNEL:	o.no_kernel = false; break;
		case OPT_NO_KERNEL:	o.no_kernel = true; break;
		case OPT_NO_USER:	o.no_user = true; break;
		case OPT_COMM:		o.comm = true; break;
		case OPT_ANNOTATE:	o.annotate = true; break;
		case OPT_PERIOD:	o.use_period = true; break;
		case OPT_NO_INLINE:	run.no_inline = true; break;
		case OPT_PID:
		case OPT_TID:
			err = cs_id_list_parse(c == OPT_PID ? &pids : &tids, optarg);
			if (err) {
				cli_error("folded: --%s '%s': expected a comma-separated list of numbers",
					  c == OPT_PID ? "pid" : "tid", optarg);
				goto out;
			}
			break;
		case 'h':
			usage(stdout);
			rc = 0;
			goto out;
		default:
			if (cli_input_option(&in, c, optarg))
				break;
			usage(stderr);
			goto out;
		}
	}
	if (optind < argc) {
		cli_error("folded: unexpected argument '%s'", argv[optind]);
		usage(stderr);
		goto out;
	}
	if (o.no_kernel && o.no_user) {
		cli_error("folded: --no-kernel and --no-user leave no frames");
		goto out;
	}
	rc = 1;
	if (pids.nr) {
		o.pids = pids.v;
		o.nr_pids = pids.nr;
	}
	if (tids.nr) {
		o.tids = tids.v;
		o.nr_tids = tids.nr;
	}
	if (cs_folded_new(&o, &run.folded)) {
		cli_error("folded: %s", strerror(ENOMEM));
		goto out;
	}
	run.out = stdout;
	if (output && strcmp(output, "-")) {
		run.out = fopen(output, "w");
		if (!run.out) {
			cli_error("%s: %s", output, strerror(errno));
			goto out;
		}
	}
	s = cli_open(&in);
	if (!s)
		goto out;
	rc = cli_run(s, &in, &cs_folded_ops, &run);
	if (run.write_err)
		cli_error("%s: cannot write: %s", output && strcmp(output, "-") ?
			  output : "standard output", strerror(run.write_err));
out:
	if (run.out && run.out != stdout && fclose(run.out) && !rc) {
		cli_error("%s: %s", output, strerror(errno));
		rc = 1;
	}
	if (s)
		cs_session_free(s);
	cs_folded_run_release(&run);
	cs_folded_free(run.folded);
	cs_id_list_free(&pids);
	cs_id_list_free(&tids);
	return rc;
}
