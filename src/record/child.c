/* child.c - fork now, exec on release. */
#include "record/child.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/util/errbuf.h"

static void run(char *const *argv, bool stdout_to_stderr, int go, int err_fd,
		const sigset_t *mask)
{
	char c;
	int e;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	if (stdout_to_stderr)
		dup2(STDERR_FILENO, STDOUT_FILENO);
	/* the recorder closes the pipe without a byte when it gives up */
	if (read(go, &c, 1) != 1)
		_exit(127);
	execvp(argv[0], argv);
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int cs_rec_child_start(struct cs_rec_child *c, char *const *argv,
		       bool stdout_to_stderr, const sigset_t *mask,
		       struct cs_errbuf *eb)
{
	int go[2], ee[2], err;
	pid_t pid;

	c->pid = 0;
	c->go_fd = c->err_fd = -1;
	c->exec_failed = false;
	c->status = -1;
	if (pipe2(go, O_CLOEXEC) < 0)
		return cs_error(eb, -errno, "pipe: %s", strerror(errno));
	if (pipe2(ee, O_CLOEXEC) < 0) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return cs_error(eb, err, "pipe: %s", strerror(-err));
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		close(ee[0]);
		close(ee[1]);
		return cs_error(eb, err, "fork: %s", strerror(-err));
	}
	if (pid == 0) {
		close(go[1]);
		close(ee[0]);
		run(argv, stdout_to_stderr, go[0], ee[1], mask);
	}
	close(go[0]);
	close(ee[1]);
	c->pid = pid;
	c->go_fd = go[1];
	c->err_fd = ee[0];
	return 0;
}

int cs_rec_child_release(struct cs_rec_child *c, const char *name,
			 struct cs_errbuf *eb)
{
	int e = 0;
	ssize_t n;

	if (write(c->go_fd, "g", 1) != 1)
		return cs_error(eb, -errno, "starting the command: %s", strerror(errno));
	close(c->go_fd);
	c->go_fd = -1;
	/* the pipe closes on a successful exec (O_CLOEXEC) */
	do
		n = read(c->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(c->err_fd);
	c->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		c->exec_failed = true;
		return cs_error(eb, -e, "cannot run '%s': %s", name, strerror(e));
	}
	return 0;
}

bool cs_rec_child_reap(struct cs_rec_child *c, bool block)
{
	int status;
	pid_t p;

	if (c->pid <= 0)
		return true;
	do
		p = waitpid(c->pid, &status, block ? 0 : WNOHANG);
	while (p < 0 && errno == EINTR);
	if (p == c->pid || (p < 0 && errno == ECHILD)) {
		c->status = p == c->pid ? status : -1;
		c->pid = 0;
		return true;
	}
	return false;
}

void cs_rec_child_end(struct cs_rec_child *c, unsigned grace_ms)
{
	if (c->go_fd >= 0) {
		close(c->go_fd);
		c->go_fd = -1;
	}
	if (c->err_fd >= 0) {
		close(c->err_fd);
		c->err_fd = -1;
	}
	if (c->pid <= 0 || cs_rec_child_reap(c, false))
		return;
	kill(c->pid, SIGTERM);
	for (unsigned waited = 0; waited < grace_ms; waited += 10) {
		struct timespec ts = { 0, 10 * 1000000L };

		if (cs_rec_child_reap(c, false))
			return;
		nanosleep(&ts, NULL);
	}
	kill(c->pid, SIGKILL);
	cs_rec_child_reap(c, true);
}
