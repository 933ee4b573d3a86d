/* peek.h - reads the few fields the recorder needs from its own records.
 *
 * The recorder knows the one sample_type all its events share, so it finds
 * pid/tid, ip and the callchain at fixed places without a full decode.
 * Every length is checked against the record's size.
 */
#ifndef CS_REC_PEEK_H
#define CS_REC_PEEK_H

#include <stddef.h>
#include <stdint.h>

struct cs_rec_sample {
	uint32_t pid, tid;
	uint64_t ip;
	uint64_t time;
	const uint64_t *chain;		/* points into the record */
	uint64_t chain_nr;
	uint16_t misc;
};

/* Parses a SAMPLE record of sample_type. Returns 0, -EBADMSG (truncated),
 * or -ENOTSUP for sample_type bits before CALLCHAIN the recorder never
 * sets (READ). */
int cs_rec_peek_sample(uint64_t sample_type, const void *rec, size_t size,
		       struct cs_rec_sample *out);

/* pid/tid from the sample_id trailer of a non-sample record (events with
 * sample_id_all). Returns 0, -ENOENT when sample_type has no TID, or
 * -EBADMSG when the record is too short for the trailer. */
int cs_rec_peek_trailer_tid(uint64_t sample_type, const void *rec, size_t size,
			    uint32_t *pid, uint32_t *tid);

#endif
