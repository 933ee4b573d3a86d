/* unpack.c - a tar.zst into a temporary directory, through libarchive. */
#include "lib/machine/unpack.h"
#include "lib/util/errbuf.h"
#include "lib/util/libarchive_dl.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A relative path with no empty, "." or ".." component. */
static bool safe_name(const char *name)
{
	const char *p = name;

	if (!*name || *name == '/')
		return false;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p == '/' && !*++p)
			return false;		/* a trailing slash: a directory */
	}
	return true;
}

/* mkdir -p of the directories above file (a path under dir) */
static int make_parents(char *file, size_t from)
{
	for (char *p = file + from; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(file, 0700) && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	return 0;
}

static int write_entry(const struct cs_libarchive *la, struct archive *a,
		       const char *file)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	const void *buf;
	size_t size;
	la_int64_t off;
	int r, err = 0;

	if (fd < 0)
		return errno == EEXIST ? 0 : -errno;	/* the first copy wins */
	while ((r = la->read_data_block(a, &buf, &size, &off)) == ARCHIVE_OK) {
		if (pwrite(fd, buf, size, off) != (ssize_t)size) {
			err = errno ? -errno : -EIO;
			break;
		}
	}
	if (!err && r != ARCHIVE_EOF)
		err = -EBADMSG;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

int cs_unpack(const char *path, char **dir_out, struct cs_errbuf *eb)
{
	const char *tmp = getenv("TMPDIR"), *why = NULL;
	const struct cs_libarchive *la = cs_libarchive(&why);
	struct archive *a;
	struct archive_entry *e;
	char dir[PATH_MAX], file[PATH_MAX];
	size_t files = 0;
	int r, err = 0;

	*dir_out = NULL;
	if (!la)
		return cs_error(eb, -ENOSYS, "%s: cannot read archives: %s", path, why);
	a = la->read_new();
	if (!a)
		return cs_error(eb, -ENOMEM, "%s: %s", path, strerror(ENOMEM));
	snprintf(dir, sizeof(dir), "%s/callstitch-archive.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		err = cs_error(eb, -errno, "%s: cannot make a directory to unpack "
			       "into: %s", path, strerror(errno));
		la->read_free(a);
		return err;
	}
	la->read_support_filter_all(a);
	la->read_support_format_tar(a);
	if (la->read_open_filename(a, path, 65536) != ARCHIVE_OK) {
		err = cs_error(eb, -EINVAL, "%s: %s", path, la->error_string(a));
		goto out;
	}
	while ((r = la->read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = la->entry_pathname(e);

		if (la->entry_filetype(e) != AE_IFREG || !name)
			continue;	/* directories are made as needed */
		if (!safe_name(name) ||
		    snprintf(file, sizeof(file), "%s/%s", dir, name) >= (int)sizeof(file)) {
			err = cs_error(eb, -EINVAL, "%s: entry '%s' is not a relative "
				       "path inside the archive", path, name ? name : "");
			goto out;
		}
		err = make_parents(file, strlen(dir) + 1);
		if (!err)
			err = write_entry(la, a, file);
		if (err) {
			cs_error(eb, err, "%s: cannot unpack '%s': %s", path, name,
				 err == -EBADMSG ? la->error_string(a) : strerror(-err));
			goto out;
		}
		files++;
	}
	if (r != ARCHIVE_EOF)
		err = cs_error(eb, -EBADMSG, "%s: %s", path, la->error_string(a));
	else if (!files)
		err = cs_error(eb, -EINVAL, "%s: holds no files", path);
out:
	la->read_free(a);
	if (!err)
		*dir_out = strdup(dir);
	if (!err && !*dir_out)
		err = cs_error(eb, -ENOMEM, "%s: %s", path, strerror(ENOMEM));
	if (err) {
		char *d = strdup(dir);

		if (d)
			cs_unpack_remove(d);
	}
	return err;
}

static int remove_one(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

void cs_unpack_remove(char *dir)
{
	if (!dir)
		return;
	nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}
