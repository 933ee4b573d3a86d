/* shift - a workload whose hot function changes with its argument, for the
 * diff tests: it spends PERCENT of its CPU time in spin_a, the rest in
 * spin_b, a little in always (the same in every run), for SECONDS.
 *
 *   shift [SECONDS] [PERCENT]          defaults: 1 80
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* each its own loop: the samples land in the function itself */
#define SPIN(name)							\
	__attribute__((noinline)) static void name(long n)		\
	{								\
		uint64_t x = sink;					\
									\
		for (long i = 0; i < n; i++)				\
			x = x * 6364136223846793005ULL + 1442695040888963407ULL; \
		sink = x;						\
	}
SPIN(spin_a)
SPIN(spin_b)
SPIN(always)

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1;
	long pct = argc > 2 ? atol(argv[2]) : 80;
	double t0 = now();

	/* slices of 100 units: pct of them in spin_a, the rest in spin_b */
	while (now() - t0 < seconds) {
		spin_a(pct * 2000);
		spin_b((100 - pct) * 2000);
		always(10 * 2000);
	}
	return 0;
}
