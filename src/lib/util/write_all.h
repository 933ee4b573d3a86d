/* write_all.h - writing a whole buffer to a file descriptor.
 *
 * write() may write less than asked (a signal, a pipe, a full disk on the
 * way); every writer of callstitch's files goes round the same loop.
 */
#ifndef CS_WRITE_ALL_H
#define CS_WRITE_ALL_H

#include <stddef.h>

/* Writes all len bytes of buf to fd, retrying after EINTR. Returns 0, the
 * write's -errno, or -EIO if a write wrote nothing. */
int cs_write_all(int fd, const void *buf, size_t len);

#endif
