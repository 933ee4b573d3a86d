/* test_tasks.c - tasks run ahead on workers: each runs once, whoever runs
 * it; a claimed task is done and its result the claimer's; a queued one
 * is run by the claimer itself; `after` tasks all run by the end, ahead
 * ones not taken are dropped. No timing: the order of events is forced
 * with a gate that only the test opens. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/util/tasks.h"

/* A gate a task waits at until the test opens it. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool open;
	bool reached;			/* a task waits at it */
};

struct item {
	struct cs_task task;		/* first: the run function casts */
	struct gate *gate;		/* NULL: none */
	int runs;
	bool on_owner;			/* ran on the test's thread */
	pthread_t owner;
	uint64_t result;
};

static void gate_init(struct gate *g)
{
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	g->open = g->reached = false;
}

static void gate_wait(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->reached = true;
	pthread_cond_broadcast(&g->cond);
	while (!g->open)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

/* Until a task waits at g (a worker has taken it). */
static void gate_until_reached(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	while (!g->reached)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

static void gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->open = true;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

static void item_run(struct cs_task *t)
{
	struct item *it = (struct item *)t;

	if (it->gate)
		gate_wait(it->gate);
	it->runs++;
	it->on_owner = pthread_equal(pthread_self(), it->owner);
	it->result = 0x5eed + (uint64_t)it->runs;
}

static void item_init(struct item *it, struct gate *g)
{
	memset(it, 0, sizeof(*it));
	it->task.run = item_run;
	it->gate = g;
	it->owner = pthread_self();
}

static void every_task_runs_once_and_its_claim_sees_the_result(void **state)
{
	struct cs_tasks *p;
	struct item it[64];

	(void)state;
	assert_int_equal(cs_tasks_new(3, &p), 0);
	for (size_t i = 0; i < 64; i++) {
		item_init(&it[i], NULL);
		cs_tasks_add(p, &it[i].task, i % 5 == 0);
	}
	for (size_t i = 64; i-- > 0;) {
		cs_tasks_claim(p, &it[i].task);
		assert_int_equal(it[i].runs, 1);
		assert_int_equal(it[i].result, 0x5eed + 1);
		assert_int_equal(cs_task_state(p, &it[i].task), CS_TASK_DONE);
	}
	cs_tasks_finish(p);
}

static void a_task_no_worker_took_runs_on_the_claimer(void **state)
{
	struct cs_tasks *p;
	struct gate g;
	struct item busy, waiting;

	(void)state;
	gate_init(&g);
	assert_int_equal(cs_tasks_new(1, &p), 0);
	item_init(&busy, &g);
	item_init(&waiting, NULL);
	cs_tasks_add(p, &busy.task, false);
	gate_until_reached(&g);		/* the one worker is held */
	cs_tasks_add(p, &waiting.task, false);
	cs_tasks_claim(p, &waiting.task);
	assert_int_equal(waiting.runs, 1);
	assert_true(waiting.on_owner);
	gate_open(&g);
	cs_tasks_claim(p, &busy.task);	/* waited for, not run again */
	assert_int_equal(busy.runs, 1);
	assert_false(busy.on_owner);
	cs_tasks_finish(p);
}

static void a_claim_waits_for_the_task_a_worker_runs(void **state)
{
	struct cs_tasks *p;
	struct gate g;
	struct item it;

	(void)state;
	gate_init(&g);
	assert_int_equal(cs_tasks_new(2, &p), 0);
	item_init(&it, &g);
	cs_tasks_add(p, &it.task, false);
	gate_until_reached(&g);
	assert_int_equal(cs_task_state(p, &it.task), CS_TASK_RUNNING);
	gate_open(&g);			/* the claim below waits for it */
	cs_tasks_claim(p, &it.task);
	assert_int_equal(it.runs, 1);
	assert_false(it.on_owner);
	assert_int_equal(it.result, 0x5eed + 1);
	cs_tasks_finish(p);
}

static void the_end_drops_ahead_tasks_and_runs_after_tasks(void **state)
{
	struct cs_tasks *p;
	struct gate g;
	struct item busy, ahead[8], after[8];

	(void)state;
	gate_init(&g);
	assert_int_equal(cs_tasks_new(1, &p), 0);
	item_init(&busy, &g);
	cs_tasks_add(p, &busy.task, false);
	gate_until_reached(&g);
	for (size_t i = 0; i < 8; i++) {
		item_init(&ahead[i], NULL);
		item_init(&after[i], NULL);
		cs_tasks_add(p, &ahead[i].task, false);
		cs_tasks_add_after(p, &after[i].task);
	}
	gate_open(&g);
	/* may drop some ahead tasks, or none if the worker got there */
	cs_tasks_finish(p);
	assert_int_equal(busy.runs, 1);
	for (size_t i = 0; i < 8; i++) {
		assert_int_equal(after[i].runs, 1);
		assert_int_equal(after[i].task.state, CS_TASK_DONE);
		assert_true(ahead[i].runs == (ahead[i].task.state == CS_TASK_DONE));
		assert_true(ahead[i].task.state == CS_TASK_DONE ||
			    ahead[i].task.state == CS_TASK_DROPPED);
	}
}

/* a task that queues another from its run(), as a binary's symbols queue
 * its DWARF */
struct chain {
	struct cs_task first;
	struct cs_task second;
	struct cs_tasks *p;
	int first_runs, second_runs;
};

static void second_run(struct cs_task *t)
{
	struct chain *c = (struct chain *)((char *)t - offsetof(struct chain, second));

	c->second_runs++;
}

static void first_run(struct cs_task *t)
{
	struct chain *c = (struct chain *)t;

	c->first_runs++;
	c->second.run = second_run;
	cs_tasks_add(c->p, &c->second, true);
}

static void a_task_may_queue_the_next_from_its_run(void **state)
{
	struct chain c = { .first.run = first_run };

	(void)state;
	assert_int_equal(cs_tasks_new(2, &c.p), 0);
	cs_tasks_add(c.p, &c.first, false);
	cs_tasks_claim(c.p, &c.first);
	assert_int_equal(c.first_runs, 1);
	cs_tasks_claim(c.p, &c.second);
	assert_int_equal(c.second_runs, 1);
	cs_tasks_finish(c.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_task_runs_once_and_its_claim_sees_the_result),
		cmocka_unit_test(a_task_no_worker_took_runs_on_the_claimer),
		cmocka_unit_test(a_claim_waits_for_the_task_a_worker_runs),
		cmocka_unit_test(the_end_drops_ahead_tasks_and_runs_after_tasks),
		cmocka_unit_test(a_task_may_queue_the_next_from_its_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
