/* bidcache.h - writes perf's build-id cache, so that a profile's binaries
 * can be found by build id after they change or go away (a package
 * upgrade, a container that is gone).
 *
 * The layout is perf's, which both perf and callstitch read:
 *
 *     DIR/PATH/BUILDID/elf             a copy of the binary
 *     DIR/[kernel.kallsyms]/BUILDID/kallsyms
 *     DIR/.build-id/ab/cdef...  ->  ../../PATH/BUILDID
 *
 * DIR is ~/.debug. Files are written to a temporary name and renamed, so
 * a reader never sees half a binary; what is already there is kept.
 */
#ifndef CS_REC_BIDCACHE_H
#define CS_REC_BIDCACHE_H

#include <stddef.h>
#include <stdint.h>

/* ~/.debug, malloc'ed, or NULL without $HOME. */
char *cs_bidcache_dir(void);

/* Copies the file at src (a path; /proc/self/fd/N for one held open) into
 * dir as the `leaf` ("elf" or "kallsyms") of name with this build id.
 * Returns 1 if it was copied, 0 if the cache had it, or a negative errno. */
int cs_bidcache_add(const char *dir, const char *name, const uint8_t *build_id,
		    size_t size, const char *leaf, const char *src);

#endif
