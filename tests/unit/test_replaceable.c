/* test_replaceable.c - outputs written whole through a temporary file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/util/replaceable.h"

struct dir {
	char path[64];
	char file[128];
};

static int dir_setup(void **state)
{
	struct dir *d = calloc(1, sizeof(*d));

	if (!d || !mkdtemp(strcpy(d->path, "/tmp/cs-test-replace.XXXXXX")))
		return -1;
	snprintf(d->file, sizeof(d->file), "%s/out", d->path);
	*state = d;
	return 0;
}

static int dir_teardown(void **state)
{
	struct dir *d = *state;
	struct dirent *de;
	DIR *dh = opendir(d->path);

	while (dh && (de = readdir(dh)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(dh), de->d_name, 0);
	if (dh)
		closedir(dh);
	rmdir(d->path);
	free(d);
	return 0;
}

/* The names in the directory, sorted, joined by spaces. */
static void listing(const struct dir *d, char *buf, size_t len)
{
	struct dirent **v;
	int n = scandir(d->path, &v, NULL, alphasort);

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(v[i]->d_name, ".") && strcmp(v[i]->d_name, "..")) {
			if (buf[0])
				strncat(buf, " ", len - strlen(buf) - 1);
			strncat(buf, v[i]->d_name, len - strlen(buf) - 1);
		}
		free(v[i]);
	}
	free(v);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void expect_content(const char *path, const char *text)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_string_equal(buf, text);
}

static void write_text(struct cs_replace *r, const char *text)
{
	assert_int_equal(write(r->fd, text, strlen(text)), (ssize_t)strlen(text));
}

static void a_file_appears_only_when_committed(void **state)
{
	struct dir *d = *state;
	struct cs_replace r;
	char names[256];
	struct stat sb;

	put(d->file, "old contents, longer than the new\n");
	assert_int_equal(cs_replace_open(&r, d->file, 0600), 0);
	assert_non_null(r.tmp);
	write_text(&r, "new\n");
	/* until the commit, the old file is whole under its name */
	expect_content(d->file, "old contents, longer than the new\n");
	assert_int_equal(cs_replace_commit(&r), 0);
	assert_null(r.tmp);
	assert_int_equal(r.fd, -1);
	expect_content(d->file, "new\n");
	listing(d, names, sizeof(names));
	assert_string_equal(names, "out");		/* no temporary file left */
	assert_int_equal(stat(d->file, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
}

static void an_abort_leaves_the_old_file_and_no_temporary(void **state)
{
	struct dir *d = *state;
	struct cs_replace r;
	char names[256];

	put(d->file, "good\n");
	assert_int_equal(cs_replace_open(&r, d->file, 0644), 0);
	write_text(&r, "half");
	cs_replace_abort(&r);
	cs_replace_abort(&r);				/* twice is harmless */
	expect_content(d->file, "good\n");
	listing(d, names, sizeof(names));
	assert_string_equal(names, "out");
}

static void a_link_is_written_through_and_stays_a_link(void **state)
{
	struct dir *d = *state;
	struct cs_replace r;
	char target[160], names[256];
	struct stat sb;

	snprintf(target, sizeof(target), "%s/target", d->path);
	put(target, "a longer file than what replaces it\n");
	assert_int_equal(symlink("target", d->file), 0);
	assert_false(cs_path_replaceable(d->file));
	assert_int_equal(cs_replace_open(&r, d->file, 0644), 0);
	assert_null(r.tmp);				/* in place */
	write_text(&r, "short\n");
	assert_int_equal(cs_replace_commit(&r), 0);
	assert_int_equal(lstat(d->file, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	expect_content(target, "short\n");		/* truncated */
	listing(d, names, sizeof(names));
	assert_string_equal(names, "out target");
}

static void a_device_is_written_in_place(void **state)
{
	struct cs_replace r;
	struct stat sb;

	(void)state;
	assert_int_equal(cs_replace_open(&r, "/dev/null", 0644), 0);
	assert_null(r.tmp);
	write_text(&r, "gone\n");
	assert_int_equal(cs_replace_commit(&r), 0);
	assert_int_equal(stat("/dev/null", &sb), 0);
	assert_true(S_ISCHR(sb.st_mode));
}

static void a_taken_temporary_name_is_stepped_over(void **state)
{
	struct dir *d = *state;
	char stale[160], names[256], expect[256];
	struct cs_replace r;

	/* a crashed run with our pid left its file: it is not reused */
	snprintf(stale, sizeof(stale), "%s.tmp.%ld.0", d->file, (long)getpid());
	put(stale, "stale\n");
	assert_int_equal(cs_replace_open(&r, d->file, 0644), 0);
	assert_string_not_equal(r.tmp, stale);
	write_text(&r, "fresh\n");
	assert_int_equal(cs_replace_commit(&r), 0);
	expect_content(d->file, "fresh\n");
	expect_content(stale, "stale\n");
	listing(d, names, sizeof(names));
	snprintf(expect, sizeof(expect), "out out.tmp.%ld.0", (long)getpid());
	assert_string_equal(names, expect);
}

static void a_missing_directory_fails_and_creates_nothing(void **state)
{
	struct dir *d = *state;
	struct cs_replace r;
	char path[160], names[256];

	snprintf(path, sizeof(path), "%s/no/such/out", d->path);
	assert_int_equal(cs_replace_open(&r, path, 0644), -ENOENT);
	assert_int_equal(r.fd, -1);
	assert_null(r.tmp);
	cs_replace_abort(&r);
	listing(d, names, sizeof(names));
	assert_string_equal(names, "");
}

static void a_failed_rename_removes_the_temporary(void **state)
{
	struct dir *d = *state;
	struct cs_replace r;
	char names[256];

	assert_int_equal(cs_replace_open(&r, d->file, 0644), 0);
	write_text(&r, "data\n");
	/* a directory appears under the name meanwhile: rename fails */
	assert_int_equal(mkdir(d->file, 0755), 0);
	assert_int_equal(cs_replace_commit(&r), -EISDIR);
	assert_null(r.tmp);
	listing(d, names, sizeof(names));
	assert_string_equal(names, "out");
	rmdir(d->file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(a_file_appears_only_when_committed,
						dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(an_abort_leaves_the_old_file_and_no_temporary,
						dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(a_link_is_written_through_and_stays_a_link,
						dir_setup, dir_teardown),
		cmocka_unit_test(a_device_is_written_in_place),
		cmocka_unit_test_setup_teardown(a_taken_temporary_name_is_stepped_over,
						dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(a_missing_directory_fails_and_creates_nothing,
						dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(a_failed_rename_removes_the_temporary,
						dir_setup, dir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
