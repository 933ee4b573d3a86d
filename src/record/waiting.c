/* waiting.c - per-tid cookie tracking.
 *
 * Entries are never removed: a tid's last released cookie is what tells a
 * late sample from a new wait, and a recording sees few enough threads
 * that keeping them is cheaper than tombstones.
 */
#include "record/waiting.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "abi/perf_abi.h"
#include "lib/util/u32map.h"
#include "record/peek.h"

struct tid_entry {
	bool has_done;
	uint32_t nwaiting;		/* samples waiting on `cookie` */
	uint64_t cookie;		/* valid when nwaiting > 0 */
	uint64_t done;			/* last cookie a record released */
};

struct cs_waiting {
	uint64_t sample_type;
	struct cs_u32map tab;		/* tid -> struct tid_entry, ours */
	uint64_t samples;		/* sum of nwaiting */
	uint64_t cookies;		/* entries with nwaiting > 0 */
	struct cs_waiting_stats st;
};

int cs_waiting_new(uint64_t sample_type, struct cs_waiting **out)
{
	struct cs_waiting *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->sample_type = sample_type;
	*out = w;
	return 0;
}

/* The entry of tid; created when `create`, else NULL if absent. */
static struct tid_entry *lookup(struct cs_waiting *w, uint32_t tid, bool create,
				int *err)
{
	struct tid_entry *e;
	bool created;

	if (!create)
		return cs_u32map_get(&w->tab, tid);
	e = cs_u32map_get_new(&w->tab, tid, sizeof(*e), &created);
	if (!e)
		*err = -ENOMEM;
	return e;
}

static void give_up(struct cs_waiting *w, struct tid_entry *e, uint64_t *why)
{
	if (!e->nwaiting)
		return;
	*why += e->nwaiting;
	w->samples -= e->nwaiting;
	w->cookies--;
	e->nwaiting = 0;
}

static int see_sample(struct cs_waiting *w, const void *rec, size_t size)
{
	struct cs_rec_sample s;
	struct tid_entry *e;
	uint64_t cookie;
	int err = cs_rec_peek_sample(w->sample_type, rec, size, &s);

	if (err)
		return err == -ENOTSUP ? 0 : err;
	if (s.chain_nr < 2 || s.chain[s.chain_nr - 2] != CS_CONTEXT_USER_DEFERRED)
		return 0;
	cookie = s.chain[s.chain_nr - 1];
	w->st.deferred_samples++;
	err = 0;
	e = lookup(w, s.tid, true, &err);
	if (!e)
		return err;
	if (e->has_done && e->done == cookie) {
		w->st.late++;
		return 0;
	}
	if (e->nwaiting && e->cookie != cookie)
		give_up(w, e, &w->st.superseded);
	if (!e->nwaiting) {
		e->cookie = cookie;
		w->cookies++;
	}
	e->nwaiting++;
	w->samples++;
	return 0;
}

static int see_deferred(struct cs_waiting *w, const void *rec, size_t size)
{
	uint32_t pid, tid;
	uint64_t cookie;
	struct tid_entry *e;
	int err;

	if (size < sizeof(struct cs_perf_event_header) + 16)
		return -EBADMSG;
	err = cs_rec_peek_trailer_tid(w->sample_type, rec, size, &pid, &tid);
	if (err)
		return err == -ENOENT ? 0 : err;
	memcpy(&cookie, (const unsigned char *)rec + sizeof(struct cs_perf_event_header), 8);
	w->st.records++;
	err = 0;
	e = lookup(w, tid, true, &err);
	if (!e)
		return err;
	if (e->nwaiting && e->cookie == cookie) {
		w->st.released += e->nwaiting;
		w->samples -= e->nwaiting;
		w->cookies--;
		e->nwaiting = 0;
	} else if (!(e->has_done && e->done == cookie)) {
		w->st.orphans++;
	}
	e->has_done = true;
	e->done = cookie;
	return 0;
}

static int see_exit(struct cs_waiting *w, const void *rec, size_t size)
{
	struct tid_entry *e;
	uint32_t tid;

	/* header, pid, ppid, tid, ptid, time */
	if (size < sizeof(struct cs_perf_event_header) + 24)
		return -EBADMSG;
	memcpy(&tid, (const unsigned char *)rec + sizeof(struct cs_perf_event_header) + 8, 4);
	e = lookup(w, tid, false, NULL);
	if (e)
		give_up(w, e, &w->st.exited);
	return 0;
}

int cs_waiting_see(struct cs_waiting *w, const void *rec, size_t size)
{
	struct cs_perf_event_header h;

	if (size < sizeof(h))
		return -EBADMSG;
	memcpy(&h, rec, sizeof(h));
	switch (h.type) {
	case CS_RECORD_SAMPLE:
		return see_sample(w, rec, size);
	case CS_RECORD_CALLCHAIN_DEFERRED:
		return see_deferred(w, rec, size);
	case CS_RECORD_EXIT:
		return see_exit(w, rec, size);
	}
	return 0;
}

uint64_t cs_waiting_samples(const struct cs_waiting *w)
{
	return w->samples;
}

uint64_t cs_waiting_cookies(const struct cs_waiting *w)
{
	return w->cookies;
}

const struct cs_waiting_stats *cs_waiting_stats(const struct cs_waiting *w)
{
	return &w->st;
}

void cs_waiting_free(struct cs_waiting *w)
{
	if (!w)
		return;
	cs_u32map_free(&w->tab, free);
	free(w);
}
