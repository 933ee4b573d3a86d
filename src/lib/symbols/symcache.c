/* symcache.c - symbol tables saved between runs (see symcache.h). */
#include "lib/symbols/symcache.h"
#include "lib/symbols/elfimg.h"
#include "lib/symbols/symtab.h"
#include "lib/util/write_all.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
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

static char self_hex[41];

static void self_id_once(void)
{
	struct cs_elf_info info;

	if (!cs_elf_info_read("/proc/self/exe", &info))
		cs_build_id_hex(info.build_id, info.build_id_size, self_hex);
}

/* This callstitch build, as its build id in hex; "" if it has none. Read
 * once, by whichever thread keys a table first. */
static const char *self_id(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, self_id_once);
	return self_hex;
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

/* The cache's size bound in bytes: $CS_CACHE_MAX_MB MiB, default 512;
 * 0 turns the cache off. */
static uint64_t cache_max_bytes(void)
{
	const char *s = getenv("CS_CACHE_MAX_MB");
	unsigned long long mb = 512;
	char *end;

	if (s && *s) {
		errno = 0;
		mb = strtoull(s, &end, 10);
		if (errno || *end || *s == '-')
			mb = 512;	/* not a number: as if unset */
	}
	return mb > UINT64_MAX >> 20 ? UINT64_MAX : (uint64_t)mb << 20;
}

/* The cache directory into dir (created with mkdir_too). */
static int cache_dir(char *dir, size_t len, int mkdir_too)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int r;

	if (!cache_max_bytes())
		return -ENOENT;
	if (xdg && *xdg == '/')
		r = snprintf(dir, len, "%s/callstitch", xdg);
	else if (home && *home == '/')
		r = snprintf(dir, len, "%s/.cache/callstitch", home);
	else
		return -ENOENT;
	if (r < 0 || (size_t)r >= len)
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
	return 0;
}

/* The cache file of what (symtab, debugimg) for key. The name hashes the
 * whole key, the reading build included: two builds, or two versions of
 * a file, keep an entry each instead of replacing each other's. */
static int cache_path(const char *what, const char *key, char *buf,
		      size_t len, int mkdir_too)
{
	uint64_t h = 14695981039346656037ULL;
	char dir[4096];
	int r = cache_dir(dir, sizeof(dir), mkdir_too);

	if (r)
		return r;
	for (const char *p = key; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	r = snprintf(buf, len, "%s/%s-%016llx", dir, what, (unsigned long long)h);
	return r > 0 && (size_t)r < len ? 0 : -ENAMETOOLONG;
}

/* A hit marks its file used: the bound removes the least recently used
 * first, by modification time (atime is not kept on noatime mounts). */
static void cache_touch(const char *path)
{
	utimensat(AT_FDCWD, path, NULL, 0);
}

int cs_symcache_open(const char *key, struct cs_symtab **out)
{
	char path[4200];
	int err = cache_path("symtab", key, path, sizeof(path), 0);

	*out = NULL;
	if (!err)
		err = cs_symtab_open_saved(path, key, out);
	if (!err)
		cache_touch(path);
	return err;
}

/* One of the cache's files, as cache_trim() weighs it. */
#define CACHE_NAME_MAX 64

struct cache_entry {
	char name[CACHE_NAME_MAX];
	uint64_t size;
	struct timespec used;
};

static int entry_older(const void *a, const void *b)
{
	const struct timespec *x = &((const struct cache_entry *)a)->used;
	const struct timespec *y = &((const struct cache_entry *)b)->used;

	if (x->tv_sec != y->tv_sec)
		return x->tv_sec < y->tv_sec ? -1 : 1;
	return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* Whether name in the cache directory is the cache's to weigh: an entry,
 * or a temporary file an hour old (left by a killed run; a younger one is
 * being written by a run that is still going). */
static bool cache_owns(const char *name, const struct stat *st)
{
	if (strncmp(name, "symtab-", 7) && strncmp(name, "debugimg-", 9))
		return false;
	if (!S_ISREG(st->st_mode) || strlen(name) >= CACHE_NAME_MAX)
		return false;
	return !strchr(name, '.') || st->st_mtim.tv_sec + 3600 < time(NULL);
}

/* Removes the least recently used files of the cache directory that
 * holds path, never path itself (just written, about to be used), until
 * they take at most max bytes. */
static void cache_trim(const char *path, uint64_t max)
{
	const char *base = strrchr(path, '/') + 1;
	struct cache_entry *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *de;
	char dir[4096];
	DIR *d;

	if ((size_t)(base - path) > sizeof(dir))
		return;
	memcpy(dir, path, (size_t)(base - path - 1));
	dir[base - path - 1] = '\0';
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;

		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !cache_owns(de->d_name, &st))
			continue;
		total += (uint64_t)st.st_size;
		if (!strcmp(de->d_name, base))
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct cache_entry *nv = realloc(v, ncap * sizeof(*v));

			if (!nv)
				break;
			v = nv;
			cap = ncap;
		}
		strcpy(v[n].name, de->d_name);
		v[n].size = (uint64_t)st.st_size;
		v[n].used = st.st_mtim;
		n++;
	}
	if (total > max)
		qsort(v, n, sizeof(*v), entry_older);
	for (size_t i = 0; i < n && total > max; i++)
		if (!unlinkat(dirfd(d), v[i].name, 0))
			total -= v[i].size;
	closedir(d);
	free(v);
}

/* A new cache file beside path, to be renamed over it when whole: its
 * descriptor, and its name in tmp; or -1. */
static int cache_temp(const char *path, char *tmp, size_t len)
{
	if (snprintf(tmp, len, "%s.XXXXXX", path) >= (int)len)
		return -1;
	return mkstemp(tmp);
}

/* Ends what cache_temp() began: the file replaces path if err is 0 and it
 * was all written, else it goes. A new entry may take the cache past its
 * bound: older ones then go. */
static void cache_commit(int fd, const char *tmp, const char *path, int err)
{
	if (close(fd))
		err = -EIO;
	if (err || rename(tmp, path)) {
		unlink(tmp);
		return;
	}
	cache_trim(path, cache_max_bytes());
}

void cs_symcache_store(const char *key, const struct cs_symtab *t)
{
	char path[4200], tmp[4300];
	int fd;

	if (cache_path("symtab", key, path, sizeof(path), 1) ||
	    (fd = cache_temp(path, tmp, sizeof(tmp))) < 0)
		return;
	cache_commit(fd, tmp, path, cs_symtab_save(t, fd, key));
}

/* A saved debug image: a page of header (IMAGE_MAGIC, the key and a NUL,
 * the sizes of the image and of the index as uint64_t, zeros), the image,
 * page-aligned as libelf likes it, zeros up to a multiple of 8, the index.
 * The sizes tell a cut file from a whole one. */
#define IMAGE_MAGIC "callstitch debug image 2\n"
#define IMAGE_HEADER 4096

static uint64_t align8(uint64_t x)
{
	return (x + 7) & ~(uint64_t)7;
}

int cs_symcache_image_open(const char *key, struct cs_symcache_image *out)
{
	size_t magic = sizeof(IMAGE_MAGIC) - 1, klen = strlen(key);
	char path[4200];
	struct stat st;
	uint64_t sizes[2];
	char *map;
	int fd, err = cache_path("debugimg", key, path, sizeof(path), 0);

	memset(out, 0, sizeof(*out));
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size <= IMAGE_HEADER) {
		close(fd);
		return -EBADMSG;
	}
	/* private and writable: libelf may write to an elf_memory() image;
	 * such pages are copied, the file never changes */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	if (memcmp(map, IMAGE_MAGIC, magic) ||
	    magic + klen + 1 + sizeof(sizes) > IMAGE_HEADER ||
	    memcmp(map + magic, key, klen + 1)) {
		munmap(map, (size_t)st.st_size);
		return -ESTALE;
	}
	memcpy(sizes, map + magic + klen + 1, sizeof(sizes));
	if (sizes[0] > (uint64_t)st.st_size || sizes[1] > (uint64_t)st.st_size ||
	    IMAGE_HEADER + align8(sizes[0]) + sizes[1] != (uint64_t)st.st_size) {
		munmap(map, (size_t)st.st_size);
		return -EBADMSG;
	}
	out->map = map;
	out->map_len = (size_t)st.st_size;
	out->image = map + IMAGE_HEADER;
	out->size = (size_t)sizes[0];
	out->index = map + IMAGE_HEADER + align8(sizes[0]);
	out->index_size = (size_t)sizes[1];
	cache_touch(path);
	return 0;
}

void cs_symcache_image_close(struct cs_symcache_image *img)
{
	if (img->map)
		munmap(img->map, img->map_len);
	memset(img, 0, sizeof(*img));
}

void cs_symcache_image_store(const char *key, const void *image, size_t size,
			     const void *index, size_t index_size)
{
	static const char zeros[8];
	size_t magic = sizeof(IMAGE_MAGIC) - 1, klen = strlen(key);
	char path[4200], tmp[4300];
	char *header;
	uint64_t sizes[2] = { size, index_size };
	int fd, err;

	if (magic + klen + 1 + sizeof(sizes) > IMAGE_HEADER ||
	    cache_path("debugimg", key, path, sizeof(path), 1) ||
	    !(header = calloc(1, IMAGE_HEADER)))
		return;
	memcpy(header, IMAGE_MAGIC, magic);
	memcpy(header + magic, key, klen);
	memcpy(header + magic + klen + 1, sizes, sizeof(sizes));
	fd = cache_temp(path, tmp, sizeof(tmp));
	if (fd >= 0) {
		/* in one call, for the large folios a mapping of it gets
		 * (cs_symtab_save()) */
		err = cs_writev_all(fd, (struct iovec[]){
			{ header, IMAGE_HEADER },
			{ (void *)(uintptr_t)image, size },
			{ (void *)(uintptr_t)zeros, align8(size) - size },
			{ (void *)(uintptr_t)index, index_size },
		}, 4);
		cache_commit(fd, tmp, path, err);
	}
	free(header);
}
