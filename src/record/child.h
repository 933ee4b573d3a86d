/* child.h - the command a recording runs, started in two steps.
 *
 * The command is forked first and waits on a pipe, so that its pid can be
 * given to perf_event_open; releasing it lets it exec, which enables the
 * events (enable_on_exec). An exec that fails comes back as an error, with
 * the errno the child saw.
 */
#ifndef CS_REC_CHILD_H
#define CS_REC_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct cs_errbuf;

struct cs_rec_child {
	pid_t pid;			/* 0 once reaped, or never started */
	int go_fd;			/* write end of the go pipe, or -1 */
	int err_fd;			/* read end of the exec error pipe, or -1 */
	bool exec_failed;
	int status;			/* wait status once reaped, else -1 */
};

/* Forks argv (execvp'd later). mask is the signal mask the command gets;
 * stdout_to_stderr keeps its output out of a profile written to stdout.
 * Returns 0 or a negative errno with eb filled. */
int cs_rec_child_start(struct cs_rec_child *c, char *const *argv,
		       bool stdout_to_stderr, const sigset_t *mask,
		       struct cs_errbuf *eb);

/* Lets it exec; returns 0 once it did, or the exec's error ("cannot run
 * 'prog': No such file or directory"). */
int cs_rec_child_release(struct cs_rec_child *c, const char *name,
			 struct cs_errbuf *eb);

/* Collects its exit status (waiting for it if block); true once it is gone. */
bool cs_rec_child_reap(struct cs_rec_child *c, bool block);

/* Ends it if it still runs: never released, closing the pipe is enough;
 * else SIGTERM, and SIGKILL after grace_ms. Always reaps it. */
void cs_rec_child_end(struct cs_rec_child *c, unsigned grace_ms);

#endif
