/* pingpong - two threads that hand a token back and forth, for the
 * off-CPU overhead bench: every hand-over is a blocking read, so the pair
 * switches the CPU about as often as a machine can (both on one CPU).
 *
 * Prints "wall SECONDS switches N rate PER_SECOND" on stdout: N is the
 * number of blocking reads, each one switch-out.
 *
 * Between hand-overs each thread spins SPIN rounds of arithmetic, which sets
 * the rate: the default makes it about 100k switches a second on the
 * machines we know; 0 switches as fast as the kernel can.
 *
 *   pingpong [ROUNDS] [SPIN]    defaults: 100000 round trips (two switches
 *                               each), 7000
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long rounds = 100000, spin = 7000;
static volatile unsigned long sink;
static int ping[2], pong[2];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* both threads on the CPU the process started on: a hand-over is then a
 * switch from one to the other, not a wake-up of an idle CPU */
static void same_cpu(void)
{
	static int cpu = -1;
	cpu_set_t set;

	if (cpu < 0)
		cpu = sched_getcpu();
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

__attribute__((noinline)) static void work(void)
{
	unsigned long x = sink;

	for (long i = 0; i < spin; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

__attribute__((noinline)) static void serve(void)
{
	char c;

	for (long i = 0; i < rounds; i++) {
		if (read(ping[0], &c, 1) != 1)
			exit(1);
		work();
		if (write(pong[1], &c, 1) != 1)
			exit(1);
	}
}

static void *server(void *arg)
{
	(void)arg;
	same_cpu();
	serve();
	return NULL;
}

__attribute__((noinline)) static void ask(void)
{
	char c = 'x';

	for (long i = 0; i < rounds; i++) {
		work();
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			exit(1);
	}
}

int main(int argc, char **argv)
{
	pthread_t t;
	double t0;

	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		spin = atol(argv[2]);
	if (pipe(ping) || pipe(pong))
		return 1;
	same_cpu();
	t0 = now();
	if (pthread_create(&t, NULL, server, NULL))
		return 1;
	ask();
	pthread_join(t, NULL);
	t0 = now() - t0;
	printf("wall %.6f switches %ld rate %.0f\n", t0, 2 * rounds,
	       2 * rounds / t0);
	return 0;
}
