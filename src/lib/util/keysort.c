/* keysort.c - a merge sort of u64-word keys on threads (see keysort.h).
 *
 * Bottom-up: runs of INSERT_RUN keys sorted by insertion, then merged
 * pairwise, first within blocks that fit in a cache, then between them. Each merge copies the shorter of its two runs aside, so the
 * buffer never needs more than half of what is sorted. The body is
 * inlined for each common key size: comparisons are then a word or two. */
#include "lib/util/keysort.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/big_alloc.h"
#include "lib/util/jobs.h"

#define INSERT_RUN 16
#define MAX_PARTS 32
/* fewer keys are not worth a thread */
#define MIN_PER_THREAD 4096

#define ALWAYS_INLINE inline __attribute__((always_inline))

static ALWAYS_INLINE bool key_less(const uint64_t *a, const uint64_t *b,
				   size_t w)
{
	bool less = false, equal = true;

	/* every word, without branches (see merge_runs()) */
	for (size_t i = 0; i < w; i++) {
		less |= equal & (a[i] < b[i]);
		equal &= a[i] == b[i];
	}
	return less;
}

static ALWAYS_INLINE void key_copy(uint64_t *to, const uint64_t *from, size_t w)
{
	for (size_t i = 0; i < w; i++)
		to[i] = from[i];
}

/* Merges the sorted runs k[0, na) and k[na, na + nb) in place, through
 * buf (room for the shorter run). Ties take the left run's key first. */
static ALWAYS_INLINE void merge_runs(uint64_t *k, size_t na, size_t nb,
				     uint64_t *buf, size_t w)
{
	uint64_t *right = k + na * w, *out;

	if (!na || !nb || !key_less(right, right - w, w))
		return;
	if (na <= nb) {
		const uint64_t *a = buf, *a_end = buf + na * w;
		const uint64_t *b = right, *b_end = right + nb * w;

		memcpy(buf, k, na * w * sizeof(*k));
		/* without branches: which run goes next is random, and a
		 * mispredicted branch costs more than the copy */
		for (out = k; a < a_end && b < b_end; out += w) {
			bool take_b = key_less(b, a, w);

			key_copy(out, take_b ? b : a, w);
			a += take_b ? 0 : w;
			b += take_b ? w : 0;
		}
		/* what is left of the right run is in place already */
		memcpy(out, a, (size_t)(a_end - a) * sizeof(*k));
	} else {
		/* the right run aside, merged from the back */
		const uint64_t *a = right, *b = buf + nb * w;

		memcpy(buf, right, nb * w * sizeof(*k));
		for (out = right + nb * w; a > k && b > buf;) {
			bool take_a = key_less(b - w, a - w, w);

			out -= w;
			key_copy(out, take_a ? a - w : b - w, w);
			a -= take_a ? w : 0;
			b -= take_a ? 0 : w;
		}
		/* what is left of the left run is in place already */
		memcpy(out - (b - buf), buf, (size_t)(b - buf) * sizeof(*k));
	}
}

/* Sorts k[0, n) (a block that fits in a cache) through buf */
static ALWAYS_INLINE void sort_block_w(uint64_t *k, size_t n, uint64_t *buf,
				       size_t w)
{
	uint64_t t[CS_KEYSORT_MAX_WORDS];

	for (size_t lo = 0; lo < n; lo += INSERT_RUN) {
		size_t hi = n - lo < INSERT_RUN ? n : lo + INSERT_RUN;

		for (size_t i = lo + 1; i < hi; i++) {
			size_t j = i;

			if (!key_less(k + i * w, k + (i - 1) * w, w))
				continue;
			key_copy(t, k + i * w, w);
			for (; j > lo && key_less(t, k + (j - 1) * w, w); j--)
				key_copy(k + j * w, k + (j - 1) * w, w);
			key_copy(k + j * w, t, w);
		}
	}
	for (size_t run = INSERT_RUN; run < n; run *= 2)
		for (size_t lo = 0; lo + run < n; lo += 2 * run)
			merge_runs(k + lo * w, run,
				   n - lo - run < run ? n - lo - run : run, buf, w);
}

/* Blocks of BLOCK_BYTES sorted whole first, then merged: each level of
 * merges between blocks passes over all the keys in memory, the levels
 * within a block stay in the cache. */
#define BLOCK_BYTES (256 * 1024)

static ALWAYS_INLINE void sort_run_w(uint64_t *k, size_t n, uint64_t *buf,
				     size_t w)
{
	size_t block = INSERT_RUN;

	while (block * 2 * w * sizeof(*k) <= BLOCK_BYTES)
		block *= 2;
	for (size_t lo = 0; lo < n; lo += block)
		sort_block_w(k + lo * w, n - lo < block ? n - lo : block, buf, w);
	for (size_t run = block; run < n; run *= 2)
		for (size_t lo = 0; lo + run < n; lo += 2 * run)
			merge_runs(k + lo * w, run,
				   n - lo - run < run ? n - lo - run : run, buf, w);
}

/* Sorts k[0, n) through buf (room for n / 2 keys) */
static void sort_run(uint64_t *k, size_t n, uint64_t *buf, size_t w)
{
	switch (w) {
	case 1: sort_run_w(k, n, buf, 1); break;
	case 2: sort_run_w(k, n, buf, 2); break;
	case 3: sort_run_w(k, n, buf, 3); break;
	case 4: sort_run_w(k, n, buf, 4); break;
	default: sort_run_w(k, n, buf, w); break;
	}
}

static void merge(uint64_t *k, size_t na, size_t nb, uint64_t *buf, size_t w)
{
	switch (w) {
	case 1: merge_runs(k, na, nb, buf, 1); break;
	case 2: merge_runs(k, na, nb, buf, 2); break;
	case 3: merge_runs(k, na, nb, buf, 3); break;
	case 4: merge_runs(k, na, nb, buf, 4); break;
	default: merge_runs(k, na, nb, buf, w); break;
	}
}

struct sort_job {
	uint64_t *keys, *buf;
	size_t words;
};

/* A part of cs_jobs_split(): keys [begin, end) through buf from begin / 2
 * on, which leaves each part the n / 2 keys of room sort_run() needs and
 * keeps the parts' rooms apart */
static int sort_part(void *ctx, unsigned int part, size_t begin, size_t end)
{
	const struct sort_job *j = ctx;

	(void)part;
	sort_run(j->keys + begin * j->words, end - begin,
		 j->buf + begin / 2 * j->words, j->words);
	return 0;
}

/* Merges the sorted parts [p, q) into one run, halves first, so that no
 * merge's shorter run is more than half of what it merges. */
static void merge_parts(uint64_t *keys, const size_t *bounds, size_t p,
			size_t q, uint64_t *buf, size_t w)
{
	size_t m = (p + q) / 2;

	if (q - p < 2)
		return;
	merge_parts(keys, bounds, p, m, buf, w);
	merge_parts(keys, bounds, m, q, buf, w);
	merge(keys + bounds[p] * w, bounds[m] - bounds[p], bounds[q] - bounds[m],
	      buf, w);
}

int cs_keysort(uint64_t *keys, size_t nr, size_t words, unsigned int jobs)
{
	size_t bounds[MAX_PARTS + 1];
	struct sort_job j;
	int nparts;

	if (words < 1 || words > CS_KEYSORT_MAX_WORDS)
		return -EINVAL;
	if (nr < 2)
		return 0;
	if (jobs > MAX_PARTS)
		jobs = MAX_PARTS;
	/* each part's merges need half of it; the parts' merges half of all */
	j = (struct sort_job){ keys, cs_big_alloc((nr / 2 + 1) * words * sizeof(*keys)),
			       words };
	if (!j.buf)
		return -ENOMEM;
	nparts = cs_jobs_split(nr, MIN_PER_THREAD, jobs, sort_part, &j);
	/* the parts cs_jobs_split() cut */
	for (int i = 0; i <= nparts; i++)
		bounds[i] = nr * (size_t)i / (size_t)nparts;
	merge_parts(keys, bounds, 0, (size_t)nparts, j.buf, words);
	cs_big_free(j.buf);
	return 0;
}
