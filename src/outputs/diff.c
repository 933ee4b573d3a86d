/* diff.c - perf diff's table of two profiles (see diff.h). */
#include "outputs/diff.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "abi/perf_abi.h"
#include "lib/util/grow.h"
#include "lib/util/jobs.h"
#include "outputs/out_names.h"

#define NO_EVENT UINT32_MAX

/* An entry: its key columns' texts, NUL-separated in one allocation. */
struct entry {
	uint32_t event;
	uint32_t hash;
	char *text;			/* nr_sort strings, each NUL-terminated */
	size_t len;			/* of text, NULs included */
	uint64_t period[2];
	bool seen[2];
};

struct cs_diff {
	struct cs_diff_opts o;
	char **events;			/* names, in order of first sight */
	uint64_t (*total)[2];		/* per event and profile */
	size_t nr_events;
	struct entry *e;
	size_t nr_e, cap_e;
	uint32_t *slots;		/* open addressing: entry index + 1 */
	size_t cap_slots;
	char *scratch;			/* a key being built */
	size_t cap_scratch;
};

static const char *const key_header[CS_REPORT__NR_KEYS] = {
	[CS_REPORT_COMM] = "Command", [CS_REPORT_PID] = "Pid",
	[CS_REPORT_TID] = "Tid", [CS_REPORT_DSO] = "Shared Object",
	[CS_REPORT_SYM] = "Symbol", [CS_REPORT_STATE] = "State",
};

int cs_diff_new(const struct cs_diff_opts *o, struct cs_diff **out)
{
	struct cs_diff *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->o = *o;
	if (!d->o.nr_sort) {
		d->o.sort[0] = CS_REPORT_DSO;
		d->o.sort[1] = CS_REPORT_SYM;
		d->o.nr_sort = 2;
	}
	d->cap_slots = 1024;
	d->slots = calloc(d->cap_slots, sizeof(*d->slots));
	if (!d->slots) {
		cs_diff_free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

void cs_diff_free(struct cs_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nr_events; i++)
		free(d->events[i]);
	for (size_t i = 0; i < d->nr_e; i++)
		free(d->e[i].text);
	free(d->events);
	free(d->total);
	free(d->e);
	free(d->slots);
	free(d->scratch);
	free(d);
}

static uint32_t event_index(struct cs_diff *d, const char *name)
{
	char **ev;
	uint64_t (*t)[2];

	for (size_t i = 0; i < d->nr_events; i++)
		if (!strcmp(d->events[i], name))
			return (uint32_t)i;
	ev = realloc(d->events, (d->nr_events + 1) * sizeof(*ev));
	if (!ev)
		return NO_EVENT;
	d->events = ev;
	t = realloc(d->total, (d->nr_events + 1) * sizeof(*t));
	if (!t)
		return NO_EVENT;
	d->total = t;
	d->events[d->nr_events] = strdup(name);
	if (!d->events[d->nr_events])
		return NO_EVENT;
	d->total[d->nr_events][0] = d->total[d->nr_events][1] = 0;
	return (uint32_t)d->nr_events++;
}

/* The key columns' texts, NUL-separated, into d->scratch; its length. */
static size_t key_text(struct cs_diff *d, const struct cs_diff_key *k)
{
	size_t len = 0;

	for (size_t i = 0; i < d->o.nr_sort; i++) {
		char num[16];
		const char *s = num;
		size_t n;

		switch (d->o.sort[i]) {
		case CS_REPORT_COMM:	s = k->comm ? k->comm : ":unknown"; break;
		case CS_REPORT_PID:	snprintf(num, sizeof(num), "%" PRIu32, k->pid); break;
		case CS_REPORT_TID:	snprintf(num, sizeof(num), "%" PRIu32, k->tid); break;
		case CS_REPORT_DSO:	s = k->dso ? k->dso : "[unknown]"; break;
		case CS_REPORT_SYM:	s = k->sym ? k->sym : "[.] [unknown]"; break;
		case CS_REPORT_STATE:
			s = k->state ? cs_off_cpu_state_name(k->state) : "on-CPU";
			break;
		default:		s = ""; break;
		}
		n = strlen(s) + 1;
		if (len + n > d->cap_scratch) {
			size_t cap = (len + n) * 2;
			char *p = realloc(d->scratch, cap);

			if (!p)
				return 0;
			d->scratch = p;
			d->cap_scratch = cap;
		}
		memcpy(d->scratch + len, s, n);
		len += n;
	}
	return len;
}

static uint32_t hash_of(uint32_t event, const char *text, size_t len)
{
	uint32_t h = 2166136261u ^ event;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)text[i]) * 16777619u;
	return h;
}

static int grow_slots(struct cs_diff *d)
{
	size_t cap = d->cap_slots * 2;
	uint32_t *s = calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < d->nr_e; i++) {
		size_t k = d->e[i].hash & (cap - 1);

		while (s[k])
			k = (k + 1) & (cap - 1);
		s[k] = (uint32_t)i + 1;
	}
	free(d->slots);
	d->slots = s;
	d->cap_slots = cap;
	return 0;
}

/* Adds period to the entry (ev, text[0, len)) of profile `which`, made
 * on first sight (text copied). Returns 0 or -ENOMEM. */
static int entry_add(struct cs_diff *d, uint32_t ev, const char *text,
		     size_t len, int which, uint64_t period)
{
	uint32_t h = hash_of(ev, text, len);
	struct entry *e;
	size_t k;

	for (k = h & (d->cap_slots - 1); d->slots[k]; k = (k + 1) & (d->cap_slots - 1)) {
		e = &d->e[d->slots[k] - 1];
		if (e->hash == h && e->event == ev && e->len == len &&
		    !memcmp(e->text, text, len))
			goto found;
	}
	if (cs_grow((void **)&d->e, &d->cap_e, d->nr_e + 1, sizeof(*d->e)))
		return -ENOMEM;
	e = &d->e[d->nr_e];
	memset(e, 0, sizeof(*e));
	e->text = malloc(len);
	if (!e->text)
		return -ENOMEM;
	memcpy(e->text, text, len);
	e->len = len;
	e->event = ev;
	e->hash = h;
	d->slots[k] = (uint32_t)++d->nr_e;
	if (2 * d->nr_e > d->cap_slots && grow_slots(d))
		return -ENOMEM;
found:
	e->period[which] += period;
	e->seen[which] = true;
	d->total[ev][which] += period;
	return 0;
}

int cs_diff_add(struct cs_diff *d, int which, const char *event,
		const struct cs_diff_key *key, uint64_t period)
{
	uint32_t ev = event_index(d, event ? event : "[unknown]");
	size_t len;

	if (ev == NO_EVENT || !(len = key_text(d, key)))
		return -ENOMEM;
	return entry_add(d, ev, d->scratch, len, which, period);
}

int cs_diff_merge(struct cs_diff *d, const struct cs_diff *from)
{
	uint32_t *ev = malloc((from->nr_events ? from->nr_events : 1) * sizeof(*ev));
	int err = ev ? 0 : -ENOMEM;

	/* the events first, in from's order: d's table order is theirs */
	for (size_t i = 0; !err && i < from->nr_events; i++) {
		ev[i] = event_index(d, from->events[i]);
		if (ev[i] == NO_EVENT)
			err = -ENOMEM;
	}
	for (size_t i = 0; !err && i < from->nr_e; i++) {
		const struct entry *e = &from->e[i];

		for (int which = 0; !err && which < 2; which++)
			if (e->seen[which])
				err = entry_add(d, ev[e->event], e->text, e->len,
						which, e->period[which]);
	}
	free(ev);
	return err;
}

/* ---- the tables ----------------------------------------------------------- */

static double share(const struct cs_diff *d, const struct entry *e, int which)
{
	uint64_t t = d->total[e->event][which];

	return t ? 100.0 * (double)e->period[which] / (double)t : 0.0;
}

/* the change in points: an entry new in the second profile gained all its
 * share; one the second lacks has none (shown blank) */
static double delta(const struct cs_diff *d, const struct entry *e)
{
	if (!e->seen[1])
		return 0.0;
	return share(d, e, 1) - (e->seen[0] ? share(d, e, 0) : 0.0);
}

/* perf's delta-abs order: the biggest change first (an entry new in the
 * second profile changed by all its share), then the rest by baseline;
 * qsort_r's argument is the diff, so two diffs may sort at once */
static int cmp_entry(const void *pa, const void *pb, void *arg)
{
	const struct cs_diff *d = arg;
	const struct entry *a = &d->e[*(const uint32_t *)pa];
	const struct entry *b = &d->e[*(const uint32_t *)pb];
	bool da = a->seen[1], db = b->seen[1];
	double x, y;

	if (da != db)
		return da ? -1 : 1;
	x = da ? fabs(delta(d, a)) : share(d, a, 0);
	y = db ? fabs(delta(d, b)) : share(d, b, 0);
	if (x != y)
		return x > y ? -1 : 1;
	x = share(d, a, 0);
	y = share(d, b, 0);
	if (x != y)
		return x > y ? -1 : 1;
	/* then by the keys, the first key first */
	{
		size_t n = a->len < b->len ? a->len : b->len;
		int c = memcmp(a->text, b->text, n);

		return c ? c : a->len < b->len ? -1 : a->len > b->len;
	}
}

/* the i-th column text of an entry */
static const char *col(const struct entry *e, size_t i)
{
	const char *s = e->text;

	while (i--)
		s += strlen(s) + 1;
	return s;
}

/* The parts one event's entries are sorted and measured in, at most
 * this many: they are merged by picking the least of their heads */
#define SORT_PARTS 8

/* One event's table on its way out: the entries shown, the parts they
 * were sorted in, the columns' widths. */
struct table {
	struct cs_diff *d;
	uint32_t *order;		/* entries shown, sorted by part */
	size_t begin[SORT_PARTS], end[SORT_PARTS];
	size_t part_width[SORT_PARTS][CS_REPORT__NR_KEYS];
	size_t width[CS_REPORT__NR_KEYS];	/* the widest of the parts' */
};

/* A part of the entries: sorted (as one qsort_r() of them all would
 * order them: cmp_entry() is a total order), and its columns measured. */
static int sort_part(void *ctx, unsigned int part, size_t begin, size_t end)
{
	struct table *t = ctx;
	struct cs_diff *d = t->d;

	t->begin[part] = begin;
	t->end[part] = end;
	qsort_r(t->order + begin, end - begin, sizeof(*t->order), cmp_entry, d);
	for (size_t k = 0; k < d->o.nr_sort; k++) {
		t->part_width[part][k] = 0;
		for (size_t i = begin; i < end; i++) {
			size_t w = strlen(col(&d->e[t->order[i]], k));

			if (w > t->part_width[part][k])
				t->part_width[part][k] = w;
		}
	}
	return 0;
}

/* The sorted parts into one order (into tmp, then back). */
static void merge_parts(struct table *t, unsigned int parts, uint32_t *tmp)
{
	size_t at[SORT_PARTS], n = 0;

	for (unsigned int p = 0; p < parts; p++)
		at[p] = t->begin[p];
	for (;;) {
		unsigned int best = parts;

		for (unsigned int p = 0; p < parts; p++)
			if (at[p] < t->end[p] &&
			    (best == parts ||
			     cmp_entry(&t->order[at[p]], &t->order[at[best]], t->d) < 0))
				best = p;
		if (best == parts)
			break;
		tmp[n++] = t->order[at[best]++];
	}
	memcpy(t->order, tmp, n * sizeof(*tmp));
}

/* Entries [begin, end) of the table, a line each. */
static int write_lines(void *ctx, size_t begin, size_t end, FILE *out)
{
	const struct table *t = ctx;
	const struct cs_diff *d = t->d;
	char text[32];

	for (size_t i = begin; i < end; i++) {
		const struct entry *e = &d->e[t->order[i]];

		if (e->seen[0])
			snprintf(text, sizeof(text), "%.2f%%", share(d, e, 0));
		else
			text[0] = '\0';
		fprintf(out, "  %8s", text);
		if (e->seen[1])
			snprintf(text, sizeof(text), "%+.2f%%", delta(d, e));
		else
			text[0] = '\0';
		fprintf(out, "  %9s", text);
		for (size_t k = 0; k < d->o.nr_sort; k++) {
			if (k + 1 == d->o.nr_sort)
				fprintf(out, "  %s", col(e, k));
			else
				fprintf(out, "  %-*s", (int)t->width[k], col(e, k));
		}
		fputc('\n', out);
	}
	return 0;
}

/* One event's table. With jobs, its entries are sorted and measured in
 * parts on threads and its lines formatted in chunks on threads, written
 * in order: the bytes one thread writes. */
static int write_event(struct cs_diff *d, uint32_t ev, FILE *out)
{
	struct table t = { .d = d };
	size_t n = 0, *width = t.width;
	unsigned int jobs = d->o.jobs > SORT_PARTS ? SORT_PARTS : d->o.jobs;
	uint32_t *tmp = NULL;
	int parts, err;

	t.order = malloc((d->nr_e ? d->nr_e : 1) * sizeof(*t.order));
	if (!t.order)
		return -ENOMEM;
	for (size_t i = 0; i < d->nr_e; i++) {
		const struct entry *e = &d->e[i];

		if (e->event != ev)
			continue;
		if (share(d, e, 0) < d->o.percent_limit &&
		    share(d, e, 1) < d->o.percent_limit)
			continue;
		t.order[n++] = (uint32_t)i;
	}
	/* parts of at least 16k entries: below that a thread costs more
	 * than it saves */
	parts = cs_jobs_split(n, 16384, jobs, sort_part, &t);
	if (parts > 1) {
		tmp = malloc(n * sizeof(*tmp));
		if (!tmp) {
			free(t.order);
			return -ENOMEM;
		}
		merge_parts(&t, (unsigned int)parts, tmp);
		free(tmp);
	}
	for (size_t k = 0; k < d->o.nr_sort; k++) {
		width[k] = strlen(key_header[d->o.sort[k]]);
		for (int p = 0; p < parts; p++)
			if (t.part_width[p][k] > width[k])
				width[k] = t.part_width[p][k];
	}
	fprintf(out, "# Event '%s'\n#\n# Baseline  Delta Abs", d->events[ev]);
	for (size_t k = 0; k < d->o.nr_sort; k++)
		fprintf(out, "  %-*s", (int)width[k], key_header[d->o.sort[k]]);
	fputs("\n# ........  .........", out);
	for (size_t k = 0; k < d->o.nr_sort; k++) {
		fputs("  ", out);
		for (size_t j = 0; j < width[k]; j++)
			fputc('.', out);
	}
	fputs("\n#\n", out);
	err = cs_jobs_ordered(n, 4096, d->o.jobs, write_lines, &t, out);
	free(t.order);
	return err;
}

int cs_diff_write(struct cs_diff *d, FILE *out)
{
	int err = 0;

	for (uint32_t ev = 0; ev < d->nr_events && !err; ev++) {
		if (ev)
			fputc('\n', out);
		err = write_event(d, ev, out);
	}
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
	return err;
}

/* ---- the output ------------------------------------------------------------ */

static int run_begin(void *ctx, struct cs_session *s)
{
	struct cs_diff_run *run = ctx;

	run->machine = cs_session_machine(s);
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

static int run_sample(void *ctx, const struct cs_stitched *s)
{
	struct cs_diff_run *run = ctx;
	const struct cs_sample *smp = &s->event->sample;
	const struct cs_evsel *ev = s->event->evsel;
	struct cs_frame f;
	struct cs_diff_key k = { .pid = smp->pid, .tid = smp->tid,
				 .state = s->off_cpu };
	char tidname[16], sym[1024];
	bool kernel;

	if (!cs_view_takes(run->view, s->off_cpu != CS_OFF_CPU_NONE))
		return 0;
	/* the innermost frame is the entry: perf diff compares Self */
	if (!cs_frames_resolve(run->machine, s, &f, 1))
		return 0;
	kernel = f.cpumode == CS_MISC_KERNEL || f.cpumode == CS_MISC_GUEST_KERNEL ||
		 f.loc.kernel;
	k.comm = cs_out_comm(run->machine, smp->pid, smp->tid, tidname);
	k.dso = f.kind == CS_FRAME_ADDR && f.loc.dso_name ? base_name(f.loc.dso_name) : NULL;
	if (f.kind == CS_FRAME_MISSING_USER)
		snprintf(sym, sizeof(sym), "[.] %s", cs_out_missing_user_name(f.missing));
	else if (f.kind == CS_FRAME_ADDR && f.loc.sym && f.loc.sym[0])
		snprintf(sym, sizeof(sym), "[%c] %s", kernel ? 'k' : '.', f.loc.sym);
	else
		snprintf(sym, sizeof(sym), "[%c] %#.16" PRIx64, kernel ? 'k' : '.',
			 f.loc.dso_name ? f.loc.dso_addr : f.addr);
	k.sym = sym;
	return cs_diff_add(run->diff, run->which, ev && ev->name ? ev->name : NULL,
			   &k, smp->period);
}

const struct cs_output_ops cs_diff_ops = {
	.begin = run_begin,
	.sample = run_sample,
};
