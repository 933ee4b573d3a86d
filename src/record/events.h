/* events.h - opens the recorder's perf events and their per-CPU rings.
 *
 * Layout (SPEC.md §4): for every CPU, one sampling event per target thread
 * (system-wide: one, pid -1), carrying only defer_callchain when deferral
 * is on, and one dummy software event per thread carrying the side band
 * (mmap, mmap2, comm, task, build_id) and defer_output, so exactly one
 * event per CPU receives each deferred record. Every event of a CPU writes
 * into that CPU's ring (the first event's mmap; PERF_EVENT_IOC_SET_OUTPUT).
 * Stopping disables the sampling events only; the dummies keep delivering
 * deferred records until the recorder stops draining. With dwarf_stack
 * (--call-graph dwarf) both events copy the user registers and stack,
 * as perf's do, and the dummy also reports data maps (mmap_data).
 */
#ifndef CS_REC_EVENTS_H
#define CS_REC_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "abi/perf_abi.h"
#include "record/ring.h"

struct cs_errbuf;

struct cs_rec_event {
	const char *name;		/* "cycles", "cpu-clock", ... */
	uint32_t type;
	uint64_t config;
};

/* Looks up an event name (cycles, cpu-cycles, instructions, cpu-clock,
 * task-clock). Returns 0 or -EINVAL. */
int cs_rec_event_parse(const char *s, struct cs_rec_event *out);

struct cs_rec_evopts {
	struct cs_rec_event event;
	bool freq;			/* period is a frequency (Hz) */
	uint64_t period;
	bool callchain;			/* -g */
	bool defer;			/* --call-graph fp,defer */
	uint32_t dwarf_stack;		/* --call-graph dwarf: user stack bytes
					 * per sample (a multiple of 8); 0: off */
	bool system_wide;		/* -a: pid -1 on every CPU */
	bool inherit;			/* follow children of the threads */
	bool enable_on_exec;		/* the target is a command not yet exec'd */
	const pid_t *threads;		/* per-task targets (ignored with -a) */
	size_t nr_threads;
	size_t mmap_pages;		/* data pages per ring, a power of two */
	size_t min_mmap_pages;		/* when the locked-memory limit refuses
					 * a ring (EPERM), open everything again
					 * with half the pages, down to this;
					 * 0: never */
};

struct cs_rec_evlist {
	struct cs_perf_attr sample_attr;	/* as opened (after fallbacks) */
	struct cs_perf_attr track_attr;
	const char *sample_name;
	const char *track_name;
	int nr_cpus;
	int *cpus;
	size_t nr_threads;		/* 1 with -a */
	int *sample_fds;		/* [cpu * nr_threads + thread], -1 if gone */
	int *track_fds;
	uint64_t *sample_ids;		/* ids of the open fds, in order */
	size_t nr_sample_ids;
	uint64_t *track_ids;
	size_t nr_track_ids;
	struct cs_ring *rings;		/* [cpu] */
	size_t mmap_pages;		/* data pages per ring, as mapped */
	/* what had to change to open the events, for the user to hear */
	bool defer_unsupported;		/* defer asked; kernel said EINVAL */
	bool fell_back_cpu_clock;	/* cycles missing: cpu-clock instead */
	bool no_build_id;		/* kernel refused build ids in MMAP2 */
	bool user_only;			/* kernel samples not allowed: :u */
	char name_buf[32];		/* sample_name with its :u */
};

/* Opens every event (disabled unless enable_on_exec lets exec start them),
 * reads their ids, maps the rings (with fewer pages than asked for when
 * min_mmap_pages allows it and the locked-memory limit requires it).
 * Returns 0 and the list in *out (caller frees with cs_rec_evlist_free),
 * or a negative errno with eb filled. */
int cs_rec_evlist_open(const struct cs_rec_evopts *o, struct cs_errbuf *eb,
		       struct cs_rec_evlist **out);

/* ioctl ENABLE/DISABLE on every tracking (dummy) or sampling event. */
int cs_rec_evlist_enable(struct cs_rec_evlist *l, bool sampling);
int cs_rec_evlist_disable(struct cs_rec_evlist *l, bool sampling);

void cs_rec_evlist_free(struct cs_rec_evlist *l);

/* The online CPUs (from /sys/devices/system/cpu/online). Returns the count
 * and an array in *cpus (caller frees), or a negative errno. */
int cs_rec_online_cpus(int **cpus);

#endif
