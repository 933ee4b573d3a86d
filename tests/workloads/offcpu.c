/* offcpu - a workload that waits for known times, for the off-CPU tests.
 *
 * Three threads wait at once, each in a function of its own, so that a
 * profile can say how long each function spent off the CPU:
 *
 *   sleep_in_nanosleep   nanosleep(50 ms), SLEEPS times     SLEEPS * 50 ms
 *   read_from_pipe       read() of a pipe that feed_pipe     READS * 20 ms
 *                        writes a byte into every 20 ms
 *   wait_on_futex        FUTEX_WAIT until wake_futex         WAKES * 100 ms
 *                        wakes it, every 100 ms
 *
 * All start together (a barrier), and feed_pipe and wake_futex keep their
 * period with absolute deadlines, so the waits add up to the known times
 * however slow the machine (an emulator) makes thread creation and their
 * own work. A wait ends when its thread runs again, which on a busy
 * machine includes the wait for a CPU after the wake-up: run as root, the
 * threads take a higher priority (nice -10) to keep that short.
 *
 * The feeding and waking threads sleep in their own functions. Built with
 * frame pointers and without inlining, like the other workloads; the
 * waits are system calls made right in the measured functions (libc's
 * wrappers keep no frame pointer, and a frame-pointer unwind from inside
 * one skips its caller: the very function we measure).
 *
 * At the end it prints how long each measured function really spent in its
 * waiting system calls, by the clock ("waited sleep_in_nanosleep 10.0213"):
 * a sleep ends a little after its time, later still on a loaded machine
 * or an emulator, and a profile of the run must show that time.
 *
 *   offcpu [SLEEPS] [READS] [WAKES]        defaults: 200 100 10
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int sleeps = 200, reads = 100, wakes = 10;

__attribute__((noinline)) static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The measured functions keep their frame all along: no shrink-wrapping
 * of the frame pointer's push into the paths that call out. */
#define MEASURED __attribute__((noinline, optimize("no-shrink-wrap")))

/* the syscall instruction in the caller's own code */
static inline __attribute__((always_inline)) long
sys4(long nr, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long ret;

	__asm__ volatile ("syscall" : "=a"(ret)
			  : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			  : "rcx", "r11", "memory");
	return ret;
}
static int pipefd[2];
static double waited[3];		/* seconds in each function's waits */
static pthread_barrier_t start;
static volatile uint32_t futex_word;

/* Sleeps until `ms` after the previous deadline (the first: after now),
 * so that the feeding and waking keep their period however long their
 * own work takes (under an emulator, it takes long). */
__attribute__((noinline)) static void pause_until_next(struct timespec *deadline,
						       long ms)
{
	if (!deadline->tv_sec && !deadline->tv_nsec)
		clock_gettime(CLOCK_MONOTONIC, deadline);
	deadline->tv_nsec += ms * 1000000L;
	deadline->tv_sec += deadline->tv_nsec / 1000000000L;
	deadline->tv_nsec %= 1000000000L;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, deadline, NULL) == EINTR)
		;
}

/* 50 ms at a time, `sleeps` times */
MEASURED static void sleep_in_nanosleep(void)
{
	for (int i = 0; i < sleeps; i++) {
		struct timespec ts = { 0, 50 * 1000000L };
		double t = now();

		while (sys4(SYS_nanosleep, (long)&ts, (long)&ts, 0, 0) == -EINTR)
			;
		waited[0] += now() - t;
	}
}

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	sleep_in_nanosleep();
	return NULL;
}

/* blocks in read() until feed_pipe's next byte */
MEASURED static void read_from_pipe(void)
{
	char c;

	for (int i = 0; i < reads; i++) {
		double t = now();

		if (sys4(SYS_read, pipefd[0], (long)&c, 1, 0) != 1)
			exit(1);
		waited[1] += now() - t;
	}
}

static void *reader(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	read_from_pipe();
	return NULL;
}

__attribute__((noinline)) static void feed_pipe(void)
{
	struct timespec deadline = { 0, 0 };

	for (int i = 0; i < reads; i++) {
		pause_until_next(&deadline, 20);
		if (write(pipefd[1], "x", 1) != 1)
			exit(1);
	}
}

static void *feeder(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	feed_pipe();
	return NULL;
}

/* FUTEX_WAIT while the word is what it was, `wakes` times */
MEASURED static void wait_on_futex(void)
{
	for (uint32_t seen = 0; seen < (uint32_t)wakes; seen++)
		while (__atomic_load_n(&futex_word, __ATOMIC_ACQUIRE) == seen) {
			double t = now();
			long r = sys4(SYS_futex, (long)&futex_word,
				      FUTEX_WAIT_PRIVATE, seen, 0);

			waited[2] += now() - t;
			if (r && r != -EAGAIN && r != -EINTR)
				exit(1);
		}
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	wait_on_futex();
	return NULL;
}

__attribute__((noinline)) static void wake_futex(void)
{
	struct timespec deadline = { 0, 0 };

	for (int i = 0; i < wakes; i++) {
		pause_until_next(&deadline, 100);
		__atomic_add_fetch(&futex_word, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

static void *waker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	wake_futex();
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fn[])(void *) = { sleeper, reader, feeder, waiter, waker };
	pthread_t t[5];

	if (argc > 1)
		sleeps = atoi(argv[1]);
	if (argc > 2)
		reads = atoi(argv[2]);
	if (argc > 3)
		wakes = atoi(argv[3]);
	if (pipe(pipefd) || pthread_barrier_init(&start, NULL, 5))
		return 1;
	/* threads inherit it; unprivileged, it stays as it is */
	if (setpriority(PRIO_PROCESS, 0, -10))
		(void)0;
	for (int i = 0; i < 5; i++)
		if (pthread_create(&t[i], NULL, fn[i], NULL))
			return 1;
	for (int i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	/* the pid, so that a system-wide profile is read for this process
	 * alone (another run of this workload may be recorded beside it) */
	printf("pid %d\nwaited sleep_in_nanosleep %.6f\n"
	       "waited read_from_pipe %.6f\nwaited wait_on_futex %.6f\n",
	       (int)getpid(), waited[0], waited[1], waited[2]);
	return 0;
}
