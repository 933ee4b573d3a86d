/* waiting.h - which samples still wait for their deferred user stack.
 *
 * The recorder shows this set every record it writes. A sample whose
 * callchain ends in [PERF_CONTEXT_USER_DEFERRED, cookie] waits for the
 * CALLCHAIN_DEFERRED record of its (tid, cookie); that record releases all
 * of them. A task has at most one kernel entry in flight, so the set keeps
 * one cookie per tid: a newer cookie proves the older record will never
 * come (superseded), and an EXIT of the tid ends its wait (the task died in
 * the kernel). A sample carrying the cookie of a record already seen was
 * taken late in the same kernel entry and waits for nothing.
 *
 * At stop the recorder keeps reading while cs_waiting_samples() > 0.
 */
#ifndef CS_REC_WAITING_H
#define CS_REC_WAITING_H

#include <stddef.h>
#include <stdint.h>

struct cs_waiting;			/* opaque */

struct cs_waiting_stats {
	uint64_t deferred_samples;	/* samples that ended in a cookie */
	uint64_t records;		/* CALLCHAIN_DEFERRED records seen */
	uint64_t released;		/* samples a record released */
	uint64_t late;			/* samples after their record */
	uint64_t superseded;		/* given up: a newer cookie of the tid */
	uint64_t exited;		/* given up: the tid exited */
	uint64_t orphans;		/* records nobody waited for */
};

/* sample_type is the one all the recorder's events share (sample_id_all
 * with TID is needed to match records). Returns 0 and the set in *out
 * (caller frees), or -ENOMEM. */
int cs_waiting_new(uint64_t sample_type, struct cs_waiting **out);

/* Looks at one record (SAMPLE, CALLCHAIN_DEFERRED and EXIT matter; the
 * rest is ignored). The record is not kept. Returns 0, -ENOMEM, or
 * -EBADMSG for a record too short for its layout. */
int cs_waiting_see(struct cs_waiting *w, const void *rec, size_t size);

/* Samples waiting now, and the (tid, cookie) entries they wait on. */
uint64_t cs_waiting_samples(const struct cs_waiting *w);
uint64_t cs_waiting_cookies(const struct cs_waiting *w);

const struct cs_waiting_stats *cs_waiting_stats(const struct cs_waiting *w);

void cs_waiting_free(struct cs_waiting *w);

#endif
