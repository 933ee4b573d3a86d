/* replaceable.h - outputs written whole: a temporary file renamed at the end.
 *
 * Outputs that must never be left half written (a flame page, an injected
 * profile, an archive) are written under a temporary name beside their path
 * and renamed over it when complete. That is right only for a plain file:
 * as root, a rename over /dev/null replaces the device with a plain file,
 * and one over a symbolic link (/dev/stdout) replaces the link, not the file
 * it names. Those are written in place.
 */
#ifndef CS_REPLACEABLE_H
#define CS_REPLACEABLE_H

#include <stdbool.h>
#include <sys/types.h>

/* True when path does not exist yet or is a regular file (not a link to
 * one): it may be written through a temporary file renamed over it.
 * Anything else (a device, a FIFO, a terminal, a link) is to be written in
 * place. */
bool cs_path_replaceable(const char *path);

/* One output being written. The caller owns the struct; the functions
 * below own what it holds. */
struct cs_replace {
	int fd;			/* where to write; -1 once closed (a caller
				 * that closes it, through fclose, sets -1) */
	char *tmp;		/* the temporary file, NULL when in place */
	const char *path;	/* the caller's path, borrowed */
};

/* Opens path to be written whole: through a new temporary file beside it
 * (created with mode, less the umask) when cs_path_replaceable(), else in
 * place, truncated. path must outlive r. Returns 0, or -errno with nothing
 * left open or created. */
int cs_replace_open(struct cs_replace *r, const char *path, mode_t mode);

/* Closes r's descriptor and, when it was a temporary file, renames it over
 * the path. Returns 0, or -errno with the temporary file removed (close
 * reports a write the file system deferred). */
int cs_replace_commit(struct cs_replace *r);

/* Closes r's descriptor if still open and removes its temporary file: the
 * error path, and a no-op after cs_replace_commit(). A file written in
 * place stays as far as it was written. */
void cs_replace_abort(struct cs_replace *r);

#endif
