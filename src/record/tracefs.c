/* tracefs.c - finds (or mounts) tracefs. */
#include "record/tracefs.h"

#include <errno.h>
#include <stdio.h>
#include <sys/mount.h>
#include <unistd.h>

static const char *const mount_points[] = {
	"/sys/kernel/tracing",
	"/sys/kernel/debug/tracing",
};

static int has_events(const char *dir)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/events", dir);
	return !access(path, R_OK | X_OK);
}

int cs_rec_tracefs_find(const char **path)
{
	for (size_t i = 0; i < sizeof(mount_points) / sizeof(mount_points[0]); i++)
		if (has_events(mount_points[i])) {
			*path = mount_points[i];
			return 0;
		}
	/* not mounted: perf mounts it; so do we (root only) */
	if (!mount("nodev", mount_points[0], "tracefs", 0, NULL) &&
	    has_events(mount_points[0])) {
		*path = mount_points[0];
		return 0;
	}
	*path = NULL;
	return -ENOENT;
}
