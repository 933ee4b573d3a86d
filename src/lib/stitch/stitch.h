/* stitch.h - joins deferred user callchains to the samples that wait.
 *
 * Fed time-ordered samples, type-22 records, EXIT and LOST records. A
 * deferred sample (chain ending [USER_DEFERRED, cookie]) waits, as its
 * record (copied unless stable), until the record with its (tid, cookie)
 * arrives, and goes out with the record's
 * user stack; a sample whose (tid, cookie) record was already seen goes out
 * at once (stitched late). Samples whose record cannot come any more (a
 * newer cookie of the tid, its exit, the end of input) go out with the
 * kernel part only, marked. Nothing is dropped; every sample goes out once.
 */
#ifndef CS_STITCH_H
#define CS_STITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <callstitch/callstitch.h>
#include "lib/read/decode.h"

struct cs_stitch;			/* opaque */

typedef int (*cs_stitched_fn)(void *ctx, const struct cs_stitched *s);

/* Decodes a waiting sample's record (bytes, size, at offset) into *ev
 * when it goes out: the stitcher keeps where a record is, not its decoded
 * event. *ev is the stitcher's own, zeroed at first and written by this
 * hook alone (cs_decode_again() may take it as it is). filed: the sample
 * was filed by its key (cs_stitch_park()), so the bytes are what the key
 * was read from (cs_decode_filed() may take them), and evsel is the key's
 * (cs_wait_key.evsel). Returns 0 or a negative errno, which the stitcher
 * passes on. */
typedef int (*cs_stitch_decode_fn)(void *ctx, const void *bytes, size_t size,
				   uint64_t offset, bool filed,
				   unsigned int evsel, struct cs_event *ev);

/* How a stitched chain goes out. */
enum cs_stitch_form {
	/* one array in cs_stitched.chain: kernel part, CS_CONTEXT_USER, ips */
	CS_STITCH_JOINED,
	/* two parts: the sample's kernel part as recorded, and in
	 * cs_stitched.user the marker and the ips (a copy of the ips for
	 * every deferred record, to put the marker in front) */
	CS_STITCH_PARTS,
	/* two parts, the user part the deferred record's entries as they
	 * are, its marker implied (lib/stitch/parts.h): a stable record's ips
	 * are not copied at all */
	CS_STITCH_PARTS_MARKER_IMPLIED,
};

/* stats is updated in place (not owned). With merge off, every sample goes
 * out at once as CS_CHAIN_UNMERGED and records only count; else stitched
 * chains go out in the form asked for. Returns 0 and the stitcher in *out
 * (caller frees), or -ENOMEM. */
int cs_stitch_new(bool merge, enum cs_stitch_form form, cs_stitched_fn fn,
		  void *ctx, cs_stitch_decode_fn decode, void *decode_ctx,
		  struct cs_stats *stats, struct cs_stitch **out);

/* ev->type must be SAMPLE, CALLCHAIN_DEFERRED, EXIT, LOST or LOST_SAMPLES;
 * ev and what it points to are valid only during the call (a sample's
 * record, ev->bytes and ev->size, is copied if it waits). Returns 0,
 * -ENOMEM, or what fn or decode returned. */
int cs_stitch_event(struct cs_stitch *st, const struct cs_event *ev);

/* cs_stitch_event() for an event whose record bytes (ev->bytes) stay valid
 * and unchanged until cs_stitch_free(), as a mapped file's do: a waiting
 * sample keeps pointing at them, nothing is copied; so does a deferred
 * record's user part (ev->deferred.ips, which must lie in those bytes),
 * kept for the samples of its entry that come late, unless the form
 * needs the marker in front (CS_STITCH_PARTS). */
int cs_stitch_event_stable(struct cs_stitch *st, const struct cs_event *ev);

/* A deferred sample known by its key alone (cs_decode_wait_key()): if it
 * is to wait, the stitcher files it undecoded, as cs_stitch_event() would
 * (releasing what it supersedes), and sets *waits; the decode hook must
 * succeed on its bytes when it goes out. When it would go out at once, or
 * merging is off, *waits stays false and nothing is done: decode it and
 * call cs_stitch_event(). stable as for cs_stitch_event_stable(). Returns
 * 0, -ENOMEM, or what fn or decode returned. */
int cs_stitch_park(struct cs_stitch *st, const struct cs_wait_key *k,
		   const void *bytes, size_t size, uint64_t offset, bool stable,
		   bool *waits);

/* End of input: releases every waiting sample (CS_MISSING_END). */
int cs_stitch_flush(struct cs_stitch *st);

size_t cs_stitch_pending(const struct cs_stitch *st);

/* Whether tid has samples waiting for their deferred user stack; if so,
 * *time is the oldest one's. Their user stack will be taken later, so
 * whatever the thread changes meanwhile (an exec's COMM and MMAP2s)
 * already applies to them. */
bool cs_stitch_waiting_since(struct cs_stitch *st, uint32_t tid, uint64_t *time);
void cs_stitch_free(struct cs_stitch *st);

#endif
