/* report_table.c - an event's section of the report: its header, the
 * columns' texts and widths, and the table of entries in their sorted
 * order with a call graph under those that draw one, formatted in chunks
 * on threads and written in order (see report_int.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util/big_alloc.h"
#include "lib/util/jobs.h"
#include "outputs/report_int.h"

/* ---- text --------------------------------------------------------------- */

const char *report_frame_sym_text(const struct cs_agg_key *k, char *buf,
				  size_t len)
{
	if (k->flags & F_MISSING)
		return cs_out_missing_user_name((enum cs_missing_reason)(k->flags >> 8));
	if (k->flags & F_COOKIE) {
		snprintf(buf, len, "[cookie %#" PRIx64 "]", k->addr);
		return buf;
	}
	if (k->flags & F_INLINED) {
		snprintf(buf, len, "%s (inlined)", k->sym);
		return buf;
	}
	if (k->sym)
		return k->sym;
	snprintf(buf, len, "%#" PRIx64, k->addr);
	return buf;
}

/* Copies s (n bytes) into buf as snprintf("%s") would: at most len - 1
 * bytes and a NUL. Returns the bytes copied. */
static size_t copy_text(char *buf, size_t len, const char *s, size_t n)
{
	if (n > len - 1)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return n;
}

static size_t dec_text(char *buf, size_t len, uint64_t v)
{
	char tmp[24];
	size_t n = 0;

	do {
		tmp[sizeof(tmp) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return copy_text(buf, len, tmp + sizeof(tmp) - n, n);
}

/* v's 8 lowercase hex digits into p, the highest first: each nibble
 * spread to a byte of a word, and all eight turned into digits at once
 * (the table writes 2.7M addresses) */
static void hex_digits(char *p, uint32_t v)
{
	uint64_t x = v, letter;

	x = (x | x << 16) & 0x0000ffff0000ffffULL;
	x = (x | x << 8) & 0x00ff00ff00ff00ffULL;
	x = (x | x << 4) & 0x0f0f0f0f0f0f0f0fULL;
	/* byte i holds nibble i; a byte of 10 or more is a letter */
	letter = ((x + 0x0606060606060606ULL) >> 4) & 0x0101010101010101ULL;
	x += 0x3030303030303030ULL + letter * ('a' - '0' - 10);
	/* the highest nibble's byte goes to p[0] */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	memcpy(p, &x, 8);
}

/* The Symbol column: "[k] name" or "[.] name", perf's way. Returns the
 * text's length. */
size_t report_entry_sym_text(const struct cs_agg_key *k, char *buf, size_t len)
{
	char text[40], *p = text;
	const char *name;

	*p++ = '[';
	*p++ = k->flags & F_KERNEL ? 'k' : '.';
	*p++ = ']';
	*p++ = ' ';
	if (k->sym || (k->flags & (F_MISSING | F_COOKIE))) {
		char tmp[64];
		size_t n;

		name = report_frame_sym_text(k, tmp, sizeof(tmp));
		n = copy_text(buf + 4, len - 4, name, strlen(name));
		memcpy(buf, text, 4);
		return n + 4;
	}
	/* perf's "%-#.*llx": 16 digits, and no 0x before a zero */
	if (k->addr) {
		*p++ = '0';
		*p++ = 'x';
	}
	hex_digits(p, (uint32_t)(k->addr >> 32));
	hex_digits(p + 8, (uint32_t)k->addr);
	p += 16;
	return copy_text(buf, len, text, (size_t)(p - text));
}

/* The length report_entry_sym_text() gives in 1024 bytes, without making
 * the text: the ranks want it for every frame, most of them a name or an
 * address of a fixed width. */
size_t report_entry_sym_len(const struct cs_agg_key *k)
{
	char text[1024];
	size_t n;

	if (k->flags & (F_MISSING | F_COOKIE | F_INLINED))
		return report_entry_sym_text(k, text, sizeof(text));
	if (!k->sym)
		return 4 + (k->addr ? 2 : 0) + 16;
	n = strlen(k->sym);
	return 4 + (n > sizeof(text) - 5 ? sizeof(text) - 5 : n);
}

/* A key column's text into buf (as snprintf would cut it) for an entry
 * of thread and frame key fk; returns its length. */
size_t report_entry_col_text(const struct cs_report *r, uint32_t thread,
			     const struct cs_agg_key *fk, enum cs_report_key key,
			     char *buf, size_t len)
{
	const char *s;

	switch (key) {
	case CS_REPORT_COMM:
		s = report_thread_comm(r, thread);
		return copy_text(buf, len, s, strlen(s));
	case CS_REPORT_PID:
		return dec_text(buf, len,
				(uint32_t)(report_thread_pidtid(r, thread) >> 32));
	case CS_REPORT_TID:
		return dec_text(buf, len, (uint32_t)report_thread_pidtid(r, thread));
	case CS_REPORT_DSO:
		s = report_dso_short(fk->dso);
		return copy_text(buf, len, s, strlen(s));
	case CS_REPORT_SYM:
		return report_entry_sym_text(fk, buf, len);
	case CS_REPORT_STATE:
		s = report_state_text(report_thread_state(r, thread));
		return copy_text(buf, len, s, strlen(s));
	case CS_REPORT__NR_KEYS:
		break;
	}
	buf[0] = '\0';
	return 0;
}

/* One line of the table, built whole in text (TABLE_LINE_MAX bytes at most:
 * the rest is cut) and written at once. */
#define TABLE_LINE_MAX 8192

struct line {
	char *text;
	size_t len;
};

static void line_put(struct line *l, const char *s, size_t n)
{
	if (n > TABLE_LINE_MAX - l->len)
		n = TABLE_LINE_MAX - l->len;
	memcpy(l->text + l->len, s, n);
	l->len += n;
}

static void line_pad(struct line *l, size_t n)
{
	if (n > TABLE_LINE_MAX - l->len)
		n = TABLE_LINE_MAX - l->len;
	memset(l->text + l->len, ' ', n);
	l->len += n;
}

/* "%*s" and "%-*s" */
static void line_right(struct line *l, const char *s, size_t n, size_t width)
{
	if (n < width)
		line_pad(l, width - n);
	line_put(l, s, n);
}

static void line_left(struct line *l, const char *s, size_t n, size_t width)
{
	line_put(l, s, n);
	if (n < width)
		line_pad(l, width - n);
}

static const struct report_pct *pct_text(struct report_pct *c, uint64_t part,
				       uint64_t total)
{
	if (!c->valid || c->part != part) {
		int n = snprintf(c->text, sizeof(c->text), "%.2f%%", report_pct(part, total));

		c->len = n > 0 ? (size_t)n : 0;
		c->part = part;
		c->valid = true;
	}
	return c;
}

static const char *const key_header[CS_REPORT__NR_KEYS] = {
	[CS_REPORT_COMM] = "Command", [CS_REPORT_PID] = "Pid",
	[CS_REPORT_TID] = "Tid", [CS_REPORT_DSO] = "Shared Object",
	[CS_REPORT_SYM] = "Symbol", [CS_REPORT_STATE] = "State",
};

/* ---- the table ---------------------------------------------------------- */


/* Entries are written in their sorted order, scattered over memory: the
 * one AHEAD places on and, once that is in, its frame's key are asked
 * for early, so that their cache misses overlap. An entry is 40 bytes:
 * half of them cross a cache line, and the line with the periods is
 * asked for too. */
#define AHEAD 16

static void prefetch_entry(const struct view *v, const uint32_t *order,
			   size_t i, size_t end)
{
	if (i + AHEAD < end)
		report_prefetch_entry(&v->e[order[i + AHEAD]]);
	if (i + AHEAD / 2 < end)
		__builtin_prefetch(cs_agg_frame_key(v->r->stacks,
						    v->e[order[i + AHEAD / 2]].frame));
}

/* The table's lines (and graphs) for entries order[begin, end): a chunk of
 * cs_jobs_ordered(), so it only reads what they share. */
struct table {
	const struct view *v;
	const uint32_t *order;
	const size_t *width;
	size_t nc;
	bool children;
	bool off_cpu;			/* a Seconds column */
};

/* The Command and Shared Object columns' last texts and lengths:
 * neighbouring lines mostly share them, and strlen() and strrchr() ran
 * for every line */
struct name_cache {
	const char *dso;		/* the frame key's, as given */
	const char *dso_text;		/* NULL: none yet */
	size_t dso_len;
	uint32_t thread;
	const char *comm;		/* NULL: none yet */
	size_t comm_len;
};

/* report_entry_col_text(), the comm and dso texts through nc */
static size_t cached_col_text(const struct cs_report *r, struct name_cache *nc,
			      uint32_t thread, const struct cs_agg_key *fk,
			      enum cs_report_key key, char *buf, size_t len)
{
	switch (key) {
	case CS_REPORT_DSO:
		if (!nc->dso_text || nc->dso != fk->dso) {
			nc->dso = fk->dso;
			nc->dso_text = report_dso_short(fk->dso);
			nc->dso_len = strlen(nc->dso_text);
		}
		return copy_text(buf, len, nc->dso_text, nc->dso_len);
	case CS_REPORT_COMM:
		if (!nc->comm || nc->thread != thread) {
			nc->thread = thread;
			nc->comm = report_thread_comm(r, thread);
			nc->comm_len = strlen(nc->comm);
		}
		return copy_text(buf, len, nc->comm, nc->comm_len);
	default:
		return report_entry_col_text(r, thread, fk, key, buf, len);
	}
}

/* The entry's line into buf (TABLE_LINE_MAX bytes); returns its length */
static size_t entry_line_text(const struct report_cols *c,
			      struct report_pct *pct, struct name_cache *nc,
			      const struct entry *e, const struct cs_agg_key *fk,
			      char *buf)
{
	const struct cs_report *r = c->r;
	const size_t *width = c->width;
	uint64_t weight = c->children ? e->child_period : e->self_period;
	const struct report_pct *pt;
	struct line l = { .text = buf };
	char text[1024];
	size_t col = 0;

	line_put(&l, " ", 1);
	if (c->children) {
		pt = pct_text(&pct[0], e->child_period, c->total);
		line_put(&l, " ", 1);
		line_right(&l, pt->text, pt->len, width[col++]);
		pt = pct_text(&pct[1], e->self_period, c->total);
		line_put(&l, "  ", 2);
		line_right(&l, pt->text, pt->len, width[col++]);
	} else {
		pt = pct_text(&pct[1], e->self_period, c->total);
		line_put(&l, " ", 1);
		line_right(&l, pt->text, pt->len, width[col++]);
	}
	if (c->off_cpu) {
		int n = snprintf(text, sizeof(text), "%.6f", weight / 1e9);

		line_put(&l, "  ", 2);
		line_right(&l, text, (size_t)n, width[col++]);
	}
	if (r->o.show_nr_samples) {
		size_t n = dec_text(text, sizeof(text), c->children ?
				    e->child_count : e->self_count);

		line_put(&l, "  ", 2);
		line_right(&l, text, n, width[col++]);
	}
	for (size_t k = 0; k < r->o.nr_sort; k++) {
		size_t n;

		line_put(&l, "  ", 2);
		if (TABLE_LINE_MAX - l.len > sizeof(text)) {
			/* made in place: as much room as text, and more */
			n = cached_col_text(r, nc, e->thread, fk, r->o.sort[k],
					    l.text + l.len, sizeof(text));
			l.len += n;
			if (k + 1 < r->o.nr_sort && n < width[c->nc + k])
				line_pad(&l, width[c->nc + k] - n);
			continue;
		}
		n = cached_col_text(r, nc, e->thread, fk, r->o.sort[k], text,
				    sizeof(text));
		if (k + 1 == r->o.nr_sort)
			line_put(&l, text, n);
		else
			line_left(&l, text, n, width[c->nc + k]);
	}
	line_put(&l, "\n", 1);
	return l.len;
}

void report_entry_line(const struct report_cols *c, struct report_pct *pct,
		       const struct entry *e, const struct cs_agg_key *fk,
		       FILE *out)
{
	char buf[TABLE_LINE_MAX];
	struct name_cache nc = { 0 };

	fwrite(buf, 1, entry_line_text(c, pct, &nc, e, fk, buf), out);
}

/* Lines gathered before they are written: one fwrite() for many */
#define LINES_BUF (64 * 1024)

static int table_lines(void *ctx, size_t begin, size_t end, FILE *out)
{
	const struct table *t = ctx;
	const struct view *v = t->v;
	const struct cs_report *r = v->r;
	struct report_cols c = { .r = r, .width = t->width, .nc = t->nc,
				 .children = t->children, .off_cpu = t->off_cpu,
				 .total = v->total_period };
	struct report_pct pct[2] = { { 0 } };
	struct name_cache nc = { 0 };
	char *buf = malloc(LINES_BUF);
	size_t len = 0;
	int err = buf ? 0 : -ENOMEM;

	for (size_t i = begin; i < end && !err; i++) {
		const struct entry *e = &v->e[t->order[i]];

		prefetch_entry(v, t->order, i, end);
		if (LINES_BUF - len < TABLE_LINE_MAX) {
			fwrite(buf, 1, len, out);
			len = 0;
		}
		len += entry_line_text(&c, pct, &nc, e,
				       cs_agg_frame_key(r->stacks, e->frame),
				       buf + len);
		if (report_draws_graph(v, e)) {
			/* the graph follows its line */
			fwrite(buf, 1, len, out);
			len = 0;
			err = report_graph_print(v, e, t->children ?
						 e->child_period : e->self_period,
						 out);
		}
	}
	if (!err)
		fwrite(buf, 1, len, out);
	free(buf);
	return err;
}

/* An entry is shown unless it weighs too little, or nothing at all: the
 * table ends at the first that does not, in sorted order */
bool report_entry_shown(const struct cs_report *r, uint64_t total,
			const struct entry *e, bool children)
{
	uint64_t p = children ? e->child_period : e->self_period;

	if (!p && !e->self_count && !(children && e->child_count))
		return false;
	return report_pct(p, total) >= r->o.percent_limit;
}

static bool entry_shown(const struct view *v, const struct entry *e,
			bool children)
{
	return report_entry_shown(v->r, v->total_period, e, children);
}

/* The columns' widths over the entries shown: a part of cs_jobs_split()
 * each, widened from the headers' in width[part]. With order, over
 * order[begin, end); without, over the entries [begin, end) that
 * entry_shown(), counted in shown[part], and in odd[part] whether one
 * of them weighs nothing. */
struct widths {
	const struct view *v;
	const struct ranks *rk;
	const uint32_t *order;
	size_t nc;
	bool children, off_cpu;
	size_t width[CS_JOBS_MAX_PARTS][REPORT_MAX_COLS];
	size_t shown[CS_JOBS_MAX_PARTS];
	bool odd[CS_JOBS_MAX_PARTS];
};

/* The Seconds and Samples columns' widths, widened for e */
static void widen_counts(const struct cs_report *r, size_t nc, bool children,
			 bool off_cpu, size_t *width, const struct entry *e)
{
	char text[64];

	if (off_cpu) {
		int n = snprintf(text, sizeof(text), "%.6f",
				 (children ? e->child_period :
				  e->self_period) / 1e9);
		if ((size_t)n > width[children ? 2 : 1])
			width[children ? 2 : 1] = (size_t)n;
	}
	if (r->o.show_nr_samples) {
		int n = snprintf(text, sizeof(text), "%" PRIu64,
				 children ? e->child_count : e->self_count);
		if ((size_t)n > width[nc - 1])
			width[nc - 1] = (size_t)n;
	}
}

void report_widen(const struct report_cols *c, size_t *width,
		  const struct entry *e, const struct cs_agg_key *fk)
{
	const struct cs_report *r = c->r;
	char text[1024];

	widen_counts(r, c->nc, c->children, c->off_cpu, width, e);
	for (size_t k = 0; k < r->o.nr_sort; k++) {
		size_t n = report_entry_col_text(r, e->thread, fk, r->o.sort[k],
						 text, sizeof(text));

		if (n > width[c->nc + k])
			width[c->nc + k] = n;
	}
}

static void widen(struct widths *w, size_t *width, const struct entry *e)
{
	const struct view *v = w->v;
	const struct cs_report *r = v->r;
	size_t nc = w->nc;

	widen_counts(r, nc, w->children, w->off_cpu, width, e);
	for (size_t k = 0; k < r->o.nr_sort; k++) {
		size_t n = report_col_width(v, w->rk, e, r->o.sort[k]);

		if (n > width[nc + k])
			width[nc + k] = n;
	}
}

static int widths_part(void *ctx, unsigned int part, size_t begin, size_t end)
{
	struct widths *w = ctx;
	const struct view *v = w->v;
	size_t *width = w->width[part];

	for (size_t i = begin; i < end; i++) {
		const struct entry *e;

		if (w->order) {
			e = &v->e[w->order[i]];
			prefetch_entry(v, w->order, i, end);
		} else {
			e = &v->e[i];
			if (!entry_shown(v, e, w->children))
				continue;
			w->shown[part]++;
			if (!(w->children ? e->child_period : e->self_period))
				w->odd[part] = true;
		}
		if (i + AHEAD / 2 < end) {
			uint32_t f = v->e[w->order ? w->order[i + AHEAD / 2] :
					  i + AHEAD / 2].frame;

			__builtin_prefetch(&w->rk->sym_len[f]);
			__builtin_prefetch(&w->rk->dso_len[f]);
		}
		widen(w, width, e);
	}
	return 0;
}

/* How many entries the table shows, in *nr_show (the first of order),
 * and the columns' widths over them, widened from width[0, REPORT_MAX_COLS).
 * The order sorts by weight first: the entries shown are those that
 * entry_shown(), found - and measured - in the entries' own order, where
 * the sorted one would read them scattered over memory. Only entries of
 * no weight may be shown and not (no samples) in any order: with one of
 * them shown, the sorted order is walked as the table is. */
static void shown_widths(const struct view *v, const struct ranks *rk,
			 const uint32_t *order, size_t nc, bool children,
			 bool off_cpu, size_t *width, size_t *nr_show)
{
	struct widths w = { .v = v, .rk = rk, .nc = nc, .children = children,
			    .off_cpu = off_cpu };
	size_t n = 0;
	bool odd = false;
	int parts;

	for (size_t p = 0; p < CS_JOBS_MAX_PARTS; p++)
		memcpy(w.width[p], width, sizeof(w.width[p]));
	parts = cs_jobs_split(v->nr_e, 65536, v->r->o.jobs, widths_part, &w);
	for (int p = 0; p < parts; p++) {
		n += w.shown[p];
		odd |= w.odd[p];
	}
	if (odd) {
		for (n = 0; n < v->nr_e && entry_shown(v, &v->e[order[n]], children);)
			n++;
		w.order = order;
		for (size_t p = 0; p < CS_JOBS_MAX_PARTS; p++)
			memcpy(w.width[p], width, sizeof(w.width[p]));
		parts = cs_jobs_split(n, 65536, v->r->o.jobs, widths_part, &w);
	}
	for (int p = 0; p < parts; p++)
		for (size_t c = 0; c < REPORT_MAX_COLS; c++)
			if (w.width[p][c] > width[c])
				width[c] = w.width[p][c];
	*nr_show = n;
}

void report_event_head(const struct cs_report *r, bool off_cpu,
		       uint64_t count, uint64_t period, const char *name,
		       FILE *out)
{
	(void)r;
	if (off_cpu) {
		fprintf(out, "#\n# Samples: %" PRIu64 " of event '%s': off-CPU time "
			"(each switch-out weighted by the time until its task ran "
			"again)\n", count, name);
		fprintf(out, "# Event count (approx.): %" PRIu64 " ns, %.6f s off "
			"the CPU\n#\n", period, period / 1e9);
	} else {
		fprintf(out, "#\n# Samples: %" PRIu64 " of event '%s'\n",
			count, name);
		fprintf(out, "# Event count (approx.): %" PRIu64 "\n#\n", period);
	}
}

size_t report_cols_init(const struct cs_report *r, bool children, bool off_cpu,
			size_t *width)
{
	size_t nc = 0;

	/* columns: percentages (seconds off the CPU, samples), then the sort
	 * keys */
	memset(width, 0, REPORT_MAX_COLS * sizeof(*width));
	if (children) {
		width[nc++] = 8;
		width[nc++] = 8;
	} else {
		width[nc++] = 8;
	}
	if (off_cpu)
		width[nc++] = 10;
	if (r->o.show_nr_samples)
		width[nc++] = 7;
	for (size_t k = 0; k < r->o.nr_sort; k++)
		width[nc + k] = strlen(key_header[r->o.sort[k]]);
	return nc;
}

void report_cols_head(const struct cs_report *r, const size_t *width,
		      size_t nc, bool children, bool off_cpu, FILE *out)
{
	size_t c = 0;

	fputs("#", out);
	if (children) {
		fprintf(out, " %*s  %*s", (int)width[0], "Children",
			(int)width[1], "Self");
		c = 2;
	} else {
		fprintf(out, " %-*s", (int)width[0], "Overhead");
		c = 1;
	}
	if (off_cpu)
		fprintf(out, "  %*s", (int)width[c++], "Seconds");
	if (r->o.show_nr_samples)
		fprintf(out, "  %*s", (int)width[c++], "Samples");
	for (size_t k = 0; k < r->o.nr_sort; k++)
		fprintf(out, "  %-*s", (int)width[nc + k],
			key_header[r->o.sort[k]]);
	fputs("\n#", out);
	for (size_t i = 0; i < nc + r->o.nr_sort; i++) {
		fputs(i ? "  " : " ", out);
		for (size_t j = 0; j < width[i]; j++)
			fputc('.', out);
	}
	fputs("\n#\n", out);
}

int report_write_event(struct cs_report *r, unsigned int evsel,
		       const char *name, FILE *out)
{
	struct view v = { .r = r, .evsel = evsel };
	bool children = !r->o.no_children;
	bool off_cpu = r->ev_off_cpu[evsel];
	uint32_t *order = NULL;
	struct ranks rk = { 0 };
	struct cs_job ranks;
	size_t nr_show = 0, width[REPORT_MAX_COLS] = { 0 }, nc = 0;
	int err, rk_err;

	/* the keys' ranks and the entries both only read the tables: with
	 * jobs to spare, the ranks are worked out beside the entries */
	rk.r = r;
	cs_job_start(&ranks, r->o.jobs, report_ranks_make, &rk);
	err = report_view_entries(&v);
	rk_err = cs_job_wait(&ranks);
	if (!err)
		err = rk_err;
	if (err)
		goto out;
	err = report_entries_sort(&v, &rk, &order);
	if (err)
		goto out;
	report_event_head(r, off_cpu, v.total_count, v.total_period, name, out);
	nc = report_cols_init(r, children, off_cpu, width);
	shown_widths(&v, &rk, order, nc, children, off_cpu, width, &nr_show);
	report_cols_head(r, width, nc, children, off_cpu, out);
	{
		struct table t = { .v = &v, .order = order, .width = width,
				   .nc = nc, .children = children, .off_cpu = off_cpu };

		/* a few hundred entries per chunk: graphs make some long */
		err = cs_jobs_ordered(nr_show, 256, r->o.jobs, table_lines, &t, out);
	}
	fputs("\n\n", out);
out:
	report_ranks_free(&rk);
	cs_big_free(order);
	report_view_free(&v);
	return err;
}
