/* symcache.h - finished symbol tables kept between runs.
 *
 * Every run on a profile pays the same fixed costs: reading /proc/kallsyms
 * makes the kernel format ~150k lines (tens of ms), and parsing it or a
 * big binary's .symtab, then sorting, costs as much again. A finished
 * table is saved instead, in $XDG_CACHE_HOME/callstitch/ (~/.cache/...),
 * under a key that changes whenever the answer could; a run with the same
 * key maps the file and parses nothing (cs_symtab_open_saved).
 *
 * The inflated DWARF sections that inline lookups read (debugimg.h) are
 * kept the same way, with the lookups' index of them, keyed like a file's
 * table: a run maps them instead of inflating and indexing a debug file's
 * sections again.
 *
 * Keys name this callstitch build (its build id: another build may choose
 * symbols differently) and the source: for the kernel its build id
 * (/sys/kernel/notes), the boot (KASLR moves it every boot) and the loaded
 * modules with their addresses; for a file its path, device, inode, size
 * and modification time. A file's name hashes the whole key, so entries of
 * two builds coexist.
 *
 * The directory is bounded ($CS_CACHE_MAX_MB MiB, default 512; 0: no
 * cache): each store removes the least recently used entries (a hit marks
 * its file used) until the rest fit, never the entry just stored.
 */
#ifndef CS_SYMCACHE_H
#define CS_SYMCACHE_H

#include <stddef.h>

struct cs_symtab;

/* The key of the running kernel's symbols, as text in buf. Returns 0, or a
 * negative errno when the kernel does not say enough to key them (then
 * nothing is cached). */
int cs_symcache_kernel_key(char *buf, size_t len);

/* The key of the symbols read from file path. Returns 0 or a negative
 * errno (no such file: nothing to cache). */
int cs_symcache_file_key(const char *path, char *buf, size_t len);

/* The cached table for key: 0 and *out (caller frees), or a negative errno
 * (-ENOENT: none yet, -ESTALE: made for another key). */
int cs_symcache_open(const char *key, struct cs_symtab **out);

/* Saves finished table t for key, replacing an older table of the same
 * key atomically. Best effort: a cache that cannot be written is no
 * error. */
void cs_symcache_store(const char *key, const struct cs_symtab *t);

/* A saved debug image, mapped. */
struct cs_symcache_image {
	char *image;			/* the image: elf_memory(image, size) */
	size_t size;
	const void *index;		/* what the caller saved with it, */
	size_t index_size;		/* 8-aligned */
	void *map;			/* the whole file's mapping */
	size_t map_len;
};

/* The debug image saved for key (a cs_symcache_file_key() of the debug
 * file): 0 and *out (the caller closes it with cs_symcache_image_close()
 * after the Elf made of it is ended), or a negative errno (-ENOENT: none
 * yet, -ESTALE: made for another key, -EBADMSG: cut). */
int cs_symcache_image_open(const char *key, struct cs_symcache_image *out);

void cs_symcache_image_close(struct cs_symcache_image *img);

/* Saves image[0..size) and the caller's index[0..index_size) of it for
 * key, replacing an older one of the same key atomically. Best effort,
 * as cs_symcache_store(). */
void cs_symcache_image_store(const char *key, const void *image, size_t size,
			     const void *index, size_t index_size);

#endif
