/* libarchive_dl.h - libarchive's functions, loaded when first needed.
 *
 * Only `archive` and `--archive` read or write tar files; linked,
 * libarchive and what it needs (libxml2, ICU, liblzma, ...) were loaded
 * and relocated at every start of every command, about 1.5 ms of CPU.
 * The library is opened with dlopen() on first use instead, and never
 * closed.
 */
#ifndef CS_LIBARCHIVE_DL_H
#define CS_LIBARCHIVE_DL_H

#include <archive.h>
#include <archive_entry.h>

#define CS_LA_FN_(name) __typeof__(archive_##name) *name
struct cs_libarchive {
	/* reading */
	CS_LA_FN_(read_new);
	CS_LA_FN_(read_support_filter_all);
	CS_LA_FN_(read_support_format_tar);
	CS_LA_FN_(read_open_filename);
	CS_LA_FN_(read_next_header);
	CS_LA_FN_(read_data_block);
	CS_LA_FN_(read_free);
	/* writing */
	CS_LA_FN_(write_new);
	CS_LA_FN_(write_set_format_pax_restricted);
	CS_LA_FN_(write_add_filter_zstd);
	CS_LA_FN_(write_open_fd);
	CS_LA_FN_(write_open_filename);
	CS_LA_FN_(write_header);
	CS_LA_FN_(write_data);
	CS_LA_FN_(write_close);
	CS_LA_FN_(write_free);
	CS_LA_FN_(error_string);
	/* entries */
	CS_LA_FN_(entry_new);
	CS_LA_FN_(entry_free);
	CS_LA_FN_(entry_pathname);
	CS_LA_FN_(entry_filetype);
	CS_LA_FN_(entry_set_pathname);
	CS_LA_FN_(entry_set_filetype);
	CS_LA_FN_(entry_set_perm);
	CS_LA_FN_(entry_set_size);
	CS_LA_FN_(entry_set_mtime);
};
#undef CS_LA_FN_

/* The library's functions (static; every one set), or NULL with *why
 * saying why it could not be loaded. Thread-safe. */
const struct cs_libarchive *cs_libarchive(const char **why);

#endif
