/* jobs.c - chunks on worker threads, written in order (see jobs.h). */
#include "lib/util/jobs.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util/grow.h"

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

/* ---- one job beside ----------------------------------------------------- */

static void *job_run(void *arg)
{
	struct cs_job *j = arg;

	j->ret = j->fn(j->ctx);
	return NULL;
}

void cs_job_start(struct cs_job *j, unsigned int jobs, int (*fn)(void *ctx),
		  void *ctx)
{
	*j = (struct cs_job){ .fn = fn, .ctx = ctx };
	j->threaded = jobs > 1 && !pthread_create(&j->thread, NULL, job_run, j);
	if (!j->threaded)
		j->ret = fn(ctx);
}

int cs_job_wait(struct cs_job *j)
{
	if (j->threaded)
		pthread_join(j->thread, NULL);
	j->threaded = false;
	return j->ret;
}

/* ---- parts of a range --------------------------------------------------- */

struct part {
	cs_part_fn fn;
	void *ctx;
	unsigned int part;
	size_t begin, end;
};

static int part_run(void *arg)
{
	const struct part *p = arg;

	return p->fn(p->ctx, p->part, p->begin, p->end);
}

int cs_jobs_split(size_t nr, size_t min_part, unsigned int jobs,
		  cs_part_fn fn, void *ctx)
{
	struct part parts[CS_JOBS_MAX_PARTS];
	struct cs_job job[CS_JOBS_MAX_PARTS];
	size_t n = jobs ? jobs : 1;
	int err = 0;

	if (n > CS_JOBS_MAX_PARTS)
		n = CS_JOBS_MAX_PARTS;
	if (min_part && n > nr / min_part)
		n = nr / min_part ? nr / min_part : 1;
	for (size_t i = 0; i < n; i++)
		parts[i] = (struct part){ fn, ctx, (unsigned int)i, nr * i / n,
					  nr * (i + 1) / n };
	for (size_t i = 0; i + 1 < n; i++)
		cs_job_start(&job[i], (unsigned int)n, part_run, &parts[i]);
	err = part_run(&parts[n - 1]);
	for (size_t i = n - 1; i-- > 0;) {
		int e = cs_job_wait(&job[i]);

		if (e)
			err = e;
	}
	return err ? err : (int)n;
}

/* ---- ordered chunks ----------------------------------------------------- */

/* A chunk's text: a buffer that grows, kept for the next chunk once
 * written (open_memstream() grew a new one from a few bytes for every
 * chunk, copying and clearing as it went) */
struct chunk_text {
	char *buf;
	size_t len, cap;
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
	struct chunk_text *spare;	/* written chunks' buffers, for reuse */
	size_t nr_spare, cap_spare;
	bool stop;
	cs_chunk_fn fn;
	void *ctx;
};

/* A chunk's first buffer: a table chunk's text is tens of KiB */
#define TEXT_MIN (64 * 1024)

/* The chunk stream's writes: appended to the chunk's buffer */
static ssize_t text_write(void *cookie, const char *p, size_t n)
{
	struct chunk_text *t = cookie;
	size_t need = t->len + n;

	if (need < t->len ||
	    cs_grow((void **)&t->buf, &t->cap, need > TEXT_MIN ? need : TEXT_MIN, 1)) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
	return (ssize_t)n;
}

/* Formats chunk c into t, whose buffer (t->buf, t->cap) may be one
 * written before */
static int format_chunk(struct ordered *o, size_t c, struct chunk_text *t)
{
	size_t begin = c * o->chunk;
	size_t end = o->nr - begin < o->chunk ? o->nr : begin + o->chunk;
	cookie_io_functions_t io = { .write = text_write };
	FILE *m;
	int err;

	t->len = 0;
	m = fopencookie(t, "w", io);
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
		t = o->nr_spare ? o->spare[--o->nr_spare] :
				  (struct chunk_text){ 0 };
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
		pthread_mutex_lock(&o->lock);
		/* the buffer goes to the next chunk a worker takes */
		if (o->nr_spare < o->cap_spare)
			o->spare[o->nr_spare++] = (struct chunk_text){
				.buf = t.buf, .cap = t.cap };
		else
			free(t.buf);
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
	/* at most every chunk in the window and one per worker written */
	o.cap_spare = o.window + jobs;
	o.spare = calloc(o.cap_spare, sizeof(*o.spare));
	threads = calloc(jobs, sizeof(*threads));
	if (!o.slots || !o.spare || !threads ||
	    pthread_mutex_init(&o.lock, NULL) || pthread_cond_init(&o.cond, NULL)) {
		/* no threads to be had: one thread does it all */
		free(o.slots);
		free(o.spare);
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
	for (size_t i = 0; i < o.nr_spare; i++)
		free(o.spare[i].buf);
	pthread_cond_destroy(&o.cond);
	pthread_mutex_destroy(&o.lock);
	free(o.slots);
	free(o.spare);
	free(threads);
	return err;
}
