/* diff.h - two profiles compared, in the layout of `perf diff`.
 *
 * Each profile's samples are counted per entry: the values of the sort
 * keys (report's keys; perf diff's default dso,sym) at the sample's
 * innermost frame, per event. Events pair up by name. For every entry of
 * an event the table shows
 *
 *   Baseline   its share of the event's period in the old profile
 *   Delta Abs  its share in the new one less the baseline, in points
 *              ("%+.2f%%"); blank when the new profile lacks the entry,
 *              and the baseline blank when the old one does
 *
 * entries ordered by the size of their change, as perf's default
 * (-c delta-abs) orders them. Entries pair up by what they show (the
 * symbol's name, the dso's base name, ...), so two builds of one program
 * still line up.
 */
#ifndef CS_DIFF_H
#define CS_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <callstitch/callstitch.h>
#include "outputs/report.h"

struct cs_diff;				/* opaque */

struct cs_diff_opts {
	enum cs_report_key sort[CS_REPORT__NR_KEYS];
	size_t nr_sort;			/* 0: dso,sym */
	double percent_limit;		/* hide entries whose shares are both below */
	unsigned int jobs;		/* 2 or more: the table is sorted,
					 * measured and formatted in parts on
					 * threads. Same output. */
};

/* Returns 0 and an empty comparison in *out (the caller frees it), or
 * -ENOMEM. */
int cs_diff_new(const struct cs_diff_opts *o, struct cs_diff **out);
void cs_diff_free(struct cs_diff *d);

/* One entry's column texts for a sample, as the sort keys say them. */
struct cs_diff_key {
	const char *comm, *dso, *sym;	/* sym as report shows it: "[.] name" */
	uint32_t pid, tid;
	enum cs_off_cpu_state state;
};

/* Adds period to an entry of event `event` in profile `which` (0: the
 * baseline, 1: the new one). Strings are copied. Returns 0 or -ENOMEM. */
int cs_diff_add(struct cs_diff *d, int which, const char *event,
		const struct cs_diff_key *key, uint64_t period);

/* Adds every entry of `from` to d, as if from's samples had been added
 * to d after d's own: its events that d lacks come after d's, in the
 * order from saw them. Two profiles can so be counted at once, each into
 * a comparison of its own, and give the table one comparison gives.
 * Returns 0 or -ENOMEM. */
int cs_diff_merge(struct cs_diff *d, const struct cs_diff *from);

/* Writes one table per event of either profile. Returns 0, -ENOMEM or
 * -EIO. */
int cs_diff_write(struct cs_diff *d, FILE *out);

/* As an output, run once per profile: ctx is a struct cs_diff_run. */
struct cs_diff_run {
	struct cs_diff *diff;
	int which;			/* 0: baseline, 1: new */
	enum cs_cpu_view view;
	struct cs_machine *machine;	/* set by begin */
};
extern const struct cs_output_ops cs_diff_ops;

#endif
