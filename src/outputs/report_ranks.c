/* report_ranks.c - report's sort: each key ranked once, entries sorted on
 * packed integer keys (see report_int.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/big_alloc.h"
#include "lib/util/jobs.h"
#include "lib/util/keysort.h"
#include "outputs/report_int.h"

/* The state column's order: its text's */
uint32_t report_state_rank(enum cs_off_cpu_state s)
{
	uint32_t rank = 0;

	for (int o = 0; o < CS_OFF_CPU__COUNT; o++)
		rank += strcmp(report_state_text((enum cs_off_cpu_state)o),
			       report_state_text(s)) < 0;
	return rank;
}

struct rank_item {
	const char *text;		/* what it sorts by, or NULL: by num */
	uint64_t num;
	uint32_t id;
};

static int cmp_rank_text(const void *pa, const void *pb)
{
	const struct rank_item *a = pa, *b = pb;

	return strcmp(a->text, b->text);
}

/* Ranks items sorted by text into rank[id]; returns the next free rank. */
static uint32_t rank_sorted_text(const struct rank_item *it, size_t n,
				 uint32_t next, uint32_t *rank)
{
	for (size_t i = 0; i < n; i++) {
		if (i && strcmp(it[i - 1].text, it[i].text))
			next++;
		rank[it[i].id] = next;
	}
	return next + 1;
}

static int rank_comms(const struct cs_report *r, struct ranks *rk)
{
	size_t n = cs_agg_nr_frames(r->threads);
	struct rank_item *it = malloc((n ? n : 1) * sizeof(*it));

	rk->comm = malloc((n ? n : 1) * sizeof(*rk->comm));
	rk->comm_len = malloc((n ? n : 1) * sizeof(*rk->comm_len));
	if (!it || !rk->comm || !rk->comm_len) {
		free(it);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		it[i] = (struct rank_item){ report_thread_comm(r, (uint32_t)i),
					    0, (uint32_t)i };
		rk->comm_len[i] = (uint32_t)strlen(it[i].text);
	}
	qsort(it, n, sizeof(*it), cmp_rank_text);
	rank_sorted_text(it, n, 0, rk->comm);
	free(it);
	return 0;
}

static int rank_dsos(const struct cs_report *r, struct ranks *rk)
{
	size_t n = cs_agg_nr_frames(r->stacks), nr_names;
	struct cs_agg *names = NULL;
	struct rank_item *it = NULL;
	uint32_t *name_of = cs_big_alloc((n ? n : 1) * sizeof(*name_of)), *name_rank = NULL;
	const char *last = NULL;
	uint32_t last_id = 0;
	uint16_t last_len = 0;
	int err = name_of ? cs_agg_new(&names) : -ENOMEM;

	rk->dso_len = cs_big_alloc((n ? n : 1) * sizeof(*rk->dso_len));
	if (!rk->dso_len)
		err = -ENOMEM;
	/* the frames of one dso mostly share its string: skip the hash */
	for (size_t i = 0; !err && i < n; i++) {
		const char *d = cs_agg_frame_key(r->stacks, (uint32_t)i)->dso;
		struct cs_agg_key k;
		size_t len;

		if (i && d == last) {
			name_of[i] = last_id;
			rk->dso_len[i] = last_len;
			continue;
		}
		k = (struct cs_agg_key){ .dso = report_dso_short(d) };
		err = cs_agg_frame(names, &k, NULL, &name_of[i]);
		len = strlen(k.dso);
		last = d;
		last_id = name_of[i];
		last_len = rk->dso_len[i] = (uint16_t)(len > 1023 ? 1023 : len);
	}
	nr_names = names ? cs_agg_nr_frames(names) : 0;
	if (!err) {
		it = malloc((nr_names ? nr_names : 1) * sizeof(*it));
		name_rank = malloc((nr_names ? nr_names : 1) * sizeof(*name_rank));
		if (!it || !name_rank)
			err = -ENOMEM;
	}
	if (!err) {
		for (size_t i = 0; i < nr_names; i++)
			it[i] = (struct rank_item){
				cs_agg_frame_key(names, (uint32_t)i)->dso, 0, (uint32_t)i };
		qsort(it, nr_names, sizeof(*it), cmp_rank_text);
		rank_sorted_text(it, nr_names, 0, name_rank);
		for (size_t i = 0; i < n; i++)
			name_of[i] = name_rank[name_of[i]];
		rk->dso = name_of;
		name_of = NULL;
	}
	free(it);
	free(name_rank);
	cs_big_free(name_of);
	cs_agg_free(names);
	return err;
}

/* The text an address without a symbol is compared by
 * (report_frame_sym_text), against s: strcmp()'s sign */
int report_addr_text_cmp(const char *s, uint64_t addr)
{
	char buf[32];

	/* the address's text starts with '0' ("0x..." or "0"): most names
	 * are told apart by their first byte, without printing it */
	if (s[0] != '0')
		return (unsigned char)s[0] < '0' ? -1 : 1;
	snprintf(buf, sizeof(buf), "%#" PRIx64, addr);
	return strcmp(s, buf);
}

static bool same_rank(const struct rank_item *a, const struct rank_item *b)
{
	if (a->text && b->text)
		return !strcmp(a->text, b->text);
	if (!a->text && !b->text)
		return a->num == b->num;
	return a->text ? !report_addr_text_cmp(a->text, b->num) :
			 !report_addr_text_cmp(b->text, a->num);
}

/* Where a frame goes in rank_syms(): which half, a name or an address */
static int sym_class(const struct cs_agg_key *k, bool *kernel, bool *named)
{
	if (k->flags & (F_INLINED | F_INLINED_SAME))
		return 0;
	*kernel = k->flags & F_KERNEL;
	*named = k->sym || (k->flags & (F_MISSING | F_COOKIE));
	return 1;
}

/* The order of the Symbol column ("[.] name", "[k] 0x..."): user frames
 * before kernel ones; within each, frames with a name (or a marker's text)
 * by their text, addresses without one by value, and a name against an
 * address by the address's text. Names and addresses are sorted apart -
 * addresses, most of the frames of a profile without symbols, as keys of
 * (address, frame id) - then merged. */
static int rank_syms(const struct cs_report *r, struct ranks *rk)
{
	size_t n = cs_agg_nr_frames(r->stacks), nr[2][2] = { { 0 } };
	size_t most_names, most_addrs, nr_special = 0;
	struct rank_item *it = NULL, prev = { 0 };
	uint64_t *addrs = NULL;
	char (*special)[64] = NULL;
	uint32_t next = 0;
	bool kernel, named;
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		const struct cs_agg_key *k = cs_agg_frame_key(r->stacks, (uint32_t)i);

		if (sym_class(k, &kernel, &named))
			nr[kernel][named]++;
		if (k->flags & (F_MISSING | F_COOKIE))
			nr_special++;
	}
	most_names = nr[0][1] > nr[1][1] ? nr[0][1] : nr[1][1];
	most_addrs = nr[0][0] > nr[1][0] ? nr[0][0] : nr[1][0];
	rk->sym = cs_big_calloc(n ? n : 1, sizeof(*rk->sym));
	rk->sym_len = cs_big_calloc(n ? n : 1, sizeof(*rk->sym_len));
	it = cs_big_alloc((most_names ? most_names : 1) * sizeof(*it));
	addrs = cs_big_alloc((most_addrs ? most_addrs : 1) * 2 * sizeof(*addrs));
	special = malloc((nr_special ? nr_special : 1) * sizeof(*special));
	if (!rk->sym || !rk->sym_len || !it || !addrs || !special)
		err = -ENOMEM;
	for (int half = 0; half < 2 && !err; half++) {
		size_t nn = 0, na = 0, i, j, ns = 0;
		bool have_prev = false;

		for (i = 0; i < n; i++) {
			const struct cs_agg_key *k = cs_agg_frame_key(r->stacks, (uint32_t)i);

			if (!sym_class(k, &kernel, &named) || kernel != half)
				continue;
			if (k->flags & (F_MISSING | F_COOKIE)) {
				const char *t = report_frame_sym_text(k, special[ns],
								      sizeof(special[0]));

				if (t != special[ns])
					snprintf(special[ns], sizeof(special[0]), "%s", t);
				it[nn++] = (struct rank_item){ special[ns++], 0, (uint32_t)i };
			} else if (k->sym) {
				it[nn++] = (struct rank_item){ k->sym, 0, (uint32_t)i };
			} else {
				addrs[2 * na] = k->addr;
				addrs[2 * na++ + 1] = i;
			}
			rk->sym_len[i] = (uint16_t)report_entry_sym_len(k);
		}
		qsort(it, nn, sizeof(*it), cmp_rank_text);
		err = cs_keysort(addrs, na, 2, r->o.jobs);
		/* merge; keys that compare equal share a rank */
		for (i = 0, j = 0; !err && (i < nn || j < na);) {
			int c = i == nn ? 1 : j == na ? -1 :
				report_addr_text_cmp(it[i].text, addrs[2 * j]);
			struct rank_item pick = c <= 0 ? it[i++] :
				(struct rank_item){ NULL, addrs[2 * j],
						    (uint32_t)addrs[2 * j + 1] };

			if (c > 0)
				j++;
			if (!have_prev || !same_rank(&prev, &pick))
				next++;
			rk->sym[pick.id] = next - 1;
			prev = pick;
			have_prev = true;
		}
	}
	free(special);
	cs_big_free(addrs);
	cs_big_free(it);
	return err;
}

/* The text a named frame (or a marker) sorts by in rank_syms() */
static const char *sym_rank_text(const struct cs_agg_key *k, char *buf,
				 size_t len)
{
	if (k->flags & (F_MISSING | F_COOKIE))
		return report_frame_sym_text(k, buf, len);
	return k->sym;
}

int report_sym_cmp(const struct cs_agg_key *a, const struct cs_agg_key *b)
{
	bool ka = a->flags & F_KERNEL, kb = b->flags & F_KERNEL, na, nb;
	char ta[64], tb[64];

	if (ka != kb)
		return ka ? 1 : -1;
	na = a->sym || (a->flags & (F_MISSING | F_COOKIE));
	nb = b->sym || (b->flags & (F_MISSING | F_COOKIE));
	if (na && nb)
		return strcmp(sym_rank_text(a, ta, sizeof(ta)),
			      sym_rank_text(b, tb, sizeof(tb)));
	if (!na && !nb)
		return a->addr < b->addr ? -1 : a->addr > b->addr;
	if (na)
		return report_addr_text_cmp(sym_rank_text(a, ta, sizeof(ta)), b->addr);
	return -report_addr_text_cmp(sym_rank_text(b, tb, sizeof(tb)), a->addr);
}

void report_ranks_free(struct ranks *rk)
{
	free(rk->comm);
	cs_big_free(rk->dso);
	cs_big_free(rk->sym);
	free(rk->comm_len);
	cs_big_free(rk->dso_len);
	cs_big_free(rk->sym_len);
}

/* The width of a key column's text for entry e (the length
 * report_entry_col_text() gives) */
size_t report_col_width(const struct view *v, const struct ranks *rk,
			const struct entry *e, enum cs_report_key key)
{
	char tmp[24];

	switch (key) {
	case CS_REPORT_COMM:
		return rk->comm_len[e->thread] > 1023 ? 1023 : rk->comm_len[e->thread];
	case CS_REPORT_PID:
	case CS_REPORT_TID:
		return report_entry_col_text(v->r, e->thread, NULL, key, tmp,
					     sizeof(tmp));
	case CS_REPORT_DSO:
		return rk->dso_len[e->frame];
	case CS_REPORT_SYM:
		return rk->sym_len[e->frame];
	case CS_REPORT_STATE:
		return strlen(report_state_text(report_thread_state(v->r, e->thread)));
	case CS_REPORT__NR_KEYS:
		break;
	}
	return 0;
}

/* rk->r's ranks into rk (a cs_job: ctx is rk) */
int report_ranks_make(void *ctx)
{
	struct ranks *rk = ctx;
	const struct cs_report *r = rk->r;
	int err = rank_comms(r, rk);

	if (!err)
		err = rank_dsos(r, rk);
	if (!err)
		err = rank_syms(r, rk);
	return err;
}

/* What entries sort on: Children (or Self) descending, depth (callers
 * above callees), Self descending, the keys' ranks, then the entry's id
 * (the order of first sight, as a stable sort of the entries would leave
 * equal ones). Each field takes as many bits as its largest value needs,
 * the first in the highest bits of a key of u64 words (keysort.h), so
 * that a million entries sort as integers of two words or so. */
struct key_layout {
	uint64_t max_first, max_self;
	uint32_t max_depth;
	bool callee;			/* depth ascending, not descending */
	/* the fields' bits, and their sum */
	unsigned int first, depth, self, ranks[CS_REPORT__NR_KEYS], id;
	unsigned int total;
	size_t words;
};
_Static_assert(64 + 16 + 64 + 32 * CS_REPORT__NR_KEYS + 32 <=
	       64 * CS_KEYSORT_MAX_WORDS, "a sort key's fields fit its words");

/* An entry's keys as ranks, in the sort's order; unused keys are 0. */
static void sort_key_ranks(const struct view *v, const struct ranks *rk,
			   const struct entry *e, uint32_t *key)
{
	const struct cs_report *r = v->r;
	uint64_t pt = report_thread_pidtid(r, e->thread);

	memset(key, 0, CS_REPORT__NR_KEYS * sizeof(*key));
	for (size_t i = 0; i < r->o.nr_sort; i++) {
		switch (r->o.sort[i]) {
		case CS_REPORT_PID:
			key[i] = (uint32_t)(pt >> 32);
			break;
		case CS_REPORT_TID:
			key[i] = (uint32_t)pt;
			break;
		case CS_REPORT_COMM:
			key[i] = rk->comm[e->thread];
			break;
		case CS_REPORT_DSO:
			key[i] = rk->dso[e->frame];
			break;
		case CS_REPORT_SYM:
			key[i] = rk->sym[e->frame];
			break;
		case CS_REPORT_STATE:
			key[i] = report_state_rank(report_thread_state(r, e->thread));
			break;
		case CS_REPORT__NR_KEYS:
			break;
		}
	}
}

static unsigned int bits_for(uint64_t max)
{
	unsigned int n = 0;

	while (n < 64 && (max >> n))
		n++;
	return n;
}

/* A key's fields appended in turn, each as its w low bits, from the top
 * of the key's first word on: the word being filled is kept in a
 * register and written whole once full */
struct bit_writer {
	uint64_t *word;			/* the next word to write */
	uint64_t cur;			/* its fill high bits so far */
	unsigned int fill;
};

static inline void bits_put(struct bit_writer *b, uint64_t v, unsigned int w)
{
	unsigned int first, rest;

	if (!w)
		return;
	if (w < 64)
		v &= (1ULL << w) - 1;
	if (b->fill + w <= 64) {
		/* w is 64 only in an empty word */
		b->cur = w == 64 ? v : b->cur << w | v;
		b->fill += w;
		if (b->fill == 64) {
			*b->word++ = b->cur;
			b->cur = 0;
			b->fill = 0;
		}
		return;
	}
	/* v's high bits end this word, its other rest (1-63) start the next */
	first = 64 - b->fill;
	rest = w - first;
	*b->word++ = b->cur << first | v >> rest;
	b->cur = v & ((1ULL << rest) - 1);
	b->fill = rest;
}

static inline void bits_end(struct bit_writer *b)
{
	if (b->fill)
		*b->word = b->cur << (64 - b->fill);
}

static uint64_t get_bits(const uint64_t *key, unsigned int pos, unsigned int w)
{
	uint64_t v = 0;

	while (w) {
		unsigned int room = 64 - pos % 64, take = w < room ? w : room;
		uint64_t bits = key[pos / 64] >> (room - take);

		if (take < 64)
			bits &= (1ULL << take) - 1;
		v = take < 64 ? v << take | bits : bits;
		pos += take;
		w -= take;
	}
	return v;
}

static size_t key_words(unsigned int bits)
{
	return bits ? (bits + 63) / 64 : 1;
}

static uint64_t entry_first(const struct cs_report *r, const struct entry *e)
{
	return r->o.no_children ? e->self_period : e->child_period;
}

/* The largest rank of each sort key, over every thread and frame (an
 * event's entries may not reach it: the field is then a bit wider) */
static void rank_maxima(const struct cs_report *r, const struct ranks *rk,
			uint32_t *max)
{
	size_t nt = cs_agg_nr_frames(r->threads), nf = cs_agg_nr_frames(r->stacks);

	memset(max, 0, CS_REPORT__NR_KEYS * sizeof(*max));
	for (size_t i = 0; i < r->o.nr_sort; i++) {
		enum cs_report_key k = r->o.sort[i];

		for (size_t t = 0; t < nt && k != CS_REPORT_DSO && k != CS_REPORT_SYM; t++) {
			uint64_t pt = report_thread_pidtid(r, (uint32_t)t);
			uint32_t v = k == CS_REPORT_PID ? (uint32_t)(pt >> 32) :
				     k == CS_REPORT_TID ? (uint32_t)pt :
				     k == CS_REPORT_COMM ? rk->comm[t] :
				     report_state_rank(report_thread_state(r, (uint32_t)t));

			if (v > max[i])
				max[i] = v;
		}
		for (size_t f = 0; f < nf && (k == CS_REPORT_DSO || k == CS_REPORT_SYM); f++) {
			uint32_t v = k == CS_REPORT_DSO ? rk->dso[f] : rk->sym[f];

			if (v > max[i])
				max[i] = v;
		}
	}
}

/* How many bits each field needs, over the event's entries: at most 64
 * + 16 + 64 + 6 * 32 + 32 = 368, which CS_KEYSORT_MAX_WORDS holds */
static void key_layout_make(const struct view *v, const struct ranks *rk,
			   struct key_layout *kl)
{
	const struct cs_report *r = v->r;
	uint32_t max[CS_REPORT__NR_KEYS];

	memset(kl, 0, sizeof(*kl));
	kl->callee = r->o.graph == CS_REPORT_GRAPH_CALLEE;
	for (size_t i = 0; i < v->nr_e; i++) {
		const struct entry *e = &v->e[i];

		if (entry_first(r, e) > kl->max_first)
			kl->max_first = entry_first(r, e);
		if (e->self_period > kl->max_self)
			kl->max_self = e->self_period;
		if (v->work[i].max_depth > kl->max_depth)
			kl->max_depth = v->work[i].max_depth;
	}
	rank_maxima(r, rk, max);
	kl->first = bits_for(kl->max_first);
	/* without Children every entry's depth is the same */
	kl->depth = r->o.no_children ? 0 : bits_for(kl->max_depth);
	kl->self = bits_for(kl->max_self);
	kl->id = bits_for(v->nr_e ? v->nr_e - 1 : 0);
	kl->total = kl->first + kl->depth + kl->self + kl->id;
	for (size_t k = 0; k < CS_REPORT__NR_KEYS; k++) {
		kl->ranks[k] = bits_for(max[k]);
		kl->total += kl->ranks[k];
	}
	kl->words = key_words(kl->total);
}

/* What making the sort keys and reading the order back share: parts of
 * cs_jobs_split(), each writing only its own entries' keys or places. */
struct keys_job {
	const struct view *v;
	const struct ranks *rk;
	const struct key_layout *kl;
	uint64_t *keys;
	uint32_t *order;
};

/* The frames' ranks are read at random (10 MiB each for 2.7M frames):
 * those of the entry KEYS_AHEAD on are asked for early */
#define KEYS_AHEAD 16

static int keys_part(void *ctx, unsigned int part, size_t begin, size_t end)
{
	const struct keys_job *j = ctx;
	const struct view *v = j->v;
	const struct key_layout *kl = j->kl;
	const struct cs_report *r = v->r;
	uint32_t key[CS_REPORT__NR_KEYS];
	bool by_dso = false, by_sym = false;

	(void)part;
	for (size_t n = 0; n < r->o.nr_sort; n++) {
		by_dso |= r->o.sort[n] == CS_REPORT_DSO;
		by_sym |= r->o.sort[n] == CS_REPORT_SYM;
	}
	for (size_t i = begin; i < end; i++) {
		const struct entry *e = &v->e[i];
		struct bit_writer b = { .word = j->keys + i * kl->words };

		if ((by_dso || by_sym) && i + KEYS_AHEAD < end) {
			uint32_t f = v->e[i + KEYS_AHEAD].frame;

			if (by_dso)
				__builtin_prefetch(&j->rk->dso[f]);
			if (by_sym)
				__builtin_prefetch(&j->rk->sym[f]);
		}
		bits_put(&b, kl->max_first - entry_first(v->r, e), kl->first);
		bits_put(&b, kl->callee ? v->work[i].max_depth :
			 kl->max_depth - v->work[i].max_depth, kl->depth);
		bits_put(&b, kl->max_self - e->self_period, kl->self);
		sort_key_ranks(v, j->rk, e, key);
		for (size_t n = 0; n < CS_REPORT__NR_KEYS; n++)
			bits_put(&b, key[n], kl->ranks[n]);
		bits_put(&b, i, kl->id);
		bits_end(&b);
	}
	return 0;
}

static int order_part(void *ctx, unsigned int part, size_t begin, size_t end)
{
	const struct keys_job *j = ctx;
	const struct key_layout *kl = j->kl;

	(void)part;
	for (size_t i = begin; i < end; i++)
		j->order[i] = (uint32_t)get_bits(j->keys + i * kl->words,
						 kl->total - kl->id, kl->id);
	return 0;
}

/* The entries in the order they are shown, in *out (the caller frees
 * it, cs_big_free()). Frees v->work: the keys hold what the sort needs of it. Returns 0
 * or -ENOMEM. */
int report_entries_sort(struct view *v, const struct ranks *rk,
			uint32_t **out)
{
	struct key_layout kl;
	struct keys_job j = { .v = v, .rk = rk, .kl = &kl };
	unsigned int jobs = v->r->o.jobs;
	size_t nr = v->nr_e ? v->nr_e : 1;
	int err = 0;

	key_layout_make(v, rk, &kl);
	j.keys = cs_big_calloc(nr * kl.words, sizeof(*j.keys));
	if (!j.keys)
		err = -ENOMEM;
	else
		cs_jobs_split(v->nr_e, 65536, jobs, keys_part, &j);
	cs_big_free(v->work);
	v->work = NULL;
	if (!err)
		err = cs_keysort(j.keys, v->nr_e, kl.words, jobs);
	if (!err && !(j.order = cs_big_alloc(nr * sizeof(*j.order))))
		err = -ENOMEM;
	if (!err)
		cs_jobs_split(v->nr_e, 65536, jobs, order_part, &j);
	cs_big_free(j.keys);
	if (err) {
		cs_big_free(j.order);
		j.order = NULL;
	}
	*out = j.order;
	return err;
}

