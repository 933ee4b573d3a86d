/* pingpong - two threads that hand a token back and forth, for the
 * off-CPU overhead bench: every hand-over is a blocking read, so the pair
 * switches the CPU about as often as a machine can (both on one CPU).
 *
 * Prints "wall SECONDS cpu SECONDS switches N rate PER_CPU_SECOND" on
 * stdout: cpu is the process's own CPU time (both threads, user and
 * system: the kernel's work at each switch, a recorder's callchain walk
 * included), N the number of blocking reads, each one switch-out, and the
 * rate is per second of that CPU time, which a loaded machine does not
 * change as it changes the wall clock.
 *
 * Between hand-overs each thread spins SPIN rounds of arithmetic, which sets
 * the rate: the default makes it about 100k switches a CPU second on the
 * machines we know; 0 switches as fast as the kernel can.
 *
 *   pingpong [ROUNDS] [SPIN]    defaults: 100000 round trips (two switches
 *                               each), 6500
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long rounds = 100000, spin = 6500;
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
	struct rusage ru;
	double t0, cpu;

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
	if (getrusage(RUSAGE_SELF, &ru))
		return 1;
	cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	      ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	printf("wall %.6f cpu %.6f switches %ld rate %.0f\n", t0, cpu,
	       2 * rounds, cpu > 0 ? 2 * rounds / cpu : 0);
	return 0;
}
