/* folded.c - folded stacks for flame graph tools (see folded.h). */
#include "outputs/folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "abi/perf_abi.h"
#include "outputs/out_names.h"
#include "outputs/stack_agg.h"
#include "lib/util/big_alloc.h"
#include "lib/util/handoff.h"

/* frame key flags */
#define F_KERNEL	(1u << 0)	/* annotated kernel frame */
#define F_COOKIE	(1u << 1)	/* unmerged cookie entry */
#define F_MISSING	(1u << 2)	/* marker; reason in bits 8.. */
#define F_COMM		(1u << 3)	/* a process name (the tag) */
#define F_EMPTY		(1u << 4)	/* every frame was filtered out */
#define F_OFF_CPU	(1u << 5)	/* off-CPU leaf; state in bits 8.. */

struct cs_folded {
	struct cs_folded_opts o;
	struct cs_agg *agg;
	uint32_t *ids;			/* CS_FRAMES_MAX + 1, reused */
	struct cs_agg_key *keys;	/* the same */
	uint64_t total;
	struct cs_handoff *handoff;	/* to the counting thread; agg and
					 * total are its own until flushed */
	bool flushed;			/* no hand-off (any more) */
};

int cs_folded_new(const struct cs_folded_opts *opts, struct cs_folded **out)
{
	struct cs_folded *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->o = *opts;
	f->ids = malloc((CS_FRAMES_MAX + 1) * sizeof(*f->ids));
	f->keys = malloc((CS_FRAMES_MAX + 1) * sizeof(*f->keys));
	if (!f->ids || !f->keys || cs_agg_new(&f->agg)) {
		cs_folded_free(f);
		return -ENOMEM;
	}
	*out = f;
	return 0;
}

void cs_folded_free(struct cs_folded *f)
{
	if (!f)
		return;
	cs_folded_flush(f);
	cs_agg_free(f->agg);
	free(f->ids);
	free(f->keys);
	free(f);
}

static bool is_kernel_mode(uint8_t cpumode)
{
	return cpumode == CS_MISC_KERNEL || cpumode == CS_MISC_GUEST_KERNEL;
}

/* The key that names a frame in folded output: the symbol alone when it is
 * known (stackcollapse-perf merges a name across dsos), else the dso. */
static bool frame_key(const struct cs_folded *f, const struct cs_frame *fr,
		      struct cs_agg_key *k)
{
	bool kernel = is_kernel_mode(fr->cpumode) || fr->loc.kernel;

	memset(k, 0, sizeof(*k));
	switch (fr->kind) {
	case CS_FRAME_MISSING_USER:
		if (f->o.no_user)
			return false;
		k->flags = F_MISSING | ((uint32_t)fr->missing << 8);
		return true;
	case CS_FRAME_COOKIE:
		if (f->o.no_user)
			return false;
		k->flags = F_COOKIE;
		return true;
	case CS_FRAME_ADDR:
		break;
	}
	if ((kernel && f->o.no_kernel) || (!kernel && f->o.no_user))
		return false;
	if (fr->loc.sym && fr->loc.sym[0])
		k->sym = fr->loc.sym;
	else
		k->dso = fr->loc.dso_name;
	if (kernel && f->o.annotate)
		k->flags |= F_KERNEL;
	return true;
}

/* A sample's frames as keys into keys[] (room for CS_FRAMES_MAX + 1):
 * filtered, with the off-CPU leaf or the empty marker. Returns how many. */
static uint32_t folded_keys(const struct cs_folded *f, enum cs_off_cpu_state state,
			    const struct cs_frame *frames, size_t nr,
			    struct cs_agg_key *keys)
{
	uint32_t n = 0;

	if (nr > CS_FRAMES_MAX)
		nr = CS_FRAMES_MAX;
	if (state != CS_OFF_CPU_NONE)
		keys[n++] = (struct cs_agg_key){
			.flags = F_OFF_CPU | (uint32_t)state << 8 };
	for (size_t i = 0; i < nr; i++)
		if (frame_key(f, &frames[i], &keys[n]))
			n++;
	if (!n)
		keys[n++] = (struct cs_agg_key){ .flags = F_EMPTY };
	return n;
}

/* Counts a sample (its keys, its comm) in the table: on the counting
 * thread, if there is one. */
static int folded_count(struct cs_folded *f, const struct cs_agg_key *keys,
			uint32_t n, const char *comm, uint64_t period)
{
	uint32_t tag = 0;
	int err = cs_agg_frames(f->agg, keys, n, f->ids);

	if (!err && f->o.comm) {
		/* the command name may change under us: the table keeps a copy */
		struct cs_agg_key k = { .sym = comm, .flags = F_COMM };

		err = cs_agg_frame_copy(f->agg, &k, &tag);
	}
	if (err)
		return err;
	if (f->o.use_period)
		err = cs_agg_add(f->agg, tag, f->ids, n, 0, period, NULL);
	else
		err = cs_agg_add(f->agg, tag, f->ids, n, 1, 0, NULL);
	if (!err)
		f->total += f->o.use_period ? period : 1;
	return err;
}

/* The counting thread: the samples of a batch, in order. */
static int count_rec(void *ctx, const struct cs_agg_key *keys, uint32_t nr,
		     const char *comm, uint64_t period)
{
	return folded_count(ctx, keys, nr, comm, period);
}

static int count_batch(void *ctx, const void *buf, size_t len)
{
	return cs_agg_rec_walk(buf, len, count_rec, ctx);
}

static int folded_add(struct cs_folded *f, enum cs_off_cpu_state state,
		      const struct cs_frame *frames, size_t nr, const char *comm,
		      uint64_t period)
{
	size_t room = (nr > CS_FRAMES_MAX ? CS_FRAMES_MAX : nr) + 1;
	struct cs_agg_rec *rec;
	uint32_t n;

	if (!comm)
		comm = "[unknown]";
	/* with jobs to spare, the table is filled on a thread of its own
	 * while this one reads and resolves the next samples */
	if (f->o.jobs > 1 && !f->handoff && !f->flushed)
		f->flushed = cs_handoff_new(count_batch, f, &f->handoff) != 0;
	if (!f->handoff) {
		n = folded_keys(f, state, frames, nr, f->keys);
		return folded_count(f, f->keys, n, comm, period);
	}
	/* the keys are made in the batch: room for every frame and one */
	if (!f->o.comm)
		comm = "";
	rec = cs_agg_rec_append(f->handoff, room, comm, strlen(comm));
	if (!rec)
		return -ENOMEM;
	rec->nr = folded_keys(f, state, frames, nr, cs_agg_rec_room(rec));
	rec->period = period;
	return cs_handoff_error(f->handoff);
}

int cs_folded_flush(struct cs_folded *f)
{
	int err = cs_handoff_finish(f->handoff);

	f->handoff = NULL;
	f->flushed = true;
	return err;
}

int cs_folded_add(struct cs_folded *f, const struct cs_frame *frames,
		  size_t nr, const char *comm, uint64_t period)
{
	return folded_add(f, CS_OFF_CPU_NONE, frames, nr, comm, period);
}

int cs_folded_add_off_cpu(struct cs_folded *f, const struct cs_frame *frames,
			  size_t nr, const char *comm, uint64_t period,
			  enum cs_off_cpu_state state)
{
	return folded_add(f, state, frames, nr, comm, period);
}

uint64_t cs_folded_total(const struct cs_folded *f)
{
	return f->total;
}

bool cs_folded_wants(const struct cs_folded *f, uint32_t pid, uint32_t tid)
{
	if (f->o.pids && !cs_id_list_has(f->o.pids, pid))
		return false;
	return !f->o.tids || cs_id_list_has(f->o.tids, tid);
}

bool cs_folded_wants_comm(const struct cs_folded *f)
{
	return f->o.comm;
}

/* ---- writing ------------------------------------------------------------ */

/* every stack's line, tens of MB on a big profile: big_alloc.h's */
struct buf {
	char *p;
	size_t len, cap;
};

static int buf_reserve(struct buf *b, size_t more)
{
	size_t n = b->cap ? b->cap : 4096;
	char *q;

	if (more > SIZE_MAX / 2 - b->len)
		return -ENOMEM;
	if (b->len + more <= b->cap)
		return 0;
	while (n < b->len + more)
		n *= 2;
	q = cs_big_realloc(b->p, n, false);
	if (!q)
		return -ENOMEM;
	b->p = q;
	b->cap = n;
	return 0;
}

static int buf_add(struct buf *b, const char *s, size_t n)
{
	int err = buf_reserve(b, n + 1);

	if (err)
		return err;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* stackcollapse-perf's tidying: ';' would split the frame, arguments make
 * every overload a different frame, quotes upset the SVG. */
static int add_tidy(struct buf *b, const char *s, bool comm)
{
	size_t n = strlen(s);
	int err = buf_reserve(b, n + 1);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!comm && c == '(' &&
		    strncmp(s + i + 1, "anonymous namespace)", 20))
			break;
		if (c == '"' || c == '\'')
			continue;
		if (c == ';')
			c = ':';
		else if (comm && c == ' ')
			c = '_';
		b->p[b->len++] = c;
	}
	b->p[b->len] = '\0';
	return 0;
}

static int add_frame_name(struct buf *b, const struct cs_agg_key *k)
{
	char tmp[512];
	int err;

	if (k->flags & F_MISSING) {
		const char *s = cs_out_missing_user_name(
				(enum cs_missing_reason)(k->flags >> 8));
		return buf_add(b, s, strlen(s));
	}
	if (k->flags & F_EMPTY)
		return buf_add(b, "[kernel]", 8);
	if (k->flags & F_OFF_CPU) {
		const char *s = cs_out_off_cpu_name((enum cs_off_cpu_state)(k->flags >> 8));
		return buf_add(b, s, strlen(s));
	}
	if (k->sym) {
		err = add_tidy(b, k->sym, false);
	} else if (k->dso && !(k->flags & F_COOKIE)) {
		snprintf(tmp, sizeof(tmp), "[%s]", base_name(k->dso));
		err = add_tidy(b, tmp, false);
	} else {
		err = buf_add(b, "[unknown]", 9);
	}
	if (!err && (k->flags & F_KERNEL))
		err = buf_add(b, "_[k]", 4);
	return err;
}

struct line {
	size_t off;
	uint64_t count;
};

static int cmp_line(const void *a, const void *b, void *ctx)
{
	const char *text = ctx;

	return strcmp(text + ((const struct line *)a)->off,
		      text + ((const struct line *)b)->off);
}

int cs_folded_write(struct cs_folded *f, FILE *out)
{
	int err = cs_folded_flush(f);
	size_t nr = cs_agg_nr_stacks(f->agg), w = 0;
	struct line *lines = cs_big_calloc(nr ? nr : 1, sizeof(*lines));
	uint32_t *frames = malloc((cs_agg_max_depth(f->agg) + 1) * sizeof(*frames));
	struct buf b = { 0 };
	struct cs_agg_stack st;

	if (!err && (!lines || !frames))
		err = -ENOMEM;

	for (size_t i = 0; !err && i < nr; i++) {
		cs_agg_stack(f->agg, (uint32_t)i, frames, &st);
		lines[i].off = b.len;
		lines[i].count = f->o.use_period ? st.period : st.count;
		if (f->o.comm) {
			err = add_tidy(&b, cs_agg_frame_key(f->agg, st.tag)->sym, true);
			if (!err)
				err = buf_add(&b, ";", 1);
		}
		/* stored innermost first; folded lines start at the root */
		for (uint32_t j = st.nr; !err && j-- > 0; ) {
			err = add_frame_name(&b, cs_agg_frame_key(f->agg, st.frames[j]));
			if (!err && j)
				err = buf_add(&b, ";", 1);
		}
		if (!err)	/* keep the terminating NUL between lines */
			err = buf_reserve(&b, 1);
		if (!err)
			b.len++;
	}
	if (!err && nr) {
		qsort_r(lines, nr, sizeof(*lines), cmp_line, b.p);
		/* two symbols can tidy to one name: their lines merge */
		for (size_t i = 0; i < nr; i++) {
			if (w && !strcmp(b.p + lines[w - 1].off, b.p + lines[i].off))
				lines[w - 1].count += lines[i].count;
			else
				lines[w++] = lines[i];
		}
		for (size_t i = 0; i < w; i++) {
			uint64_t c = lines[i].count;

			/* a stack whose time rounds to nothing is not drawn */
			if (f->o.period_div > 1 &&
			    !(c = (c + f->o.period_div / 2) / f->o.period_div))
				continue;
			fprintf(out, "%s %" PRIu64 "\n", b.p + lines[i].off, c);
		}
		if (fflush(out) || ferror(out))
			err = -EIO;
	}
	cs_big_free(b.p);
	cs_big_free(lines);
	free(frames);
	return err;
}
