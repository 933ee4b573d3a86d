/* order.h - delivers records in time order across per-CPU buffers.
 *
 * Records go in as they come from the file; they come out in timestamp
 * order (ties keep file order). perf guarantees that nothing before a
 * FINISHED_ROUND is later than what arrives two rounds on, so at each round
 * end everything up to the previous round's largest timestamp can go out;
 * memory stays bounded by about two rounds. Records without a time are
 * delivered at once, as perf does.
 */
#ifndef CS_ORDER_H
#define CS_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cs_order;			/* opaque */

/* stable: the bytes are the ones pushed stable (the caller's, which live
 * as long as the caller keeps them); otherwise they are valid only during
 * the call. */
typedef int (*cs_order_fn)(void *ctx, const void *bytes, size_t size,
			   uint64_t offset, bool stable);

/* Returns 0 and a new queue in *out (the caller owns it), or -ENOMEM. */
int cs_order_new(cs_order_fn deliver, void *ctx, struct cs_order **out);

/* Queues one record. When !stable the bytes are copied (into chunked
 * storage freed as its records go out); when stable, only the pointer is
 * kept (a mapped file). Returns 0, -ENOMEM or what deliver returned. */
int cs_order_push(struct cs_order *q, uint64_t time, const void *bytes,
		  size_t size, uint64_t offset, bool stable);

int cs_order_round_end(struct cs_order *q);	/* FINISHED_ROUND */
int cs_order_flush(struct cs_order *q);		/* end of input: deliver all */

/* A deliver that returns CS_ORDER_PAUSE stops the delivery after its
 * record, and the call that was delivering returns CS_ORDER_PAUSE: for a
 * caller that pulls one result at a time. Until cs_order_resume() has
 * finished that delivery (returned 0), nothing else may be pushed, or it
 * could overtake what was still due. */
#define CS_ORDER_PAUSE	0x7ffe0001
bool cs_order_paused(const struct cs_order *q);
int cs_order_resume(struct cs_order *q);

size_t cs_order_queued(const struct cs_order *q);
void cs_order_free(struct cs_order *q);

#endif
