/* libarchive_dl.c - libarchive opened on first use (see the header). */
#include "lib/util/libarchive_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static struct cs_libarchive la;
static const char *la_error;
static char la_why[256];
static pthread_once_t la_once = PTHREAD_ONCE_INIT;

static void load(void)
{
	void *h = dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(la_why, sizeof(la_why), "%s", dlerror());
		la_error = la_why;
		return;
	}
#define SYM(name)							\
	do {								\
		la.name = (__typeof__(la.name))dlsym(h, "archive_" #name); \
		if (!la.name) {						\
			la_error = "libarchive.so.13 lacks archive_" #name; \
			return;						\
		}							\
	} while (0)
	SYM(read_new);
	SYM(read_support_filter_all);
	SYM(read_support_format_tar);
	SYM(read_open_filename);
	SYM(read_next_header);
	SYM(read_data_block);
	SYM(read_free);
	SYM(write_new);
	SYM(write_set_format_pax_restricted);
	SYM(write_add_filter_zstd);
	SYM(write_open_fd);
	SYM(write_open_filename);
	SYM(write_header);
	SYM(write_data);
	SYM(write_close);
	SYM(write_free);
	SYM(error_string);
	SYM(entry_new);
	SYM(entry_free);
	SYM(entry_pathname);
	SYM(entry_filetype);
	SYM(entry_set_pathname);
	SYM(entry_set_filetype);
	SYM(entry_set_perm);
	SYM(entry_set_size);
	SYM(entry_set_mtime);
#undef SYM
}

const struct cs_libarchive *cs_libarchive(const char **why)
{
	pthread_once(&la_once, load);
	if (la_error) {
		*why = la_error;
		return NULL;
	}
	return &la;
}
