/* debuginfod.h - binaries and debug files fetched by build id from the
 * servers DEBUGINFOD_URLS names, through libdebuginfod (which keeps its
 * own cache, DEBUGINFOD_CACHE_PATH or ~/.cache/debuginfod_client).
 *
 * The last source the dso lookup tries. It prints nothing: download
 * progress and the one warning about a server that cannot be reached go
 * to the caller's hooks. After such a failure it asks no more, so a dead
 * server costs one timeout, not one per binary.
 */
#ifndef CS_DEBUGINFOD_H
#define CS_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the session wants to hear while symbols are looked for. */
struct cs_fetch_hooks {
	/* a download in progress: what it is, bytes so far, total (0 if
	 * unknown); once with what == NULL when it ends */
	void (*progress)(void *ctx, const char *what, uint64_t done,
			 uint64_t total);
	void (*warning)(void *ctx, const char *msg);	/* one line */
	void *ctx;
};

struct cs_debuginfod;			/* opaque */

/* Whether servers are configured: DEBUGINFOD_URLS set and not empty. */
bool cs_debuginfod_configured(void);

/* A client that connects on first use; the hooks are copied (may be NULL).
 * Returns 0 and *out (caller frees), or -ENOMEM. */
int cs_debuginfod_new(const struct cs_fetch_hooks *hooks,
		      struct cs_debuginfod **out);

/* The executable (debug == false) or the separate debug file with this
 * build id. name is what the file was recorded as, for messages. Returns
 * 0 and the file's path in the client's cache in *path (caller frees), or
 * a negative errno: -ENOENT when no server has it, -ENOSYS when fetching
 * is off (not configured, or given up after a failure). Serialised: safe
 * to call from several threads. */
int cs_debuginfod_find(struct cs_debuginfod *c, bool debug,
		       const uint8_t *build_id, size_t size, const char *name,
		       char **path);

void cs_debuginfod_free(struct cs_debuginfod *c);

#endif
