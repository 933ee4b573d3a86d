/* tasks.h - work done on worker threads ahead of the thread that needs it.
 *
 * One thread (the owner: the session's reading thread) knows early what
 * it will need later - the symbol tables of the binaries a profile's
 * header lists - and needs each at a moment it cannot choose. It queues a
 * task for each; worker threads take them in queue order. When the owner
 * needs a task's result it claims the task: one no worker took yet runs
 * there and then on the owner's thread, one a worker is running is waited
 * for (that task only: the owner never waits for work it did not ask
 * for), a finished one is taken as it is. After the claim the task's
 * results belong to the owner; no worker touches the task again.
 *
 * Tasks queued as `after` (writing a finished table to the cache) run
 * only when no `ahead` task waits: they are never claimed, and
 * cs_tasks_finish() runs every one still queued before it returns.
 *
 * The caller owns its tasks (a struct cs_task embedded in its own); the
 * pool only links them while they are queued. A task's run() must touch
 * nothing the owner may touch before the claim, but what it was given.
 */
#ifndef CS_TASKS_H
#define CS_TASKS_H

#include <stdbool.h>

struct cs_tasks;			/* opaque */

enum cs_task_state {
	CS_TASK_IDLE,			/* never queued */
	CS_TASK_QUEUED,
	CS_TASK_RUNNING,		/* on a worker */
	CS_TASK_DONE,			/* ran (on a worker or the owner) */
	CS_TASK_DROPPED,		/* never ran: the pool ended first */
};

struct cs_task {
	void (*run)(struct cs_task *t);	/* the caller's; set before queueing */
	/* the pool's; the state is read under its lock (cs_task_state()) */
	enum cs_task_state state;
	bool after;
	struct cs_task *next;
};

/* Starts `workers` threads (at least one). Returns 0 and the pool in *out
 * (the caller ends it with cs_tasks_finish()), or a negative errno when
 * no thread could be had: the caller then does the work itself. */
int cs_tasks_new(unsigned int workers, struct cs_tasks **out);

/* Queues t (t->run set) at the end of the `ahead` tasks, or first when
 * `front` (what is needed soonest); `after`: at the end of the tasks run
 * when no other waits. May be called from a task's run(). */
void cs_tasks_add(struct cs_tasks *p, struct cs_task *t, bool front);
void cs_tasks_add_after(struct cs_tasks *p, struct cs_task *t);

/* Makes sure ahead task t has run: runs it here if no worker took it,
 * waits for it if one did. Returns at once for a task done or dropped.
 * Afterwards t is the caller's alone. Not for `after` tasks. */
void cs_tasks_claim(struct cs_tasks *p, struct cs_task *t);

/* t's state, read under the pool's lock. */
enum cs_task_state cs_task_state(struct cs_tasks *p, struct cs_task *t);

/* Ahead tasks not yet taken are dropped (CS_TASK_DROPPED), running ones
 * finish, every `after` task runs; then the threads end and p is freed.
 * NULL is a no-op. */
void cs_tasks_finish(struct cs_tasks *p);

#endif
