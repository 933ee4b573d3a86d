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
	size_t parsed;			/* bytes of the record read so far */
};

/* The copies a --call-graph dwarf sample carries, pointing into it. */
struct cs_rec_user_copy {
	uint64_t abi;			/* CS_PERF_REGS_ABI_*; 0: no registers */
	const uint64_t *regs;		/* one per bit of the mask; NULL if abi 0 */
	const unsigned char *stack;	/* from the user sp upward */
	uint64_t stack_size;		/* bytes the kernel could copy (dyn_size) */
};

/* Parses a SAMPLE record of sample_type. Returns 0, -EBADMSG (truncated),
 * or -ENOTSUP for sample_type bits before CALLCHAIN the recorder never
 * sets (READ). */
int cs_rec_peek_sample(uint64_t sample_type, const void *rec, size_t size,
		       struct cs_rec_sample *out);

/* The REGS_USER and STACK_USER parts of a sample that cs_rec_peek_sample()
 * parsed into *s, for events sampling regs_mask. Returns 0, -EBADMSG
 * (truncated, or dyn_size beyond the copy), or -ENOTSUP for RAW or
 * BRANCH_STACK in between (the recorder never sets them). */
int cs_rec_peek_user_copy(uint64_t sample_type, uint64_t regs_mask,
			  const void *rec, size_t size, const struct cs_rec_sample *s,
			  struct cs_rec_user_copy *out);

/* pid/tid from the sample_id trailer of a non-sample record (events with
 * sample_id_all). Returns 0, -ENOENT when sample_type has no TID, or
 * -EBADMSG when the record is too short for the trailer. */
int cs_rec_peek_trailer_tid(uint64_t sample_type, const void *rec, size_t size,
			    uint32_t *pid, uint32_t *tid);

#endif
