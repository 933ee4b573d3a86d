/* archive.c - packs the files behind a profile's symbols (libarchive). */
#include "outputs/archive.h"
#include "lib/machine/machine.h"
#include "lib/util/errbuf.h"
#include "lib/util/libarchive_dl.h"
#include "lib/util/replaceable.h"
#include "lib/util/strset.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the run: every frame resolved, so its binary is loaded ---------- */

static int resolve_all(void *ctx, const struct cs_stitched *st)
{
	static struct cs_frame frames[CS_FRAMES_MAX];
	struct cs_machine *m = cs_session_machine(ctx);

	cs_frames_resolve(m, st, frames, CS_FRAMES_MAX);
	return 0;
}

const struct cs_output_ops cs_archive_ops = {
	.sample = resolve_all,
};

/* ---- writing ------------------------------------------------------------ */

struct packer {
	const struct cs_libarchive *la;
	struct archive *a;
	struct cs_archive_result *res;
	struct cs_errbuf *eb;
	const char *out;		/* the archive's name, for errors */
	struct cs_strset names;		/* entries written: each once */
	struct cs_machine *m;
};

/* The whole file in memory: /proc/kallsyms says it is empty, and a tar
 * header needs the size before the data. */
static int slurp(int fd, char **buf, size_t *len)
{
	size_t cap = 1u << 20;
	char *b = malloc(cap);
	ssize_t n;

	*len = 0;
	if (!b)
		return -ENOMEM;
	while ((n = read(fd, b + *len, cap - *len)) > 0) {
		*len += (size_t)n;
		if (*len == cap) {
			char *nb = realloc(b, cap * 2);

			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
	}
	if (n < 0) {
		free(b);
		return -errno;
	}
	*buf = b;
	return 0;
}

static int add_entry(struct packer *p, const char *entry, const char *src)
{
	const struct cs_libarchive *la = p->la;
	struct archive_entry *e;
	struct stat st;
	char *buf = NULL, chunk[65536];
	size_t len = 0;
	int fd, err = 0;
	ssize_t n;

	fd = open(src, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		err = slurp(fd, &buf, &len);
		if (err)
			goto out;
	} else {
		len = (size_t)st.st_size;
	}
	e = la->entry_new();
	if (!e) {
		err = -ENOMEM;
		goto out;
	}
	la->entry_set_pathname(e, entry);
	la->entry_set_filetype(e, AE_IFREG);
	la->entry_set_perm(e, 0644);
	la->entry_set_size(e, (la_int64_t)len);
	la->entry_set_mtime(e, st.st_mtime, 0);
	if (la->write_header(p->a, e) != ARCHIVE_OK)
		err = -EIO;
	la->entry_free(e);
	if (err)
		goto out;
	if (buf) {
		if (la->write_data(p->a, buf, len) != (la_ssize_t)len)
			err = -EIO;
	} else {
		/* a file that shrinks as it is read is padded by libarchive */
		for (size_t done = 0; done < len && (n = read(fd, chunk, sizeof(chunk))) > 0;
		     done += (size_t)n)
			if (la->write_data(p->a, chunk, (size_t)n) != n) {
				err = -EIO;
				break;
			}
	}
	if (!err)
		p->res->bytes += len;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	if (err == -EIO)
		return cs_error(p->eb, -EIO, "%s: writing %s: %s", p->out, entry,
				la->error_string(p->a));
	if (err)
		return cs_error(p->eb, err, "%s: %s", src, strerror(-err));
	return 0;
}

static int pack_file(void *ctx, enum cs_file_kind kind, const char *name,
		     const uint8_t *id, size_t size, const char *path)
{
	struct packer *p = ctx;
	char entry[4200], hex[41];
	size_t before;
	int err;

	if (!strcmp(name, "[vdso]")) {
		/* the profile names the vdso without a build id: by name */
		snprintf(entry, sizeof(entry), "[vdso]");
	} else if (size && cs_build_id_leaf(kind)) {
		cs_build_id_hex(id, size, hex);
		snprintf(entry, sizeof(entry), ".build-id/%.2s/%s/%s", hex,
			 hex + 2, cs_build_id_leaf(kind));
	} else if (kind == CS_FILE_ELF && name[0] == '/' &&
		   snprintf(entry, sizeof(entry), "%s", name + 1) < (int)sizeof(entry)) {
		p->res->no_build_id++;	/* found again by its path */
	} else {
		if (kind == CS_FILE_KALLSYMS)
			p->res->kallsyms_unkeyed = true;
		return 0;		/* nothing to key it by */
	}
	before = p->names.nr;
	if (!cs_strset_intern(&p->names, entry))
		return cs_error(p->eb, -ENOMEM, "%s", strerror(ENOMEM));
	if (p->names.nr == before)
		return 0;		/* one file under two paths */
	err = add_entry(p, entry, path);
	if (err)
		return err;
	if (kind == CS_FILE_ELF)
		p->res->binaries++;
	else if (kind == CS_FILE_DEBUG)
		p->res->debug_files++;
	else
		p->res->kallsyms = true;
	return 0;
}

int cs_archive_write(struct cs_session *s, const char *path,
		     struct cs_archive_result *res, struct cs_errbuf *eb)
{
	bool to_stdout = !strcmp(path, "-");
	struct packer p = { .res = res, .eb = eb, .m = cs_session_machine(s),
			    .out = to_stdout ? "standard output" : path };
	const struct cs_libarchive *la;
	struct cs_replace out = { .fd = -1 };
	const char *why = NULL;
	int fd = STDOUT_FILENO, err = 0;

	memset(res, 0, sizeof(*res));
	res->missing = (unsigned)cs_machine_files_missing(p.m, &res->first_missing);
	p.la = la = cs_libarchive(&why);
	if (!la)
		return cs_error(eb, -ENOSYS, "%s: cannot write archives: %s", p.out, why);
	if (!to_stdout) {
		/* written whole (see cs_replace_open) */
		err = cs_replace_open(&out, path, 0644);
		if (err)
			return cs_error(eb, err, "%s: cannot create: %s", path,
					strerror(-err));
		fd = out.fd;
	}
	p.a = la->write_new();
	if (!p.a) {
		err = cs_error(eb, -ENOMEM, "%s", strerror(ENOMEM));
		goto out;
	}
	if (la->write_set_format_pax_restricted(p.a) != ARCHIVE_OK ||
	    la->write_add_filter_zstd(p.a) != ARCHIVE_OK ||
	    la->write_open_fd(p.a, fd) != ARCHIVE_OK) {
		err = cs_error(eb, -EIO, "%s: %s", p.out, la->error_string(p.a));
		la->write_free(p.a);
		goto out;
	}
	err = cs_machine_for_each_file(p.m, pack_file, &p);
	if (la->write_close(p.a) != ARCHIVE_OK && !err)
		err = cs_error(eb, -EIO, "%s: %s", p.out, la->error_string(p.a));
	la->write_free(p.a);
	cs_strset_free(&p.names);
out:
	if (to_stdout)
		return err;
	if (err) {
		cs_replace_abort(&out);
		return err;
	}
	err = cs_replace_commit(&out);
	if (err)
		return cs_error(eb, err, "%s: %s", path, strerror(-err));
	return err;
}
