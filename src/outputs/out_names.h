/* out_names.h - names the summarising outputs (report, folded, pprof) give
 * to frames that are not functions, so that they agree with each other and
 * with `callstitch script`.
 */
#ifndef CS_OUT_NAMES_H
#define CS_OUT_NAMES_H

#include <stdint.h>

#include <callstitch/callstitch.h>

/* The marker frame of a kernel-only sample, "[user stack missing: why]"
 * with why as cs_missing_reason_name() (and script) say it;
 * a static string. Shared by the outputs so they name it alike. */
const char *cs_out_missing_user_name(enum cs_missing_reason why);

/* The leaf frame of an off-CPU stack, "[off-cpu: why]" with why as
 * cs_off_cpu_state_name() says it; a static string. */
const char *cs_out_off_cpu_name(enum cs_off_cpu_state why);

/* The thread's command name, or ":TID" as perf shows a thread never named
 * (an idle task of a system-wide profile). buf holds the latter; the result
 * lives as long as the machine's strings or buf. */
const char *cs_out_comm(struct cs_machine *m, uint32_t pid, uint32_t tid,
			char buf[16]);

#endif
