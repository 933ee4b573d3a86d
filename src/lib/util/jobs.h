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

#include <pthread.h>
#include <stdbool.h>
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

/* One piece of work on a thread of its own while the caller's thread does
 * another (two passes over shared tables that only read them). The caller
 * owns the struct; its fields are this module's. */
struct cs_job {
	int (*fn)(void *ctx);
	void *ctx;
	int ret;
	bool threaded;
	pthread_t thread;
};

/* Starts fn(ctx) on a thread of its own; with jobs <= 1, or when no
 * thread can be had, runs it here and now. */
void cs_job_start(struct cs_job *j, unsigned int jobs, int (*fn)(void *ctx),
		  void *ctx);
/* Waits for the job to end; returns what fn returned. */
int cs_job_wait(struct cs_job *j);

/* Runs fn over [0, nr) cut into parts of about equal size, at least
 * min_part items each and at most min(jobs, CS_JOBS_MAX_PARTS) parts,
 * fn(ctx, part, begin, end) for each: part 0 covers the first items. The
 * parts run at once, on threads of their own (the last on the caller's);
 * fn keeps what a part finds in per-part slots. Returns the number of
 * parts, or the first part's error in order (a negative errno). */
#define CS_JOBS_MAX_PARTS 64
typedef int (*cs_part_fn)(void *ctx, unsigned int part, size_t begin,
			  size_t end);
int cs_jobs_split(size_t nr, size_t min_part, unsigned int jobs,
		  cs_part_fn fn, void *ctx);

/* The CPUs this process may run on, at least 1: the default for -j. */
unsigned int cs_jobs_default(void);

/* Parses a -j argument: a count from 1 to 1024. Returns 0 or -EINVAL. */
int cs_jobs_parse(const char *arg, unsigned int *jobs);

#endif
