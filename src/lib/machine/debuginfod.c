/* debuginfod.c - fetching by build id through libdebuginfod. */
#include "lib/machine/debuginfod.h"
#include "lib/symbols/elfimg.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cs_debuginfod {
	struct cs_fetch_hooks hooks;
	debuginfod_client *client;	/* made on first use */
	bool given_up;			/* a server failed: ask no more */
	bool progress_shown;
	const char *what;		/* the file being fetched, for progress */
	pthread_mutex_t lock;		/* a client serves one call at a time */
};

bool cs_debuginfod_configured(void)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);

	return urls && urls[strspn(urls, " \t")];
}

int cs_debuginfod_new(const struct cs_fetch_hooks *hooks,
		      struct cs_debuginfod **out)
{
	struct cs_debuginfod *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return -ENOMEM;
	if (hooks)
		c->hooks = *hooks;
	pthread_mutex_init(&c->lock, NULL);
	*out = c;
	return 0;
}

static int on_progress(debuginfod_client *client, long done, long total)
{
	struct cs_debuginfod *c = debuginfod_get_user_data(client);

	if (c->hooks.progress && done >= 0) {
		c->hooks.progress(c->hooks.ctx, c->what, (uint64_t)done,
				  total > 0 ? (uint64_t)total : 0);
		c->progress_shown = true;
	}
	return 0;			/* never cancel */
}

static void warn_failure(struct cs_debuginfod *c, bool debug, const char *name,
			 const char *hex, int err)
{
	const char *url = c->client ? debuginfod_get_url(c->client) : NULL;
	char msg[1024];

	if (!c->hooks.warning)
		return;
	if (!url || !*url)
		url = getenv(DEBUGINFOD_URLS_ENV_VAR);
	snprintf(msg, sizeof(msg), "debuginfod: cannot fetch the %s of %s "
		 "(build id %s) from %s: %s; asking no more, symbols are "
		 "looked for locally only", debug ? "debug info" : "binary",
		 name, hex, url ? url : "?", strerror(-err));
	c->hooks.warning(c->hooks.ctx, msg);
}

int cs_debuginfod_find(struct cs_debuginfod *c, bool debug,
		       const uint8_t *build_id, size_t size, const char *name,
		       char **path)
{
	char hex[41];
	int fd, err;

	*path = NULL;
	if (!size || size > 20)
		return -ENOENT;
	pthread_mutex_lock(&c->lock);
	if (c->given_up || !cs_debuginfod_configured()) {
		err = -ENOSYS;
		goto out;
	}
	if (!c->client) {
		c->client = debuginfod_begin();
		if (!c->client) {
			c->given_up = true;
			err = -ENOSYS;
			goto out;
		}
		debuginfod_set_user_data(c->client, c);
		/* replaces the library's own stderr progress: we print nothing */
		debuginfod_set_progressfn(c->client, on_progress);
	}
	cs_build_id_hex(build_id, size, hex);
	c->what = name;
	c->progress_shown = false;
	fd = debug ? debuginfod_find_debuginfo(c->client, build_id, (int)size, path)
		   : debuginfod_find_executable(c->client, build_id, (int)size, path);
	if (c->progress_shown && c->hooks.progress)
		c->hooks.progress(c->hooks.ctx, NULL, 0, 0);
	c->what = NULL;
	if (fd >= 0) {
		close(fd);
		err = *path ? 0 : -ENOMEM;
		goto out;
	}
	err = fd;
	free(*path);
	*path = NULL;
	/* not found on any server is an answer; anything else (refused,
	 * timed out, no route) says the servers cannot help this run */
	if (err != -ENOENT) {
		c->given_up = true;
		warn_failure(c, debug, name, hex, err);
	}
out:
	pthread_mutex_unlock(&c->lock);
	return err;
}

void cs_debuginfod_free(struct cs_debuginfod *c)
{
	if (!c)
		return;
	if (c->client)
		debuginfod_end(c->client);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
