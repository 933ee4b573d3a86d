/* mem_latency - how long a load takes that no cache close to the CPU
 * holds, for bench/run.sh: the price of every random lookup in a table
 * bigger than the caches (a line cache, a call tree's index, a symbol
 * table), which most of callstitch's time on a real profile waits for.
 *
 *   mem_latency [MIB...]     (default 1 4 64)
 *
 * For each size, a buffer of that many MiB on huge pages (where the
 * kernel gives them, as callstitch's big tables are) holds one random
 * cycle through all its cache lines, each line the next one's address.
 * The cycle is followed for LOADS loads in BATCHES batches, each load
 * waiting for the one before. Prints "1 MiB 18 ns, 4 MiB 140 ns, ..."
 * on one line: the mean load of the fastest batch. Where the CPU's last
 * level cache is shared with busy neighbours (a VM), the size at which
 * loads jump from tens of nanoseconds to hundreds moves from minute to
 * minute, and so does every ratio that depends on it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define LINE 64
#define HUGE_PAGE (2u << 20)
#define LOADS 2000000
#define BATCHES 10
#define MAX_MIB 4096

static uint64_t next_random(uint64_t *s)
{
	/* xorshift64: the same cycle every run */
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static double seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The best mean load time, in ns, over a buffer of mib MiB; -1 without
 * memory. */
static double latency(size_t mib)
{
	size_t bytes = mib << 20, n = bytes / LINE;
	char *buf = aligned_alloc(HUGE_PAGE, bytes);
	uint32_t *order = malloc(n * sizeof(*order));
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	double best = -1;
	void **p;

	if (!buf || !order) {
		free(buf);
		free(order);
		return -1;
	}
	madvise(buf, bytes, MADV_HUGEPAGE);
	/* Sattolo's shuffle: one cycle through every line */
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(next_random(&seed) % i);
		uint32_t t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		*(void **)(buf + (size_t)i * LINE) = buf + (size_t)order[i] * LINE;
	free(order);
	p = (void **)buf;
	for (int b = 0; b < BATCHES; b++) {
		double t0 = seconds(), ns;

		for (int i = 0; i < LOADS / BATCHES; i++)
			p = *p;
		ns = (seconds() - t0) * 1e9 / (LOADS / BATCHES);
		if (best < 0 || ns < best)
			best = ns;
	}
	/* the chase's end is used, so that it is not left out */
	if (!p)
		best = -1;
	free(buf);
	return best;
}

int main(int argc, char **argv)
{
	static const char *const defaults[] = { "1", "4", "64" };
	const char *const *sizes = argc > 1 ? (const char *const *)argv + 1 : defaults;
	int nr = argc > 1 ? argc - 1 : 3;

	for (int i = 0; i < nr; i++) {
		char *end;
		unsigned long mib = strtoul(sizes[i], &end, 10);
		double ns;

		if (*end || !mib || mib > MAX_MIB) {
			fprintf(stderr, "usage: mem_latency [MIB...] (1 to %d each)\n",
				MAX_MIB);
			return 2;
		}
		if ((ns = latency(mib)) < 0) {
			fprintf(stderr, "mem_latency: no memory for %lu MiB\n", mib);
			return 1;
		}
		printf("%s%lu MiB %.0f ns", i ? ", " : "", mib, ns);
	}
	putchar('\n');
	return 0;
}
