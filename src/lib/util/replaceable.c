/* replaceable.c - outputs written whole: a temporary file renamed at the end. */
#include "replaceable.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

bool cs_path_replaceable(const char *path)
{
	struct stat sb;

	/* lstat, not stat: stat follows a link to the file it names */
	if (lstat(path, &sb))
		return errno == ENOENT;
	return S_ISREG(sb.st_mode);
}

/* A temporary file beside path that no one else has: O_EXCL, so an old
 * file of a crashed run with the same pid (or a link planted under the
 * name) is stepped over, not written through. */
static int open_temp(struct cs_replace *r, mode_t mode)
{
	for (unsigned try = 0; try < 100; try++) {
		char *tmp;
		int fd;

		if (asprintf(&tmp, "%s.tmp.%ld.%u", r->path, (long)getpid(), try) < 0)
			return -ENOMEM;
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
		if (fd >= 0) {
			r->fd = fd;
			r->tmp = tmp;
			return 0;
		}
		free(tmp);
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int cs_replace_open(struct cs_replace *r, const char *path, mode_t mode)
{
	r->fd = -1;
	r->tmp = NULL;
	r->path = path;
	if (cs_path_replaceable(path))
		return open_temp(r, mode);
	/* O_TRUNC: a link may name a longer file */
	r->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	return r->fd < 0 ? -errno : 0;
}

int cs_replace_commit(struct cs_replace *r)
{
	int err = 0;

	if (r->fd >= 0 && close(r->fd))
		err = -errno;
	r->fd = -1;
	if (!err && r->tmp && rename(r->tmp, r->path))
		err = -errno;
	if (err) {
		cs_replace_abort(r);
		return err;
	}
	free(r->tmp);
	r->tmp = NULL;
	return 0;
}

void cs_replace_abort(struct cs_replace *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	if (r->tmp)
		unlink(r->tmp);
	free(r->tmp);
	r->tmp = NULL;
}
