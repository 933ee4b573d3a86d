/* cmd_pprof.c - `callstitch pprof`: write a pprof profile (gzipped
 * protobuf) for `go tool pprof` and continuous-profiling services. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "outputs/pprof.h"
#include "outputs/report_opts.h"

static const char usage_text[] =
	"usage: callstitch pprof [OPTIONS] -o FILE\n\n"
	"Write the profile in pprof's format (profile.proto, gzipped): every\n"
	"sample with its stitched stack, values samples/count and the period\n"
	"(cpu/nanoseconds for cpu-clock), mappings with build ids, and the\n"
	"labels comm, pid and tid. Read it with 'go tool pprof FILE'.\n\n"
	CLI_INPUT_HELP
	"  -o, --output FILE     where to write (required; - for stdout)\n"
	CLI_FILTER_HELP
	CLI_OFF_CPU_HELP
	"      --inline          list the functions inlined at each address\n"
	"                        (from DWARF) as extra lines of its location;\n"
	"                        pprof then charges samples to them\n"
	CLI_JOBS_COUNTING_HELP(
	"                        the file is compressed on another as it is encoded,\n",
	"profile")
	"  -h, --help            this help\n";

enum {
	OPT_INLINE = 0x2000,
};

/* pprof wants the wall-clock start. perf.data's clock is not the wall
 * clock, so take the file's last write as the end of the recording and
 * leave the session to say how long it lasted (duration_nanos). */
static int64_t file_end_nanos(const char *path)
{
	struct stat st;

	if (!path || !strcmp(path, "-") || stat(path, &st))
		return 0;
	return (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

int cmd_pprof(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_INPUT_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		CLI_FILTER_OPTIONS,
		CLI_OFF_CPU_OPTIONS,
		{ "inline", no_argument,       NULL, OPT_INLINE },
		{ "jobs",   required_argument, NULL, 'j' },
		{ "help",   no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_filter filt = { 0 };
	struct cli_input in = { .cmd = "pprof", .filter = &filt,
				.off_cpu_aware = true };
	struct cs_pprof_opts o = { 0 };
	struct cs_pprof_run run = { 0 };
	struct cs_session *s = NULL;
	const char *output = NULL;
	int c, rc = 129;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:j:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case OPT_INLINE:
			run.inline_lines = true;
			break;
		default:
			if (cli_option(&in, c, optarg, usage_text, &rc))
				break;
			goto out;
		}
	}
	if (!cli_no_operands("pprof", argc, argv, usage_text))
		goto out;
	if (!output) {
		cli_error("pprof: no output file: give -o FILE (- for stdout)");
		fputs(usage_text, stderr);
		goto out;
	}
	rc = 1;
	run.pids = filt.pids.nr ? &filt.pids : NULL;
	run.view = in.view;
	run.tids = filt.tids.nr ? &filt.tids : NULL;
	o.end_nanos = file_end_nanos(cli_input_path(&in));
	if (!o.end_nanos) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		o.end_nanos = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
	}
	o.jobs = cli_jobs_counting(&in);
	/* without a filter every sample's stack is resolved (whole): its
	 * binaries may load ahead */
	if (!run.pids && !run.tids && run.view == CS_VIEW_ALL)
		in.preload = CS_PRELOAD_SYMBOLS |
			     (run.inline_lines ? CS_PRELOAD_INLINES : 0);
	if (cs_pprof_new(&o, &run.pprof)) {
		cli_error("pprof: %s", strerror(ENOMEM));
		goto out;
	}
	s = cli_open(&in);
	if (!s)
		goto out;
	run.out = cli_output_open(output);
	if (!run.out)
		goto out;
	rc = cli_run(s, &in, &cs_pprof_ops, &run);
out:
	rc = cli_output_close(run.out, output, run.write_err, rc);
	/* before the session: a run stopped by an error may have samples
	 * still being counted, whose frames name the session's strings */
	cs_pprof_free(run.pprof);
	cs_session_free(s);
	cs_pprof_run_release(&run);
	cli_filter_free(&filt);
	return rc;
}
