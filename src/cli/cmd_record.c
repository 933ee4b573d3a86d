/* cmd_record.c - `callstitch record`: perf record's command line, with
 * deferred user callchains when asked for and the kernel has them. */
#include "cli/commands.h"
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "abi/perf_regs.h"
#include "lib/util/errbuf.h"
#include "record/record.h"

enum {
	OPT_CALL_GRAPH = 0x2000,
	OPT_DRAIN_MS,
	OPT_ZSTD_LEVEL,
	OPT_BUILDID_CACHE,
	OPT_SWITCH_EVENTS,
	OPT_OFF_CPU,
};

#define DEFAULT_FREQ      4000
#define DEFAULT_DRAIN_MS   500

static void usage(FILE *f)
{
	/* the default rings of three kinds of recording */
	struct cs_rec_event tracepoint = { .tp_system = "sched", .period = 1 };
	struct cs_record_opts plain = { 0 };
	struct cs_record_opts dwarf = { .dwarf_stack = CS_PERF_STACK_USER_DEFAULT };
	struct cs_record_opts off_cpu = { .events = { &tracepoint, 1 } };

	fprintf(f,
		"usage: callstitch record [-e EVENT]... [-F FREQ | -c PERIOD]\n"
		"                         [-g | --call-graph fp[,defer]|dwarf[,SIZE] | -G]\n"
		"                         [-a | -p PID | -t TID] [-C CPUS] [--switch-events]\n"
		"                         [--off-cpu]\n"
		"                         [-o FILE | -o -] [-z]\n"
		"                         [--drain-ms N] [-m PAGES] [--buildid-cache | -N]\n"
		"                         [-q] [-- COMMAND [ARGS...]]\n\n"
		"Records a profile into perf.data (perf record's options and defaults).\n"
		"With --call-graph fp,defer the kernel unwinds each user stack once, on\n"
		"the way back to user space (Linux 6.19+); an older kernel is told\n"
		"apart once and ordinary callchains are recorded instead. At stop the\n"
		"samples are disabled first and the recorder keeps reading while\n"
		"samples still wait for their deferred user stack (--drain-ms).\n"
		"With --call-graph dwarf each sample carries a copy of the user\n"
		"registers and of the top SIZE bytes of the user stack, which the\n"
		"readers unwind with the binaries' DWARF call frame information: whole\n"
		"stacks through code built without frame pointers.\n\n"
		"  -e, --event EVENT     what to sample; repeat -e or separate by commas:\n"
		"                        cycles (default; cpu-clock when the CPU has no\n"
		"                        PMU), instructions, cpu-clock, task-clock, ...,\n"
		"                        rHEX (raw), PMU/TERMS/ (cpu/event=0x3c,umask=0/),\n"
		"                        SYSTEM:TRACEPOINT (sched:sched_switch, globs as\n"
		"                        'syscalls:sys_enter_*'), each with :u :k :p ...\n"
		"  -F, --freq FREQ       samples per second (default %d)\n"
		"  -c, --count PERIOD    a sample every PERIOD events\n"
		"  -g                    record callchains: frame pointers, or the mode\n"
		"                        a --call-graph gives, before or after -g (as\n"
		"                        perf: --call-graph dwarf -g records dwarf)\n"
		"      --call-graph MODE fp; fp,defer for deferred user callchains;\n"
		"                        dwarf[,SIZE] for DWARF unwinding from SIZE\n"
		"                        bytes of user stack per sample (default %u, at\n"
		"                        most %u, rounded up to a multiple of 8)\n"
		"  -G                    the same as --call-graph fp,defer\n"
		"  -a, --all-cpus        every task on every CPU\n"
		"  -p, --pid PID         a running process and its new children\n"
		"  -t, --tid TID         one running thread\n"
		"  -C, --cpu CPUS        only these CPUs (0,2-3)\n"
		"      --switch-events   record context switches (PERF_RECORD_SWITCH)\n"
		"      --off-cpu         also where the tasks wait: each switch-out\n"
		"                        (sched:sched_switch) with its stack, deferred\n"
		"                        where the kernel can, and the context switches\n"
		"                        that tell when it ran again; the readers show\n"
		"                        the time off the CPU\n"
		"  -o, --output FILE     where to write (default perf.data; - for a\n"
		"                        pipe on stdout)\n"
		"  -z, --compression-level[=N]  zstd-compress the data (default level 1)\n"
		"      --drain-ms N      at stop, wait up to N ms for deferred user\n"
		"                        stacks still due (default %d, 0 = off)\n"
		"  -m, --mmap-pages N    ring pages per CPU, a power of two (default\n"
		"                        %zu; with dwarf, room for 128 samples: %zu for\n"
		"                        the default SIZE; %zu with a tracepoint sampled\n"
		"                        at every hit, as --off-cpu's)\n"
		"      --buildid-cache   copy every binary with samples, and the kernel's\n"
		"                        symbols, into perf's build-id cache (~/.debug),\n"
		"                        so they are found after they change or go away\n"
		"  -N, --no-buildid-cache  copy nothing there, not even the binaries of\n"
		"                        processes in other mount namespaces (containers),\n"
		"                        which are copied by default: once the container\n"
		"                        is gone nothing else can find them\n"
		"  -q, --quiet           no progress, notices or summary (errors only)\n"
		"  -h, --help            this text\n",
		DEFAULT_FREQ, CS_PERF_STACK_USER_DEFAULT, CS_PERF_STACK_USER_MAX,
		DEFAULT_DRAIN_MS, cs_record_default_pages(&plain),
		cs_record_default_pages(&dwarf), cs_record_default_pages(&off_cpu));
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

/* perf's --call-graph modes (lbr needs hardware we do not drive). Returns
 * false with a message for anything else. */
static bool parse_call_graph(const char *arg, struct cs_record_opts *o)
{
	unsigned long long size;
	char *end;

	o->callchain = true;
	o->defer = false;
	o->dwarf_stack = 0;
	if (!strcmp(arg, "fp"))
		return true;
	if (!strcmp(arg, "fp,defer")) {
		o->defer = true;
		return true;
	}
	if (!strcmp(arg, "dwarf")) {
		o->dwarf_stack = CS_PERF_STACK_USER_DEFAULT;
		return true;
	}
	if (!strncmp(arg, "dwarf,", 6)) {
		/* as perf: any base, rounded up to whole u64s */
		errno = 0;
		size = strtoull(arg + 6, &end, 0);
		if (arg[6] && arg[6] != '-' && !*end && !errno && size &&
		    size <= CS_PERF_STACK_USER_MAX) {
			o->dwarf_stack = (uint32_t)((size + 7) & ~7ULL);
			if (o->dwarf_stack <= CS_PERF_STACK_USER_MAX)
				return true;
		}
		cli_error("record: --call-graph dwarf,SIZE: the stack dump size must be "
			  "1 to %u bytes (rounded up to a multiple of 8), not '%s'",
			  CS_PERF_STACK_USER_MAX, arg + 6);
		return false;
	}
	cli_error("record: --call-graph takes fp, fp,defer, dwarf or dwarf,SIZE, not "
		  "'%s'%s", arg, !strcmp(arg, "lbr") ? " (lbr is not supported)" : "");
	return false;
}

/* --off-cpu: every switch-out of the targets with its stack (sampled at
 * each hit, whatever -c/-F say), deferred unless another call graph was
 * asked for, and the context switches that tell when they ran again. */
static int add_off_cpu(struct cs_record_opts *o, struct cs_rec_events *events,
		       struct cs_errbuf *eb)
{
	bool have = false;
	int err;

	for (size_t i = 0; i < events->nr; i++)
		have |= events->v[i].tp_system && !strcmp(events->v[i].tp_system, "sched") &&
			!strcmp(events->v[i].tp_name, "sched_switch");
	if (!have) {
		err = cs_rec_events_parse(events, "sched:sched_switch", NULL, eb);
		if (err)
			return err;
		events->v[events->nr - 1].period = 1;
	}
	if (!o->callchain)
		parse_call_graph("fp,defer", o);
	o->switch_events = true;
	return 0;
}

struct ui {
	bool live;			/* a status line is on the terminal */
	bool tty;
};

static void on_notice(void *ctx, const char *msg)
{
	struct ui *u = ctx;

	if (u->live) {
		fputs("\r\033[K", stderr);
		u->live = false;
	}
	cli_error("%s", msg);
}

static void on_progress(void *ctx, const struct cs_record_progress *p)
{
	struct ui *u = ctx;

	fprintf(stderr, "\r[ callstitch record: %" PRIu64 " samples, %.1f MB written, %"
		PRIu64 " lost ]\033[K", p->samples, p->bytes / 1048576.0, p->lost);
	u->live = true;
}

static void summary(const struct cs_record_opts *o, const struct cs_record_result *res)
{
	fprintf(stderr, "[ callstitch record: wrote %.1f MB %s (%" PRIu64 " samples",
		res->bytes / 1048576.0, strcmp(o->output, "-") ? o->output : "to stdout",
		res->samples);
	if (res->defer_on)
		fprintf(stderr, ", %" PRIu64 " with a deferred user stack; drained %.0f ms",
			res->waiting.deferred_samples, res->drain_ns / 1e6);
	fprintf(stderr, ") ]\n");
}

/* As perf: the command's own status when it ended by itself. */
static int exit_status(const struct cs_record_result *res)
{
	int st = res->workload_status;

	if (res->stop_signal || st == -1)
		return 0;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 0;
}

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "event",      required_argument, NULL, 'e' },
		{ "freq",       required_argument, NULL, 'F' },
		{ "count",      required_argument, NULL, 'c' },
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "all-cpus",   no_argument,       NULL, 'a' },
		{ "pid",        required_argument, NULL, 'p' },
		{ "tid",        required_argument, NULL, 't' },
		{ "cpu",        required_argument, NULL, 'C' },
		{ "switch-events", no_argument,    NULL, OPT_SWITCH_EVENTS },
		{ "off-cpu",    no_argument,       NULL, OPT_OFF_CPU },
		{ "output",     required_argument, NULL, 'o' },
		{ "compression-level", optional_argument, NULL, OPT_ZSTD_LEVEL },
		{ "drain-ms",   required_argument, NULL, OPT_DRAIN_MS },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "buildid-cache", no_argument,    NULL, OPT_BUILDID_CACHE },
		{ "no-buildid-cache", no_argument, NULL, 'N' },
		{ "quiet",      no_argument,       NULL, 'q' },
		{ "help",       no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cs_record_opts o = {
		.output = "perf.data",
		.freq = true,
		.period = DEFAULT_FREQ,
		.drain_ms = DEFAULT_DRAIN_MS,
		.version = "callstitch " CS_VERSION,
	};
	struct cs_record_result res;
	struct cs_errbuf eb = { { 0 } };
	struct ui ui = { .tty = isatty(STDERR_FILENO) };
	struct cs_rec_events events = { 0 };
	int *cpus = NULL;
	const char **self;
	bool quiet = false, off_cpu = false;
	uint64_t v;
	int c, err, rc;

	optind = 1;
	/* '+': the command's own options are not ours */
	while ((c = getopt_long(argc, argv, "+e:F:c:gGap:t:C:o:zm:Nqh", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (cs_rec_events_parse(&events, optarg, NULL, &eb)) {
				cli_error("record: %s", eb.msg);
				rc = 129;
				goto out;
			}
			break;
		case 'C':
			free(cpus);
			err = cs_rec_cpu_list_parse(optarg, &cpus);
			if (err < 0) {
				cpus = NULL;
				cli_error("record: -C wants a CPU list such as 0,2-3, not '%s'",
					  optarg);
				rc = 129;
				goto out;
			}
			o.cpus = cpus;
			o.nr_cpus = (size_t)err;
			break;
		case OPT_SWITCH_EVENTS:
			o.switch_events = true;
			break;
		case OPT_OFF_CPU:
			off_cpu = true;
			break;
		case 'F':
			if (!parse_u64(optarg, 1000000, &v) || !v) {
				cli_error("record: -F wants a frequency from 1 to 1000000 Hz, not '%s'",
					  optarg);
				rc = 129;
				goto out;
			}
			o.freq = true;
			o.period = v;
			o.period_given = true;
			break;
		case 'c':
			if (!parse_u64(optarg, UINT64_MAX >> 1, &v) || !v) {
				cli_error("record: -c wants a positive period, not '%s'", optarg);
				rc = 129;
				goto out;
			}
			o.freq = false;
			o.period = v;
			o.period_given = true;
			break;
		case 'g':
			/* as perf: callchains in the mode given so far, fp
			 * if none; a later --call-graph sets the mode */
			o.callchain = true;
			break;
		case 'G':
			parse_call_graph("fp,defer", &o);
			break;
		case OPT_CALL_GRAPH:
			if (!parse_call_graph(optarg, &o)) {
				rc = 129;
				goto out;
			}
			break;
		case 'a':
			o.system_wide = true;
			break;
		case 'p':
		case 't':
			if (!parse_u64(optarg, INT32_MAX, &v) || !v) {
				cli_error("record: -%c wants a process or thread id, not '%s'",
					  c, optarg);
				rc = 129;
				goto out;
			}
			if (c == 'p')
				o.pid = (pid_t)v;
			else
				o.tid = (pid_t)v;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'z':
			o.zstd_level = 1;
			break;
		case OPT_ZSTD_LEVEL:
			if (!optarg) {
				o.zstd_level = 1;
			} else if (!parse_u64(optarg, 22, &v) || !v) {
				cli_error("record: --compression-level wants 1 to 22, not '%s'",
					  optarg);
				rc = 129;
				goto out;
			} else {
				o.zstd_level = (int)v;
			}
			break;
		case OPT_DRAIN_MS:
			if (!parse_u64(optarg, 600000, &v)) {
				cli_error("record: --drain-ms wants 0 to 600000, not '%s'", optarg);
				rc = 129;
				goto out;
			}
			o.drain_ms = (unsigned)v;
			break;
		case 'm':
			if (!parse_u64(optarg, 1 << 20, &v) || !v || (v & (v - 1))) {
				cli_error("record: -m wants a power of two number of pages, not '%s'",
					  optarg);
				rc = 129;
				goto out;
			}
			o.mmap_pages = (size_t)v;
			break;
		case OPT_BUILDID_CACHE:
			o.buildid_cache = true;
			break;
		case 'N':
			o.no_buildid_cache = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			rc = 0;
			goto out;
		default:
			usage(stderr);
			rc = 129;
			goto out;
		}
	}
	if (optind < argc)
		o.argv = argv + optind;
	if (!events.nr && cs_rec_events_parse(&events, "cycles", NULL, &eb)) {
		cli_error("record: %s", eb.msg);
		rc = 1;
		goto out;
	}
	if (off_cpu && add_off_cpu(&o, &events, &eb)) {
		cli_error("record: --off-cpu: %s", eb.msg);
		rc = 1;
		goto out;
	}
	o.events = events;
	if (!o.argv && !o.system_wide && !o.pid && !o.tid) {
		cli_error("record: nothing to record: give a command, -a, -p or -t");
		usage(stderr);
		rc = 129;
		goto out;
	}
	if (!strcmp(o.output, "-") && isatty(STDOUT_FILENO)) {
		cli_error("record: -o - writes binary data: redirect stdout to a file or pipe");
		rc = 129;
		goto out;
	}
	if (!quiet)
		o.notice = on_notice;
	o.ctx = &ui;
	if (ui.tty && !quiet)
		o.progress = on_progress;

	/* the header's cmdline, as perf writes its own: "callstitch record ..." */
	self = calloc((size_t)argc + 2, sizeof(*self));
	if (!self) {
		cli_error("record: %s", strerror(ENOMEM));
		rc = 1;
		goto out;
	}
	self[0] = "callstitch";
	for (int i = 0; i < argc; i++)
		self[i + 1] = argv[i];
	o.self_argc = argc + 1;
	o.self_argv = self;

	err = cs_record_run(&o, &res, &eb);
	free(self);
	if (ui.live)
		fputs("\r\033[K", stderr);
	if (err) {
		cli_error("record: %s", eb.msg[0] ? eb.msg : strerror(-err));
		rc = 1;
		goto out;
	}
	if (!quiet) {
		if (res.lost || res.lost_samples)
			cli_warn("%" PRIu64 " samples lost, %.1f%% (the ring buffer of %zu "
				 "KiB per CPU was full: try a larger -m or a lower -F%s)",
				 res.lost + res.lost_samples,
				 100.0 * (double)(res.lost + res.lost_samples) /
				 (double)(res.samples + res.lost + res.lost_samples),
				 res.mmap_pages * (size_t)sysconf(_SC_PAGESIZE) / 1024,
				 o.dwarf_stack ? ", or a smaller dwarf,SIZE" : "");
		if (res.still_waiting && o.drain_ms)
			cli_warn("%" PRIu64 " samples still wait for their deferred user "
				 "stack after %.0f ms of drain (their tasks stayed in the "
				 "kernel); they keep their kernel part", res.still_waiting,
				 res.drain_ns / 1e6);
		else if (res.still_waiting)
			cli_warn("%" PRIu64 " samples still wait for their deferred user "
				 "stack (no drain: --drain-ms 0); they keep their kernel part",
				 res.still_waiting);
		summary(&o, &res);
	}
	rc = exit_status(&res);
out:
	cs_rec_events_free(&events);
	free(cpus);
	return rc;
}
