/* tracepoints.h - tracepoint samples' raw data, read through the formats
 * the file carries.
 *
 * perf keeps tracefs's description of every recorded tracepoint in the
 * file (the TRACING_DATA feature, or a pipe's HEADER_TRACING_DATA record);
 * libtraceevent parses those formats, prints a sample's fields the way
 * `perf script` does ("prev_comm=sleep prev_pid=9573 ... ==> next_comm=...")
 * and reads single fields by name. Events are known by their tracepoint id
 * (attr.config). No plugins are loaded, as perf 6.1 prints without them.
 *
 * Raw data comes from the file: a field is only read, and a sample only
 * printed, when every field of its event's format lies inside the sample.
 */
#ifndef CS_TRACEPOINTS_H
#define CS_TRACEPOINTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cs_session;
struct cs_tracepoints;			/* opaque */
struct cs_tp_field;			/* opaque: one field of one event */

/* Parses tracing data. Returns 0 and the formats in *out (the caller frees
 * them with cs_tracepoints_free()), -EBADMSG with *why saying what part was
 * cut short or wrong, or -ENOMEM. */
int cs_tracepoints_new(const void *data, size_t size,
		       struct cs_tracepoints **out, const char **why);
void cs_tracepoints_free(struct cs_tracepoints *tp);

/* "system:name" of tracepoint id, or NULL when the file has no format for
 * it. Owned by tp. */
const char *cs_tracepoints_name(struct cs_tracepoints *tp, uint64_t id);

/* The fields of a sample of tracepoint id as perf script prints them,
 * without a newline, in *text (NUL-terminated, owned by tp, valid until the
 * next call). Returns the length, -ENOENT (no format for id) or -EBADMSG
 * (raw data shorter than its format). */
long cs_tracepoints_print(struct cs_tracepoints *tp, uint64_t id, int cpu,
			  const void *raw, size_t raw_size, const char **text);

/* A field of tracepoint id by name, found once and read per sample: NULL
 * when the event or field is unknown (or not a number). */
const struct cs_tp_field *cs_tracepoints_field(struct cs_tracepoints *tp,
					       uint64_t id, const char *name);
/* Reads a numeric field. Returns 0, or -EBADMSG when the raw data is too
 * short for it. */
int cs_tp_field_read(const struct cs_tp_field *f, const void *raw,
		     size_t raw_size, uint64_t *v);

/* The formats of a session's file, parsed on first use, or NULL when the
 * file carries none (or they could not be parsed: the session's warning
 * then says why). Owned by the session. Defined in session.c. */
struct cs_tracepoints *cs_session_tracepoints(struct cs_session *s);

#endif
