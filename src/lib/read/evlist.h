/* evlist.h - the events (attrs) of a profile and the ids that name them.
 *
 * Samples and sample_id trailers name their event by id; the evlist maps an
 * id to its evsel in O(1) and knows the id layout every event shares.
 */
#ifndef CS_EVLIST_H
#define CS_EVLIST_H

#include <stddef.h>
#include <stdint.h>

#include <callstitch/callstitch.h>
#include "abi/perf_abi.h"

struct cs_evlist;			/* opaque */

/* Returns 0 and an empty list in *out (caller frees), or -ENOMEM. */
int cs_evlist_new(struct cs_evlist **out);

/* Adds an event. attr is copied and zero-extended to the full struct (attr
 * sizes differ between perf versions); name may be NULL (derived from
 * type/config). ids are copied. Returns 0, -ENOMEM, or -EINVAL when the
 * event's sample_id layout disagrees with those already present. */
int cs_evlist_add(struct cs_evlist *l, const struct cs_perf_attr *attr,
		  const char *name, const uint64_t *ids, size_t nr_ids);
int cs_evlist_set_name(struct cs_evlist *l, size_t index, const char *name);
int cs_evlist_add_ids(struct cs_evlist *l, size_t index, const uint64_t *ids,
		      size_t nr_ids);

/* The whole perf_event_attr of an evsel that came from a cs_evlist: native
 * byte order, zero-extended. Lives as long as the evsel. (The public
 * struct carries only what a library user needs of it.) */
const struct cs_perf_attr *cs_evsel_attr(const struct cs_evsel *e);

size_t cs_evlist_count(const struct cs_evlist *l);
const struct cs_evsel *cs_evlist_get(const struct cs_evlist *l, size_t i);

/* The event an id names; with a single event, that event whatever the id.
 * NULL if no event has the id. */
const struct cs_evsel *cs_evlist_find(const struct cs_evlist *l, uint64_t id);

/* The event a record belongs to: reads the id from the sample (SAMPLE) or
 * the sample_id trailer (others) using the shared layout. NULL if unknown. */
const struct cs_evsel *cs_evlist_event_of(const struct cs_evlist *l,
					  const void *rec, size_t size);

/* cs_evlist_event_of() for a record known to be a SAMPLE. */
const struct cs_evsel *cs_evlist_sample_event(const struct cs_evlist *l,
					      const void *rec, size_t size);

/* The record's timestamp, or CS_NO_TIME when it carries none. Cheap: no
 * full decode, just the fixed position of the time field. */
#define CS_NO_TIME UINT64_MAX
uint64_t cs_evlist_record_time(const struct cs_evlist *l, const void *rec,
			       size_t size);

void cs_evlist_free(struct cs_evlist *l);

#endif
