/* evlist.c - events of a profile, their ids, and the id/time layout. */
#include "lib/read/evlist.h"
#include "lib/read/evlist_int.h"
#include "abi/sample_fields.h"
#include "lib/read/bytes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct cs_perf_attr *cs_evsel_attr(const struct cs_evsel *e)
{
	return &((const struct evsel *)e)->attr;
}

size_t cs_attr_trailer_size(const struct cs_perf_attr *attr)
{
	if (!(attr->flags & CS_ATTR_SAMPLE_ID_ALL))
		return 0;
	return cs_fields_size(cs_trailer, CS_TRAILER_NR, attr->sample_type);
}

void cs_attr_copy(struct cs_perf_attr *out, const struct cs_perf_attr *attr)
{
	size_t n = attr->size ? attr->size : CS_PERF_ATTR_SIZE_VER0;

	if (n > sizeof(*out))
		n = sizeof(*out);
	memset(out, 0, sizeof(*out));
	memcpy(out, attr, n);
}

/* u64 index in a sample of the first field bit puts there, or -1. */
static int sample_pos(uint64_t st, uint64_t bit)
{
	long at = cs_fields_at(cs_sample_head, CS_SAMPLE_HEAD_NR, st, bit);

	return at < 0 ? -1 : (int)(at / 8);
}

/* Where a sample names its event: IDENTIFIER, at a place that is the same
 * whatever the event, when there is one, else ID; -1 for neither. */
static int sample_id_pos(uint64_t st)
{
	if (st & CS_SAMPLE_IDENTIFIER)
		return sample_pos(st, CS_SAMPLE_IDENTIFIER);
	return sample_pos(st, CS_SAMPLE_ID);
}

/* Bytes from a record's end (tsize bytes of trailer) to the field bit
 * puts in the trailer, or 0 for none. */
static size_t trailer_back(uint64_t st, size_t tsize, uint64_t bit)
{
	long at = cs_fields_at(cs_trailer, CS_TRAILER_NR, st, bit);

	if (!tsize || at < 0)
		return 0;
	return tsize - (size_t)at;
}

/* Where a trailer names its event: IDENTIFIER, at the same place from the
 * end whatever the event, when there is one, else ID; 0 for neither. */
static size_t trailer_id_back(uint64_t st, size_t tsize)
{
	if (st & CS_SAMPLE_IDENTIFIER)
		return trailer_back(st, tsize, CS_SAMPLE_IDENTIFIER);
	return trailer_back(st, tsize, CS_SAMPLE_ID);
}

static void layout_of(const struct cs_perf_attr *a, struct cs_evsel_layout *l)
{
	uint64_t st = a->sample_type;

	l->sample_type = st;
	l->read_format = a->read_format;
	l->attr_flags = a->flags;
	l->trailer_size = cs_attr_trailer_size(a);
	l->sample_time_pos = sample_pos(st, CS_SAMPLE_TIME);
	l->sample_tid_pos = sample_pos(st, CS_SAMPLE_TID);
	l->sample_fixed_size = cs_fields_size(cs_sample_head, CS_SAMPLE_HEAD_NR, st);
	l->trailer_time_back = trailer_back(st, l->trailer_size, CS_SAMPLE_TIME);
	l->sample_time_end = l->sample_time_pos < 0 ? UINT64_MAX :
			     16 + 8 * (uint64_t)l->sample_time_pos;
	l->trailer_time_min = l->trailer_time_back ? 8 + l->trailer_size :
			      UINT64_MAX;
}

int cs_evlist_new(struct cs_evlist **out)
{
	struct cs_evlist *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->id_pos = -1;
	*out = l;
	return 0;
}

static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses",
	"branch-instructions", "branch-misses", "bus-cycles",
	"stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles",
};

static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches",
	"cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
	"emulation-faults", "dummy", "bpf-output", "cgroup-switches",
};

static char *derive_name(const struct cs_perf_attr *a)
{
	char buf[64];

	if (a->type == CS_PERF_TYPE_HARDWARE &&
	    a->config < sizeof(hw_names) / sizeof(hw_names[0]))
		return strdup(hw_names[a->config]);
	if (a->type == CS_PERF_TYPE_SOFTWARE &&
	    a->config < sizeof(sw_names) / sizeof(sw_names[0]))
		return strdup(sw_names[a->config]);
	switch (a->type) {
	case CS_PERF_TYPE_TRACEPOINT:
		snprintf(buf, sizeof(buf), "tracepoint:%llu",
			 (unsigned long long)a->config);
		break;
	case CS_PERF_TYPE_RAW:
		snprintf(buf, sizeof(buf), "r%llx", (unsigned long long)a->config);
		break;
	case CS_PERF_TYPE_BREAKPOINT:
		snprintf(buf, sizeof(buf), "mem:0x%llx",
			 (unsigned long long)a->config1);
		break;
	default:
		snprintf(buf, sizeof(buf), "unknown:%u:0x%llx", a->type,
			 (unsigned long long)a->config);
	}
	return strdup(buf);
}

static int tab_grow(struct cs_evlist *l)
{
	size_t cap = l->tab_cap ? l->tab_cap * 2 : 64;
	struct id_slot *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < l->tab_cap; i++) {
		struct id_slot *s = &l->tab[i];
		size_t h;

		if (!s->index_plus1)
			continue;
		for (h = cs_evlist_id_hash(s->id, cap); t[h].index_plus1; h = (h + 1) & (cap - 1))
			;
		t[h] = *s;
	}
	free(l->tab);
	l->tab = t;
	l->tab_cap = cap;
	return 0;
}

/* First owner of an id wins: perf files never reuse an id across events. */
static int tab_insert(struct cs_evlist *l, uint64_t id, size_t index)
{
	size_t h;

	if ((l->tab_used + 1) * 2 > l->tab_cap) {
		int err = tab_grow(l);

		if (err)
			return err;
	}
	for (h = cs_evlist_id_hash(id, l->tab_cap); l->tab[h].index_plus1;
	     h = (h + 1) & (l->tab_cap - 1))
		if (l->tab[h].id == id)
			return 0;
	l->tab[h].id = id;
	l->tab[h].index_plus1 = (uint32_t)index + 1;
	l->tab_used++;
	return 0;
}

#define DIRECT_MAX	4096

/* Rebuilds l->direct from the table after ids were added. */
static int direct_build(struct cs_evlist *l)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	const struct cs_evsel **d;

	free(l->direct);
	l->direct = NULL;
	for (size_t i = 0; i < l->tab_cap; i++) {
		if (!l->tab[i].index_plus1)
			continue;
		lo = l->tab[i].id < lo ? l->tab[i].id : lo;
		hi = l->tab[i].id > hi ? l->tab[i].id : hi;
	}
	if (lo > hi || hi - lo >= DIRECT_MAX)
		return 0;
	d = calloc(hi - lo + 1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < l->tab_cap; i++)
		if (l->tab[i].index_plus1)
			d[l->tab[i].id - lo] = &l->ev[l->tab[i].index_plus1 - 1]->pub;
	l->direct = d;
	l->direct_base = lo;
	l->direct_span = hi - lo + 1;
	return 0;
}

static int ids_append(struct cs_evlist *l, size_t index, const uint64_t *ids,
		      size_t nr)
{
	struct evsel *e = l->ev[index];

	if (nr > e->cap_ids - e->nr_ids) {
		size_t cap = e->cap_ids ? e->cap_ids : 4;
		uint64_t *n;

		while (cap - e->nr_ids < nr)
			cap *= 2;
		n = realloc(e->ids, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		e->ids = n;
		e->cap_ids = cap;
	}
	for (size_t i = 0; i < nr; i++) {
		uint64_t id = cs_ld64(&ids[i]);	/* ids may sit unaligned in a file */
		int err = tab_insert(l, id, index);

		if (err)
			return err;
		e->ids[e->nr_ids++] = id;
	}
	e->pub.ids = e->ids;
	e->pub.nr_ids = e->nr_ids;
	return nr ? direct_build(l) : 0;
}

int cs_evlist_add(struct cs_evlist *l, const struct cs_perf_attr *attr,
		  const char *name, const uint64_t *ids, size_t nr_ids)
{
	struct cs_perf_attr a;
	struct evsel *e;
	int id_all, err;

	cs_attr_copy(&a, attr);
	id_all = !!(a.flags & CS_ATTR_SAMPLE_ID_ALL);
	if (l->nr) {
		if (id_all != l->sample_id_all ||
		    sample_id_pos(a.sample_type) != l->id_pos ||
		    trailer_id_back(a.sample_type, cs_attr_trailer_size(&a)) != l->id_back)
			return -EINVAL;
	}
	if (l->nr == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4;
		struct evsel **n = realloc(l->ev, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		l->ev = n;
		l->cap = cap;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->attr = a;
	layout_of(&e->attr, &e->lay);
	e->name = name ? strdup(name) : derive_name(&e->attr);
	if (!e->name) {
		free(e);
		return -ENOMEM;
	}
	e->pub.type = a.type;
	e->pub.config = a.config;
	e->pub.sample_type = a.sample_type;
	e->pub.sample_period = a.sample_period;
	e->pub.freq = a.flags & CS_ATTR_FREQ;
	e->pub.sample_regs_user = a.sample_regs_user;
	e->pub.sample_regs_intr = a.sample_regs_intr;
	e->pub.name = e->name;
	e->pub.index = (unsigned int)l->nr;
	l->ev[l->nr] = e;
	if (!l->nr) {
		l->sample_id_all = id_all;
		l->id_pos = sample_id_pos(a.sample_type);
		l->id_back = trailer_id_back(a.sample_type, e->lay.trailer_size);
	}
	l->nr++;
	l->same = &l->ev[0]->lay;
	for (size_t i = 1; i < l->nr; i++)
		if (l->ev[i]->lay.sample_type != l->ev[0]->lay.sample_type ||
		    l->ev[i]->lay.trailer_size != l->ev[0]->lay.trailer_size)
			l->same = NULL;
	err = ids_append(l, l->nr - 1, ids, nr_ids);
	return err;
}

int cs_evlist_set_name(struct cs_evlist *l, size_t index, const char *name)
{
	char *n;

	if (index >= l->nr)
		return -EINVAL;
	n = strdup(name);
	if (!n)
		return -ENOMEM;
	free(l->ev[index]->name);
	l->ev[index]->name = n;
	l->ev[index]->pub.name = n;
	return 0;
}

int cs_evlist_add_ids(struct cs_evlist *l, size_t index, const uint64_t *ids,
		      size_t nr_ids)
{
	if (index >= l->nr)
		return -EINVAL;
	return ids_append(l, index, ids, nr_ids);
}

size_t cs_evlist_count(const struct cs_evlist *l)
{
	return l->nr;
}

const struct cs_evsel *cs_evlist_get(const struct cs_evlist *l, size_t i)
{
	return i < l->nr ? &l->ev[i]->pub : NULL;
}

const struct cs_evsel *cs_evlist_find(const struct cs_evlist *l, uint64_t id)
{
	if (l->nr == 1)
		return &l->ev[0]->pub;
	return cs_evlist_find_id(l, id);
}

static inline const struct cs_evsel *event_of(const struct cs_evlist *l,
					      uint32_t type, const void *rec,
					      size_t size, int swap)
{
	if (!l->nr || size < 8)
		return NULL;
	if (type >= CS_RECORD_HEADER_ATTR)
		return NULL;		/* user records name no event */
	if (l->nr == 1)
		return &l->ev[0]->pub;
	if (type == CS_RECORD_SAMPLE) {
		if (l->id_pos < 0)
			return &l->ev[0]->pub;	/* no id: perf takes the first */
		if ((size_t)(l->id_pos + 2) * 8 > size)
			return NULL;
		return cs_evlist_find_id(l, cs_ld64x((const char *)rec + 8 + l->id_pos * 8,
					   swap));
	}
	if (!l->id_back)
		return &l->ev[0]->pub;
	if (size < 8 + l->id_back)
		return NULL;
	return cs_evlist_find_id(l, cs_ld64x((const char *)rec + size - l->id_back, swap));
}

const struct cs_evsel *cs_evlist_sample_event(const struct cs_evlist *l,
					      const void *rec, size_t size)
{
	return cs_evlist_sample_event_inline(l, rec, size);
}

const struct cs_evsel *cs_evlist_event_of_x(const struct cs_evlist *l,
					    uint32_t type, const void *rec,
					    size_t size, int swap)
{
	return event_of(l, type, rec, size, swap);
}

const struct cs_evsel *cs_evlist_event_of(const struct cs_evlist *l,
					  const void *rec, size_t size)
{
	if (size < 8)
		return NULL;
	return event_of(l, cs_ld32(rec), rec, size, 0);
}

uint64_t cs_evlist_record_time(const struct cs_evlist *l, const void *rec,
			       size_t size)
{
	const struct cs_evsel_layout *lay = l->same;

	if (!lay || size < 8 || cs_ld32(rec) >= CS_RECORD_HEADER_ATTR) {
		const struct cs_evsel *e = size < 8 ? NULL :
			event_of(l, cs_ld32(rec), rec, size, 0);

		if (!e)
			return CS_NO_TIME;
		lay = cs_evsel_layout(e);
	}
	return cs_layout_record_time(lay, rec, size, cs_ld32(rec));
}

void cs_evlist_free(struct cs_evlist *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nr; i++) {
		free(l->ev[i]->name);
		free(l->ev[i]->ids);
		free(l->ev[i]);
	}
	free(l->ev);
	free(l->tab);
	free(l->direct);
	free(l);
}
