/* fixedwork - a fixed amount of work under deep stacks, for overhead runs.
 *
 * Unlike deepstack (which runs for a given time), this does a given number
 * of rounds, so a profiler's overhead shows as a longer wall time. Each
 * thread recurses through named frames (work_a -> work_b -> work_c, then
 * recursion) and alternates a user-space loop with read() system calls.
 * Prints "wall SECONDS cpu SECONDS" (its own CPU time, user + system) on
 * stdout, so a caller can subtract it from a recorder's total.
 *
 *   fixedwork [ROUNDS] [THREADS] [DEPTH]      defaults: 1000 2 30
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int rounds = 1000, depth = 30;
static volatile uint64_t sink;

__attribute__((noinline)) static void spin(void)
{
	uint64_t x = sink;

	for (int i = 0; i < 200000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

__attribute__((noinline)) static void reads(int fd)
{
	static __thread char buf[16384];

	for (int i = 0; i < 16; i++)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
}

__attribute__((noinline)) static void recurse(int n, int fd)
{
	if (n > 0) {
		recurse(n - 1, fd);
		sink++;
		return;
	}
	spin();
	reads(fd);
}

__attribute__((noinline)) static void work_c(int fd) { recurse(depth, fd); sink++; }
__attribute__((noinline)) static void work_b(int fd) { work_c(fd); sink++; }
__attribute__((noinline)) static void work_a(int fd) { work_b(fd); sink++; }

static void *worker(void *arg)
{
	int fd = open("/dev/zero", O_RDONLY);

	(void)arg;
	if (fd < 0)
		return NULL;
	for (int r = 0; r < rounds; r++)
		work_a(fd);
	close(fd);
	return NULL;
}

static double seconds(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	int threads = 2;
	struct timespec t0, t1;
	struct rusage ru;
	pthread_t tid[64];

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		threads = atoi(argv[2]);
	if (argc > 3)
		depth = atoi(argv[3]);
	if (rounds < 1 || threads < 1 || threads > 64 || depth < 0 || depth > 5000) {
		fprintf(stderr, "usage: fixedwork [ROUNDS] [THREADS] [DEPTH]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, NULL)) {
			perror("fixedwork: pthread_create");
			return 1;
		}
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	getrusage(RUSAGE_SELF, &ru);
	printf("wall %.4f cpu %.4f\n",
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       seconds(ru.ru_utime) + seconds(ru.ru_stime));
	return 0;
}
