/* tracing_data.c - tracefs files -> perf's tracing data. */
#include "record/tracing_data.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util/errbuf.h"
#include "lib/write/feature.h"
#include "record/event_parse.h"

#define TRACING_VERSION "0.6"

/* A tracefs file whole (its size is unknown until read: stat says 0).
 * Returns 0 with *data malloc'd (NULL for an empty file), or a negative
 * errno. */
static int slurp(const char *path, char **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 0;
	char *p = NULL;

	*data = NULL;
	*len = 0;
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n;

		if (cap - *len < 4096) {
			char *np = realloc(p, cap ? cap * 2 : 8192);

			if (!np) {
				free(p);
				close(fd);
				return -ENOMEM;
			}
			p = np;
			cap = cap ? cap * 2 : 8192;
		}
		n = read(fd, p + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;

			free(p);
			close(fd);
			return err;
		}
		if (!n)
			break;
		*len += (size_t)n;
	}
	close(fd);
	*data = p;
	return 0;
}

/* The file's size in size_bytes (4 or 8) bytes, then the file. A file that
 * is absent is written as empty, as perf does. */
static int put_file(struct cs_fbuf *out, const char *tracefs, const char *rel,
		    int size_bytes, bool must_exist, struct cs_errbuf *eb)
{
	char path[4096], *data;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "%s/%s", tracefs, rel);
	err = slurp(path, &data, &len);
	if (err == -ENOENT && !must_exist)
		len = 0;
	else if (err)
		return cs_error(eb, err, "tracing data: cannot read %s: %s", path,
				strerror(-err));
	if (size_bytes == 4) {
		if (len > UINT32_MAX) {
			free(data);
			return cs_error(eb, -EFBIG, "tracing data: %s is too large", path);
		}
		cs_fbuf_u32(out, (uint32_t)len);
	} else {
		cs_fbuf_u64(out, len);
	}
	cs_fbuf_bytes(out, data, len);
	free(data);
	return 0;
}

static bool in_system(const struct cs_rec_event *e, const char *sys)
{
	return e->tp_system && !strcmp(e->tp_system, sys);
}

/* Whether events[i] is a tracepoint of sys not already among events[0..i):
 * the same tracepoint asked for twice (cs:u and cs:k) is written once. */
static bool first_of_tracepoint(const struct cs_rec_event *ev, size_t i,
				const char *sys)
{
	if (!in_system(&ev[i], sys))
		return false;
	for (size_t j = 0; j < i; j++)
		if (in_system(&ev[j], sys) && !strcmp(ev[j].tp_name, ev[i].tp_name))
			return false;
	return true;
}

/* The tracepoints of one system: a u32 count, then each format. */
static int put_system(struct cs_fbuf *out, const char *tracefs,
		      const struct cs_rec_event *ev, size_t nr, const char *sys,
		      struct cs_errbuf *eb)
{
	uint32_t count = 0;
	int err;

	for (size_t i = 0; i < nr; i++)
		count += first_of_tracepoint(ev, i, sys);
	cs_fbuf_u32(out, count);
	for (size_t i = 0; i < nr; i++) {
		char rel[1024];

		if (!first_of_tracepoint(ev, i, sys))
			continue;
		snprintf(rel, sizeof(rel), "events/%s/%s/format", sys, ev[i].tp_name);
		err = put_file(out, tracefs, rel, 8, true, eb);
		if (err)
			return err;
	}
	return 0;
}

/* The systems other than ftrace, each once, in the order first seen. */
static bool first_of_system(const struct cs_rec_event *ev, size_t i)
{
	if (!ev[i].tp_system || !strcmp(ev[i].tp_system, "ftrace"))
		return false;
	for (size_t j = 0; j < i; j++)
		if (in_system(&ev[j], ev[i].tp_system))
			return false;
	return true;
}

int cs_rec_tracing_data(const char *tracefs, const struct cs_rec_event *ev,
			size_t nr, struct cs_fbuf *out, struct cs_errbuf *eb)
{
	static const char magic[10] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	/* byte order (1: big endian), then sizeof(long) */
	const uint8_t host[2] = { __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__, sizeof(long) };
	uint32_t systems = 0;
	int err;

	cs_fbuf_bytes(out, magic, sizeof(magic));
	cs_fbuf_bytes(out, TRACING_VERSION, sizeof(TRACING_VERSION));
	cs_fbuf_bytes(out, host, sizeof(host));
	cs_fbuf_u32(out, (uint32_t)sysconf(_SC_PAGESIZE));

	cs_fbuf_bytes(out, "header_page", 12);
	err = put_file(out, tracefs, "events/header_page", 8, true, eb);
	if (err)
		return err;
	cs_fbuf_bytes(out, "header_event", 13);
	err = put_file(out, tracefs, "events/header_event", 8, true, eb);
	if (err)
		return err;

	err = put_system(out, tracefs, ev, nr, "ftrace", eb);
	if (err)
		return err;
	for (size_t i = 0; i < nr; i++)
		systems += first_of_system(ev, i);
	cs_fbuf_u32(out, systems);
	for (size_t i = 0; i < nr; i++) {
		if (!first_of_system(ev, i))
			continue;
		cs_fbuf_bytes(out, ev[i].tp_system, strlen(ev[i].tp_system) + 1);
		err = put_system(out, tracefs, ev, nr, ev[i].tp_system, eb);
		if (err)
			return err;
	}

	cs_fbuf_u32(out, 0);		/* kallsyms: perf writes none either */
	err = put_file(out, tracefs, "printk_formats", 4, false, eb);
	if (!err)
		err = put_file(out, tracefs, "saved_cmdlines", 8, false, eb);
	if (!err && out->oom)
		err = cs_error(eb, -ENOMEM, "tracing data: out of memory");
	return err;
}
