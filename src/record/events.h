/* events.h - opens the recorder's perf events and their per-CPU rings.
 *
 * Layout (SPEC.md §4): for every CPU, each sampling event (one per -e
 * event) once per target thread (system-wide: once, pid -1), carrying only
 * defer_callchain when deferral is on, and one dummy software event per
 * thread carrying the side band (mmap, mmap2, comm, task, build_id,
 * context switches when asked) and defer_output, so exactly one event per
 * CPU receives each deferred record. Every event of a CPU writes into that
 * CPU's ring (the first event's mmap; PERF_EVENT_IOC_SET_OUTPUT).
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
#include "record/event_parse.h"
#include "record/ring.h"

struct cs_errbuf;

struct cs_rec_evopts {
	const struct cs_rec_event *events;	/* what to sample, at least one */
	size_t nr_events;
	bool freq;			/* period is a frequency (Hz) */
	uint64_t period;
	bool period_given;		/* -c/-F given: tracepoints take it too */
	bool callchain;			/* -g */
	bool defer;			/* --call-graph fp,defer */
	uint32_t dwarf_stack;		/* --call-graph dwarf: user stack bytes
					 * per sample (a multiple of 8); 0: off */
	bool switch_events;		/* PERF_RECORD_SWITCH(_CPU_WIDE) records */
	bool system_wide;		/* -a: pid -1 on every CPU */
	bool inherit;			/* follow children of the threads */
	bool enable_on_exec;		/* the target is a command not yet exec'd */
	const pid_t *threads;		/* per-task targets (ignored with -a) */
	size_t nr_threads;
	const int *cpus;		/* -C: these CPUs; NULL: every online one */
	size_t nr_cpus;
	size_t mmap_pages;		/* data pages per ring, a power of two */
	size_t min_mmap_pages;		/* when the locked-memory limit refuses
					 * a ring (EPERM), open everything again
					 * with half the pages, down to this;
					 * 0: never */
};

struct cs_rec_evsel {
	struct cs_perf_attr attr;	/* as opened (after fallbacks) */
	char *name;			/* as the file names it */
	int *fds;			/* [cpu * nr_threads + thread], -1 if none */
	uint64_t *ids;			/* of the open fds, in order */
	size_t nr_ids;
	bool tracking;			/* the side-band dummy */
	bool opened;			/* its fallbacks are settled */
};

struct cs_rec_evlist {
	struct cs_rec_evsel *evsels;	/* the sampling events, then the dummy */
	size_t nr_evsels;
	int nr_cpus;
	int *cpus;
	size_t nr_threads;		/* 1 with -a */
	struct cs_ring *rings;		/* [cpu] */
	size_t mmap_pages;		/* data pages per ring, as mapped */
	/* what had to change to open the events, for the user to hear */
	bool defer_unsupported;		/* defer asked; kernel said EINVAL */
	bool fell_back_cpu_clock;	/* cycles missing: cpu-clock instead */
	bool no_build_id;		/* kernel refused build ids in MMAP2 */
	bool user_only;			/* kernel samples not allowed: :u */
};

/* The side-band dummy, and whether deferral is on for any event. */
static inline struct cs_rec_evsel *cs_rec_evlist_tracking(struct cs_rec_evlist *l)
{
	return &l->evsels[l->nr_evsels - 1];
}
bool cs_rec_evlist_defer_on(const struct cs_rec_evlist *l);

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

/* A CPU list as the kernel writes it ("0-3,5,7-8"). Returns the count and
 * an ascending array without repeats in *cpus (caller frees), or -EINVAL
 * (not such a list) or -ENOMEM. */
int cs_rec_cpu_list_parse(const char *s, int **cpus);

/* The online CPUs (from /sys/devices/system/cpu/online). Returns the count
 * and an array in *cpus (caller frees), or a negative errno. */
int cs_rec_online_cpus(int **cpus);

#endif
