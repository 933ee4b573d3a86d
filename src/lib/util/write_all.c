#include "lib/util/write_all.h"

#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>

int cs_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int cs_writev_all(int fd, struct iovec *iov, int n)
{
	while (n) {
		ssize_t w;
		size_t left;

		/* empty parts first: a writev of nothing would look like EIO */
		if (!iov->iov_len) {
			iov++;
			n--;
			continue;
		}
		w = writev(fd, iov, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -EIO;
		for (left = (size_t)w; n && left >= iov->iov_len; n--, iov++)
			left -= iov->iov_len;
		if (left) {
			iov->iov_base = (char *)iov->iov_base + left;
			iov->iov_len -= left;
		}
	}
	return 0;
}
