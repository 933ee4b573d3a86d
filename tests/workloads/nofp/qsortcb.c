/* qsortcb - time spent in a comparator that libc's qsort calls back, in
 * code built without frame pointers (-O2 -fomit-frame-pointer), as most of
 * a Debian system is. Frame-pointer unwinding loses these stacks in libc;
 * DWARF unwinding (--call-graph dwarf) reaches main, or the thread's start.
 *
 * Stacks: compare_keys <- (libc: msort_with_tmp ... qsort_r) <- sort_round
 * <- sort_for <- main <- __libc_start_call_main, or, in the other threads,
 * sort_for <- start_thread <- clone3 (sorter tail-calls sort_for).
 *
 *   qsortcb [SECONDS] [THREADS]       defaults: 1 2 (main sorts too)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NR_KEYS 4096

static double seconds = 1.0;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* a comparison that costs something, so that samples land in it */
__attribute__((noinline)) static int compare_keys(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	for (int i = 0; i < 8; i++) {
		x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ULL;
		y = (y ^ (y >> 29)) * 0xbf58476d1ce4e5b9ULL;
	}
	return x < y ? -1 : x > y;
}

/* returns a key, so that qsort is not a tail call and sort_round keeps
 * its frame */
__attribute__((noinline)) static uint64_t sort_round(uint64_t *keys, uint64_t *seed)
{
	for (int i = 0; i < NR_KEYS; i++) {
		*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
		keys[i] = *seed;
	}
	qsort(keys, NR_KEYS, sizeof(*keys), compare_keys);
	return keys[NR_KEYS / 2];
}

__attribute__((noinline)) static uint64_t sort_for(double secs, uint64_t seed)
{
	static __thread uint64_t keys[NR_KEYS];
	double end = now() + secs;
	uint64_t sum = 0;

	while (now() < end)
		sum += sort_round(keys, &seed);
	return sum;
}

__attribute__((noinline)) static void *sorter(void *arg)
{
	return (void *)(uintptr_t)sort_for(seconds, (uintptr_t)arg);
}

int main(int argc, char **argv)
{
	int threads = 2;
	pthread_t *tids;
	uint64_t sum;

	if (argc > 1)
		seconds = atof(argv[1]);
	if (argc > 2)
		threads = atoi(argv[2]);
	if (seconds <= 0 || threads < 1 || threads > 64) {
		fprintf(stderr, "usage: qsortcb [SECONDS] [THREADS]\n");
		return 2;
	}
	tids = calloc((size_t)threads, sizeof(*tids));
	if (!tids)
		return 1;
	for (int i = 1; i < threads; i++)
		if (pthread_create(&tids[i], NULL, sorter, (void *)(uintptr_t)(i + 1))) {
			perror("pthread_create");
			return 1;
		}
	sum = sort_for(seconds, 1);
	for (int i = 1; i < threads; i++) {
		void *r;

		pthread_join(tids[i], &r);
		sum += (uintptr_t)r;
	}
	free(tids);
	return sum == 0;	/* keeps the work from being optimised away */
}
