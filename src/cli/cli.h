/* cli.h - what the commands share: messages, the input options every
 * reading command takes, and opening and running a session with progress
 * and the end-of-run summary.
 */
#ifndef CS_CLI_H
#define CS_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include <callstitch/callstitch.h>
#include "outputs/report_opts.h"

#define CS_VERSION "0.1.0"

/* "callstitch: <message>" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Whether the environment variable name asks for something: set, not
 * empty and not "0" (CALLSTITCH_REPORT_VERBOSE=1 and the like). */
bool cli_env_on(const char *name);

struct cli_filter;

/* The options of every command that reads a profile. */
struct cli_input {
	const char *cmd;		/* the command's name, for messages */
	struct cli_filter *filter;	/* where --pid, --tid and --comm go, for
					 * a command that takes them */
	const char *input;		/* -i, default "perf.data" */
	const char *kallsyms;		/* --kallsyms */
	const char *symfs;		/* --symfs */
	const char *archive;		/* --archive */
	const char *sysroot;		/* --sysroot */
	const char *jit_map;		/* --jit-map */
	bool no_merge;			/* --no-merge-callchains */
	bool stats;			/* --stats: the full table at the end */
	bool quiet;			/* -q: no summary line */
	bool no_debuginfod;		/* --no-debuginfod */
	enum cs_cpu_view view;		/* --off-cpu: only the off-CPU time */
	bool no_off_cpu;		/* --no-off-cpu: switch-outs as samples */
	/* set by a command, not by an option */
	bool off_cpu_aware;		/* shows switch-outs as off-CPU time */
	bool file_order;		/* records in file order, not time order */
	bool completeness;		/* classify user stacks (report's header) */
	bool no_progress;		/* no progress line even on a terminal */
	bool name_input;		/* the summary names the profile (of two) */
	bool concurrent;		/* another session runs at the same time:
					 * no progress or download lines, which
					 * share one line on the terminal */
	unsigned int jobs;		/* the command's -j (0: the CPUs available) */
	unsigned int output_threads;	/* threads the output starts itself
					 * at that -j: the records are read
					 * ahead on another when one is left */
	unsigned int preload;		/* what it resolves of every sample
					 * (cs_session_opts.preload) */
};

/* getopt_long ids for the shared options; commands put CLI_INPUT_OPTIONS in
 * their long-option table and pass unknown ids to cli_input_option(). */
enum {
	CLI_OPT_KALLSYMS = 0x1000,
	CLI_OPT_SYMFS,
	CLI_OPT_NO_MERGE,
	CLI_OPT_STATS,
	CLI_OPT_NO_DEBUGINFOD,
	CLI_OPT_ARCHIVE,
	CLI_OPT_SYSROOT,
	CLI_OPT_JIT_MAP,
	CLI_OPT_OFF_CPU,
	CLI_OPT_NO_OFF_CPU,
};
#define CLI_INPUT_OPTIONS \
	{ "input",    required_argument, NULL, 'i' }, \
	{ "kallsyms", required_argument, NULL, CLI_OPT_KALLSYMS }, \
	{ "symfs",    required_argument, NULL, CLI_OPT_SYMFS }, \
	{ "stats",    no_argument,       NULL, CLI_OPT_STATS }, \
	{ "no-debuginfod", no_argument,  NULL, CLI_OPT_NO_DEBUGINFOD }, \
	{ "archive",  required_argument, NULL, CLI_OPT_ARCHIVE }, \
	{ "sysroot",  required_argument, NULL, CLI_OPT_SYSROOT }, \
	{ "jit-map",  required_argument, NULL, CLI_OPT_JIT_MAP }, \
	{ "quiet",    no_argument,       NULL, 'q' }
#define CLI_INPUT_HELP \
	"  -i, --input FILE      profile to read (default perf.data; - for stdin)\n" \
	CLI_SOURCES_HELP
/* The shared options but -i: where symbols come from, statistics, -q. */
#define CLI_SOURCES_HELP \
	"      --kallsyms FILE   kernel symbols (default: by the kernel's build id\n" \
	"                        under --symfs or --archive, /proc/kallsyms if\n" \
	"                        recorded here, then ~/.debug)\n" \
	"      --symfs DIR       look for binaries under DIR (by path or build id)\n" \
	"      --archive FILE    binaries, debug files and kernel symbols from FILE\n" \
	"                        (callstitch archive's .tar.zst), by build id\n" \
	"      --sysroot DIR     a container's root: its binaries, debug files and\n" \
	"                        /tmp/perf-PID.map JIT maps under DIR\n" \
	"      --jit-map DIR|FILE  JIT symbol maps: DIR/perf-PID.map, or FILE for\n" \
	"                        JIT code without a map of its own\n" \
	"      --no-debuginfod   never fetch missing binaries and debug info from\n" \
	"                        the servers in DEBUGINFOD_URLS\n" \
	"      --stats           print the full statistics at the end, with how\n" \
	"                        many user stacks reached a root and why others stopped\n" \
	"  -q, --quiet           no summary line on stderr\n"

/* The commands that show off-CPU time (report, folded, flame, pprof, diff)
 * take these too, and set off_cpu_aware. */
#define CLI_OFF_CPU_OPTIONS \
	{ "off-cpu",    no_argument,     NULL, CLI_OPT_OFF_CPU }, \
	{ "no-off-cpu", no_argument,     NULL, CLI_OPT_NO_OFF_CPU }
#define CLI_OFF_CPU_HELP \
	"      --off-cpu         only the off-CPU time: each switch-out (record\n" \
	"                        --off-cpu, or sched:sched_switch with stacks)\n" \
	"                        weighted by the time until its task ran again\n" \
	"      --no-off-cpu      switch-outs as ordinary samples, as perf shows them\n"

/* Applies a shared option; returns 1 if it was one, 0 if not. */
int cli_input_option(struct cli_input *in, int opt, const char *arg);

/* The default: branch of a command's option switch. Returns true for a
 * shared input option, -j, or (with in->filter) a filter option, applied.
 * Otherwise the command stops with *rc: -h printed usage on stdout (0), a
 * bad -j or filter argument its error (129), anything else printed usage
 * on stderr (129). */
bool cli_option(struct cli_input *in, int opt, const char *arg,
		const char *usage, int *rc);

/* A command's -j argument into *jobs: true, or false after "CMD: --jobs
 * 'ARG': ..." on stderr (the command stops with 129). */
bool cli_jobs_option(const char *cmd, const char *arg, unsigned int *jobs);

/* For a command whose samples are counted on a thread of their own
 * (CLI_JOBS_COUNTING_HELP): settles in->jobs (-j, else the CPUs
 * available) and, from two jobs on, counts that thread as the output's.
 * Returns the jobs, for the output's options. */
unsigned int cli_jobs_counting(struct cli_input *in);

/* After the options: true if no operand is left; else prints
 * "CMD: unexpected argument" and the usage on stderr. */
bool cli_no_operands(const char *cmd, int argc, char **argv, const char *usage);

/* The profile in->input names ("perf.data" by default). */
const char *cli_input_path(const struct cli_input *in);

/* Sample filters of the summarising commands: --pid, --tid, --comm. A
 * command lists those it takes in its option table and points
 * cli_input.filter at its cli_filter; cli_option() fills it. */
struct cli_filter {
	struct cs_id_list pids, tids;
	struct cs_name_list comms;
};
enum {
	CLI_OPT_PID = 0x1100,
	CLI_OPT_TID,
	CLI_OPT_COMM,
};
#define CLI_FILTER_OPTIONS \
	{ "pid",      required_argument, NULL, CLI_OPT_PID }, \
	{ "tid",      required_argument, NULL, CLI_OPT_TID }
#define CLI_FILTER_HELP \
	"      --pid PID[,PID]   only these processes\n" \
	"      --tid TID[,TID]   only these threads\n"

/* -j of a command whose samples are counted on a thread of their own:
 * EXTRA, a line of what else runs on one ("" for none), and SAME, what
 * comes out the same */
#define CLI_JOBS_COUNTING_HELP(EXTRA, SAME) \
	"  -j, --jobs N          threads: with 2 or more the samples are counted\n" \
	"                        on a thread of their own while the next are read,\n" \
	EXTRA \
	"                        a compressed profile is decompressed on another,\n" \
	"                        and N threads load the symbols of the sampled\n" \
	"                        binaries ahead of their first use (with 3 or\n" \
	"                        more the file is read ahead on another); the\n" \
	"                        same " SAME " (default: the CPUs available)\n"

void cli_filter_free(struct cli_filter *f);

/* The -o output: stdout for NULL or "-", else path opened for writing.
 * On failure prints "PATH: why" and returns NULL. */
FILE *cli_output_open(const char *path);

/* Ends what cli_output_open() began, once the run returned rc: names a
 * write error the output met (write_err, an errno, 0 if none) and closes
 * a file (f may be NULL: never opened). Returns rc, or 1 if the close
 * failed after a successful run (printed). */
int cli_output_close(FILE *f, const char *path, int write_err, int rc);

/* Opens in->input; on failure prints the error and returns NULL. */
struct cs_session *cli_open(const struct cli_input *in);

/* Runs the session through ops with a progress line on a terminal, then
 * prints the summary (or the --stats table) on stderr. Returns the exit
 * status: 0, or 1 after printing the error. */
int cli_run(struct cs_session *s, const struct cli_input *in,
	    const struct cs_output_ops *ops, void *ctx);

/* cli_run()'s end, for a session run elsewhere (cs_session_run() on
 * another thread) that returned err: the error, or the warnings and the
 * summary, printed on the caller's thread. Returns the exit status. */
int cli_run_done(struct cs_session *s, const struct cli_input *in, int err);

/* Opens path (in's other options apply) and runs it through ops, as
 * cli_open() and cli_run() do; for commands that read two profiles, so
 * the summary names it. Returns the exit status. */
int cli_run_path(struct cli_input *in, const char *path,
		 const struct cs_output_ops *ops, void *ctx);

/* The stitching summary: one line, or the full table; of the profile
 * named name, or NULL when there is only one. */
void cli_print_stats(FILE *f, const struct cs_stats *st, bool full,
		     const char *name);

#endif
