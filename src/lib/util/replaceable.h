/* replaceable.h - whether an output may be replaced by a rename.
 *
 * Outputs that must never be left half written (a flame page, an injected
 * profile, an archive) are written under a temporary name and renamed over
 * their path at the end. That is right only for a plain file: as root, a
 * rename over /dev/null replaces the device with a plain file, and one over
 * a symbolic link (/dev/stdout) replaces the link, not the file it names.
 */
#ifndef CS_REPLACEABLE_H
#define CS_REPLACEABLE_H

#include <stdbool.h>

/* True when path does not exist yet or is a regular file (not a link to
 * one): it may be written through a temporary file renamed over it.
 * Anything else (a device, a FIFO, a terminal, a link) is to be written in
 * place. */
bool cs_path_replaceable(const char *path);

#endif
