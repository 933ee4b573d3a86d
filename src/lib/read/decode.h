/* decode.h - decodes one native-endian record into a struct cs_event.
 *
 * Pure functions of the record bytes and the event's attr: no allocation,
 * pointers in the result point into the record. Every length read from the
 * record is checked against the bytes that remain.
 */
#ifndef CS_DECODE_H
#define CS_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <callstitch/callstitch.h>

struct cs_errbuf;
struct cs_evlist;
struct cs_perf_attr;

/* Decodes rec (size bytes, found at offset) into *ev. Returns 0, or
 * -EBADMSG with eb saying "<path>: <type> record at offset 0x..: <what>". */
int cs_decode(const struct cs_evlist *l, const void *rec, size_t size,
	      uint64_t offset, const char *path, struct cs_event *ev,
	      struct cs_errbuf *eb);

/* What a sample that waits for its deferred user stack is filed under. */
struct cs_wait_key {
	uint32_t tid;
	uint16_t evsel;			/* its event's index (cs_evsel.index), */
	uint64_t time;			/* or CS_WAIT_NO_EVSEL */
	uint64_t cookie;
};

/* cs_decode() into an event that holds zeroes or what an earlier call
 * decoded into it (a buffer of the caller's that nothing else writes):
 * a usual sample of the layout the event holds then sets its fields
 * without zeroing the rest first, which is zero already. */
int cs_decode_again(const struct cs_evlist *l, const void *rec, size_t size,
		    uint64_t offset, const char *path, struct cs_event *ev,
		    struct cs_errbuf *eb);

/* cs_decode(), except for a usual sample (the fixed fields, then a
 * callchain that fills the record) whose callchain ends [USER_DEFERRED,
 * cookie]: that one is left undecoded and *k set to its tid, event, time
 * and cookie (returns 1), so that it may wait as its bytes alone. cs_decode()
 * of the same bytes will succeed. Returns 0 with *ev decoded, 1, or
 * cs_decode()'s -EBADMSG. */
int cs_decode_or_wait(const struct cs_evlist *l, const void *rec, size_t size,
		      uint64_t offset, const char *path, struct cs_event *ev,
		      struct cs_wait_key *k, struct cs_errbuf *eb);

/* A wait key's evsel for an event index of 0xffff or more: the event is
 * looked up by the record's id again. */
#define CS_WAIT_NO_EVSEL	0xffffu

/* cs_decode_again() of a sample that cs_decode_or_wait() returned 1 for,
 * with the same evlist and the same bytes: the checks that call made
 * hold, and are not made again, nor is the event looked up when evsel
 * (the key's) names it. Returns 0. */
int cs_decode_filed(const struct cs_evlist *l, const void *rec, size_t size,
		    uint64_t offset, unsigned int evsel, struct cs_event *ev);

/* cs_decode() of a sample that cs_decode_or_wait() returned 1 for, with
 * the same evlist and the same bytes, into an event of any content: the
 * checks that call made hold. Returns 0. */
int cs_decode_waiting(const struct cs_evlist *l, const void *rec, size_t size,
		      uint64_t offset, struct cs_event *ev);

/* Just the sample body, for one attr (used by cs_decode and by tests). */
int cs_decode_sample(const struct cs_perf_attr *attr, const void *rec,
		     size_t size, struct cs_sample *out);

/* Human name of a record type ("SAMPLE", "CALLCHAIN_DEFERRED", ...), or
 * NULL for a type we do not know. */
const char *cs_record_type_name(uint32_t type);

#endif
