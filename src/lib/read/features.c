/* features.c - feature sections (file mode) and HEADER_FEATURE payloads
 * (pipe mode) into struct cs_file_info, event names and build ids.
 *
 * Feature bytes are read in the file's byte order through a small cursor,
 * so a foreign-endian file needs no copy here.
 */
#include "lib/read/reader_int.h"
#include "lib/read/evlist.h"
#include "lib/read/evlist_int.h"
#include "lib/read/bytes.h"
#include "lib/util/cursor.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t fu32(struct cs_cursor *c, const char *what)
{
	return (uint32_t)cs_cursor_get(c, 4, what);
}

/* perf's header string: u32 len (padding included), then the bytes, a NUL
 * among them. Returns a malloc'd copy or NULL (c->why says whether that is
 * an error). */
static char *fstr(struct cs_cursor *c, const char *what)
{
	uint32_t len = fu32(c, what);
	char *s;

	if (!cs_cursor_need(c, len, what))
		return NULL;
	if (len && !memchr(c->p, '\0', len)) {
		c->why = "string without its terminating NUL";
		return NULL;
	}
	s = strndup((const char *)c->p, len);
	if (!s)
		c->why = "out of memory";
	c->p += len;
	return s;
}

static int set_str(const char **dst, struct cs_cursor *c, const char *what)
{
	char *s = fstr(c, what);

	if (!s)
		return c->why ? -EBADMSG : 0;
	free((char *)*dst);
	*dst = s;
	return 0;
}

static int cmdline(struct cs_feat_store *st, struct cs_cursor *c)
{
	uint32_t nr = fu32(c, "cmdline count");
	size_t len = 0, cap = 64;
	char *out = malloc(cap);

	if (!out) {
		c->why = "out of memory";
		return -ENOMEM;
	}
	out[0] = '\0';
	for (uint32_t i = 0; i < nr && !c->why; i++) {
		char *a = fstr(c, "cmdline argument");
		size_t n;

		if (!a)
			break;
		n = strlen(a);
		if (len + n + 2 > cap) {
			char *g;

			while (len + n + 2 > cap)
				cap *= 2;
			g = realloc(out, cap);
			if (!g) {
				free(a);
				c->why = "out of memory";
				break;
			}
			out = g;
		}
		if (len)
			out[len++] = ' ';
		memcpy(out + len, a, n + 1);
		len += n;
		free(a);
	}
	if (c->why) {
		free(out);
		return -EBADMSG;
	}
	free((char *)st->info.cmdline);
	st->info.cmdline = out;
	return 0;
}

/* Names the evlist's events: by id when the description lists ids, else by
 * position (perf writes the descriptions in attr order). With no evlist it
 * only walks the section. */
static int event_desc(struct cs_evlist *l, struct cs_cursor *c)
{
	uint32_t nr = fu32(c, "event count");
	uint32_t asz = fu32(c, "attr size");

	if (!c->why && asz < CS_PERF_ATTR_SIZE_VER0) {
		c->why = "event description attr size under 64";
		return -EBADMSG;
	}
	for (uint32_t i = 0; i < nr && !c->why; i++) {
		const struct cs_evsel *e = NULL;
		uint32_t nr_ids;
		char *name;
		int err;

		if (!cs_cursor_need(c, asz, "event description attr"))
			break;
		c->p += asz;
		nr_ids = fu32(c, "event id count");
		name = fstr(c, "event name");
		if (!name)
			break;
		if (!cs_cursor_need(c, (uint64_t)nr_ids * 8, "event ids exceed the section")) {
			free(name);
			break;
		}
		if (l && nr_ids && cs_evlist_count(l) > 1)
			e = cs_evlist_find(l, cs_ld64x(c->p, c->swap));
		if (l && !e)
			e = cs_evlist_get(l, i);
		c->p += (size_t)nr_ids * 8;
		err = e && name[0] ? cs_evlist_set_name(l, e->index, name) : 0;
		free(name);
		if (err)
			return err;
	}
	return c->why ? -EBADMSG : 0;
}

int cs_feat_add_build_id(struct cs_feat_store *st, const void *rec,
			 size_t size, bool swap, const char **why)
{
	const uint8_t *b = rec;
	struct cs_build_id_entry *e;
	uint16_t misc;
	size_t plen;

	/* header, pid, 24 bytes of id (20 + size byte + padding), filename */
	if (size < 36) {
		*why = "build id record shorter than 36 bytes";
		return -EBADMSG;
	}
	if (st->nr_bids == st->cap_bids) {
		size_t cap = st->cap_bids ? st->cap_bids * 2 : 16;
		void *n = realloc(st->bids, cap * sizeof(*st->bids));

		if (!n)
			return -ENOMEM;
		st->bids = n;
		st->cap_bids = cap;
	}
	misc = cs_ld16(b + 4);
	if (swap)
		misc = __builtin_bswap16(misc);
	e = &st->bids[st->nr_bids];
	e->pid = (int32_t)cs_ld32x(b + 8, swap);
	e->misc = misc;
	memcpy(e->id, b + 12, CS_BUILD_ID_SIZE_MAX);
	e->size = (misc & CS_MISC_BUILD_ID_SIZE) ? b[32] : CS_BUILD_ID_SIZE_MAX;
	if (e->size > CS_BUILD_ID_SIZE_MAX) {
		*why = "build id size over 20";
		return -EBADMSG;
	}
	plen = strnlen((const char *)b + 36, size - 36);
	e->path = strndup((const char *)b + 36, plen);
	if (!e->path)
		return -ENOMEM;
	st->nr_bids++;
	return 0;
}

static int build_ids(struct cs_feat_store *st, struct cs_cursor *c)
{
	while (c->p < c->end) {
		uint16_t sz;
		int err;

		if (!cs_cursor_need(c, 8, "build id header"))
			return -EBADMSG;
		sz = cs_ld16(c->p + 6);
		if (c->swap)
			sz = __builtin_bswap16(sz);
		if (sz < 8) {
			c->why = "build id record claims under 8 bytes";
			return -EBADMSG;
		}
		if (!cs_cursor_need(c, sz, "build id record exceeds the section"))
			return -EBADMSG;
		err = cs_feat_add_build_id(st, c->p, sz, c->swap, &c->why);
		if (err)
			return err;
		c->p += sz;
	}
	return 0;
}

int cs_feat_parse(struct cs_feat_store *st, struct cs_evlist *l, int feat,
		  const void *data, size_t size, bool swap, size_t slack,
		  const char **why)
{
	struct cs_cursor c = { data, (const uint8_t *)data + size, swap, NULL };
	struct cs_file_info *in = &st->info;
	bool parsed = true;
	int err = 0;

	if (feat < 0 || feat >= CS_FEAT_LAST)
		return 0;		/* newer than us: kept nowhere, harmless */
	st->raw[feat] = data;
	st->raw_size[feat] = size;
	switch (feat) {
	case CS_FEAT_HOSTNAME:	err = set_str(&in->hostname, &c, "hostname"); break;
	case CS_FEAT_OSRELEASE:	err = set_str(&in->os_release, &c, "os release"); break;
	case CS_FEAT_VERSION:	err = set_str(&in->perf_version, &c, "perf version"); break;
	case CS_FEAT_ARCH:	err = set_str(&in->arch, &c, "arch"); break;
	case CS_FEAT_CPUDESC:	err = set_str(&in->cpudesc, &c, "cpu description"); break;
	case CS_FEAT_CMDLINE:	err = cmdline(st, &c); break;
	case CS_FEAT_NRCPUS:
		in->nr_cpus_avail = fu32(&c, "nr cpus");
		in->nr_cpus_online = fu32(&c, "nr cpus online");
		break;
	case CS_FEAT_TOTAL_MEM:
		in->total_mem_kb = cs_cursor_get(&c, 8, "total memory");
		break;
	case CS_FEAT_EVENT_DESC:
		err = event_desc(l, &c);
		break;
	case CS_FEAT_BUILD_ID:
		err = build_ids(st, &c);
		break;
	case CS_FEAT_CLOCK_DATA:
		fu32(&c, "clock data version");
		in->clockid = fu32(&c, "clock data clockid");
		parsed = false;		/* later versions may add fields */
		break;
	default:
		parsed = false;
		break;
	}
	/* a section that is not its feature's bytes (a file's section read
	 * shifted, a stream's record whose size swallowed what followed) */
	if (parsed && !c.why && (size_t)(c.end - c.p) > slack)
		c.why = "bytes left over after the feature's fields";
	if (c.why) {
		*why = c.why;
		return err && err != -EBADMSG ? err : -EBADMSG;
	}
	return err;
}

void cs_feat_store_free(struct cs_feat_store *st)
{
	free((char *)st->info.hostname);
	free((char *)st->info.os_release);
	free((char *)st->info.perf_version);
	free((char *)st->info.arch);
	free((char *)st->info.cpudesc);
	free((char *)st->info.cmdline);
	for (int i = 0; i < CS_FEAT_LAST; i++)
		free(st->owned[i]);
	for (size_t i = 0; i < st->nr_bids; i++)
		free(st->bids[i].path);
	free(st->bids);
	memset(st, 0, sizeof(*st));
}
