/* out_names.h - names the summarising outputs (report, folded, pprof) give
 * to frames that are not functions, so that they agree with each other and
 * with `callstitch script`.
 */
#ifndef CS_OUT_NAMES_H
#define CS_OUT_NAMES_H

#include <callstitch/callstitch.h>

/* The marker frame of a kernel-only sample, "[user stack missing: why]"
 * with why as cs_missing_reason_name() (and script) say it;
 * a static string. Shared by the outputs so they name it alike. */
const char *cs_out_missing_user_name(enum cs_missing_reason why);

#endif
