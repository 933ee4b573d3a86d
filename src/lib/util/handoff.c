/* handoff.c - batches of records to a consumer thread (see handoff.h). */
#include "lib/util/handoff.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "lib/util/queue.h"

/* 4 batches of 256 KiB: a few hundred samples each, so the lock is taken
 * rarely, and the ring stays small enough to be in the caches when the
 * consumer reads what the producer just wrote */
#define NR_BATCHES	4
#define BATCH_SIZE	(256 * 1024)

struct batch {
	char *buf;
	size_t len, cap;
};

struct cs_handoff {
	cs_handoff_fn fn;		/* the consumer, on its thread */
	cs_handoff_produce_fn produce;	/* or the producer, on its thread */
	void *ctx;
	pthread_t thread;
	struct cs_queue *todo;		/* filled batches; NULL: the end */
	struct cs_queue *free;		/* batches read, back to the producer */
	struct batch batches[NR_BATCHES];
	struct batch *filling;		/* the producer's */
	int append_err;			/* the producer's */
	int err;			/* the consumer's first error */
	int produced;			/* what produce returned */
};

/* Every batch in order through fn until the end; after fn's first error
 * the batches are only given back (the producer sees h->err). */
static int take_all(struct cs_handoff *h, cs_handoff_fn fn, void *ctx)
{
	struct batch *b;
	int err = 0;

	while ((b = cs_queue_pop(h->todo))) {
		if (!err) {
			err = fn(ctx, b->buf, b->len);
			if (err)
				__atomic_store_n(&h->err, err, __ATOMIC_RELAXED);
		}
		b->len = 0;
		cs_queue_push(h->free, b);
	}
	return err;
}

static void *consume(void *arg)
{
	struct cs_handoff *h = arg;

	take_all(h, h->fn, h->ctx);
	return NULL;
}

static void *produce(void *arg)
{
	struct cs_handoff *h = arg;

	h->produced = h->produce(h->ctx, h);
	if (h->filling->len)
		cs_queue_push(h->todo, h->filling);
	cs_queue_push(h->todo, NULL);
	return NULL;
}

static void handoff_free(struct cs_handoff *h)
{
	for (size_t i = 0; i < NR_BATCHES; i++)
		free(h->batches[i].buf);
	cs_queue_free(h->todo);
	cs_queue_free(h->free);
	free(h);
}

/* A hand-off whose thread runs fn (consume) or produce (produce). */
static int handoff_start(cs_handoff_fn fn, cs_handoff_produce_fn produce_fn,
			 void *ctx, struct cs_handoff **out)
{
	struct cs_handoff *h = calloc(1, sizeof(*h));
	int err;

	*out = NULL;
	if (!h)
		return -ENOMEM;
	h->fn = fn;
	h->produce = produce_fn;
	h->ctx = ctx;
	/* room for every batch and the end: a push never waits on todo */
	err = cs_queue_new(NR_BATCHES + 1, &h->todo);
	if (!err)
		err = cs_queue_new(NR_BATCHES, &h->free);
	for (size_t i = 0; !err && i < NR_BATCHES; i++) {
		struct batch *b = &h->batches[i];

		b->buf = malloc(BATCH_SIZE);
		if (!b->buf)
			err = -ENOMEM;
		b->cap = BATCH_SIZE;
		if (i && !err)
			cs_queue_push(h->free, b);
	}
	/* the producer's first batch, before its thread can append */
	h->filling = &h->batches[0];
	if (!err)
		err = -pthread_create(&h->thread, NULL, fn ? consume : produce, h);
	if (err) {
		handoff_free(h);
		return err;
	}
	*out = h;
	return 0;
}

int cs_handoff_new(cs_handoff_fn fn, void *ctx, struct cs_handoff **out)
{
	return handoff_start(fn, NULL, ctx, out);
}

int cs_handoff_new_producer(cs_handoff_produce_fn produce_fn, void *ctx,
			    struct cs_handoff **out)
{
	return handoff_start(NULL, produce_fn, ctx, out);
}

void *cs_handoff_append(struct cs_handoff *h, size_t size)
{
	struct batch *b = h->filling;
	void *p;

	size = cs_handoff_record_size(size);
	if (size > b->cap - b->len) {
		if (b->len) {
			cs_queue_push(h->todo, b);
			b = h->filling = cs_queue_pop(h->free);
		}
		if (size > b->cap) {
			/* a record larger than a batch: this one grows */
			char *buf = realloc(b->buf, size);

			if (!buf) {
				h->append_err = -ENOMEM;
				return NULL;
			}
			b->buf = buf;
			b->cap = size;
		}
	}
	p = b->buf + b->len;
	b->len += size;
	return p;
}

int cs_handoff_error(const struct cs_handoff *h)
{
	return __atomic_load_n(&h->err, __ATOMIC_RELAXED);
}

int cs_handoff_finish(struct cs_handoff *h)
{
	int err;

	if (!h)
		return 0;
	if (h->filling->len)
		cs_queue_push(h->todo, h->filling);
	cs_queue_push(h->todo, NULL);
	pthread_join(h->thread, NULL);
	err = h->err ? h->err : h->append_err;
	handoff_free(h);
	return err;
}

int cs_handoff_drain(struct cs_handoff *h, cs_handoff_fn fn, void *ctx)
{
	int err = take_all(h, fn, ctx);

	pthread_join(h->thread, NULL);
	if (!err)
		err = h->produced ? h->produced : h->append_err;
	handoff_free(h);
	return err;
}
