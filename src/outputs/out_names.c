/* out_names.c - names of pseudo-frames (see out_names.h). */
#include "outputs/out_names.h"

#include <stdio.h>

const char *cs_out_missing_user_name(enum cs_missing_reason why)
{
	switch (why) {
	case CS_MISSING_LOST:		return "[user stack missing: lost]";
	case CS_MISSING_SUPERSEDED:	return "[user stack missing: superseded]";
	case CS_MISSING_EXITED:		return "[user stack missing: exited]";
	case CS_MISSING_END:		return "[user stack missing: end]";
	default:			return "[user stack missing]";
	}
}

const char *cs_out_off_cpu_name(enum cs_off_cpu_state why)
{
	switch (why) {
	case CS_OFF_CPU_SLEEPING:	return "[off-cpu: sleeping]";
	case CS_OFF_CPU_BLOCKED:	return "[off-cpu: blocked on I/O]";
	case CS_OFF_CPU_PREEMPTED:	return "[off-cpu: preempted]";
	case CS_OFF_CPU_OTHER:		return "[off-cpu: other]";
	default:			return "[off-cpu]";
	}
}

const char *cs_out_comm(struct cs_machine *m, uint32_t pid, uint32_t tid,
			char buf[16])
{
	const char *comm = cs_machine_comm(m, pid, tid);

	if (comm)
		return comm;
	snprintf(buf, 16, ":%d", (int32_t)tid);
	return buf;
}
