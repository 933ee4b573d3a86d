/* symcache.c - symbol tables saved between runs (see symcache.h). */
#include "lib/symbols/symcache.h"
#include "lib/symbols/elfimg.h"
#include "lib/symbols/symtab.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads a small file into buf (NUL-terminated); returns its length or a
 * negative errno. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

/* The GNU build id note in /sys/kernel/notes, as hex. */
static int kernel_build_id(char *hex, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char notes[4096];
	ssize_t len = read_small("/sys/kernel/notes", (char *)notes, sizeof(notes));
	size_t off = 0;

	while (len > 0 && off + 12 <= (size_t)len) {
		uint32_t namesz, descsz, type;
		size_t name_off = off + 12, desc_off, next;

		memcpy(&namesz, notes + off, 4);
		memcpy(&descsz, notes + off + 4, 4);
		memcpy(&type, notes + off + 8, 4);
		desc_off = name_off + ((namesz + 3u) & ~3u);
		next = desc_off + ((descsz + 3u) & ~3u);
		if (namesz > 4096 || descsz > 4096 || next > (size_t)len)
			break;
		if (type == 3 && namesz == 4 && !memcmp(notes + name_off, "GNU", 4) &&
		    descsz && 2 * descsz < size) {
			for (uint32_t i = 0; i < descsz; i++) {
				hex[2 * i] = digits[notes[desc_off + i] >> 4];
				hex[2 * i + 1] = digits[notes[desc_off + i] & 15];
			}
			hex[2 * descsz] = '\0';
			return 0;
		}
		off = next;
	}
	return -ENOENT;
}

/* FNV-1a of each module's name and address (fields 1 and 6 of
 * /proc/modules), not of its use counts, which change all the time. */
static uint64_t modules_hash(void)
{
	uint64_t h = 14695981039346656037ULL;
	char *buf = malloc(1 << 20), *line, *save = NULL;

	if (!buf)
		return 0;
	if (read_small("/proc/modules", buf, 1 << 20) < 0) {
		free(buf);
		return 0;
	}
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *field, *fsave = NULL;
		int i = 0;

		for (field = strtok_r(line, " ", &fsave); field;
		     field = strtok_r(NULL, " ", &fsave), i++) {
			if (i != 0 && i != 5)
				continue;
			for (const char *p = field; *p; p++)
				h = (h ^ (unsigned char)*p) * 1099511628211ULL;
			h = (h ^ ' ') * 1099511628211ULL;
		}
	}
	free(buf);
	return h;
}

/* This callstitch build, as its build id in hex; "" if it has none. */
static const char *self_id(void)
{
	static char hex[41];
	static int done;
	struct cs_elf_info info;

	if (!done) {
		done = 1;
		if (!cs_elf_info_read("/proc/self/exe", &info))
			cs_build_id_hex(info.build_id, info.build_id_size, hex);
	}
	return hex;
}

int cs_symcache_kernel_key(char *buf, size_t len)
{
	char id[128], boot[64];
	ssize_t n;
	int r;

	if (kernel_build_id(id, sizeof(id)) || !*self_id())
		return -ENOENT;
	n = read_small("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
	if (n <= 0)
		return -ENOENT;
	boot[strcspn(boot, "\n")] = '\0';
	r = snprintf(buf, len, "kallsyms\nby %s\nbuild-id %s boot %s modules %016llx",
		     self_id(), id, boot, (unsigned long long)modules_hash());
	return r > 0 && (size_t)r < len ? 0 : -ENAMETOOLONG;
}

int cs_symcache_file_key(const char *path, char *buf, size_t len)
{
	struct stat st;
	int r;

	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || !*self_id())
		return -ENOENT;
	r = snprintf(buf, len, "%s\nby %s\ndev %llx ino %llu size %lld mtime %lld.%09ld",
		     path, self_id(), (unsigned long long)st.st_dev,
		     (unsigned long long)st.st_ino, (long long)st.st_size,
		     (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	return r > 0 && (size_t)r < len ? 0 : -ENAMETOOLONG;
}

/* The cache file of key's source (its first line: what it was read
 * from), in the cache directory (created with mkdir_too). */
static int cache_path(const char *key, char *buf, size_t len, int mkdir_too)
{
	uint64_t h = 14695981039346656037ULL;
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char dir[4096];
	int r;

	if (xdg && *xdg == '/')
		r = snprintf(dir, sizeof(dir), "%s/callstitch", xdg);
	else if (home && *home == '/')
		r = snprintf(dir, sizeof(dir), "%s/.cache/callstitch", home);
	else
		return -ENOENT;
	if (r < 0 || (size_t)r >= sizeof(dir))
		return -ENAMETOOLONG;
	if (mkdir_too) {
		char *slash = strrchr(dir, '/');

		*slash = '\0';
		if (mkdir(dir, 0700) && errno != EEXIST)
			return -errno;
		*slash = '/';
		if (mkdir(dir, 0700) && errno != EEXIST)
			return -errno;
	}
	for (const char *p = key; *p && *p != '\n'; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	r = snprintf(buf, len, "%s/symtab-%016llx", dir, (unsigned long long)h);
	return r > 0 && (size_t)r < len ? 0 : -ENAMETOOLONG;
}

int cs_symcache_open(const char *key, struct cs_symtab **out)
{
	char path[4200];
	int err = cache_path(key, path, sizeof(path), 0);

	*out = NULL;
	return err ? err : cs_symtab_open_saved(path, key, out);
}

void cs_symcache_store(const char *key, const struct cs_symtab *t)
{
	char path[4200], tmp[4300];
	int fd, err;

	if (cache_path(key, path, sizeof(path), 1) ||
	    snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return;
	fd = mkstemp(tmp);
	if (fd < 0)
		return;
	err = cs_symtab_save(t, fd, key);
	if (close(fd))
		err = -EIO;
	if (err || rename(tmp, path))
		unlink(tmp);
}
