/* mainexit - the main thread leaves early (pthread_exit) while a worker
 * keeps running: a recorder following the process with -p must not stop
 * when the main thread goes.
 *
 *   mainexit [SECONDS]      the worker's run time after the main thread
 *                           left (default 1); the main thread waits 0.3 s
 *                           first so that a recorder can attach
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double seconds = 1.0;
static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void outlive_main(double until)
{
	uint64_t x = sink;

	while (now() < until)
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

static void *worker(void *arg)
{
	(void)arg;
	outlive_main(now() + 0.3 + seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	struct timespec ts = { 0, 300 * 1000000L };

	if (argc > 1)
		seconds = atof(argv[1]);
	if (seconds <= 0) {
		fprintf(stderr, "usage: mainexit [SECONDS]\n");
		return 2;
	}
	if (pthread_create(&t, NULL, worker, NULL)) {
		perror("mainexit: pthread_create");
		return 1;
	}
	nanosleep(&ts, NULL);
	pthread_exit(NULL);
}
