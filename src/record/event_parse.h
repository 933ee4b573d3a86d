/* event_parse.h - event names as `perf record -e` takes them.
 *
 * One -e argument is a comma-separated list (commas between a PMU's
 * slashes belong to the PMU); each item is one of
 *
 *   NAME[:MODS]            a hardware, software or cache event by perf's
 *                          name: cycles, instructions, branch-misses,
 *                          cpu-clock, task-clock, page-faults, cs,
 *                          L1-dcache-load-misses, ...
 *   rHEX[:MODS]            a raw event of the CPU's PMU (r01c2)
 *   PMU/TERMS/[MODS]       a PMU of /sys/bus/event_source/devices: TERMS
 *                          are its format fields (event=0x3c,umask=0), its
 *                          named events (cpu/cycles/), config, config1,
 *                          config2, period, freq and name
 *   SYSTEM:NAME[:MODS]     a tracepoint, its id from tracefs; SYSTEM and
 *                          NAME may be globs (syscalls:sys_enter_*), which
 *                          stand for every tracepoint they match, sorted
 *
 * MODS: u (user), k (kernel), h (hypervisor): count only there; p, pp, ppp:
 * precise_ip; G / H: guest / host only.
 */
#ifndef CS_REC_EVENT_PARSE_H
#define CS_REC_EVENT_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cs_errbuf;

struct cs_rec_event {
	char *name;			/* as the file names it: "cycles:u" */
	uint32_t type;			/* CS_PERF_TYPE_* or a PMU's type */
	uint64_t config, config1, config2;
	uint64_t flags;			/* CS_ATTR_EXCLUDE_* and precise_ip */
	uint64_t period;		/* a period= or freq= term; 0: none */
	bool freq;			/* period is a frequency */
	char *tp_system, *tp_name;	/* a tracepoint's; NULL otherwise */
};

/* What the recorder samples; owns every string in it. */
struct cs_rec_events {
	struct cs_rec_event *v;
	size_t nr;
};

/* Where to look; NULL fields mean the machine's own (tracefs is found, and
 * mounted if need be, by cs_rec_tracefs_find()). Tests point them at a
 * directory of their own. */
struct cs_rec_event_roots {
	const char *tracefs;		/* holds events/SYSTEM/NAME/id */
	const char *pmus;		/* /sys/bus/event_source/devices */
};

/* Parses one -e argument and appends its events to l. Returns 0, or
 * -EINVAL (a name or term not understood), -ENOENT (no such PMU or
 * tracepoint, or no tracefs), -EACCES, -ENOMEM, with eb saying which and
 * why; l is then unchanged. */
int cs_rec_events_parse(struct cs_rec_events *l, const char *arg,
			const struct cs_rec_event_roots *roots,
			struct cs_errbuf *eb);

/* Whether an event is a tracepoint (sampled at every hit, with raw data). */
static inline bool cs_rec_event_is_tracepoint(const struct cs_rec_event *e)
{
	return e->tp_system != NULL;
}

void cs_rec_events_free(struct cs_rec_events *l);

#endif
