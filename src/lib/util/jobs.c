/* jobs.c - chunks on worker threads, written in order (see jobs.h). */
#include "lib/util/jobs.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_JOBS 1024

unsigned int cs_jobs_default(void)
{
	cpu_set_t set;
	long n;

	if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 0)
		return (unsigned int)CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned int)n : 1;
}

int cs_jobs_parse(const char *arg, unsigned int *jobs)
{
	char *end;
	unsigned long v;

	if (!arg || *arg < '0' || *arg > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || *end || v < 1 || v > MAX_JOBS)
		return -EINVAL;
	*jobs = (unsigned int)v;
	return 0;
}

/* ---- ordered chunks ----------------------------------------------------- */

struct chunk_text {
	char *buf;
	size_t len;
	int err;
	bool done;
};

struct ordered {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	size_t nr, chunk, nr_chunks;
	size_t next_claim, next_write;
	size_t window;			/* chunks formatted ahead of the writer */
	struct chunk_text *slots;	/* chunk c in slots[c % window] */
	bool stop;
	cs_chunk_fn fn;
	void *ctx;
};

static int format_chunk(struct ordered *o, size_t c, struct chunk_text *t)
{
	size_t begin = c * o->chunk;
	size_t end = o->nr - begin < o->chunk ? o->nr : begin + o->chunk;
	FILE *m;
	int err;

	t->buf = NULL;
	t->len = 0;
	m = open_memstream(&t->buf, &t->len);
	if (!m)
		return -ENOMEM;
	err = o->fn(o->ctx, begin, end, m);
	if (fclose(m) && !err)
		err = -ENOMEM;
	return err;
}

static void *worker(void *arg)
{
	struct ordered *o = arg;

	pthread_mutex_lock(&o->lock);
	for (;;) {
		struct chunk_text t;
		size_t c;

		while (!o->stop && o->next_claim < o->nr_chunks &&
		       o->next_claim >= o->next_write + o->window)
			pthread_cond_wait(&o->cond, &o->lock);
		if (o->stop || o->next_claim >= o->nr_chunks)
			break;
		c = o->next_claim++;
		pthread_mutex_unlock(&o->lock);
		t.err = format_chunk(o, c, &t);
		t.done = true;
		pthread_mutex_lock(&o->lock);
		o->slots[c % o->window] = t;
		pthread_cond_broadcast(&o->cond);
	}
	pthread_mutex_unlock(&o->lock);
	return NULL;
}

/* Writes the chunks in order as they are done; returns the first error. */
static int write_in_order(struct ordered *o, FILE *out)
{
	int err = 0;

	pthread_mutex_lock(&o->lock);
	for (size_t w = 0; w < o->nr_chunks && !err; w++) {
		struct chunk_text *s = &o->slots[w % o->window], t;

		while (!s->done)
			pthread_cond_wait(&o->cond, &o->lock);
		t = *s;
		s->done = false;
		s->buf = NULL;
		o->next_write = w + 1;
		pthread_cond_broadcast(&o->cond);
		pthread_mutex_unlock(&o->lock);
		err = t.err;
		if (!err && t.len && fwrite(t.buf, 1, t.len, out) != t.len)
			err = -EIO;
		free(t.buf);
		pthread_mutex_lock(&o->lock);
	}
	if (err) {
		o->stop = true;
		pthread_cond_broadcast(&o->cond);
	}
	pthread_mutex_unlock(&o->lock);
	return err;
}

int cs_jobs_ordered(size_t nr, size_t chunk, unsigned int jobs,
		    cs_chunk_fn fn, void *ctx, FILE *out)
{
	struct ordered o = { .nr = nr, .chunk = chunk ? chunk : 1, .fn = fn,
			     .ctx = ctx };
	pthread_t *threads;
	unsigned int started = 0;
	int err;

	o.nr_chunks = (nr + o.chunk - 1) / o.chunk;
	if (jobs > MAX_JOBS)
		jobs = MAX_JOBS;
	if (jobs > o.nr_chunks)
		jobs = (unsigned int)o.nr_chunks;
	if (jobs <= 1)
		return nr ? fn(ctx, 0, nr, out) : 0;
	o.window = 4 * (size_t)jobs;
	o.slots = calloc(o.window, sizeof(*o.slots));
	threads = calloc(jobs, sizeof(*threads));
	if (!o.slots || !threads ||
	    pthread_mutex_init(&o.lock, NULL) || pthread_cond_init(&o.cond, NULL)) {
		/* no threads to be had: one thread does it all */
		free(o.slots);
		free(threads);
		return fn(ctx, 0, nr, out);
	}
	for (; started < jobs; started++)
		if (pthread_create(&threads[started], NULL, worker, &o))
			break;
	if (!started) {
		err = fn(ctx, 0, nr, out);
	} else {
		err = write_in_order(&o, out);
	}
	for (unsigned int i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	/* chunks done after an error was found are dropped */
	for (size_t i = 0; i < o.window; i++)
		free(o.slots[i].buf);
	pthread_cond_destroy(&o.cond);
	pthread_mutex_destroy(&o.lock);
	free(o.slots);
	free(threads);
	return err;
}

/* ---- sorting ------------------------------------------------------------ */

/* A thread's share of a sort: two parts, one after the other, so that
 * the buffers qsort() takes at once hold half the elements */
struct sort_part {
	char *base[2];
	size_t nr[2], size;
	int (*cmp)(const void *, const void *);
};

static void *sort_one(void *arg)
{
	struct sort_part *p = arg;

	qsort(p->base[0], p->nr[0], p->size, p->cmp);
	qsort(p->base[1], p->nr[1], p->size, p->cmp);
	return NULL;
}

/* Merges the sorted runs base[0, na) and base[na, na + nb) in place,
 * through tmp (room for na elements): the left run goes to tmp, and the
 * merge writes from the front of base, never past what it has read of
 * the right run. */
static void merge(char *base, size_t na, size_t nb, char *tmp, size_t size,
		  int (*cmp)(const void *, const void *))
{
	const char *a = tmp, *b = base + na * size;
	char *out = base;

	memcpy(tmp, base, na * size);
	while (na && nb) {
		if (cmp(b, a) < 0) {
			memcpy(out, b, size);
			b += size;
			nb--;
		} else {
			memcpy(out, a, size);
			a += size;
			na--;
		}
		out += size;
	}
	/* what is left of the right run is in place already */
	memcpy(out, a, na * size);
}

int cs_jobs_sort(void *base, size_t nr, size_t size,
		 int (*cmp)(const void *, const void *), unsigned int jobs)
{
	struct sort_part parts[32];
	pthread_t threads[32];
	size_t bounds[65], nparts, most = 0;
	char *tmp, *from = base;
	bool ok[32] = { false };

	if (jobs > 32)
		jobs = 32;
	if (jobs < 1)
		jobs = 1;
	/* small inputs are not worth a thread */
	if (nr < 4096 || nr > SIZE_MAX / size) {
		qsort(base, nr, size, cmp);
		return 0;
	}
	/* two parts a thread, even for one: qsort() takes a buffer as big
	 * as what it sorts, the merge half of the elements */
	nparts = 2 * (size_t)jobs;
	for (size_t i = 0; i <= nparts; i++)
		bounds[i] = nr * i / nparts;
	for (size_t i = 0; i < jobs; i++) {
		size_t a = 2 * i, b = 2 * i + 1;

		parts[i] = (struct sort_part){
			{ from + bounds[a] * size, from + bounds[b] * size },
			{ bounds[a + 1] - bounds[a], bounds[b + 1] - bounds[b] },
			size, cmp };
		ok[i] = jobs > 1 &&
			!pthread_create(&threads[i], NULL, sort_one, &parts[i]);
		if (!ok[i])
			sort_one(&parts[i]);
	}
	for (size_t i = 0; i < jobs; i++)
		if (ok[i])
			pthread_join(threads[i], NULL);
	/* merge neighbouring runs until one is left; the buffer, taken once
	 * the parts' own sorts have given theirs back, holds the largest
	 * left run: half the elements at most */
	for (size_t w = 1; w < nparts; w *= 2)
		for (size_t i = 0; i + w < nparts; i += 2 * w)
			if (bounds[i + w] - bounds[i] > most)
				most = bounds[i + w] - bounds[i];
	tmp = malloc(most * size);
	if (!tmp) {
		qsort(base, nr, size, cmp);
		return -ENOMEM;
	}
	for (size_t w = 1; w < nparts; w *= 2)
		for (size_t i = 0; i + w < nparts; i += 2 * w) {
			size_t lo = bounds[i], mid = bounds[i + w];
			size_t hi = bounds[i + 2 * w < nparts ? i + 2 * w : nparts];

			merge(from + lo * size, mid - lo, hi - mid, tmp, size, cmp);
		}
	free(tmp);
	return 0;
}
