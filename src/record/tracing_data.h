/* tracing_data.h - the tracing data perf keeps in a file with tracepoints.
 *
 * A reader cannot make sense of a tracepoint's raw bytes without its
 * format, so perf puts tracefs's description of the recorded tracepoints
 * into the file (the TRACING_DATA header feature; in pipe mode a
 * HEADER_TRACING_DATA record): a magic and version "0.6", byte order, long
 * and page sizes, events/header_page and events/header_event, the format
 * of each tracepoint recorded grouped by system (ftrace's first), an empty
 * kallsyms, printk_formats and saved_cmdlines. perf 6.1 reads exactly
 * these bytes (trace-event-read.c), so nothing may follow them.
 */
#ifndef CS_REC_TRACING_DATA_H
#define CS_REC_TRACING_DATA_H

#include <stddef.h>

struct cs_errbuf;
struct cs_fbuf;
struct cs_rec_event;

/* Appends the tracing data of the tracepoints among events[0..nr) to out,
 * reading tracefs (its mount point). Returns 0, or a negative errno with
 * eb naming the file that could not be read. */
int cs_rec_tracing_data(const char *tracefs, const struct cs_rec_event *events,
			size_t nr, struct cs_fbuf *out, struct cs_errbuf *eb);

#endif
