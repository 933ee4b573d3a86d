/* core_trip - how long a cache line takes to go from one CPU to another
 * and back, for bench/run.sh: the price a reading-ahead thread pays for
 * every line of a record it reads after another CPU did.
 *
 *   core_trip [ROUND_TRIPS]
 *
 * Two threads, pinned to the first two CPUs this process may run on,
 * pass a counter back and forth in one cache line, ROUND_TRIPS times
 * (default 1000000) in BATCHES batches. Prints "N ns", the mean round
 * trip of the fastest batch (a batch during which the scheduler ran
 * something else on either CPU takes many times longer: the best one is
 * the hardware's), or "n/a" when fewer than two CPUs are allowed. On a desktop's cores that share an L3
 * a round trip takes well under 100 ns; between chips, or a VM's vCPUs
 * placed far apart, several times that.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCHES 20

/* the line the two threads pass, alone in its cache line */
static struct {
	_Alignas(64) atomic_uint_fast64_t turn;
	char pad[64 - sizeof(atomic_uint_fast64_t)];
} line;

static uint64_t trips;
static int cpus[2];
static atomic_bool unpinned;		/* the answering thread could not start */

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Answers each odd turn with the next even one. */
static void *answer(void *arg)
{
	(void)arg;
	if (pin(cpus[1])) {
		atomic_store(&unpinned, true);
		return NULL;
	}
	for (uint64_t i = 1; i <= trips; i++) {
		while (atomic_load_explicit(&line.turn, memory_order_acquire) !=
		       2 * i - 1)
			;
		atomic_store_explicit(&line.turn, 2 * i, memory_order_release);
	}
	return NULL;
}

/* The first two CPUs of the affinity mask; returns how many it found. */
static int two_cpus(void)
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	pthread_t other;
	uint64_t per_batch;
	double ns, best = -1;
	char *end;

	trips = 1000000;
	if (argc > 2 || (argc == 2 && (trips = strtoull(argv[1], &end, 10),
				      *end || !trips))) {
		fprintf(stderr, "usage: core_trip [ROUND_TRIPS]\n");
		return 2;
	}
	per_batch = trips / BATCHES ? trips / BATCHES : 1;
	trips = per_batch * BATCHES;
	if (two_cpus() < 2) {
		printf("n/a\n");
		return 0;
	}
	if (pin(cpus[0]) || pthread_create(&other, NULL, answer, NULL)) {
		fprintf(stderr, "core_trip: cannot run on CPUs %d and %d\n",
			cpus[0], cpus[1]);
		return 1;
	}
	for (uint64_t i = 1; i <= trips; i++) {
		if ((i - 1) % per_batch == 0)
			clock_gettime(CLOCK_MONOTONIC, &t0);
		atomic_store_explicit(&line.turn, 2 * i - 1, memory_order_release);
		while (atomic_load_explicit(&line.turn, memory_order_acquire) !=
		       2 * i)
			if (atomic_load_explicit(&unpinned, memory_order_relaxed))
				break;
		if (i % per_batch == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 +
			     (double)(t1.tv_nsec - t0.tv_nsec);
			if (best < 0 || ns < best)
				best = ns;
		}
	}
	pthread_join(other, NULL);
	if (atomic_load(&unpinned)) {
		fprintf(stderr, "core_trip: cannot run on CPU %d\n", cpus[1]);
		return 1;
	}
	printf("%.0f ns\n", best / (double)per_batch);
	return 0;
}
