/* bidcache.c - copies binaries and kallsyms into perf's build-id cache. */
#include "record/bidcache.h"
#include "lib/symbols/elfimg.h"
#include "lib/util/write_all.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *cs_bidcache_dir(void)
{
	const char *home = getenv("HOME");
	char *dir;

	if (!home || !*home || asprintf(&dir, "%s/.debug", home) < 0)
		return NULL;
	return dir;
}

/* mkdir -p; path is changed on the way and restored */
static int make_dirs(char *path)
{
	for (char *p = path + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			*p = c;
			return -errno;
		}
		*p = c;
		if (!c)
			return 0;
	}
}

static int copy_file(const char *src, const char *dst_dir, const char *dst)
{
	char tmp[PATH_MAX], buf[65536];
	int in, out, err = 0;
	ssize_t n;

	if (snprintf(tmp, sizeof(tmp), "%s/.tmp.XXXXXX", dst_dir) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = mkstemp(tmp);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	/* /proc/kallsyms says it is empty: read to the end, not st_size */
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if ((err = cs_write_all(out, buf, (size_t)n)))
			break;
	if (n < 0)
		err = -errno;
	if (!err && fchmod(out, 0644))
		err = -errno;
	if (close(out) && !err)
		err = -errno;
	close(in);
	if (!err && rename(tmp, dst))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int cs_bidcache_add(const char *dir, const char *name, const uint8_t *build_id,
		    size_t size, const char *leaf, const char *src)
{
	char hex[41], path[PATH_MAX], file[PATH_MAX], link[PATH_MAX], target[PATH_MAX];
	const char *rel = name[0] == '/' ? name + 1 : name;	/* [kernel.kallsyms] */
	int rel_len = (int)strlen(rel);
	struct stat st;
	int err, copied = 0;

	if (!size || size > 20)
		return -EINVAL;
	/* the cache keeps the recorded path, less a replaced file's mark */
	if (rel_len > 10 && !strcmp(rel + rel_len - 10, " (deleted)"))
		rel_len -= 10;
	if (!rel_len || strstr(name, "/../") || strchr(name, '\n'))
		return -EINVAL;
	cs_build_id_hex(build_id, size, hex);
	if (snprintf(path, sizeof(path), "%s/%.*s/%s", dir, rel_len, rel, hex) >= (int)sizeof(path) ||
	    snprintf(file, sizeof(file), "%s/%s", path, leaf) >= (int)sizeof(file) ||
	    snprintf(link, sizeof(link), "%s/.build-id/%.2s/%s", dir, hex, hex + 2) >= (int)sizeof(link) ||
	    snprintf(target, sizeof(target), "../../%.*s/%s", rel_len, rel, hex) >= (int)sizeof(target))
		return -ENAMETOOLONG;
	if (stat(file, &st)) {
		err = make_dirs(path);
		if (!err)
			err = copy_file(src, path, file);
		if (err)
			return err;
		copied = 1;
	}
	/* the link by build id: a directory of its own, made if missing */
	if (lstat(link, &st)) {
		char *slash = strrchr(link, '/');

		*slash = '\0';
		err = make_dirs(link);
		*slash = '/';
		if (err)
			return err;
		if (symlink(target, link) && errno != EEXIST)
			return -errno;
	}
	return copied;
}
