/* cmd_script.c - `callstitch script`: every sample with its whole stack. */
#include "cli/commands.h"
#include "cli/cli.h"
#include "outputs/script.h"
#include "lib/machine/machine.h"
#include "lib/util/jobs.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_MAX_STACK = 0x2000, OPT_NO_INLINE };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: callstitch script [-i FILE] [--kallsyms FILE] [--symfs DIR]\n"
		"                         [--no-merge-callchains] [-F FIELDS] [--stats]\n"
		"                         [-j N]\n\n"
		"Prints each sample with its stitched call stack in perf script's\n"
		"layout. A sample whose deferred user stack never came keeps its\n"
		"kernel part and ends with a '[user stack missing: REASON]' frame.\n\n"
		CLI_INPUT_HELP
		"      --no-merge-callchains  the raw view: samples with their cookie\n"
		"                        and each DEFERRED CALLCHAIN record on its own\n"
		"  -F, --fields LIST     comm,pid,tid,cpu,time,period,event,trace,ip,sym,\n"
		"                        symoff,dso (exactly these), or +NAME,-NAME to\n"
		"                        change perf's defaults\n"
		"      --max-stack N     print at most N frames per stack, per part of one\n"
		"                        unwound from a stack copy (default 127)\n"
		"      --no-inline       no lines for inlined functions (from DWARF)\n"
		"  -j, --jobs N          threads: with 2 or more the text is made (the\n"
		"                        addresses named too) and written on a thread of\n"
		"                        its own (with 3 or more written on a third, and\n"
		"                        the file read ahead on a fourth), a compressed\n"
		"                        file is decompressed ahead, and N threads load\n"
		"                        the symbols of the sampled binaries ahead of\n"
		"                        their first use; the same bytes (default: the\n"
		"                        CPUs available). The text is made on the\n"
		"                        reading thread after all when the threads only\n"
		"                        take turns: --stats (or, without it,\n"
		"                        $CALLSTITCH_SCRIPT_VERBOSE=1) says so, and why\n"
		"  -h, --help            this text\n");
}

/* How the text was made where it was not as asked, a line each after
 * lead, on stderr: with --stats in its table, else with
 * CALLSTITCH_SCRIPT_VERBOSE=1 (--stats names addresses on the reading
 * thread, which never waits for the formatting thread then). */
static void put_notes(const struct cs_script *sc, const char *lead)
{
	size_t waits;

	switch (cs_script_fmt_reason(sc, &waits)) {
	case CS_SCRIPT_FMT_KEPT:
		break;
	case CS_SCRIPT_FMT_ONE_CPU:
		fprintf(stderr, "%sformatting thread given up after %zu batches: "
			"the threads took turns on one CPU (the others busy); "
			"the rest made on the reading thread\n", lead,
			cs_script_fmt_given_up(sc));
		break;
	case CS_SCRIPT_FMT_WAITS:
		fprintf(stderr, "%sformatting thread given up after %zu batches: "
			"the reading thread waited %zu times for it to count a "
			"stack's lines against --max-stack; the rest made on the "
			"reading thread\n", lead, cs_script_fmt_given_up(sc),
			waits);
		break;
	}
	if (cs_script_line_cache_grown(sc))
		fprintf(stderr, "%sline cache grown to %zu MiB of text: the place "
			"table found lines other processes made\n", lead,
			cs_script_line_cache_grown(sc) >> 20);
}

int cmd_script(int argc, char **argv)
{
	static const struct option opts[] = {
		CLI_INPUT_OPTIONS,
		{ "no-merge-callchains", no_argument, NULL, CLI_OPT_NO_MERGE },
		{ "max-stack", required_argument, NULL, OPT_MAX_STACK },
		{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
		{ "fields", required_argument, NULL, 'F' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_input in = { .input = "perf.data" };
	struct cs_script_opts so = { .out = stdout, .jobs = cs_jobs_default() };
	struct cs_script *sc;
	struct cs_session *s;
	int c, rc, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:qhF:j:", opts, NULL)) != -1) {
		if (cli_input_option(&in, c, optarg))
			continue;
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'F': {
			const char *bad;
			size_t len;

			if (cs_script_parse_fields(optarg, &so.fields, &bad, &len)) {
				cli_error("script: -F: '%.*s' is not a field (comm, pid, tid, cpu, time, period, event, trace, ip, sym, symoff, dso; +NAME/-NAME change the defaults)",
					  (int)len, bad);
				return 129;
			}
			break;
		}
		case 'j':
			if (!cli_jobs_option("script", optarg, &so.jobs))
				return 129;
			break;
		case OPT_NO_INLINE:
			so.no_inline = true;
			break;
		case OPT_MAX_STACK: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || !v || v > 65536) {
				cli_error("script: --max-stack wants a number from 1 to 65536, not '%s'",
					  optarg);
				return 129;
			}
			so.max_stack = (unsigned int)v;
			break;
		}
		default:
			usage(stderr);
			return 129;
		}
	}
	if (optind < argc) {
		cli_error("script: unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return 129;
	}
	so.no_merge = in.no_merge;
	/* an explicit --kallsyms that cannot be read is a mistake, not a
	 * profile without kernel symbols */
	if (in.kallsyms && access(in.kallsyms, R_OK)) {
		cli_error("script: --kallsyms %s: %s", in.kallsyms, strerror(errno));
		return 1;
	}
	in.jobs = so.jobs;
	/* the text is made on a second thread (and written on a third); the
	 * records are read ahead from -j 3 on. Since addresses are named on
	 * the formatting thread the two threads are about evenly busy, so at
	 * -j 2 a reading-ahead thread only takes turns with them, and the
	 * reading thread decodes records another CPU's cache holds: -j 2 is
	 * 5-15% faster without it (docs/performance.md, "script on two
	 * cores, fourth pass") */
	in.output_threads = 1;
	/* every sample's stack is resolved, whole (perf's build-id list
	 * names the binaries of the samples' ips; ours those of whole
	 * stacks): its binaries may load ahead. Not when -F leaves the stack
	 * out, nor for tracepoint events, whose default shows none. */
	if (!so.max_stack && (!so.fields ||
			      ((so.fields & CS_SCRIPT_IP) &&
			       (so.fields & (CS_SCRIPT_SYM | CS_SCRIPT_DSO)))))
		in.preload = CS_PRELOAD_SYMBOLS |
			     (so.no_inline ? 0 : CS_PRELOAD_INLINES) |
			     (so.fields ? 0 : CS_PRELOAD_NOT_TRACEPOINTS);
	s = cli_open(&in);
	if (!s)
		return 1;
	if (cs_script_new(&so, &sc)) {
		cli_error("script: %s", strerror(ENOMEM));
		cs_session_free(s);
		return 1;
	}
	/* stdout is written by the printer in 1 MiB chunks */
	rc = cli_run(s, &in, &cs_script_ops, sc);
	if (in.stats)
		put_notes(sc, "  ");
	else if (cli_env_on("CALLSTITCH_SCRIPT_VERBOSE"))
		put_notes(sc, "callstitch: script: ");
	if (!in.quiet) {
		const char *first;
		size_t n = cs_machine_build_id_mismatches(cs_session_machine(s), &first);

		const char *kerr = cs_machine_kallsyms_error(cs_session_machine(s));

		if (kerr && in.kallsyms)
			cli_warn("no kernel symbols: %s", kerr);
		if (n)
			cli_warn("%zu binar%s differ from the recorded build (%s%s): "
				 "their frames show [unknown]; see --symfs",
				 n, n == 1 ? "y" : "ies", first, n > 1 ? ", ..." : "");
		if (cs_script_unformatted(sc))
			cli_warn("%" PRIu64 " tracepoint samples show no fields: the file "
				 "has no format for their event (no tracing data), or "
				 "their raw data is cut short", cs_script_unformatted(sc));
	}
	err = cs_script_flush(sc);
	if (err)
		rc = cli_output_close(NULL, NULL, err, 1);
	cs_script_free(sc);
	cs_session_free(s);
	return rc;
}
