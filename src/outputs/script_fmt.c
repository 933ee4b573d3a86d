/* script_fmt.c - script's formatting thread: it makes the text of the
 * batches of operations the reading thread sends (script_int.h, OP_TEXT),
 * naming addresses itself (OP_AT), and writes it. */
#include "outputs/script_int.h"
#include "lib/session/interrupt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#define JUDGE_NS (10 * 1000000ull)	/* a look at the threads this often */
#define JUDGE_POOR 3			/* poor looks in a row: given up */
#define WAITS_MAX 1024			/* script_fmt_stack_used()'s: given up */

/* With a formatting thread, addresses are named there (OP_AT): it gets
 * the tables for their lines; with inlined calls, it also counts a
 * stack's lines against --max-stack (OP_STACK). */
int script_fmt_names_start(struct cs_script *sc)
{
	struct cs_script *c = sc->fmt->out;

	/* the tables, then the arena, in one region (at_texts owns it): the
	 * tables are looked up at random, at every OP_AT and OP_SLOT, and
	 * on huge pages (where the kernel gives them) those lookups and
	 * their prefetches miss no TLB, which on 4 KiB pages took a third
	 * of this thread's time on profiles of new addresses */
	c->at_texts = aligned_alloc(HUGE_PAGE, AT_REGION);
	if (!c->at_texts || cs_place_lines_new(&c->at_places))
		return -ENOMEM;
	madvise(c->at_texts, AT_REGION, MADV_HUGEPAGE);
	c->at_addrs = (struct at_addr *)(c->at_texts + LC_SLOTS);
	c->at_arena = (char *)(c->at_addrs + LC_SLOTS);
	memset(c->at_texts, 0, (size_t)(c->at_arena - (char *)c->at_texts));
	c->at_gen = 1;
	sc->fmt_names = true;
	sc->stack_counts = !sc->no_inline;
	/* with inlined calls, naming a user address is the more work (its
	 * DWARF, more lines): kernel addresses, a third to a half of a
	 * profile's, are named here, which evens the threads out */
	sc->fmt_kernel = sc->no_inline;
	return 0;
}

/* How many of an address's `lines` lines the stack being written may
 * still show: no more than the reading thread's cut (0: none) nor, after
 * OP_STACK, than are left of --max-stack in the count they are in. */
static inline __attribute__((always_inline)) size_t
stack_take(struct cs_script *c, size_t lines, size_t cut)
{
	size_t *left = &c->stack_left[c->stack_user];
	size_t n = cut && cut < lines ? cut : lines;

	if (n > *left)
		n = *left;
	*left -= n;
	return n;
}

/* The first n of the `lines` lines of text[0, len), by reference. */
static inline __attribute__((always_inline)) void
put_lines(struct cs_script *c, const char *text, size_t len, size_t lines,
	  size_t n)
{
	if (n == lines)			/* nearly always: all of them */
		put_ref(c, text, len);
	else if (n)
		put_ref(c, text, script_prefix_len(text, len, n));
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The time a thread ran and the time it waited for a CPU, in ns, from
 * its schedstat file (fd). False if it cannot be read. */
static bool schedstat_read(int fd, uint64_t *run, uint64_t *wait)
{
	char buf[96];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	unsigned long long r, w;

	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &r, &w) != 2)
		return false;
	*run = r;
	*wait = w;
	return true;
}

/* No more looks (no schedstat): the two threads go on as they are. */
static void judge_stop(struct formatter *f)
{
	for (int i = 0; i < 2; i++) {
		if (f->schedstat[i] >= 0)
			close(f->schedstat[i]);
		f->schedstat[i] = -1;
	}
}

/* The formatting thread given up, for reason why: everything sent to
 * it is formatted and written, it ends, and this thread goes on as with
 * -j 1 - the symbol tables its own again, the line cache's text taken
 * over from that thread (naming every address again would cost as much
 * as the thread saved). The bytes are the same. Returns 0, -ENOMEM, or 1
 * when the output could not be written (io_error says why). */
static int fmt_give_up(struct cs_script *sc, enum cs_script_fmt_reason why)
{
	const struct cs_script *c = sc->fmt->out;

	script_ops_sync(sc);
	/* a failed write: that thread formats no more, nothing goes on */
	if (sc->io_error)
		return 1;
	sc->fmt_given_up = sc->fmt->sent;
	sc->fmt_reason = why;
	sc->fmt_waits = sc->fmt->waits;
	/* both threads keep the same account of the arena (the other's
	 * starts over at its next OP_DEF, until which this one's is empty) */
	if (!sc->reset_pending && c->arena_len != sc->arena_len)
		abort();		/* this file's bug */
	script_lines_take(sc, c);
	script_formatter_stop(sc);
	sc->fmt_names = sc->fmt_kernel = sc->stack_counts = false;
	sc->reset_pending = false;
	sc->buf = sc->filling->buf;
	sc->len = 0;
	sc->room_end = BUF_SIZE;
	/* (with --stats this thread kept one, of that text's offsets) */
	return sc->places ? 0 : cs_place_lines_new(&sc->places);
}

/* Whether the formatting thread pays, looked at every JUDGE_NS: on a
 * machine whose other CPUs are busy the two threads take turns on one,
 * and then the hand-over is all they add (+15% CPU time on a real
 * profile, +50% on one of new addresses). By the scheduler's account
 * over the last look's time: when together they ran little more than
 * that time, and waited for a CPU much of it, JUDGE_POOR looks in a row,
 * the formatting thread is given up (fmt_give_up()). A thread starved of
 * work sleeps, which is no wait for a CPU: that is left alone. So is a
 * look's time in which this thread waited for that one to count a
 * stack's lines (script_fmt_stack_used()): the threads took turns
 * there however many CPUs the machine has, which says nothing of it -
 * the look counts neither way. Those waits are judged by their own
 * count: WAITS_MAX of them, and the thread is given up. Called between
 * samples. Returns 0 or fmt_give_up()'s error. */
int script_fmt_judge(struct cs_script *sc)
{
	struct formatter *f = sc->fmt;
	uint64_t wall = now_ns(), run[2], wait[2];
	pid_t tid = atomic_load(&f->tid);
	char path[64];
	double span, ran, waited;

	f->judge_due = false;
	if (f->waits >= WAITS_MAX)
		return fmt_give_up(sc, CS_SCRIPT_FMT_WAITS);
	if (f->schedstat[1] < 0) {
		if (!tid)
			return 0;
		snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
		if ((f->schedstat[1] = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			judge_stop(f);
			return 0;
		}
	}
	if (!schedstat_read(f->schedstat[0], &run[0], &wait[0]) ||
	    !schedstat_read(f->schedstat[1], &run[1], &wait[1])) {
		judge_stop(f);
		return 0;
	}
	if (f->judged_wall && f->waits == f->judged_waits) {
		span = (double)(wall - f->judged_wall);
		ran = (double)(run[0] - f->judged_run[0] + run[1] - f->judged_run[1]);
		waited = (double)(wait[0] - f->judged_wait[0] +
				  wait[1] - f->judged_wait[1]);
		f->poor = ran < 1.05 * span && waited > 0.25 * span ? f->poor + 1 : 0;
	}
	f->judged_wall = wall;
	f->judged_waits = f->waits;
	memcpy(f->judged_run, run, sizeof(run));
	memcpy(f->judged_wait, wait, sizeof(wait));
	return f->poor >= JUDGE_POOR ? fmt_give_up(sc, CS_SCRIPT_FMT_ONE_CPU) : 0;
}

/* Room for n more bytes in at_arena. When it is full it starts over:
 * what refers to its text is written first, and a line kept there is
 * made again when it is next asked for. */
static void at_room(struct cs_script *c, size_t n)
{
	if (c->at_len + n <= AT_ARENA)
		return;
	script_out_drain(c);
	c->at_len = 0;
	cs_place_lines_clear(c->at_places);
	if (++c->at_gen)
		return;
	/* back to generations old lines may have: they are made older */
	for (size_t i = 0; i < LC_SLOTS; i++)
		c->at_texts[i].gen = 0;
	c->at_gen = 1;
}

/* a's location (cs_machine_resolve()'s answer), from put_at()'s bin and
 * off, and the lengths of its names (lens NULL: not wanted). */
static void at_resolve(const struct at_addr *a, struct cs_location *loc,
		       struct cs_loc_lens *lens)
{
	if (a->kernel)
		cs_machine_kernel_place_resolve(a->bin, a->off, a->addr, loc,
						lens);
	else
		cs_machine_place_resolve(a->bin, a->off, loc, lens);
}

/* A copy of the line made at a's place for another address, with a's
 * (or that line itself, for the same address), into t. False when there
 * is none, or no room for the copy. */
static bool at_copy(struct cs_script *c, const struct at_addr *a,
		    const struct cs_place_line *pl, struct at_text *t)
{
	char *text;

	if (!cs_place_lines_holds(c->at_places, pl, a->bin, a->off) ||
	    (pl->addr != a->addr && c->at_len + pl->len > AT_ARENA))
		return false;
	*t = (struct at_text){ .off = pl->text, .len = pl->len,
			       .gen = c->at_gen, .lines = pl->lines };
	if (pl->addr == a->addr)
		return true;
	text = memcpy(c->at_arena + c->at_len, c->at_arena + pl->text, pl->len);
	script_readdress(text, pl->len, pl->lines, a->addr);
	t->off = (uint32_t)c->at_len;
	c->at_len += pl->len;
	return true;
}

/* The lines made at the arena's end, text[0, end), are a's from now on:
 * where they are into t, and into the place table's slot pl. */
static void at_keep(struct cs_script *c, const struct at_addr *a,
		    struct cs_place_line *pl, struct at_text *t,
		    const char *text, const char *end, size_t lines)
{
	*t = (struct at_text){ .off = (uint32_t)c->at_len,
			       .len = (uint16_t)(end - text), .gen = c->at_gen,
			       .lines = (uint8_t)lines };
	c->at_len += t->len;
	if (pl)
		*pl = (struct cs_place_line){
			.bin = a->bin, .off = a->off, .addr = a->addr,
			.text = t->off, .len = t->len, .lines = t->lines,
			.gen = cs_place_lines_gen(c->at_places),
		};
}

/* at_make() for a user address with a symbol, without --no-inline: its
 * inlined calls' lines, then its own. */
static bool at_make_lines(struct cs_script *c, const struct at_addr *a,
			  const struct cs_frame *fr,
			  const struct cs_loc_lens *lens,
			  struct cs_place_line *pl, struct at_text *t)
{
	const char *names[INLINES_MAX];
	struct line_names nm[INLINES_MAX + 1];	/* the inlined calls', then its own */
	size_t n, bound, left;
	char *text, *end;

	n = cs_machine_place_inlines(a->bin, a->off, names, INLINES_MAX);
	if (n > INLINES_MAX)
		n = INLINES_MAX;
	bound = script_addr_names(c, fr, lens, names, n, nm);
	if (bound > LC_MAX_TEXT) {
		t->gen = 0;
		if ((left = stack_take(c, n + 1, 0)))
			script_put_long_lines(c, fr, names, n, bound, left);
		return false;
	}
	at_room(c, bound);
	text = end = c->at_arena + c->at_len;
	for (size_t i = 0; i <= n; i++) {
		end = script_frame_to(end, fr, '\t', &nm[i]);
		*end++ = '\n';
	}
	at_keep(c, a, pl, t, text, end, n + 1);
	return true;
}

/* a's lines made in at_arena - a copy of the lines made at the same
 * place for another address, or named and formatted - and where they
 * are, into t. False when they are too long to keep (as put_addr_new()
 * decides): they are written as they are made, as many as the stack may
 * show. Kernel addresses share one space: nothing to share by place. */
static bool at_make(struct cs_script *c, const struct at_addr *a,
		    struct at_text *t)
{
	struct cs_place_line *pl = NULL;
	struct cs_frame fr;
	struct cs_loc_lens lens;
	struct line_names nm;
	char *text, *end;
	size_t bound;

	/* not zeroed whole: at_resolve() clears fr.loc, and a string
	 * instruction clearing the rest took a third of this function */
	fr.addr = a->addr;
	fr.cpumode = 0;
	fr.kind = CS_FRAME_ADDR;
	fr.missing = 0;

	if (!a->kernel) {
		pl = cs_place_lines_slot(c->at_places, a->bin, a->off);
		if (at_copy(c, a, pl, t))
			return true;
	}
	at_resolve(a, &fr.loc, &lens);
	if (!c->no_inline && fr.loc.sym && !fr.loc.kernel)
		return at_make_lines(c, a, &fr, &lens, pl, t);
	/* one line: most addresses, every one with --no-inline */
	script_frame_names(c, &fr, &lens, &nm);
	bound = 80 + nm.sym_len + nm.dso_len;
	if (bound > LC_MAX_TEXT) {
		t->gen = 0;
		if (stack_take(c, 1, 0)) {
			script_put_frame(c, &fr, '\t');
			put_ch(c, '\n');
		}
		return false;
	}
	at_room(c, bound);
	text = c->at_arena + c->at_len;
	end = script_frame_to(text, &fr, '\t', &nm);
	*end++ = '\n';
	at_keep(c, a, pl, t, text, end, 1);
	return true;
}

/* t's lines, as many as the stack may show (for every hit: inline). */
static inline __attribute__((always_inline)) void
at_put(struct cs_script *c, const struct at_text *t)
{
	put_lines(c, c->at_arena + t->off, t->len, t->lines,
		  stack_take(c, t->lines, 0));
}

/* OP_AT and OP_SLOT: a line named on this thread. */
static void at_run(struct cs_script *c, const uint64_t *w)
{
	struct at_addr one_addr, *a = &one_addr;
	struct at_text one_text, *t = &one_text;
	size_t slot = w[0] >> 32;
	struct cs_frame fr;

	c->fields = (unsigned int)(w[0] >> 8) & 0xfff;
	if ((w[0] & 0xff) == OP_SLOT) {
		a = &c->at_addrs[slot];
		t = &c->at_texts[slot];
		if (t->gen == c->at_gen) {
			at_put(c, t);
			return;
		}
	} else {
		if (w[0] & OP_AT_KEEP) {
			a = &c->at_addrs[slot];
			t = &c->at_texts[slot];
		}
		*a = (struct at_addr){ .addr = w[1], .off = w[3],
				       .bin = (const void *)(uintptr_t)w[2],
				       .kernel = w[0] & OP_AT_KERNEL };
		if (w[0] & OP_AT_IP) {
			fr = (struct cs_frame){ .kind = CS_FRAME_ADDR, .addr = a->addr };
			at_resolve(a, &fr.loc, NULL);
			script_put_frame(c, &fr, ' ');
			return;
		}
		t->gen = 0;		/* made below, if at all */
	}
	/* past --max-stack (the reading thread counted this stack's lines
	 * here as one each): not named, as -j 1 never resolves it - a
	 * lookup may build a table and save it (a PLT's). Made when asked
	 * for again. */
	if (!c->stack_left[c->stack_user])
		return;
	if (at_make(c, a, t))
		at_put(c, t);
}

/* The slots the OP_AT or OP_SLOT at p will read are asked for early: the
 * tables are bigger than the CPU's caches, and the batch says which
 * operations come next. */
static void op_prefetch(const struct cs_script *c, const char *p)
{
	const uint64_t *w = (const uint64_t *)p;

	switch (*w & 0xff) {
	case OP_AT:
		/* a kernel address has no place slot (at_make()) */
		if (!(*w & OP_AT_KERNEL))
			__builtin_prefetch(cs_place_lines_slot(c->at_places,
							       (const void *)(uintptr_t)w[2],
							       w[3]));
		__builtin_prefetch(&c->at_addrs[*w >> 32], 1);
		/* fall through */
	case OP_SLOT:
		__builtin_prefetch(&c->at_texts[*w >> 32]);
	}
}

/* Formats a batch of operations (see OP_TEXT) with printer c. */
static void ops_run(struct cs_script *c, const struct ops *b)
{
	const char *p = b->buf, *end = b->buf + b->len;
	size_t at_next = 0;		/* the next OP_AT or OP_SLOT's index */

	for (size_t i = 0; i < AT_AHEAD && i < b->nr_at_ops; i++)
		op_prefetch(c, b->buf + b->at_ops[i]);
	while (p < end) {
		const uint64_t *w = (const uint64_t *)p;
		size_t lines, len;
		char *text, *q;

		switch (*w & 0xff) {
		case OP_TEXT:
			len = *w >> 8;
			script_put_mem(c, p + 8, len);
			p += (8 + len + 7) & ~(size_t)7;
			continue;
		case OP_HEAD: {
			const struct head_op *h = (const struct head_op *)p;
			struct sample_head sh = {
				.pid = h->pid, .tid = h->tid, .cpu = h->cpu,
				.time = h->time, .period = h->period,
			};

			c->fields = (unsigned int)(h->word >> 8);
			script_put_sample_head(c, h->e, &sh, h->comm);
			p += sizeof(*h);
			continue;
		}
		case OP_REF:
			text = c->arena + (*w >> 40);
			lines = (*w >> 16) & 0xff;
			len = (*w >> 24) & 0xffff;
			put_lines(c, text, len, lines,
				  stack_take(c, lines, (*w >> 8) & 0xff));
			p += 8;
			continue;
		case OP_COPY:
			len = (*w >> 16) & 0xffff;
			text = memcpy(c->arena + c->arena_len,
				      c->arena + (*w >> 32), len);
			script_readdress(text, len, w[2], w[1]);
			c->arena_len += len;
			put_lines(c, text, len, w[2],
				  stack_take(c, w[2], (*w >> 8) & 0xff));
			p += 24;
			continue;
		case OP_STACK:
			if (*w & OP_STACK_RESET)
				c->stack_left[0] = c->stack_left[1] = *w >> 32;
			c->stack_user = *w & OP_STACK_USER;
			p += 8;
			continue;
		case OP_LINE:
			len = *w >> 8;
			if (stack_take(c, 1, 0))
				script_put_mem(c, p + 8, len);
			p += (8 + len + 7) & ~(size_t)7;
			continue;
		case OP_AT:
		case OP_SLOT:
			if (at_next + AT_AHEAD < b->nr_at_ops)
				op_prefetch(c, b->buf + b->at_ops[at_next + AT_AHEAD]);
			at_next++;
			at_run(c, w);
			p += (*w & 0xff) == OP_AT ? 32 : 8;
			continue;
		case OP_UNK:
			if (stack_take(c, 1, 0)) {
				q = room(c, 64);
				c->len += (size_t)(script_unknown_to(q, w[1], (unsigned int)(*w >> 8)) - q);
			}
			p += 16;
			continue;
		case OP_DEF: {
			const struct def_op *d = (const struct def_op *)p;
			struct cs_frame fr = { .addr = d->addr,
					       .loc.sym_offset = d->sym_offset };

			if ((*w >> 8) & 1) {
				/* what refers to the old text goes first */
				script_out_drain(c);
				c->arena_len = 0;
			}
			text = q = c->arena + c->arena_len;
			for (size_t i = 0; i < d->lines; i++) {
				q = script_frame_to(q, &fr, '\t', &d->nm[i]);
				*q++ = '\n';
			}
			len = (size_t)(q - text);
			/* script_frame_len() told the reading thread where the next
			 * text goes */
			if (len != *w >> 32)
				abort();
			c->arena_len += len;
			put_lines(c, text, len, d->lines,
				  stack_take(c, d->lines, (*w >> 16) & 0xff));
			p += (d->size + 7) & ~(size_t)7;
			continue;
		}
		}
		abort();		/* not an operation: this file's bug */
	}
}

static void *formatter_main(void *arg)
{
	struct formatter *f = arg;
	struct ops *b;

	atomic_store(&f->tid, gettid());
	while ((b = cs_queue_pop(f->todo))) {
		if (!atomic_load(&f->failed)) {
			ops_run(f->out, b);
			if (b->sync)
				script_out_drain(f->out);
			/* the session may wait on a quiet pipe: it would
			 * see this only at its next batch (asking twice,
			 * after the writer thread did, does no harm) */
			if (f->out->io_error) {
				atomic_store(&f->failed, f->out->io_error);
				if (f->out->session)
					cs_session_interrupt(f->out->session);
			}
		}
		b->len = 0;
		b->nr_at_ops = 0;
		b->sync = false;
		cs_queue_push(f->done, b);
		atomic_fetch_add_explicit(&f->formatted, 1, memory_order_relaxed);
	}
	script_out_drain(f->out);
	return NULL;
}

static void formatter_free(struct formatter *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < OPS_BATCHES; i++) {
		free(f->batches[i].buf);
		free(f->batches[i].at_ops);
	}
	judge_stop(f);
	free(f->name_lens);
	cs_script_free(f->out);
	cs_queue_free(f->todo);
	cs_queue_free(f->done);
	free(f);
}

/* Starts the formatting thread, which writes what it formats on a third
 * when o->jobs allows. Returns 0, or -ENOMEM, or -EAGAIN when no thread
 * could be made. */
int script_formatter_start(struct cs_script *sc,
			   const struct cs_script_opts *o)
{
	/* on whole cache lines, as its members that the two threads write
	 * are laid out (struct ops, formatted): calloc() aligns to 16 */
	struct formatter *f = aligned_alloc(_Alignof(struct formatter),
					    sizeof(*f));
	int err = -ENOMEM;

	if (f) {
		memset(f, 0, sizeof(*f));
		f->schedstat[0] = f->schedstat[1] = -1;
	}
	if (!f || !(f->name_lens = calloc(1u << NAME_LEN_BITS,
					  sizeof(*f->name_lens))) ||
	    cs_queue_new(OPS_BATCHES + 1, &f->todo) ||
	    cs_queue_new(OPS_BATCHES, &f->done))
		goto fail;
	for (size_t i = 0; i < OPS_BATCHES; i++) {
		f->batches[i].buf = malloc(OPS_SIZE);
		f->batches[i].at_ops = malloc(OPS_SIZE / 8 * sizeof(uint32_t));
		if (!f->batches[i].buf || !f->batches[i].at_ops)
			goto fail;
		if (i)
			cs_queue_push(f->done, &f->batches[i]);
	}
	if ((err = script_printer_new(o, o->jobs >= 3, &f->out)))
		goto fail;
	atomic_init(&f->failed, 0);
	atomic_init(&f->formatted, 0);
	atomic_init(&f->tid, 0);
	/* this thread's account (the other's is opened at the first look);
	 * without one, no look */
	f->schedstat[0] = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (pthread_create(&f->thread, NULL, formatter_main, f)) {
		err = -EAGAIN;
		goto fail;
	}
	sc->name_lens = f->name_lens;
	sc->fmt = f;
	sc->ops = &f->batches[0];
	sc->buf = sc->ops->buf;
	sc->len = 0;
	sc->room_end = 0;
	return 0;
fail:
	formatter_free(f);
	return err;
}

/* The batch being filled goes to the formatting thread, an empty one
 * taking its place. */
void script_ops_out(struct cs_script *sc)
{
	struct formatter *f = sc->fmt;

	script_text_close(sc);
	sc->ops->len = sc->len;
	cs_queue_push(f->todo, sc->ops);
	f->sent++;
	if (f->schedstat[0] >= 0 && !f->judge_due &&
	    (!f->judged_wall || now_ns() - f->judged_wall >= JUDGE_NS))
		f->judge_due = true;
	sc->ops = cs_queue_pop(f->done);
	sc->buf = sc->ops->buf;
	sc->len = 0;
	take_failure(sc, &f->failed);
}

/* Everything sent so far is formatted when it returns (and, with sync,
 * written): the formatting thread waits for more, touching nothing. */
static void ops_wait(struct cs_script *sc, bool sync)
{
	struct formatter *f = sc->fmt;

	sc->ops->sync = sync;
	script_ops_out(sc);
	ring_wait(f->done, OPS_BATCHES);
	take_failure(sc, &f->failed);
}

/* script_out_drain() through the formatting thread: everything so far is
 * formatted and written when it returns. */
void script_ops_sync(struct cs_script *sc)
{
	ops_wait(sc, true);
}

size_t script_fmt_stack_used(struct cs_script *sc, bool user)
{
	const struct cs_script *c = sc->fmt->out;

	ops_wait(sc, false);
	/* a profile where this keeps coming back (every stack's first
	 * address new, and beyond the lines shown a binary never shown)
	 * would have the two threads take turns: given up, at the next
	 * sample (script_fmt_judge()) */
	if (++sc->fmt->waits >= WAITS_MAX)
		sc->fmt->judge_due = true;
	/* a failed write: that thread counts no more; nothing is shown */
	if (sc->io_error)
		return sc->max_stack;
	return sc->max_stack - c->stack_left[user];
}

void script_formatter_stop(struct cs_script *sc)
{
	if (!sc->fmt)
		return;
	cs_queue_push(sc->fmt->todo, NULL);
	pthread_join(sc->fmt->thread, NULL);
	formatter_free(sc->fmt);
	sc->fmt = NULL;
	sc->ops = NULL;
	sc->name_lens = NULL;
	sc->buf = NULL;
}
