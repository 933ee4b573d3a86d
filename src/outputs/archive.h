/* archive.h - `callstitch archive`: the files a profile's symbols come from,
 * packed for another machine.
 *
 * The session is run with every frame of every sample resolved, which
 * loads exactly the binaries with samples; then every file the lookup read
 * (binaries, separate debug files, the kernel's symbol list) goes into a
 * zstd-compressed tar in perf's build-id cache layout:
 *
 *     .build-id/ab/cdef.../elf        a binary
 *     .build-id/ab/cdef.../debug      its separate debug file
 *     .build-id/ab/cdef.../kallsyms   the kernel's symbols
 *     PATH                            a binary without a build id
 *     [vdso]                          this kernel's vdso, when samples hit it
 *
 * which --archive reads as it is, and --symfs (or perf, from ~/.debug)
 * reads once unpacked.
 */
#ifndef CS_ARCHIVE_H
#define CS_ARCHIVE_H

#include <stdint.h>

#include <callstitch/callstitch.h>

struct cs_errbuf;

struct cs_archive_result {
	unsigned binaries, debug_files;
	bool kallsyms;
	bool kallsyms_unkeyed;		/* loaded, but no kernel build id */
	uint64_t bytes;			/* of the files, before compression */
	unsigned no_build_id;		/* binaries kept by path */
	unsigned missing;		/* binaries with samples not found */
	const char *first_missing;	/* one of them, owned by the session */
};

/* What the session's run needs: resolve every frame. ctx is the session. */
extern const struct cs_output_ops cs_archive_ops;

/* After the run: writes the archive to path (replacing it; "-": standard
 * output). Returns 0
 * with *res filled, or a negative errno with eb saying why. */
int cs_archive_write(struct cs_session *s, const char *path,
		     struct cs_archive_result *res, struct cs_errbuf *eb);

#endif
