/* tracefs.h - where the kernel's tracing file system is.
 *
 * Tracepoints are described in tracefs: events/SYSTEM/NAME/id is the
 * number perf_event_open() takes as config, events/SYSTEM/NAME/format the
 * layout of its raw data. It is mounted at /sys/kernel/tracing, or under
 * debugfs on older systems; when neither is there and we may mount it, it
 * is mounted at /sys/kernel/tracing, as perf does.
 */
#ifndef CS_REC_TRACEFS_H
#define CS_REC_TRACEFS_H

/* Returns 0 and the mount point in *path (a static string), or -ENOENT when
 * there is no tracefs and it cannot be mounted. */
int cs_rec_tracefs_find(const char **path);

#endif
