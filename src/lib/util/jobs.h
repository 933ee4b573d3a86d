/* jobs.h - work on every core, with output as one thread would write it.
 *
 * A stage that has many independent items (the entries of a report, ...)
 * splits them into chunks; worker threads take chunks in turn, each
 * writing its text into a memory stream of its own, and the caller's
 * thread writes the finished streams to the real output strictly in chunk
 * order. The bytes are the same as one thread formatting everything, for
 * any number of jobs. At most a few chunks per worker wait to be written,
 * so memory stays bounded however long the output.
 *
 * The work function must only read shared state (or guard what it
 * writes): chunks run at the same time.
 */
#ifndef CS_JOBS_H
#define CS_JOBS_H

#include <stddef.h>
#include <stdio.h>

/* Formats items [begin, end) to out; returns 0 or a negative errno. */
typedef int (*cs_chunk_fn)(void *ctx, size_t begin, size_t end, FILE *out);

/* Runs fn over [0, nr) in chunks of chunk items on jobs threads, writing
 * each chunk's text to out in order. jobs <= 1 (or a single chunk): fn
 * runs here on all of it, straight to out. Returns 0, the first chunk's
 * error in order, or -EIO when out fails. */
int cs_jobs_ordered(size_t nr, size_t chunk, unsigned int jobs,
		    cs_chunk_fn fn, void *ctx, FILE *out);

/* The CPUs this process may run on, at least 1: the default for -j. */
unsigned int cs_jobs_default(void);

/* Parses a -j argument: a count from 1 to 1024. Returns 0 or -EINVAL. */
int cs_jobs_parse(const char *arg, unsigned int *jobs);

#endif
