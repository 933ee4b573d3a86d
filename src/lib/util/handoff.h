/* handoff.h - records from one thread to a consumer on a thread of its own
 * (or from a producer on a thread of its own to the caller), in batches.
 *
 * Two stages of a pipeline each take a core: the producer (the session:
 * read, order, stitch, resolve) appends records to a batch of bytes; a full
 * batch goes through a bounded queue to the consumer thread (an output's
 * aggregation), which reads its records in order and gives the batch back.
 * One lock and one wake-up per batch, not per record; memory is bounded by
 * the batches in flight. The consumer's state belongs to the consumer
 * thread from cs_handoff_new() until cs_handoff_finish() returns: the
 * producer must not touch it in between.
 *
 * The layout of a record is the two sides' business; the batch keeps the
 * records' order and their bytes, each record starting 8-byte aligned.
 */
#ifndef CS_HANDOFF_H
#define CS_HANDOFF_H

#include <stddef.h>

struct cs_handoff;			/* opaque */

/* The bytes a record of size bytes takes in a batch: where the next
 * record starts, for the consumer's walk. */
static inline size_t cs_handoff_record_size(size_t size)
{
	return (size + 7) & ~(size_t)7;
}

/* Called on the consumer thread for each batch, in the order they were
 * filled: buf[0, len) holds whole records, as appended. Returns 0 or a
 * negative errno, after which the remaining batches are dropped. */
typedef int (*cs_handoff_fn)(void *ctx, const void *buf, size_t len);

/* Starts the consumer thread. Returns 0 and the hand-off in *out (the
 * caller ends it with cs_handoff_finish()), or a negative errno (no
 * thread could be had: the caller does the work itself). */
int cs_handoff_new(cs_handoff_fn fn, void *ctx, struct cs_handoff **out);

/* Room for a record of size bytes at the end of the current batch: the
 * caller fills it before the next call. A full batch is handed over first
 * (waiting while every batch is in flight). Returns NULL on -ENOMEM (a
 * record larger than a batch grows one). */
void *cs_handoff_append(struct cs_handoff *h, size_t size);

/* The consumer's error (0 while none): the producer may stop early. */
int cs_handoff_error(const struct cs_handoff *h);

/* Hands over the last batch, waits until the consumer has read every
 * record, ends its thread and frees h. Returns 0 or the first error of
 * the consumer (or of an append). */
int cs_handoff_finish(struct cs_handoff *h);

/*
 * The other direction: the producer on a thread of its own and the
 * caller's thread consuming, for a producer whose work is the first stage
 * (reading ahead) and a consumer whose state the caller must keep (its
 * callbacks run where it expects them). produce runs on the new thread,
 * appends its records with cs_handoff_append() and returns 0 or a
 * negative errno; it should stop early once cs_handoff_error() is set.
 */
typedef int (*cs_handoff_produce_fn)(void *ctx, struct cs_handoff *h);

/* Starts produce(ctx, h) on a thread of its own. Returns 0 and the
 * hand-off in *out (the caller ends it with cs_handoff_drain()), or a
 * negative errno (no thread: the caller does the work itself). */
int cs_handoff_new_producer(cs_handoff_produce_fn produce, void *ctx,
			    struct cs_handoff **out);

/* On the caller's thread: fn(ctx, ...) for each batch in order until the
 * producer has returned. After fn's first error the producer is told to
 * stop (cs_handoff_error()) and what it still hands over is dropped.
 * Joins the thread and frees h. Returns fn's first error, else the
 * producer's return value, else an append's -ENOMEM. */
int cs_handoff_drain(struct cs_handoff *h, cs_handoff_fn fn, void *ctx);

#endif
