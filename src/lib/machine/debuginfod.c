/* debuginfod.c - fetching by build id through libdebuginfod. */
#include "lib/machine/debuginfod.h"
#include "lib/symbols/elfimg.h"

#include <dlfcn.h>
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

/* libdebuginfod, loaded on first use: it brings libcurl and some thirty
 * libraries more, whose loading and relocation cost every run ~5 ms,
 * while only a run that asks a server needs them. */
static struct {
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_end) *end;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
	__typeof__(debuginfod_find_executable) *find_executable;
	__typeof__(debuginfod_set_user_data) *set_user_data;
	__typeof__(debuginfod_get_user_data) *get_user_data;
	__typeof__(debuginfod_set_progressfn) *set_progressfn;
	__typeof__(debuginfod_get_url) *get_url;
	const char *error;		/* why it did not load, or NULL */
} lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void lib_load(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		lib.error = dlerror();
		return;
	}
	/* a void * to a function pointer: what dlsym() is for (POSIX) */
	lib.begin = dlsym(h, "debuginfod_begin");
	lib.end = dlsym(h, "debuginfod_end");
	lib.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	lib.find_executable = dlsym(h, "debuginfod_find_executable");
	lib.set_user_data = dlsym(h, "debuginfod_set_user_data");
	lib.get_user_data = dlsym(h, "debuginfod_get_user_data");
	lib.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	lib.get_url = dlsym(h, "debuginfod_get_url");
	if (!lib.begin || !lib.end || !lib.find_debuginfo ||
	    !lib.find_executable || !lib.set_user_data || !lib.get_user_data ||
	    !lib.set_progressfn || !lib.get_url) {
		lib.error = "libdebuginfod.so.1 lacks a function callstitch needs";
		lib.begin = NULL;
		dlclose(h);
	}
}

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
	struct cs_debuginfod *c = lib.get_user_data(client);

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
	const char *url = c->client ? lib.get_url(c->client) : NULL;
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
		pthread_once(&lib_once, lib_load);
		if (!lib.begin && c->hooks.warning) {
			char msg[512];

			snprintf(msg, sizeof(msg), "debuginfod: cannot load "
				 "libdebuginfod (%s): symbols are looked for "
				 "locally only", lib.error ? lib.error : "?");
			c->hooks.warning(c->hooks.ctx, msg);
		}
		c->client = lib.begin ? lib.begin() : NULL;
		if (!c->client) {
			c->given_up = true;
			err = -ENOSYS;
			goto out;
		}
		lib.set_user_data(c->client, c);
		/* replaces the library's own stderr progress: we print nothing */
		lib.set_progressfn(c->client, on_progress);
	}
	cs_build_id_hex(build_id, size, hex);
	c->what = name;
	c->progress_shown = false;
	fd = debug ? lib.find_debuginfo(c->client, build_id, (int)size, path)
		   : lib.find_executable(c->client, build_id, (int)size, path);
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
		lib.end(c->client);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
