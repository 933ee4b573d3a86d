/* longsys - threads that spend most of their time inside long system calls.
 *
 * The kernel test stops a recording while this runs: a sample taken inside
 * a long system call waits for its deferred user stack until the thread
 * returns to user space, which may be after the recording stopped. That is
 * what the recorder's drain window is for, and this program makes it
 * happen on every run:
 *
 *   - readers: readv(2) from /dev/zero in calls that each take about MS
 *     milliseconds in the kernel. Every iovec points at the same 1 MiB
 *     buffer, so a call copies many MiB without more memory (and without
 *     page faults); the number of iovecs is found by doubling, so this
 *     holds on real hardware, under KVM and under TCG alike;
 *   - a writer blocked on a full pipe, which a slow drainer empties a
 *     little every 100 ms, so the writer wakes, copies, and sleeps again
 *     in the same write(2).
 *
 * Every thread reaches its system call through a chain of named functions
 * (ls_outer -> ls_middle -> ls_inner -> big_read | pipe_write) built with
 * frame pointers, so the stitched stacks can be checked by name.
 *
 * It stops after SECONDS or on SIGTERM, and then prints how long the
 * reads took (the drain window must be longer than one read for the
 * drain to help).
 *
 *   longsys [SECONDS] [READERS] [MS]     defaults: 5 2 100
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>

#define PIPE_CHUNK	(256u << 10)	/* bytes per write(2) into the pipe */

static double seconds = 5.0;
#define CHUNK		(1u << 20)	/* bytes per iovec */
#define IOVS_MAX	1024		/* IOV_MAX: at most 1 GiB per readv(2) */
static double target = 0.1;		/* seconds per read(2) */
static pthread_mutex_t stat_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long reads;
static double read_time, read_max;
static int pipe_fd[2];
static volatile uint64_t sink;
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int running(double until)
{
	return !stop && now() < until;
}

__attribute__((noinline)) static void big_read(char *buf, double until)
{
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0) {
		perror("longsys: /dev/zero");
		exit(1);
	}
	static __thread struct iovec iov[IOVS_MAX];
	unsigned long n = 0;
	int iovs = 1;
	double sum = 0, max = 0;

	for (int i = 0; i < IOVS_MAX; i++)
		iov[i] = (struct iovec){ .iov_base = buf, .iov_len = CHUNK };
	for (double t = now(); !stop && t < until; ) {
		if (readv(fd, iov, iovs) < 0)
			break;
		double t2 = now();

		n++;
		sum += t2 - t;
		if (t2 - t > max)
			max = t2 - t;
		if (t2 - t < target / 2 && iovs < IOVS_MAX)
			iovs *= 2;
		t = t2;
	}
	close(fd);
	pthread_mutex_lock(&stat_lock);
	reads += n;
	read_time += sum;
	if (max > read_max)
		read_max = max;
	pthread_mutex_unlock(&stat_lock);
}

__attribute__((noinline)) static void pipe_write(char *buf, double until)
{
	while (running(until))
		if (write(pipe_fd[1], buf, PIPE_CHUNK) < 0)
			break;
	/* the drainer may wait in read(2): end of file ends it */
	close(pipe_fd[1]);
}

__attribute__((noinline)) static void ls_inner(int kind, char *buf, double until)
{
	if (kind)
		pipe_write(buf, until);
	else
		big_read(buf, until);
	sink++;		/* keeps the call from being a tail call */
}

__attribute__((noinline)) static void ls_middle(int kind, char *buf, double until)
{
	ls_inner(kind, buf, until);
	sink++;
}

__attribute__((noinline)) static void ls_outer(int kind, char *buf, double until)
{
	ls_middle(kind, buf, until);
	sink++;
}

static void *worker(void *arg)
{
	int kind = (int)(intptr_t)arg;
	size_t size = kind ? PIPE_CHUNK : CHUNK;
	char *buf = malloc(size);

	if (!buf) {
		perror("longsys: malloc");
		exit(1);
	}
	/* fault the buffer in now so that the calls are all copying */
	memset(buf, 1, size);
	ls_outer(kind, buf, now() + seconds);
	free(buf);
	return NULL;
}

/* Empties the pipe slowly so the writer keeps blocking in write(2). */
static void *drainer(void *arg)
{
	static char buf[65536];
	struct timespec pause = { 0, 100 * 1000 * 1000 };
	double until = now() + seconds;

	(void)arg;
	while (running(until)) {
		if (read(pipe_fd[0], buf, sizeof(buf)) <= 0)
			break;
		nanosleep(&pause, NULL);
	}
	/* unblock the writer for good */
	close(pipe_fd[0]);
	return NULL;
}

int main(int argc, char **argv)
{
	int readers = 2;
	pthread_t tid[18];
	int n = 0;

	if (argc > 1)
		seconds = atof(argv[1]);
	if (argc > 2)
		readers = atoi(argv[2]);
	if (argc > 3)
		target = atof(argv[3]) / 1e3;
	if (seconds <= 0 || readers < 0 || readers > 16 || target <= 0) {
		fprintf(stderr, "usage: longsys [SECONDS] [READERS] [MIB]\n");
		return 2;
	}
	/* the drainer closes the pipe at the end: EPIPE, not a signal */
	signal(SIGPIPE, SIG_IGN);
	/* no SA_RESTART: a blocked call returns and the loops see stop */
	sigaction(SIGTERM, &(struct sigaction){ .sa_handler = on_term }, NULL);
	if (pipe(pipe_fd)) {
		perror("longsys: pipe");
		return 1;
	}
	for (int i = 0; i < readers; i++)
		if (pthread_create(&tid[n++], NULL, worker, (void *)(intptr_t)0))
			goto fail;
	if (pthread_create(&tid[n++], NULL, worker, (void *)(intptr_t)1) ||
	    pthread_create(&tid[n++], NULL, drainer, NULL))
		goto fail;
	for (int i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	if (reads)
		printf("longsys: %lu reads, %.1f ms each on average, %.1f ms at most\n",
		       reads, read_time / reads * 1e3, read_max * 1e3);
	return 0;
fail:
	perror("longsys: pthread_create");
	return 1;
}
