/* test_session_pull.c - cs_session_next(): the pulled samples are the ones
 * the callback gets, in the same order, each seen with the machine in the
 * same state (command names, symbols); from a mapped file and from a pipe;
 * and the options' size rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <cmocka.h>

#include <sys/wait.h>

#include <callstitch/callstitch.h>

/* What a sample looked like when it was handed over: everything the
 * caller can see of it, folded into one number. */
struct digests {
	uint64_t *v;
	size_t n, cap;
	struct cs_machine *m;
	struct cs_frame *frames;
};

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	if (!s)
		return mix(h, 1);
	while (*s)
		h = mix(h, (unsigned char)*s++);
	return mix(h, 0);
}

static int record(void *ctx, const struct cs_stitched *st)
{
	struct digests *d = ctx;
	const struct cs_sample *smp = &st->event->sample;
	uint64_t h = 0;
	size_t n;

	h = mix(h, smp->time);
	h = mix(h, smp->tid);
	h = mix(h, smp->period);
	h = mix(h, st->event->offset);
	h = mix(h, st->state);
	h = mix(h, st->missing);
	h = mix(h, st->cookie);
	for (uint64_t i = 0; i < st->chain_nr; i++)
		h = mix(h, st->chain[i]);
	/* the machine as it stands now: names and maps of this moment */
	h = mix_str(h, cs_machine_comm(d->m, smp->pid, smp->tid));
	n = cs_frames_resolve(d->m, st, d->frames, CS_FRAMES_MAX);
	for (size_t i = 0; i < n && i < CS_FRAMES_MAX; i++) {
		h = mix_str(h, d->frames[i].loc.sym);
		h = mix_str(h, d->frames[i].loc.dso_name);
	}
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 4096;
		d->v = realloc(d->v, d->cap * sizeof(*d->v));
		assert_non_null(d->v);
	}
	d->v[d->n++] = h;
	return 0;
}

static int run_begin(void *ctx, struct cs_session *s)
{
	((struct digests *)ctx)->m = cs_session_machine(s);
	return 0;
}

static char *fixture(const char *name)
{
	const char *root = getenv("CS_ROOT");
	char *p;

	if (asprintf(&p, "%s/tests/fixtures/linux-7.3.4/%s", root ? root : ".",
		     name) < 0)
		fail();
	return p;
}

static void digests_init(struct digests *d)
{
	memset(d, 0, sizeof(*d));
	d->frames = malloc(CS_FRAMES_MAX * sizeof(*d->frames));
	assert_non_null(d->frames);
}

static void digests_free(struct digests *d)
{
	free(d->v);
	free(d->frames);
}

static void pushed(const char *path, struct digests *d, struct cs_stats *stats)
{
	static const struct cs_output_ops ops = { .begin = run_begin,
						  .sample = record };
	CS_SESSION_OPTS(o, .path = path);
	struct cs_session *s;

	assert_int_equal(cs_session_open(&o, &s), 0);
	assert_int_equal(cs_session_run(s, &ops, d), 0);
	*stats = *cs_session_stats(s);
	cs_session_free(s);
}

/* Pulls every sample of the session; returns how many calls returned 0 at
 * the end (they keep doing so). */
static void pull_all(struct cs_session *s, struct digests *d)
{
	const struct cs_stitched *st;
	int err;

	d->m = cs_session_machine(s);
	while ((err = cs_session_next(s, &st)) > 0)
		record(d, st);
	assert_int_equal(err, 0);
	assert_null(st);
	/* the end stays the end */
	assert_int_equal(cs_session_next(s, &st), 0);
}

static void assert_same(const struct digests *a, const struct digests *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i] != b->v[i])
			fail_msg("sample %zu of %zu differs", i, a->n);
}

static void pulled_equals_pushed(const char *name)
{
	char *path = fixture(name);
	struct digests want, got;
	struct cs_stats ws;
	CS_SESSION_OPTS(o, .path = path);
	struct cs_session *s;

	digests_init(&want);
	digests_init(&got);
	pushed(path, &want, &ws);
	assert_true(want.n > 10000);

	assert_int_equal(cs_session_open(&o, &s), 0);
	pull_all(s, &got);
	assert_same(&want, &got);
	assert_int_equal(cs_session_stats(s)->stitched, ws.stitched);
	assert_int_equal(cs_session_stats(s)->stitched_late, ws.stitched_late);
	assert_int_equal(cs_session_stats(s)->records, ws.records);
	cs_session_free(s);
	digests_free(&want);
	digests_free(&got);
	free(path);
}

static void system_wide_profile_pulls_as_it_pushes(void **state)
{
	(void)state;
	pulled_equals_pushed("syswide-defer.data");
}

static void task_profile_pulls_as_it_pushes(void **state)
{
	(void)state;
	pulled_equals_pushed("task-defer.data");
}

/* From a pipe (compressed, too), records live in the reader's buffer only
 * while they are read: what the queue holds must be its own copy. */
static void pipe_input_pulls_as_it_pushes(void **state)
{
	char *path = fixture("syswide-defer.data");
	const char *tools = getenv("CS_TOOLS");
	char piped[] = "/tmp/cs-test-pull-XXXXXX", *cmd;
	struct digests want, got;
	struct cs_stats ws;
	struct cs_session *s;
	int fd, fds[2], status;
	pid_t pid;

	(void)state;
	fd = mkstemp(piped);
	assert_true(fd >= 0);
	close(fd);
	if (asprintf(&cmd, "%s/reformat --pipe --zstd 1 %s %s",
		     tools ? tools : "build/asan/tools", path, piped) < 0)
		fail();
	assert_int_equal(system(cmd), 0);
	digests_init(&want);
	digests_init(&got);
	pushed(piped, &want, &ws);
	assert_true(want.n > 10000);

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], STDOUT_FILENO);
		execlp("cat", "cat", piped, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	{
		CS_SESSION_OPTS(o, .fd = fds[0]);

		assert_int_equal(cs_session_open(&o, &s), 0);
	}
	pull_all(s, &got);
	assert_same(&want, &got);
	cs_session_free(s);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	unlink(piped);
	digests_free(&want);
	digests_free(&got);
	free(cmd);
	free(path);
}

static void a_session_is_pulled_or_run_not_both(void **state)
{
	char *path = fixture("task-nodefer.data");
	CS_SESSION_OPTS(o, .path = path);
	const struct cs_stitched *st;
	struct cs_session *s;

	(void)state;
	assert_int_equal(cs_session_open(&o, &s), 0);
	assert_int_equal(cs_session_next(s, &st), 1);
	assert_int_equal(cs_session_run(s, NULL, NULL), -EINVAL);
	assert_non_null(strstr(cs_session_error(s), "already run"));
	cs_session_free(s);

	assert_int_equal(cs_session_open(&o, &s), 0);
	assert_int_equal(cs_session_run(s, NULL, NULL), 0);
	assert_int_equal(cs_session_next(s, &st), -EINVAL);
	cs_session_free(s);
	free(path);
}

static void options_carry_their_size(void **state)
{
	char *path = fixture("task-nodefer.data");
	struct cs_session_opts o = { .path = path };
	struct {
		struct cs_session_opts o;
		uint64_t newer_option;
	} big = { .o = { .sz = sizeof(big), .path = path } };
	struct cs_session *s;

	(void)state;
	/* sz unset: refused, with the way out in the message */
	assert_int_equal(cs_session_open(&o, &s), -EINVAL);
	assert_non_null(strstr(cs_session_error(s), "CS_SESSION_OPTS"));
	cs_session_free(s);

	/* a newer caller whose options we do not know: fine while unset */
	assert_int_equal(cs_session_open(&big.o, &s), 0);
	cs_session_free(s);
	big.newer_option = 1;
	assert_int_equal(cs_session_open(&big.o, &s), -EINVAL);
	assert_non_null(strstr(cs_session_error(s), "does not know"));
	cs_session_free(s);

	/* an older caller: the options it did not know are zero (fd 0 is
	 * "no fd", so path is read, not stdin) */
	o.sz = offsetof(struct cs_session_opts, kallsyms);
	o.fd = 0;
	assert_int_equal(cs_session_open(&o, &s), 0);
	assert_int_equal(cs_session_run(s, NULL, NULL), 0);
	assert_true(cs_session_stats(s)->samples > 10000);
	cs_session_free(s);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(system_wide_profile_pulls_as_it_pushes),
		cmocka_unit_test(task_profile_pulls_as_it_pushes),
		cmocka_unit_test(pipe_input_pulls_as_it_pushes),
		cmocka_unit_test(a_session_is_pulled_or_run_not_both),
		cmocka_unit_test(options_carry_their_size),
	};
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
