/* deepstack - a workload with deep, recognisable call stacks.
 *
 * Built with frame pointers and without inlining so that every level shows
 * up in a frame-pointer unwind. Threads recurse through a fixed chain of
 * named functions (deep_a -> deep_b -> ... -> deep_h, then recursion to a
 * depth) and at the bottom either spin in user space (burn_cpu) or make
 * system calls (do_syscalls), so profiles have both user-mode samples and
 * samples in the kernel with long user stacks beneath.
 *
 *   deepstack [SECONDS] [THREADS] [DEPTH]      defaults: 1 2 40
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double seconds = 1.0;
static int depth = 40;
static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void burn_cpu(double until)
{
	uint64_t x = sink;

	while (now() < until)
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

__attribute__((noinline)) static void do_syscalls(double until)
{
	char buf[65536];
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return;
	while (now() < until)
		for (int i = 0; i < 64; i++)
			if (read(fd, buf, sizeof(buf)) < 0)
				break;
	close(fd);
}

__attribute__((noinline)) static void recurse(int n, int kind, double until)
{
	if (n > 0) {
		recurse(n - 1, kind, until);
		sink++;		/* keeps the call from being a tail call */
		return;
	}
	if (kind)
		do_syscalls(until);
	else
		burn_cpu(until);
}

#define LEVEL(name, next) \
	__attribute__((noinline)) static void name(int kind, double until) \
	{ next; sink++; }

LEVEL(deep_h, recurse(depth, kind, until))
LEVEL(deep_g, deep_h(kind, until))
LEVEL(deep_f, deep_g(kind, until))
LEVEL(deep_e, deep_f(kind, until))
LEVEL(deep_d, deep_e(kind, until))
LEVEL(deep_c, deep_d(kind, until))
LEVEL(deep_b, deep_c(kind, until))
LEVEL(deep_a, deep_b(kind, until))

static void *worker(void *arg)
{
	int kind = (int)(intptr_t)arg;
	double end = now() + seconds;

	/* alternate between user work and system calls in slices */
	while (now() < end) {
		double slice = now() + 0.05;
		deep_a(kind, slice < end ? slice : end);
		kind = !kind;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 2;

	if (argc > 1)
		seconds = atof(argv[1]);
	if (argc > 2)
		threads = atoi(argv[2]);
	if (argc > 3)
		depth = atoi(argv[3]);
	if (seconds <= 0 || threads < 1 || threads > 256 || depth < 0 || depth > 5000) {
		fprintf(stderr, "usage: deepstack [SECONDS] [THREADS] [DEPTH]\n");
		return 2;
	}

	pthread_t tid[256];
	for (int i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, (void *)(intptr_t)(i & 1))) {
			perror("deepstack: pthread_create");
			return 1;
		}
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	return 0;
}
