/* dwarfmix_c.c - the C half of dwarfmix (see dwarfmix.cc).
 *
 * Built -O2 -fomit-frame-pointer like a distribution's code: only the
 * call frame information tells where each frame's caller is.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dwarfmix.h"

static volatile uint64_t sink;

double dm_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* libc's qsort calls it back: the stack runs through libc */
__attribute__((noinline)) static int dm_compare(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	/* a little work of its own, so samples land here */
	for (int i = 0; i < 8; i++)
		x ^= x >> 3, y ^= y >> 3;
	return x < y ? -1 : x > y;
}

void dm_qsort_loop(double until)
{
	enum { N = 20000 };
	uint32_t *v = malloc(N * sizeof(*v));
	uint32_t seed = 1;

	if (!v)
		return;
	while (dm_now() < until) {
		for (int i = 0; i < N; i++)
			v[i] = seed = seed * 1103515245u + 12345u;
		qsort(v, N, sizeof(*v), dm_compare);
	}
	free(v);
}

__attribute__((noinline)) static uint64_t dm_leaf(uint64_t x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

/* deep recursion: each level is a frame, none is a tail call */
__attribute__((noinline)) static uint64_t dm_recurse(int depth, uint64_t x)
{
	uint64_t r;

	if (depth == 0)
		return dm_leaf(x);
	r = dm_recurse(depth - 1, x + (uint64_t)depth);
	sink += r;
	return r ^ (uint64_t)depth;
}

void dm_recurse_loop(double until, int depth)
{
	while (dm_now() < until)
		sink += dm_recurse(depth, sink);
}

/* runs on top of whatever the timer interrupted: the signal frame */
__attribute__((noinline)) static void dm_on_signal(int sig)
{
	uint64_t x = (uint64_t)sig;

	for (int i = 0; i < 200000; i++)
		x = x * 2862933555777941757ULL + 3037000493ULL;
	sink += x;
}

__attribute__((noinline)) static uint64_t dm_interrupted(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x = (x << 7) ^ (x >> 3) ^ (uint64_t)i;
	return x;
}

void dm_signal_loop(double until)
{
	struct sigaction sa;
	struct sigevent ev;
	struct itimerspec its = { .it_interval = { 0, 2000000 },
				  .it_value = { 0, 2000000 } };
	timer_t timer;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = dm_on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	/* every 2 ms of this thread's CPU time, wherever it is */
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGUSR1;
	ev._sigev_un._tid = gettid();	/* sigev_notify_thread_id */
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &timer))
		return;
	timer_settime(timer, 0, &its, NULL);
	while (dm_now() < until)
		sink += dm_interrupted(sink);
	timer_delete(timer);
}
