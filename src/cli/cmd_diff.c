/* cmd_diff.c - `callstitch diff`: two profiles compared, like perf diff. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "outputs/diff.h"

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
	CLI_OFF_CPU_HELP
	CLI_SOURCES_HELP
	"  -h, --help            this help\n";

enum { OPT_PERCENT_LIMIT = 0x2000 };

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_INPUT_OPTIONS,
		CLI_OFF_CPU_OPTIONS,
		{ "output",        required_argument, NULL, 'o' },
		{ "sort",          required_argument, NULL, 's' },
		{ "percent-limit", required_argument, NULL, OPT_PERCENT_LIMIT },
		{ "help",          no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_input in = { .off_cpu_aware = true };
	struct cs_diff_opts o = { 0 };
	struct cs_report_opts sort = { 0 };
	struct cs_diff_run run = { 0 };
	const char *output = NULL, *old = "perf.data.old", *new = "perf.data";
	FILE *out = NULL;
	char bad[64], *end;
	int c, rc = 129;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:s:qh", longopts, NULL)) != -1) {
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
	if (cs_diff_new(&o, &run.diff)) {
		cli_error("diff: %s", strerror(ENOMEM));
		return 1;
	}
	run.view = in.view;
	rc = cli_run_path(&in, old, &cs_diff_ops, &run);
	if (!rc) {
		run.which = 1;
		rc = cli_run_path(&in, new, &cs_diff_ops, &run);
	}
	if (!rc) {
		out = cli_output_open(output);
		if (!out) {
			rc = 1;
		} else if (cs_diff_write(run.diff, out) == -EIO) {
			rc = cli_output_close(out, output, EIO, 1);
			out = NULL;
		} else {
			rc = cli_output_close(out, output, 0, 0);
			out = NULL;
		}
	}
	cs_diff_free(run.diff);
	return rc;
}
