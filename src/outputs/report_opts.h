/* report_opts.h - option values the profile-summarising commands share
 * (report, folded, pprof): lists of pids, tids and command names.
 */
#ifndef CS_REPORT_OPTS_H
#define CS_REPORT_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A set of ids given as "1,2,3" (repeatable: each call appends). */
struct cs_id_list {
	uint32_t *v;
	size_t nr;
};

/* Appends the comma-separated decimal ids of arg. Returns 0, -EINVAL
 * (not a list of numbers below 2^32) or -ENOMEM. */
int cs_id_list_parse(struct cs_id_list *l, const char *arg);
bool cs_id_list_has(const struct cs_id_list *l, uint32_t id);
void cs_id_list_free(struct cs_id_list *l);

/* A set of names given as "a,b" (repeatable). The strings are copies. */
struct cs_name_list {
	char **v;
	size_t nr;
};

int cs_name_list_parse(struct cs_name_list *l, const char *arg);

/* Which samples a summary takes when the profile has off-CPU time (switch
 * outs delivered by a session with the off_cpu option). */
enum cs_cpu_view {
	CS_VIEW_ALL = 0,		/* both, each event on its own */
	CS_VIEW_ON_CPU,			/* the ordinary samples */
	CS_VIEW_OFF_CPU,		/* the off-CPU time */
};

static inline bool cs_view_takes(enum cs_cpu_view v, bool off_cpu)
{
	return v == CS_VIEW_ALL || (v == CS_VIEW_OFF_CPU) == off_cpu;
}
bool cs_name_list_has(const struct cs_name_list *l, const char *name);
void cs_name_list_free(struct cs_name_list *l);

#endif
