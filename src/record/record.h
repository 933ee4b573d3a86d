/* record.h - one recording: events, rings, side band, drain, the file.
 *
 * cs_record_run() does the whole job `callstitch record` asks for and
 * returns when the file is complete: after the command exits, the target
 * goes away, or SIGINT/SIGTERM/SIGHUP arrives. Stopping disables the
 * sampling events first and keeps reading the rings while samples still
 * wait for their deferred user stack, up to drain_ms. It prints nothing:
 * notices and progress go to the caller's callbacks.
 */
#ifndef CS_REC_RECORD_H
#define CS_REC_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/events.h"
#include "record/waiting.h"

struct cs_errbuf;

struct cs_record_progress {
	uint64_t samples;
	uint64_t bytes;			/* written to the file so far */
	uint64_t lost;			/* events the kernel dropped */
};

struct cs_record_opts {
	const char *output;		/* path, or "-" for pipe mode on stdout */
	struct cs_rec_events events;	/* at least one (not owned) */
	bool freq;
	uint64_t period;		/* Hz when freq */
	bool period_given;		/* -c/-F given: tracepoints take it too */
	bool callchain;
	bool defer;
	uint32_t dwarf_stack;		/* --call-graph dwarf,SIZE: user stack
					 * bytes per sample; 0: frame pointers */
	bool switch_events;		/* PERF_RECORD_SWITCH(_CPU_WIDE) records */
	bool system_wide;
	const int *cpus;		/* -C: only these CPUs; NULL: all */
	size_t nr_cpus;
	pid_t pid;			/* -p, 0 if none */
	pid_t tid;			/* -t, 0 if none */
	char *const *argv;		/* command to run, NULL if none */
	int zstd_level;			/* 0: no compression */
	unsigned drain_ms;		/* 0: no drain */
	size_t mmap_pages;		/* 0: cs_record_default_pages() */
	/* perf's build-id cache (~/.debug): buildid_cache copies every hit
	 * binary and the kernel's symbols into it; binaries of processes in
	 * other mount namespaces go there anyway (nothing else can find them
	 * after the container is gone) unless no_buildid_cache */
	bool buildid_cache;
	bool no_buildid_cache;
	/* for the file's header */
	int self_argc;
	const char *const *self_argv;
	const char *version;
	/* what the user should hear; optional */
	void (*notice)(void *ctx, const char *msg);
	void (*progress)(void *ctx, const struct cs_record_progress *p);
	void *ctx;
};

struct cs_record_result {
	const char *event_name;		/* the first event, after fallbacks */
	bool defer_unsupported;
	bool defer_on;
	uint64_t samples;
	uint64_t bytes;			/* file size */
	uint64_t lost;			/* LOST records' sum */
	uint64_t lost_samples;		/* LOST_SAMPLES records' sum */
	uint64_t still_waiting;		/* samples without user stack at close */
	size_t mmap_pages;		/* data pages per ring, as mapped */
	uint64_t drain_ns;		/* time spent draining */
	unsigned cached;		/* files copied into the build-id cache */
	struct cs_waiting_stats waiting;
	int stop_signal;		/* 0, or the signal that stopped us */
	int workload_status;		/* wait status of the command, or -1 */
};

/* The ring pages per CPU when none are asked for: perf's 128 (512 KiB);
 * 1024 (4 MiB) when a tracepoint is sampled at every hit (--off-cpu's
 * sched_switch); for dwarf samples of dwarf_stack bytes, room for at
 * least 128 of them (2 MiB for 8 KiB stacks), at most 2048 pages (8 MiB).
 * Where the locked-memory limit refuses them, the recorder halves them,
 * down to perf's. */
size_t cs_record_default_pages(const struct cs_record_opts *o);

/* Returns 0 with *res filled, or a negative errno with eb filled (the file
 * may then be incomplete). */
int cs_record_run(const struct cs_record_opts *o, struct cs_record_result *res,
		  struct cs_errbuf *eb);

#endif
