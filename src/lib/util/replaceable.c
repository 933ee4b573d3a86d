/* replaceable.c - whether an output may be replaced by a rename. */
#include "replaceable.h"

#include <errno.h>
#include <sys/stat.h>

bool cs_path_replaceable(const char *path)
{
	struct stat sb;

	/* lstat, not stat: stat follows a link to the file it names */
	if (lstat(path, &sb))
		return errno == ENOENT;
	return S_ISREG(sb.st_mode);
}
