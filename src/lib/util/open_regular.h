/* open_regular.h - opening a file that a profile names.
 *
 * A DSO path in an MMAP record may name anything: a FIFO (open() blocks
 * until a writer comes), a device (/dev/zero never ends), a directory,
 * /proc/self/mem, a 10 GB sparse file. Every file callstitch opens on a
 * profile's word goes through here: opened without blocking, and kept
 * only if it is a regular file of at least min_size bytes (procfs files
 * say 0). Nothing is read.
 */
#ifndef CS_OPEN_REGULAR_H
#define CS_OPEN_REGULAR_H

#include <stdint.h>

/* Returns an fd (O_RDONLY, close-on-exec; the caller closes it), or
 * -errno: the open's own, -EINVAL for anything but a regular file,
 * -ENODATA for one shorter than min_size. */
int cs_open_regular(const char *path, uint64_t min_size);

#endif
