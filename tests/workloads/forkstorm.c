/* forkstorm - a fork- and thread-heavy load, for the recorder's stress
 * test: tasks come and go faster than a profiler's side band likes.
 *
 * For SECONDS, keeps CHILDREN processes alive; each child starts THREADS
 * threads that recurse through named frames (storm_thread -> storm_a ->
 * storm_b -> storm_recurse ...) and spin or make short system calls, then
 * the threads are joined and the child exits and is replaced. Prints how
 * many processes and threads it made.
 *
 *   forkstorm [SECONDS] [CHILDREN] [THREADS]     defaults: 10 4 4
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

__attribute__((noinline)) static void storm_spin(int n)
{
	uint64_t x = sink;

	for (int i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

__attribute__((noinline)) static void storm_recurse(int depth, int fd)
{
	char buf[256];

	if (depth > 0) {
		storm_recurse(depth - 1, fd);
		sink += (uint64_t)buf[depth % sizeof(buf)];
		return;
	}
	storm_spin(20000);
	if (read(fd, buf, sizeof(buf)) < 0)
		sink++;
}

__attribute__((noinline)) static void storm_b(int fd)
{
	for (int i = 0; i < 40; i++)
		storm_recurse(12, fd);
}

__attribute__((noinline)) static void storm_a(int fd)
{
	storm_b(fd);
}

static void *storm_thread(void *arg)
{
	int fd = open("/dev/zero", O_RDONLY);

	(void)arg;
	storm_a(fd);
	if (fd >= 0)
		close(fd);
	return NULL;
}

__attribute__((noinline)) static void storm_child(int threads)
{
	pthread_t t[64];
	int n = 0;

	for (int i = 0; i < threads && i < 64; i++)
		if (!pthread_create(&t[n], NULL, storm_thread, NULL))
			n++;
	storm_thread(NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10, end = now() + secs;
	int children = argc > 2 ? atoi(argv[2]) : 4;
	int threads = argc > 3 ? atoi(argv[3]) : 4;
	unsigned long forks = 0, alive = 0;

	while (now() < end || alive) {
		while (alive < (unsigned long)children && now() < end) {
			pid_t p = fork();

			if (p == 0) {
				storm_child(threads);
				_exit(0);
			}
			if (p > 0) {
				alive++;
				forks++;
			}
		}
		if (wait(NULL) > 0)
			alive--;
		else
			break;
	}
	printf("forkstorm: %lu processes, %lu threads\n", forks,
	       forks * (unsigned long)(threads + 1));
	return 0;
}
