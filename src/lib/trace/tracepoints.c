/* tracepoints.c - perf's tracing data into libtraceevent; fields printed
 * and read from raw sample data. */
#include "lib/trace/tracepoints.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <traceevent/event-parse.h>

#include "lib/util/cursor.h"

/* A format whose fields reach beyond this is not trusted; every read of a
 * sample goes through a zeroed scratch buffer this large plus room for
 * what a __data_loc (16-bit offset and length) can point at. */
#define FIELDS_END_MAX	(64u << 10)
#define SCRATCH_SIZE	(FIELDS_END_MAX + (128u << 10))
#define CACHE_SLOTS	256

struct tp_slot {			/* what a tracepoint id resolved to */
	uint64_t id;
	struct tep_event *event;	/* NULL: unknown or untrusted */
	char *name;			/* "system:name" */
	bool used;
};

struct cs_tracepoints {
	struct tep_handle *tep;
	struct trace_seq seq;
	unsigned char *scratch;		/* SCRATCH_SIZE, zero beyond the copy */
	size_t scratch_dirty;
	struct tp_slot cache[CACHE_SLOTS];
};

/* ---- parsing the tracing data ------------------------------------------- */

struct td_cursor {
	struct cs_cursor c;
	struct tep_handle *tep;
};

static uint64_t td_num(struct td_cursor *t, unsigned int width, const char *what)
{
	return cs_cursor_get(&t->c, width, what);
}

/* A NUL-terminated string of at most max bytes. */
static const char *td_string(struct td_cursor *t, size_t max, const char *what)
{
	const uint8_t *p = t->c.p;
	size_t left = (size_t)(t->c.end - p), n;

	if (t->c.why)
		return NULL;
	n = strnlen((const char *)p, left < max ? left : max);
	if (n == left || n == max) {
		t->c.why = what;
		return NULL;
	}
	t->c.p += n + 1;
	return (const char *)p;
}

/* size bytes as a NUL-terminated copy (libtraceevent's parsers want
 * one), or NULL. */
static char *td_copy(struct td_cursor *t, uint64_t size, const char *what)
{
	char *s;

	if (!cs_cursor_need(&t->c, size, what))
		return NULL;
	s = malloc((size_t)size + 1);
	if (!s) {
		t->c.why = "out of memory";
		return NULL;
	}
	memcpy(s, t->c.p, (size_t)size);
	s[size] = '\0';
	t->c.p += size;
	return s;
}

/* One event format; an event libtraceevent cannot parse is left out, as
 * perf leaves it out. */
static void td_event(struct td_cursor *t, const char *sys)
{
	uint64_t size = td_num(t, 8, "an event format's size");
	char *fmt = td_copy(t, size, "an event format");

	if (fmt)
		tep_parse_event(t->tep, fmt, (unsigned long)size, sys);
	free(fmt);
}

static int parse(struct td_cursor *t)
{
	static const char magic[10] = { 23, 8, 68, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const char *version;
	uint64_t size, count;
	int long_size, big;
	char *buf;

	if (!cs_cursor_need(&t->c, sizeof(magic), "the magic") ||
	    memcmp(t->c.p, magic, sizeof(magic))) {
		t->c.why = "no tracing data magic";
		return -EBADMSG;
	}
	t->c.p += sizeof(magic);
	version = td_string(t, 16, "the version");
	if (!cs_cursor_need(&t->c, 2, "byte order and long size"))
		return -EBADMSG;
	big = t->c.p[0];
	long_size = t->c.p[1];
	t->c.p += 2;
	if (big > 1 || (long_size != 4 && long_size != 8)) {
		t->c.why = "byte order or long size";
		return -EBADMSG;
	}
	t->c.swap = big != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
	tep_set_file_bigendian(t->tep, big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(t->tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ?
				TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(t->tep, long_size);
	tep_set_page_size(t->tep, (int)td_num(t, 4, "the page size"));

	if (!cs_cursor_need(&t->c, 12, "header_page") || memcmp(t->c.p, "header_page", 12)) {
		t->c.why = t->c.why ? t->c.why : "header_page";
		return -EBADMSG;
	}
	t->c.p += 12;
	size = td_num(t, 8, "header_page's size");
	buf = td_copy(t, size, "header_page");
	/* the commit field's size is the kernel's long, as perf takes it */
	if (buf && !tep_parse_header_page(t->tep, buf, (unsigned long)size, long_size))
		tep_set_long_size(t->tep, tep_get_header_page_size(t->tep));
	free(buf);
	if (!cs_cursor_need(&t->c, 13, "header_event") || memcmp(t->c.p, "header_event", 13)) {
		t->c.why = t->c.why ? t->c.why : "header_event";
		return -EBADMSG;
	}
	t->c.p += 13;
	cs_cursor_skip(&t->c, td_num(t, 8, "header_event's size"), "header_event");

	count = td_num(t, 4, "the number of ftrace formats");
	for (uint64_t i = 0; i < count && !t->c.why; i++)
		td_event(t, "ftrace");
	count = td_num(t, 4, "the number of systems");
	for (uint64_t i = 0; i < count && !t->c.why; i++) {
		const char *sys = td_string(t, 256, "a system's name");
		uint64_t n = td_num(t, 4, "the number of a system's formats");

		for (uint64_t k = 0; k < n && !t->c.why; k++)
			td_event(t, sys);
	}

	size = td_num(t, 4, "kallsyms' size");
	buf = td_copy(t, size, "kallsyms");
	if (buf && size)
		tep_parse_kallsyms(t->tep, buf);
	free(buf);
	size = td_num(t, 4, "printk formats' size");
	buf = td_copy(t, size, "printk formats");
	if (buf && size)
		tep_parse_printk_formats(t->tep, buf);
	free(buf);
	if (!t->c.why && version && strtod(version, NULL) >= 0.6) {
		size = td_num(t, 8, "saved command lines' size");
		buf = td_copy(t, size, "saved command lines");
		if (buf && size)
			tep_parse_saved_cmdlines(t->tep, buf);
		free(buf);
	}
	if (t->c.why)
		return strcmp(t->c.why, "out of memory") ? -EBADMSG : -ENOMEM;
	return 0;
}

int cs_tracepoints_new(const void *data, size_t size,
		       struct cs_tracepoints **out, const char **why)
{
	struct cs_tracepoints *tp = calloc(1, sizeof(*tp));
	struct td_cursor t = { .c = { data, (const uint8_t *)data + size, false, NULL } };
	int err;

	*out = NULL;
	*why = "out of memory";
	if (!tp)
		return -ENOMEM;
	/* the library prints nothing; a format it cannot parse is skipped */
	tep_set_loglevel(TEP_LOG_NONE);
	tp->tep = tep_alloc();
	tp->scratch = calloc(1, SCRATCH_SIZE);
	if (!tp->tep || !tp->scratch) {
		cs_tracepoints_free(tp);
		return -ENOMEM;
	}
	tep_set_flag(tp->tep, TEP_NSEC_OUTPUT);
	trace_seq_init(&tp->seq);
	t.tep = tp->tep;
	err = parse(&t);
	if (err) {
		*why = t.c.why;
		cs_tracepoints_free(tp);
		return err;
	}
	*why = NULL;
	*out = tp;
	return 0;
}

void cs_tracepoints_free(struct cs_tracepoints *tp)
{
	if (!tp)
		return;
	for (size_t i = 0; i < CACHE_SLOTS; i++)
		free(tp->cache[i].name);
	if (tp->tep) {
		trace_seq_destroy(&tp->seq);
		tep_free(tp->tep);
	}
	free(tp->scratch);
	free(tp);
}

/* ---- events -------------------------------------------------------------- */

static bool fields_inside(const struct tep_format_field *f)
{
	for (; f; f = f->next)
		if (f->offset < 0 || f->size < 0 ||
		    (unsigned int)f->offset + (unsigned int)f->size > FIELDS_END_MAX)
			return false;
	return true;
}

/* The event of id if the file describes it and its fields are sane. */
static struct tp_slot *lookup(struct cs_tracepoints *tp, uint64_t id)
{
	struct tp_slot *s = &tp->cache[id % CACHE_SLOTS];
	struct tep_event *ev;

	if (s->used && s->id == id)
		return s;
	free(s->name);
	memset(s, 0, sizeof(*s));
	s->used = true;
	s->id = id;
	ev = id <= INT32_MAX ? tep_find_event(tp->tep, (int)id) : NULL;
	if (ev && fields_inside(ev->format.common_fields) &&
	    fields_inside(ev->format.fields) &&
	    asprintf(&s->name, "%s:%s", ev->system, ev->name) >= 0)
		s->event = ev;
	else
		s->name = NULL;
	return s;
}

/* The end of the event's last field: a sample shorter than that is cut. */
static size_t fields_end(const struct tep_event *ev)
{
	const struct tep_format_field *lists[2] = {
		ev->format.common_fields, ev->format.fields,
	};
	size_t end = 0;

	for (int i = 0; i < 2; i++)
		for (const struct tep_format_field *f = lists[i]; f; f = f->next)
			if ((size_t)f->offset + (size_t)f->size > end)
				end = (size_t)f->offset + (size_t)f->size;
	return end;
}

const char *cs_tracepoints_name(struct cs_tracepoints *tp, uint64_t id)
{
	return lookup(tp, id)->name;
}

long cs_tracepoints_print(struct cs_tracepoints *tp, uint64_t id, int cpu,
			  const void *raw, size_t raw_size, const char **text)
{
	struct tp_slot *s = lookup(tp, id);
	struct tep_record rec;
	size_t n;

	*text = "";
	if (!s->event)
		return -ENOENT;
	if (raw_size < fields_end(s->event))
		return -EBADMSG;
	/* libtraceevent trusts offsets inside the data (dynamic strings and
	 * arrays): it reads a copy followed by zeros */
	n = raw_size < FIELDS_END_MAX ? raw_size : FIELDS_END_MAX;
	if (tp->scratch_dirty > n)
		memset(tp->scratch + n, 0, tp->scratch_dirty - n);
	memcpy(tp->scratch, raw, n);
	tp->scratch_dirty = n;

	memset(&rec, 0, sizeof(rec));
	rec.cpu = cpu;
	rec.size = (int)n;
	rec.data = tp->scratch;
	trace_seq_reset(&tp->seq);
	tep_print_event(tp->tep, &tp->seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&tp->seq);
	if (tp->seq.state != TRACE_SEQ__GOOD)
		return -ENOMEM;
	*text = tp->seq.buffer;
	return (long)tp->seq.len;
}

const struct cs_tp_field *cs_tracepoints_field(struct cs_tracepoints *tp,
					       uint64_t id, const char *name)
{
	struct tp_slot *s = lookup(tp, id);
	struct tep_format_field *f;

	if (!s->event)
		return NULL;
	f = tep_find_field(s->event, name);
	if (!f || (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_STRING |
			       TEP_FIELD_IS_DYNAMIC)) ||
	    (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8))
		return NULL;
	return (const struct cs_tp_field *)f;
}

int cs_tp_field_read(const struct cs_tp_field *cf, const void *raw,
		     size_t raw_size, uint64_t *v)
{
	struct tep_format_field *f = (struct tep_format_field *)cf;
	unsigned long long val;

	if ((size_t)f->offset + (size_t)f->size > raw_size)
		return -EBADMSG;
	if (tep_read_number_field(f, raw, &val))
		return -EBADMSG;
	*v = val;
	return 0;
}
