/* open_regular.c - see open_regular.h. */
#include "lib/util/open_regular.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int cs_open_regular(const char *path, uint64_t min_size)
{
	struct stat st;
	int fd, err = 0;

	/* O_NONBLOCK: a FIFO opens at once instead of waiting for a writer
	 * (for a regular file it changes nothing) */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = -EINVAL;
	else if ((uint64_t)st.st_size < min_size)
		err = -ENODATA;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}
