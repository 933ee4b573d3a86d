/* cli.c - messages, shared input options, running a session. */
#include "cli/cli.h"
#include "outputs/stack_health.h"
#include "lib/util/jobs.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* An error and a warning are the same line but for what starts it. */
static void __attribute__((format(printf, 2, 0)))
cli_say(const char *prefix, const char *fmt, va_list ap)
{
	flockfile(stderr);	/* one line, whichever thread says it */
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_say("callstitch: ", fmt, ap);
	va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_say("callstitch: warning: ", fmt, ap);
	va_end(ap);
}

bool cli_env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

int cli_input_option(struct cli_input *in, int opt, const char *arg)
{
	switch (opt) {
	case 'i':		in->input = arg; return 1;
	case 'q':		in->quiet = true; return 1;
	case CLI_OPT_KALLSYMS:	in->kallsyms = arg; return 1;
	case CLI_OPT_SYMFS:	in->symfs = arg; return 1;
	case CLI_OPT_NO_MERGE:	in->no_merge = true; return 1;
	case CLI_OPT_STATS:	in->stats = true; return 1;
	case CLI_OPT_NO_DEBUGINFOD: in->no_debuginfod = true; return 1;
	case CLI_OPT_ARCHIVE:	in->archive = arg; return 1;
	case CLI_OPT_SYSROOT:	in->sysroot = arg; return 1;
	case CLI_OPT_JIT_MAP:	in->jit_map = arg; return 1;
	case CLI_OPT_OFF_CPU:	in->view = CS_VIEW_OFF_CPU; return 1;
	case CLI_OPT_NO_OFF_CPU: in->no_off_cpu = true; return 1;
	}
	return 0;
}

/* Appends arg to the list opt names. Returns 0, or -1 after printing
 * "CMD: --pid 'ARG': expected ..." */
static int cli_filter_option(struct cli_filter *f, const char *cmd, int opt,
			     const char *arg)
{
	if (opt == CLI_OPT_COMM) {
		if (!cs_name_list_parse(&f->comms, arg))
			return 0;
		cli_error("%s: --comm '%s': expected a comma-separated list of"
			  " names", cmd, arg);
		return -1;
	}
	if (!cs_id_list_parse(opt == CLI_OPT_PID ? &f->pids : &f->tids, arg))
		return 0;
	cli_error("%s: --%s '%s': expected a comma-separated list of numbers",
		  cmd, opt == CLI_OPT_PID ? "pid" : "tid", arg);
	return -1;
}

bool cli_option(struct cli_input *in, int opt, const char *arg,
		const char *usage, int *rc)
{
	switch (opt) {
	case 'j':
		if (cli_jobs_option(in->cmd, arg, &in->jobs))
			return true;
		*rc = 129;
		return false;
	case CLI_OPT_PID:
	case CLI_OPT_TID:
	case CLI_OPT_COMM:
		if (!in->filter)
			break;
		if (!cli_filter_option(in->filter, in->cmd, opt, arg))
			return true;
		*rc = 129;
		return false;
	}
	if (cli_input_option(in, opt, arg))
		return true;
	fputs(usage, opt == 'h' ? stdout : stderr);
	*rc = opt == 'h' ? 0 : 129;
	return false;
}

bool cli_jobs_option(const char *cmd, const char *arg, unsigned int *jobs)
{
	if (!cs_jobs_parse(arg, jobs))
		return true;
	cli_error("%s: --jobs '%s': expected a number of threads from 1 to 1024",
		  cmd, arg);
	return false;
}

unsigned int cli_jobs_counting(struct cli_input *in)
{
	in->jobs = in->jobs ? in->jobs : cs_jobs_default();
	in->output_threads = in->jobs >= 2;	/* the counting thread */
	return in->jobs;
}

bool cli_no_operands(const char *cmd, int argc, char **argv, const char *usage)
{
	if (optind >= argc)
		return true;
	cli_error("%s: unexpected argument '%s'", cmd, argv[optind]);
	fputs(usage, stderr);
	return false;
}

const char *cli_input_path(const struct cli_input *in)
{
	return in->input ? in->input : "perf.data";
}

void cli_filter_free(struct cli_filter *f)
{
	cs_id_list_free(&f->pids);
	cs_id_list_free(&f->tids);
	cs_name_list_free(&f->comms);
}

/* stdio would write a file or a pipe in st_blksize pieces (4 KiB): a
 * report of the real profile took 3114 write calls for 12.7 MB. One
 * output is open at a time: the first stream takes one static buffer,
 * which lives until exit() has flushed it. */
static char output_buf[256 << 10];

static void output_buffer(FILE *f)
{
	static bool taken;

	if (taken || isatty(fileno(f)))
		return;
	setvbuf(f, output_buf, _IOFBF, sizeof(output_buf));
	taken = true;
}

FILE *cli_output_open(const char *path)
{
	FILE *f;

	if (!path || !strcmp(path, "-")) {
		output_buffer(stdout);
		return stdout;
	}
	f = fopen(path, "w");
	if (!f)
		cli_error("%s: %s", path, strerror(errno));
	else
		output_buffer(f);
	return f;
}

int cli_output_close(FILE *f, const char *path, int write_err, int rc)
{
	if (write_err)
		cli_error("%s: cannot write: %s", path && strcmp(path, "-") ?
			  path : "standard output", strerror(write_err));
	if (f && f != stdout && fclose(f) && !rc) {
		cli_error("%s: %s", path, strerror(errno));
		rc = 1;
	}
	return rc;
}

struct progress {
	struct timespec last;
	bool shown;
	bool tty;
	const char *fetching;		/* the download under way, or NULL */
	struct timespec fetch_start;
	bool fetch_told;		/* not a terminal: its one line said */
};

static struct progress progress_state;

static long ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t->tv_sec) * 1000L +
	       (now.tv_nsec - t->tv_nsec) / 1000000L;
}

static void progress_line(void *ctx, uint64_t done, uint64_t total)
{
	struct progress *p = ctx;

	/* at most 5 updates a second: a terminal is slower than the reader */
	if (p->shown && ms_since(&p->last) < 200)
		return;
	clock_gettime(CLOCK_MONOTONIC, &p->last);
	p->shown = true;
	if (total)
		fprintf(stderr, "\rcallstitch: reading %" PRIu64 " / %" PRIu64
			" MB (%u%%)\033[K", done >> 20, total >> 20,
			(unsigned)(done * 100 / total));
	else
		fprintf(stderr, "\rcallstitch: reading %" PRIu64 " MB\033[K",
			done >> 20);
}

/* A download from a debuginfod server: a live line on a terminal; else
 * one line, for a download that takes more than a second. */
static void fetch_line(void *ctx, const char *what, uint64_t done,
		       uint64_t total)
{
	struct progress *p = ctx;
	char size[64];

	if (!what) {
		if (p->fetching && p->tty && p->shown)
			fputs("\r\033[K", stderr);
		p->fetching = NULL;
		p->shown = false;
		return;
	}
	if (what != p->fetching) {
		p->fetching = what;
		p->fetch_told = false;
		clock_gettime(CLOCK_MONOTONIC, &p->fetch_start);
	}
	if (total)
		snprintf(size, sizeof(size), "%.1f / %.1f MB", done / 1048576.0,
			 total / 1048576.0);
	else
		snprintf(size, sizeof(size), "%.1f MB", done / 1048576.0);
	if (p->tty) {
		if (p->shown && ms_since(&p->last) < 200)
			return;
		clock_gettime(CLOCK_MONOTONIC, &p->last);
		p->shown = true;
		fprintf(stderr, "\rcallstitch: debuginfod: fetching %s: %s\033[K",
			what, size);
	} else if (!p->fetch_told && ms_since(&p->fetch_start) >= 1000) {
		p->fetch_told = true;
		fprintf(stderr, "callstitch: debuginfod: fetching %s (%s so far)\n",
			what, size);
	}
}

static void warning_line(void *ctx, const char *msg)
{
	struct progress *p = ctx;

	if (p->shown) {
		fputs("\r\033[K", stderr);
		p->shown = false;
	}
	cli_warn("%s", msg);
}

struct cs_session *cli_open(const struct cli_input *in)
{
	struct cs_session_opts o = { .sz = sizeof(o),
		.path = cli_input_path(in),
		.fd = -1,
		.kallsyms = in->kallsyms,
		.symfs = in->symfs,
		.archive = in->archive,
		.sysroot = in->sysroot,
		.jit_map = in->jit_map,
		.no_merge = in->no_merge,
		.ordered_off = in->file_order,
		.no_debuginfod = in->no_debuginfod,
		.off_cpu = in->off_cpu_aware && !in->no_off_cpu,
		.jobs = in->jobs ? in->jobs : cs_jobs_default(),
		.warning = warning_line,
		.progress_ctx = &progress_state,
		.completeness = in->stats || in->completeness,
		/* every output reads cs_stitched.user (cs_frames_resolve(), or
		 * inject, which puts the marker back) */
		.chain_parts = true,
		.user_marker_implied = true,
		.preload = in->preload,
	};
	struct cs_session *s = NULL;
	int err;

	o.read_ahead = o.jobs >= in->output_threads + 2;
	progress_state.tty = isatty(STDERR_FILENO);
	if (!in->quiet && !in->concurrent)
		o.fetch_progress = fetch_line;
	if (progress_state.tty && !in->quiet && !in->no_progress &&
	    !in->concurrent)
		o.progress = progress_line;
	err = cs_session_open(&o, &s);
	if (err < 0) {
		cli_error("%s", s ? cs_session_error(s) : strerror(-err));
		cs_session_free(s);
		return NULL;
	}
	return s;
}

int cli_run(struct cs_session *s, const struct cli_input *in,
	    const struct cs_output_ops *ops, void *ctx)
{
	return cli_run_done(s, in, cs_session_run(s, ops, ctx));
}

int cli_run_done(struct cs_session *s, const struct cli_input *in, int err)
{
	if (progress_state.shown) {
		fputs("\r\033[K", stderr);
		progress_state.shown = false;
	}
	fflush(stdout);
	if (err < 0) {
		const char *msg = cs_session_error(s);
		cli_error("%s", msg && *msg ? msg : strerror(-err));
		return 1;
	}
	if (err > 0)		/* an output stopped the run and said why */
		return 1;
	if (cs_session_warning(s)) {	/* e.g. a recording cut short */
		const char *w = cs_session_warning(s);

		/* one warning a line */
		for (const char *nl; (nl = strchr(w, '\n')); w = nl + 1)
			cli_warn("%.*s", (int)(nl - w), w);
		cli_warn("%s", w);
	}
	if (!in->quiet || in->stats)
		cli_print_stats(stderr, cs_session_stats(s), in->stats,
				in->name_input ? cli_input_path(in) : NULL);
	if (in->stats)
		cs_stack_health_write(stderr, cs_session_completeness(s),
				      "  completeness: ", "    ", 10);
	return 0;
}

int cli_run_path(struct cli_input *in, const char *path,
		 const struct cs_output_ops *ops, void *ctx)
{
	struct cs_session *s;
	int rc;

	in->input = path;
	in->name_input = true;
	s = cli_open(in);
	if (!s)
		return 1;
	rc = cli_run(s, in, ops, ctx);
	cs_session_free(s);
	return rc;
}

/* A row of --stats' table: the name, then its count in one column. */
static void stat_line(FILE *f, const char *name, uint64_t n)
{
	fprintf(f, "  %-28s %12" PRIu64 "\n", name, n);
}

void cli_print_stats(FILE *f, const struct cs_stats *st, bool full,
		     const char *name)
{
	if (!full) {
		fprintf(f, "callstitch: %s%s%" PRIu64 " samples: %" PRIu64
			" stitched, %" PRIu64 " stitched late, %" PRIu64
			" kernel-only, %" PRIu64 " as recorded; %" PRIu64
			" deferred records (%" PRIu64 " duplicate, %" PRIu64
			" orphan)", name ? name : "", name ? ": " : "",
			st->samples, st->stitched, st->stitched_late,
			st->kernel_only, st->original, st->deferred_records,
			st->duplicate_records, st->orphan_records);
		if (st->unwound)
			fprintf(f, "; %" PRIu64 " user stacks unwound", st->unwound);
		if (st->lost_events || st->lost_samples)
			fprintf(f, "; %" PRIu64 " events lost", st->lost_events +
				st->lost_samples);
		fputc('\n', f);
		return;
	}
	fprintf(f, "callstitch statistics%s%s:\n", name ? " of " : "",
		name ? name : "");
	stat_line(f, "records", st->records);
	stat_line(f, "bytes", st->bytes);
	/* whether -j's reading thread ran, and for how much of the input */
	stat_line(f, "  read on a thread ahead", st->read_ahead);
	stat_line(f, "samples", st->samples);
	stat_line(f, "  with deferred user stack", st->samples_deferred);
	stat_line(f, "  stitched", st->stitched);
	stat_line(f, "  stitched late", st->stitched_late);
	stat_line(f, "  kernel-only", st->kernel_only);
	for (int r = 1; r < CS_MISSING__COUNT; r++)
		fprintf(f, "    %-26s %12" PRIu64 "\n",
			cs_missing_reason_name((enum cs_missing_reason)r),
			st->kernel_only_by[r]);
	stat_line(f, "  as recorded", st->original);
	stat_line(f, "  unwound (dwarf)", st->unwound);
	stat_line(f, "  not unwound: bad copy", st->unwind_refused);
	stat_line(f, "deferred records", st->deferred_records);
	stat_line(f, "  used", st->deferred_used);
	stat_line(f, "  duplicate", st->duplicate_records);
	stat_line(f, "  orphan", st->orphan_records);
	stat_line(f, "lost events", st->lost_events);
	stat_line(f, "lost samples", st->lost_samples);
	stat_line(f, "most samples waiting", st->max_pending);
	fprintf(f, "  accounting: %s\n", cs_stats_mismatch(st) ? cs_stats_mismatch(st) :
		"samples = stitched + late + kernel-only + as recorded; "
		"records = used + duplicate + orphan");
}
