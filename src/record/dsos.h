/* dsos.h - which binaries got samples, and their build ids.
 *
 * Fed every record the recorder writes: MMAP2 records (synthesised and from
 * the rings) tell which file is mapped where in which process, FORK tells
 * which process a new one inherits its maps from, an exec COMM clears a
 * process's maps, and each SAMPLE marks the binaries under its ip and its
 * callchain as hit. At the end the build ids of the hit binaries (from the
 * MMAP2 record when the kernel put one there, else read from the file's
 * NT_GNU_BUILD_ID note) go into the header, so readers can find the exact
 * binaries later.
 *
 * A process in another mount namespace (a container) names paths that
 * may mean nothing here: its binaries are opened through /proc/PID/root
 * when their MMAP2 is seen, while the process lives, keyed by build id
 * (one path may be other files in other namespaces) and held open until
 * the end, when the recorder copies the hit ones into the build-id cache.
 */
#ifndef CS_REC_DSOS_H
#define CS_REC_DSOS_H

#include <stddef.h>
#include <stdint.h>

struct cs_dsos;				/* opaque */

/* Returns 0 and an empty table in *out (caller frees), or -ENOMEM. */
int cs_dsos_new(uint64_t sample_type, struct cs_dsos **out);

/* Samples carry copies of the user registers (sampled with regs_mask) and
 * stack (--call-graph dwarf): their user frames are only found later, by
 * unwinding, so every word of the stack copy that falls in an executable
 * map marks its binary, and so does the user ip among the registers. */
void cs_dsos_scan_user_stacks(struct cs_dsos *d, uint64_t regs_mask);

/* Looks at one record; it is not kept. Returns 0 or -ENOMEM. */
int cs_dsos_see(struct cs_dsos *d, const void *rec, size_t size);

/* For every hit binary with a build id, and for the kernel when hit (path
 * "[kernel.kallsyms]", misc CS_MISC_KERNEL, id from /sys/kernel/notes).
 * src is where the file can still be read when that is not path: a
 * binary of a process in another mount namespace (a container), opened
 * through /proc/PID/root while the process lived ("/proc/self/fd/N");
 * NULL otherwise. Pointers are valid only during the call; a non-zero
 * return stops. */
typedef int (*cs_dsos_fn)(void *ctx, uint16_t misc, const uint8_t *build_id,
			  size_t size, const char *path, const char *src);
int cs_dsos_for_each_hit(struct cs_dsos *d, cs_dsos_fn fn, void *ctx);

/* Reads the GNU build id note of an ELF file. Returns its size (1..20), or
 * a negative errno (-ENOENT: the file has none). */
int cs_dsos_read_build_id(const char *path, uint8_t *out, size_t cap);

void cs_dsos_free(struct cs_dsos *d);

#endif
