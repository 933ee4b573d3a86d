/* write_all.h - writing a whole buffer to a file descriptor.
 *
 * write() may write less than asked (a signal, a pipe, a full disk on the
 * way); every writer of callstitch's files goes round the same loop.
 */
#ifndef CS_WRITE_ALL_H
#define CS_WRITE_ALL_H

#include <stddef.h>

struct iovec;

/* Writes all len bytes of buf to fd, retrying after EINTR. Returns 0, the
 * write's -errno, or -EIO if a write wrote nothing. */
int cs_write_all(int fd, const void *buf, size_t len);

/* Writes iov[0..n) (n <= IOV_MAX) in order, as cs_write_all() does: as
 * few writev() calls as the kernel takes. A file written in one call is
 * cached in folios as large as its length and alignment allow, which a
 * mapping of it can then map with huge pages. iov is changed (advanced
 * past what was written). Returns 0, the writev's -errno, or -EIO. */
int cs_writev_all(int fd, struct iovec *iov, int n);

#endif
