/* test_write_all.c - whole buffers and vectors written to a descriptor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <cmocka.h>

#include "lib/util/write_all.h"

/* The writev() the library calls: the kernel's, or while short_writes is
 * set one that writes at most that many bytes a call, as the kernel may. */
static size_t short_writes;
static unsigned int writev_calls;

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	writev_calls++;
	if (!short_writes)
		return syscall(SYS_writev, fd, iov, n);
	for (int i = 0; i < n; i++)
		if (iov[i].iov_len)
			return write(fd, iov[i].iov_base,
				     iov[i].iov_len < short_writes ?
				     iov[i].iov_len : short_writes);
	return 0;
}

/* A temporary file, already unlinked: its descriptor. */
static int scratch_fd(void)
{
	char path[] = "/tmp/cs-write-all-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	unlink(path);
	return fd;
}

static size_t read_back(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len, 0);

	assert_true(n >= 0);
	return (size_t)n;
}

static void parts_are_written_in_order_and_empty_ones_skipped(void **state)
{
	char head[] = "head:", body[3000], got[4000];
	struct iovec iov[] = {
		{ NULL, 0 }, { head, 5 }, { NULL, 0 }, { body, sizeof(body) },
		{ (char *)"!", 1 }, { NULL, 0 },
	};
	int fd = scratch_fd();

	(void)state;
	for (size_t i = 0; i < sizeof(body); i++)
		body[i] = (char)('a' + i % 26);
	assert_int_equal(cs_writev_all(fd, iov, 6), 0);
	assert_int_equal(read_back(fd, got, sizeof(got)), 5 + sizeof(body) + 1);
	assert_memory_equal(got, "head:", 5);
	assert_memory_equal(got + 5, body, sizeof(body));
	assert_int_equal(got[5 + sizeof(body)], '!');
	close(fd);
}

static void nothing_to_write_is_no_error(void **state)
{
	struct iovec iov[] = { { NULL, 0 }, { NULL, 0 } };
	int fd = scratch_fd();
	char got[4];

	(void)state;
	assert_int_equal(cs_writev_all(fd, iov, 2), 0);
	assert_int_equal(cs_writev_all(fd, iov, 0), 0);
	assert_int_equal(read_back(fd, got, sizeof(got)), 0);
	close(fd);
}

/* A file size limit in the middle of the second part: the first writev
 * writes up to it, the next one fails. What was written is the vector's
 * first bytes in order, and the error is the second call's. */
static void a_short_write_goes_on_where_it_stopped(void **state)
{
	char a[60], b[60], got[200];
	struct iovec iov[] = { { a, sizeof(a) }, { b, sizeof(b) } };
	struct rlimit was, lim = { .rlim_cur = 100 };
	void (*was_sig)(int) = signal(SIGXFSZ, SIG_IGN);
	int fd = scratch_fd(), err;

	(void)state;
	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &was), 0);
	lim.rlim_max = was.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	err = cs_writev_all(fd, iov, 2);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &was), 0);
	signal(SIGXFSZ, was_sig);
	assert_int_equal(err, -EFBIG);
	assert_int_equal(read_back(fd, got, sizeof(got)), 100);
	assert_memory_equal(got, a, 60);
	assert_memory_equal(got + 60, b, 40);
	close(fd);
}

/* Short writes in the middle of parts and at their ends: each call goes
 * on where the last stopped, and all of it arrives in order. */
static void short_writes_go_on_where_they_stopped(void **state)
{
	char a[10], b[23], got[64];
	struct iovec iov[] = {
		{ a, sizeof(a) }, { NULL, 0 }, { b, sizeof(b) }, { (char *)"z", 1 },
	};
	int fd = scratch_fd(), err;

	(void)state;
	memset(a, 'a', sizeof(a));
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (char)('A' + i);
	short_writes = 7;
	writev_calls = 0;
	err = cs_writev_all(fd, iov, 4);
	short_writes = 0;
	assert_int_equal(err, 0);
	/* 7 + 3 of a, 7 + 7 + 7 + 2 of b, the z */
	assert_int_equal(writev_calls, 7);
	assert_int_equal(read_back(fd, got, sizeof(got)), 34);
	assert_memory_equal(got, a, 10);
	assert_memory_equal(got + 10, b, 23);
	assert_int_equal(got[33], 'z');
	close(fd);
}

static void a_bad_descriptor_is_its_errno(void **state)
{
	char c = 'x';
	struct iovec iov[] = { { &c, 1 } };

	(void)state;
	assert_int_equal(cs_writev_all(-1, iov, 1), -EBADF);
	assert_int_equal(cs_write_all(-1, &c, 1), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parts_are_written_in_order_and_empty_ones_skipped),
		cmocka_unit_test(nothing_to_write_is_no_error),
		cmocka_unit_test(a_short_write_goes_on_where_it_stopped),
		cmocka_unit_test(short_writes_go_on_where_they_stopped),
		cmocka_unit_test(a_bad_descriptor_is_its_errno),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
