/* tp_example.h - tracing data as perf writes it, for the tests of what
 * reads tracepoints: this kernel's sched_switch and sched_wakeup formats. */
#ifndef CS_TEST_TP_EXAMPLE_H
#define CS_TEST_TP_EXAMPLE_H

#include <stddef.h>
#include <stdint.h>

struct cs_fbuf;

#define TP_WAKEUP_ID 374
#define TP_SWITCH_ID 372

extern const char tp_wakeup_format[];
extern const char tp_switch_format[];

/* perf's tracing data (version 0.6) holding the sched system's formats[] */
void tp_example_tracing_data(struct cs_fbuf *b, const char *const *formats,
			     size_t nr);

/* sched_switch's raw data: prev (pid, state) out, next_pid in */
size_t tp_example_switch_raw(uint8_t raw[64], int32_t prev_pid, int64_t prev_state,
			     int32_t next_pid);

#endif
