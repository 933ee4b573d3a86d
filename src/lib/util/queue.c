/* queue.c - a bounded FIFO of pointers between threads (see queue.h). */
#include "lib/util/queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct cs_queue {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	size_t cap, head, len;		/* items[head .. head+len) mod cap */
	void *items[];
};

int cs_queue_new(size_t cap, struct cs_queue **out)
{
	struct cs_queue *q;

	*out = NULL;
	if (!cap)
		return -EINVAL;
	q = calloc(1, sizeof(*q) + cap * sizeof(q->items[0]));
	if (!q)
		return -ENOMEM;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->not_empty, NULL);
	pthread_cond_init(&q->not_full, NULL);
	q->cap = cap;
	*out = q;
	return 0;
}

void cs_queue_push(struct cs_queue *q, void *item)
{
	pthread_mutex_lock(&q->lock);
	while (q->len == q->cap)
		pthread_cond_wait(&q->not_full, &q->lock);
	q->items[(q->head + q->len++) % q->cap] = item;
	pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

void *cs_queue_pop(struct cs_queue *q)
{
	void *item;

	pthread_mutex_lock(&q->lock);
	while (!q->len)
		pthread_cond_wait(&q->not_empty, &q->lock);
	item = q->items[q->head];
	q->head = (q->head + 1) % q->cap;
	q->len--;
	pthread_cond_signal(&q->not_full);
	pthread_mutex_unlock(&q->lock);
	return item;
}

void cs_queue_free(struct cs_queue *q)
{
	if (!q)
		return;
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->not_empty);
	pthread_cond_destroy(&q->not_full);
	free(q);
}
