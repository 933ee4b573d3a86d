/* queue.h - a bounded FIFO of pointers between threads.
 *
 * The hand-off between two stages on their own threads: push blocks while
 * the queue is full, pop while it is empty, so a fast producer waits for
 * its consumer instead of piling up memory. Any number of threads may
 * push and pop; items come out in the order they went in.
 */
#ifndef CS_QUEUE_H
#define CS_QUEUE_H

#include <stddef.h>

struct cs_queue;			/* opaque */

/* Returns 0 and an empty queue of room for cap items in *out (caller
 * frees), or -ENOMEM / -EINVAL (cap 0). */
int cs_queue_new(size_t cap, struct cs_queue **out);

/* Appends item (any pointer, NULL too), waiting for room. */
void cs_queue_push(struct cs_queue *q, void *item);

/* Takes the oldest item, waiting for one. */
void *cs_queue_pop(struct cs_queue *q);

/* Frees the queue, not the items still in it. */
void cs_queue_free(struct cs_queue *q);

#endif
