/* tasks.c - tasks on worker threads, claimed by their owner (see tasks.h). */
#include "lib/util/tasks.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

struct list {
	struct cs_task *head, *tail;
};

struct cs_tasks {
	pthread_mutex_t lock;
	pthread_cond_t work;		/* a task was queued, or the end */
	pthread_cond_t done;		/* a task finished */
	struct list ahead, after;
	bool ending;
	unsigned int nr_threads;
	pthread_t threads[];
};

static void push_back(struct list *l, struct cs_task *t)
{
	t->next = NULL;
	if (l->tail)
		l->tail->next = t;
	else
		l->head = t;
	l->tail = t;
}

static struct cs_task *pop(struct list *l)
{
	struct cs_task *t = l->head;

	if (t) {
		l->head = t->next;
		if (!l->head)
			l->tail = NULL;
		t->next = NULL;
	}
	return t;
}

/* Takes t out of l (a few dozen tasks: a walk is enough). */
static void unlink_task(struct list *l, struct cs_task *t)
{
	struct cs_task *prev = NULL;

	for (struct cs_task *c = l->head; c; prev = c, c = c->next) {
		if (c != t)
			continue;
		if (prev)
			prev->next = c->next;
		else
			l->head = c->next;
		if (l->tail == c)
			l->tail = prev;
		c->next = NULL;
		return;
	}
}

static void *worker(void *arg)
{
	struct cs_tasks *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct cs_task *t = pop(&p->ahead);

		if (!t)
			t = pop(&p->after);
		if (!t) {
			if (p->ending)
				break;
			pthread_cond_wait(&p->work, &p->lock);
			continue;
		}
		t->state = CS_TASK_RUNNING;
		pthread_mutex_unlock(&p->lock);
		t->run(t);
		pthread_mutex_lock(&p->lock);
		t->state = CS_TASK_DONE;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int cs_tasks_new(unsigned int workers, struct cs_tasks **out)
{
	struct cs_tasks *p;

	*out = NULL;
	if (!workers)
		workers = 1;
	p = calloc(1, sizeof(*p) + workers * sizeof(p->threads[0]));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	for (; p->nr_threads < workers; p->nr_threads++)
		if (pthread_create(&p->threads[p->nr_threads], NULL, worker, p))
			break;
	if (!p->nr_threads) {
		cs_tasks_finish(p);
		return -EAGAIN;
	}
	*out = p;
	return 0;
}

void cs_tasks_add(struct cs_tasks *p, struct cs_task *t, bool front)
{
	pthread_mutex_lock(&p->lock);
	t->after = false;
	if (p->ending) {
		t->state = CS_TASK_DROPPED;
	} else {
		t->state = CS_TASK_QUEUED;
		if (front && p->ahead.head) {
			t->next = p->ahead.head;
			p->ahead.head = t;
		} else {
			push_back(&p->ahead, t);
		}
		pthread_cond_signal(&p->work);
	}
	pthread_mutex_unlock(&p->lock);
}

void cs_tasks_add_after(struct cs_tasks *p, struct cs_task *t)
{
	pthread_mutex_lock(&p->lock);
	t->after = true;
	t->state = CS_TASK_QUEUED;
	push_back(&p->after, t);
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

void cs_tasks_claim(struct cs_tasks *p, struct cs_task *t)
{
	pthread_mutex_lock(&p->lock);
	while (t->state == CS_TASK_RUNNING)
		pthread_cond_wait(&p->done, &p->lock);
	if (t->state != CS_TASK_QUEUED) {
		pthread_mutex_unlock(&p->lock);
		return;
	}
	/* no worker took it: waiting would only add their queue to ours */
	unlink_task(&p->ahead, t);
	t->state = CS_TASK_RUNNING;
	pthread_mutex_unlock(&p->lock);
	t->run(t);
	pthread_mutex_lock(&p->lock);
	t->state = CS_TASK_DONE;
	pthread_mutex_unlock(&p->lock);
}

enum cs_task_state cs_task_state(struct cs_tasks *p, struct cs_task *t)
{
	enum cs_task_state s;

	pthread_mutex_lock(&p->lock);
	s = t->state;
	pthread_mutex_unlock(&p->lock);
	return s;
}

void cs_tasks_finish(struct cs_tasks *p)
{
	struct cs_task *t;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->ending = true;
	while ((t = pop(&p->ahead)))
		t->state = CS_TASK_DROPPED;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (unsigned int i = 0; i < p->nr_threads; i++)
		pthread_join(p->threads[i], NULL);
	/* no thread could be had: the after tasks run here */
	while ((t = pop(&p->after))) {
		t->run(t);
		t->state = CS_TASK_DONE;
	}
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
