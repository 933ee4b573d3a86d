/* script.c - perf script's text layout, written without stdio formatting.
 *
 * A profile of a million samples is tens of millions of frame lines, most
 * of them the same few thousand addresses again. The text is built in
 * chunks: each chunk is the new text, with references in between to the
 * cached text of addresses seen before (the line cache). The cached
 * text is copied once, when the chunk is written: gathered into one
 * buffer for a file or a pipe, where each piece of a writev() costs the
 * kernel more than the copy; for /dev/null not at all. An
 * address the cache misses is looked for by the binary and offset it
 * lies at (place_lines.h), where another process may have shown it.
 *
 * With jobs >= 2 the text is made on a second thread from what the
 * reading thread sends it (script_fmt.c; see OP_TEXT), and with jobs >= 3
 * written on a third (script_out.c). The bytes are the same as with one.
 * A sample's first line is script_head.c's.
 */
#include "outputs/script_int.h"
#include "lib/session/change.h"
#include "lib/trace/tracepoints.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

static const char no_map;

static uint32_t line_slot(uint64_t space, uint64_t addr)
{
	uint64_t h = (addr ^ space * 0x9e3779b97f4a7c15ULL) * 0xff51afd7ed558ccdULL;

	return (uint32_t)(h >> (64 - LC_BITS));
}

static int put_held(struct cs_script *sc);

/* ---- the printer ---------------------------------------------------------- */

/* The ring of stacks (struct stack), or -ENOMEM. */
static int stacks_new(struct cs_script *sc)
{
	sc->stacks = calloc(HELD + 1, sizeof(*sc->stacks));
	if (!sc->stacks)
		return -ENOMEM;
	for (int i = 0; i < HELD + 1; i++) {
		struct stack *st = &sc->stacks[i];

		st->frames = malloc(CS_FRAMES_MAX * sizeof(*st->frames));
		st->slots = malloc(CS_FRAMES_MAX * sizeof(*st->slots));
		st->places = malloc(CS_FRAMES_MAX * sizeof(*st->places));
		if (!st->frames || !st->slots || !st->places)
			return -ENOMEM;
	}
	return 0;
}

static void stacks_free(struct cs_script *sc)
{
	for (int i = 0; sc->stacks && i < HELD + 1; i++) {
		free(sc->stacks[i].frames);
		free(sc->stacks[i].slots);
		free(sc->stacks[i].places);
	}
	free(sc->stacks);
}

/* A printer that makes and writes the text itself, on a writer thread of
 * its own when `writer`. */
int script_printer_new(const struct cs_script_opts *o, bool writer,
		       struct cs_script **out)
{
	struct cs_script *sc = calloc(1, sizeof(*sc));
	int err;

	*out = NULL;
	if (!sc)
		return -ENOMEM;
	script_sink_init(&sc->sink, o->out ? o->out : stdout);
	sc->room_end = BUF_SIZE;
	sc->text_at = NO_TEXT;
	/* no thread to be had: the same text, written on this one */
	if (writer && (err = script_writer_start(sc)) && err != -EAGAIN) {
		cs_script_free(sc);
		return err;
	}
	if (!sc->writer) {
		sc->filling = &sc->own;
		if (script_chunk_init(&sc->own)) {
			cs_script_free(sc);
			return -ENOMEM;
		}
	}
	sc->buf = sc->filling->buf;
	sc->heads = calloc(HEADS, sizeof(*sc->heads));
	/* every frame looks a slot up, at random: on huge pages (where the
	 * kernel gives them) the lookups miss no TLB, and the text costs
	 * four page faults instead of two thousand. Room for the arena to
	 * grow (line_cache_room()): pages never touched cost nothing. */
	sc->lines = aligned_alloc(HUGE_PAGE, LC_REGION_MAX);
	if (stacks_new(sc) || !sc->heads || !sc->lines) {
		cs_script_free(sc);
		return -ENOMEM;
	}
	madvise(sc->lines, LC_REGION_MAX, MADV_HUGEPAGE);
	sc->arena = (char *)(sc->lines + LC_SLOTS);
	sc->arena_cap = LC_ARENA;
	sc->no_merge = o->no_merge;
	sc->no_inline = o->no_inline;
	sc->user_fields = o->fields;
	sc->fields = o->fields ? o->fields : CS_SCRIPT_DEFAULT;
	sc->max_stack = o->max_stack ? o->max_stack : PERF_MAX_STACK;
	sc->stack_left[0] = sc->stack_left[1] = SIZE_MAX;
	*out = sc;
	return 0;
}

/* With two threads, this one reads and the other formats and writes;
 * from three on, a third writes. */
int cs_script_new(const struct cs_script_opts *o, struct cs_script **out)
{
	int err = script_printer_new(o, false, out);

	/* this thread keeps the line cache (a formatting thread's printer
	 * only fills the arena as told) */
	if (!err)
		memset((*out)->lines, 0xff, LC_SLOTS * sizeof(*(*out)->lines));
	/* no thread to be had: the same text, made on this one */
	if (!err && o->jobs >= 2 &&
	    (err = script_formatter_start(*out, o)) == -EAGAIN)
		err = 0;
	if (err) {
		cs_script_free(*out);
		*out = NULL;
	}
	return err;
}

void cs_script_free(struct cs_script *sc)
{
	if (!sc)
		return;
	script_formatter_stop(sc);
	script_writer_stop(sc);
	script_chunk_free(&sc->own);
	stacks_free(sc);
	free(sc->heads);
	free(sc->lines);
	cs_place_lines_free(sc->places);
	free(sc->at_texts);		/* and at_addrs, at_arena */
	cs_place_lines_free(sc->at_places);
	free(sc);
}

int cs_script_parse_fields(const char *list, unsigned int *fields,
			   const char **bad, size_t *bad_len)
{
	static const struct { const char *name; unsigned int bit; } names[] = {
		{ "comm", CS_SCRIPT_COMM }, { "pid", CS_SCRIPT_PID },
		{ "tid", CS_SCRIPT_TID }, { "cpu", CS_SCRIPT_CPU },
		{ "time", CS_SCRIPT_TIME }, { "period", CS_SCRIPT_PERIOD },
		{ "event", CS_SCRIPT_EVENT }, { "ip", CS_SCRIPT_IP },
		{ "sym", CS_SCRIPT_SYM }, { "symoff", CS_SCRIPT_SYMOFF },
		{ "dso", CS_SCRIPT_DSO }, { "trace", CS_SCRIPT_TRACE },
	};
	bool modify = *list == '+' || *list == '-';
	unsigned int f = modify ? CS_SCRIPT_DEFAULT : 0;
	const char *p = list;

	for (;;) {
		size_t len = strcspn(p, ",");
		const char *name = p;
		char op = '+';
		size_t i;

		if (*name == '+' || *name == '-') {
			op = *name++;
			len--;
		}
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == len &&
			    !strncmp(names[i].name, name, len))
				break;
		if (!len || i == sizeof(names) / sizeof(names[0]) ||
		    (!modify && op == '-')) {
			*bad = name;
			*bad_len = len;
			return -EINVAL;
		}
		if (op == '-')
			f &= ~names[i].bit;
		else
			f |= names[i].bit;
		if (!p[len + (name - p)])
			break;
		p = name + len + 1;
	}
	/* symoff means nothing without sym */
	if (!(f & CS_SCRIPT_SYM))
		f &= ~CS_SCRIPT_SYMOFF;
	*fields = f;
	return 0;
}

int cs_script_flush(struct cs_script *sc)
{
	/* a run stopped by an error (no `end`) leaves samples held: the
	 * machine has not changed since they came (script_change()) */
	put_held(sc);
	script_out_drain(sc);
	return sc->io_error;
}

/* ---- samples -------------------------------------------------------------- */

/* script_put_frame() a piece at a time, for names too long for the buffer */
static void put_frame_pieces(struct cs_script *sc, const struct cs_frame *f,
			     char lead)
{
	const struct cs_location *l = &f->loc;
	unsigned int fl = sc->fields;

	put_ch(sc, lead);
	script_put_hex_w(sc, f->addr, 16);
	if (fl & CS_SCRIPT_SYM) {
		put_ch(sc, ' ');
		switch (f->kind) {
		case CS_FRAME_COOKIE:
			script_put_mem(sc, "(cookie)", 8);
			break;
		case CS_FRAME_MISSING_USER:
			script_put_mem(sc, "[user stack missing: ", 21);
			script_put_str(sc, cs_missing_reason_name(f->missing));
			put_ch(sc, ']');
			break;
		case CS_FRAME_ADDR:
			if (!l->sym) {
				script_put_mem(sc, "[unknown]", 9);
				break;
			}
			script_put_str(sc, l->sym);
			if (fl & CS_SCRIPT_SYMOFF) {
				script_put_mem(sc, "+0x", 3);
				script_put_hex_w(sc, l->sym_offset, 0);
			}
			break;
		}
	}
	if (fl & CS_SCRIPT_DSO) {
		script_put_mem(sc, " (", 2);
		script_put_str(sc, f->kind == CS_FRAME_ADDR && l->dso_name ?
			    l->dso_name : "[unknown]");
		put_ch(sc, ')');
	}
}

/* With a formatting thread, this one measures a user address's names but
 * does not copy them: their lengths are kept by the names' addresses
 * (names live as long as the machine), so that this thread need not read
 * each name again (a cache miss) for the other to write it. A kernel
 * symbol's name may be freed, and its memory reused. */
static size_t name_len(const struct cs_script *sc, const char *name,
		       bool kernel)
{
	struct name_len *e;

	if (!sc->name_lens || kernel)
		return strlen(name);
	e = &sc->name_lens[(uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ULL >>
			   (64 - NAME_LEN_BITS)];
	if (e->name != name) {
		e->name = name;
		e->len = strlen(name);
	}
	return e->len;
}

/* The names of frame f's line, and their lengths: from lens (the
 * resolution's, NULL: none) where it has them, else measured. */
void script_frame_names(const struct cs_script *sc, const struct cs_frame *f,
			const struct cs_loc_lens *lens, struct line_names *nm)
{
	const struct cs_location *l = &f->loc;
	unsigned int fl = sc->fields;
	bool known = lens && f->kind == CS_FRAME_ADDR;

	*nm = (struct line_names){ .missing = f->kind == CS_FRAME_MISSING_USER };
	if (fl & CS_SCRIPT_SYM) {
		switch (f->kind) {
		case CS_FRAME_COOKIE:
			nm->sym = "(cookie)";
			break;
		case CS_FRAME_MISSING_USER:
			nm->sym = cs_missing_reason_name(f->missing);
			break;
		case CS_FRAME_ADDR:
			nm->sym = l->sym ? l->sym : "[unknown]";
			nm->symoff = l->sym && (fl & CS_SCRIPT_SYMOFF);
			break;
		}
		nm->sym_len = known && l->sym ? lens->sym :
			      name_len(sc, nm->sym, l->kernel);
	}
	if (fl & CS_SCRIPT_DSO) {
		nm->dso = f->kind == CS_FRAME_ADDR && l->dso_name ?
			  l->dso_name : "[unknown]";
		nm->dso_len = known && l->dso_name ? lens->dso :
			      name_len(sc, nm->dso, l->kernel);
	}
}

/* The length of what script_frame_to() writes. */
size_t script_frame_len(const struct cs_frame *f, const struct line_names *nm)
{
	size_t n = 17;

	if (nm->sym) {
		n += 1 + nm->sym_len + (nm->missing ? 22 : 0);
		if (nm->symoff)
			n += 3 + (f->loc.sym_offset ?
				  (67 - __builtin_clzll(f->loc.sym_offset)) / 4 :
				  1);
	}
	if (nm->dso)
		n += 3 + nm->dso_len;
	return n;
}

/* One frame line without its newline at p, which has room for its names
 * and 80 bytes (17 + 1 + 22 + 3 + 16 + 3); returns its end. */
char *script_frame_to(char *p, const struct cs_frame *f, char lead,
		      const struct line_names *nm)
{
	*p++ = lead;
	p = hex_to(p, f->addr, 16);
	if (nm->sym) {
		*p++ = ' ';
		if (nm->missing) {
			p = cpy(p, "[user stack missing: ", 21);
			p = cpy(p, nm->sym, nm->sym_len);
			*p++ = ']';
		} else {
			p = cpy(p, nm->sym, nm->sym_len);
		}
		if (nm->symoff) {
			p = cpy(p, "+0x", 3);
			p = hex_to(p, f->loc.sym_offset, 0);
		}
	}
	if (nm->dso) {
		*p++ = ' ';
		*p++ = '(';
		p = cpy(p, nm->dso, nm->dso_len);
		*p++ = ')';
	}
	return p;
}

/* One frame line without its newline, written in one go. */
void script_put_frame(struct cs_script *sc, const struct cs_frame *f,
		      char lead)
{
	struct line_names nm;
	char *p;

	script_frame_names(sc, f, NULL, &nm);
	if (nm.sym_len > BUF_SIZE / 2 || nm.dso_len > BUF_SIZE / 2 ||
	    !(p = room(sc, nm.sym_len + nm.dso_len + 80))) {
		put_frame_pieces(sc, f, lead);
		return;
	}
	sc->len += (size_t)(script_frame_to(p, f, lead, &nm) - p);
}

/* perf shows each function inlined at a user address as a line of its
 * own above the frame - "(inlined)" in place of the dso, or as an ordinary
 * line when it has the frame's own name. Writes every line of the address
 * and returns how many. */
static size_t put_addr_lines(struct cs_script *sc, const struct cs_frame *f,
			     const char *const *names, size_t n)
{
	struct cs_frame inl;

	for (size_t i = 0; i < n; i++) {
		inl = *f;
		inl.loc.sym = names[i];
		if (strcmp(names[i], f->loc.sym))
			inl.loc.dso_name = "inlined";
		script_put_frame(sc, &inl, '\t');
		put_ch(sc, '\n');
	}
	script_put_frame(sc, f, '\t');
	put_ch(sc, '\n');
	return n + 1;
}

/* The text of an address's lines, cached by (address space, address): a
 * profile repeats a few thousand addresses millions of times, and a hit
 * is one reference instead of a resolution, an inline lookup and
 * formatting. e is the slot of (space, addr). */
static bool line_holds(const struct line_ent *e, uint64_t space, uint64_t addr)
{
	return e->addr == addr &&
	       (e->packed & ((1ull << LE_SPACE_BITS) - 1)) == space;
}

/* Room for bound more bytes in the arena. When it is full it starts over
 * rather than track what is still used; chunks not written yet refer to
 * its text, so they are written first. */
static void line_cache_room(struct cs_script *sc, size_t bound)
{
	if (sc->arena_len + bound <= sc->arena_cap)
		return;
	/* Where the place table finds lines other processes made (a
	 * system-wide profile: a thousand processes of one compiler), what
	 * the cache holds is worth keeping: the arena grows, once, instead
	 * of starting over (on the real profile 10,000 user
	 * addresses fewer to resolve again). Where it finds nothing
	 * (addresses all new), a bigger arena would only cost its pages.
	 * Only without a formatting thread, whose arena keeps the same
	 * account as this one. */
	if (sc->arena_cap < LC_ARENA_MAX && !sc->fmt && sc->place_pays) {
		sc->arena_cap = LC_ARENA_MAX;
		if (sc->arena_len + bound <= sc->arena_cap)
			return;
	}
	/* with a formatting thread it is that thread's cache that starts
	 * over, at the next OP_DEF; this one only keeps the same account */
	if (sc->fmt)
		sc->reset_pending = true;
	else
		script_out_drain(sc);
	memset(sc->lines, 0xff, LC_SLOTS * sizeof(*sc->lines));
	if (sc->places)
		cs_place_lines_clear(sc->places);
	sc->arena_len = 0;
	sc->arena_starts++;
}

/* The entry of addr's lines: len bytes at off in the arena. Kept in the
 * line cache unless its space is too big to be (line_keep_at()). */
static struct line_ent line_ent_of(uint64_t space, uint64_t addr, size_t off,
				   size_t len, size_t lines)
{
	return (struct line_ent){
		.addr = addr,
		.packed = space | (uint64_t)off << LE_SPACE_BITS |
			  (uint64_t)len << (LE_SPACE_BITS + LE_OFF_BITS) |
			  (uint64_t)lines << (LE_SPACE_BITS + LE_OFF_BITS +
					      LE_LEN_BITS),
	};
}

static void line_keep_at(struct cs_script *sc, uint64_t space,
			 const struct line_ent *e)
{
	if (space <= LE_SPACE_MAX)
		sc->lines[line_slot(space, e->addr)] = *e;
}

/* The len bytes at the arena's end (line_cache_room() made room) are
 * addr's lines from now on. */
static inline void line_keep(struct cs_script *sc, uint64_t space,
			     uint64_t addr, size_t len, size_t lines)
{
	struct line_ent e = line_ent_of(space, addr, sc->arena_len, len, lines);

	line_keep_at(sc, space, &e);
	sc->arena_len += len;
}

/* The line cache's text, made on the formatting thread (printer c, idle:
 * every batch sent is formatted), taken over by this thread: the arena
 * as that thread made it, the same offsets, and the lines that thread
 * named (LE_AT) appended to it - or forgotten, when they are not kept
 * there or there is no room. */
void script_lines_take(struct cs_script *sc, const struct cs_script *c)
{
	uint64_t space;

	memcpy(sc->arena, c->arena, sc->arena_len);
	for (size_t i = 0; i < LC_SLOTS; i++) {
		struct line_ent *e = &sc->lines[i];
		const struct at_text *t;

		if (e->packed == UINT64_MAX || LE_LEN(e) != LE_AT)
			continue;
		t = c->at_texts ? &c->at_texts[i] : NULL;
		if (!t || t->gen != c->at_gen || sc->arena_len + t->len > sc->arena_cap) {
			e->packed = UINT64_MAX;
			continue;
		}
		space = e->packed & ((1ull << LE_SPACE_BITS) - 1);
		memcpy(sc->arena + sc->arena_len, c->at_arena + t->off, t->len);
		*e = line_ent_of(space, e->addr, sc->arena_len, t->len, t->lines);
		sc->arena_len += t->len;
	}
}

/* The first `lines` lines of text[0..len) (which has more). */
size_t script_prefix_len(const char *text, size_t len, size_t lines)
{
	const char *p = text, *end = text + len, *nl;

	while (lines-- && (nl = memchr(p, '\n', (size_t)(end - p))))
		p = nl + 1;
	return (size_t)(p - text);
}

/* put_addr_slow() with a formatting thread: the lines' names go there,
 * to be made into text and cached where this thread's cache would have
 * it. A kernel symbol's name may be freed by a later record (KSYMBOL),
 * so a kernel address's names go as copies. */
static size_t put_def_op(struct cs_script *sc, const struct cs_frame *f,
			 uint64_t space, const struct line_names *nm,
			 size_t lines, size_t left)
{
	size_t cut = lines > left ? left : 0, len = 0;
	size_t size = sizeof(struct def_op) + lines * sizeof(*nm);
	bool copy = f->loc.kernel;
	struct def_op *d;
	char *q;

	for (size_t i = 0; i < lines; i++) {
		len += script_frame_len(f, &nm[i]) + 1;
		if (copy)
			size += nm[i].sym_len + nm[i].dso_len;
	}
	d = op_room(sc, size);
	*d = (struct def_op){
		.word = OP_DEF | (uint64_t)sc->reset_pending << 8 |
			(uint64_t)cut << 16 | (uint64_t)len << 32,
		.addr = f->addr, .sym_offset = f->loc.sym_offset,
		.lines = (uint32_t)lines, .size = (uint32_t)size,
	};
	memcpy(d->nm, nm, lines * sizeof(*nm));
	/* the copies live in the batch until it is formatted */
	q = (char *)(d->nm + lines);
	for (size_t i = 0; copy && i < lines; i++) {
		if (nm[i].sym)
			d->nm[i].sym = memcpy(q, nm[i].sym, nm[i].sym_len);
		q += nm[i].sym ? nm[i].sym_len : 0;
		if (nm[i].dso)
			d->nm[i].dso = memcpy(q, nm[i].dso, nm[i].dso_len);
		q += nm[i].dso ? nm[i].dso_len : 0;
	}
	sc->len += (size + 7) & ~(size_t)7;
	sc->reset_pending = false;
	line_keep(sc, space, f->addr, len, lines);
	return cut ? cut : lines;
}

/* The names of an address's lines (f resolved): its n inlined calls'
 * (names[0..n), innermost first), then its own, into nm[0..n]. Returns
 * a bound of their text's length (script_frame_to()'s rule). */
size_t script_addr_names(const struct cs_script *sc, const struct cs_frame *f,
			 const struct cs_loc_lens *lens,
			 const char *const *names, size_t n,
			 struct line_names *nm)
{
	size_t bound;

	script_frame_names(sc, f, lens, &nm[n]);
	bound = 80 + nm[n].sym_len + nm[n].dso_len;
	for (size_t i = 0; i < n; i++) {
		nm[i] = nm[n];
		if (nm[i].sym) {
			nm[i].sym = names[i];
			nm[i].sym_len = name_len(sc, names[i], false);
		}
		if (nm[i].dso && strcmp(names[i], f->loc.sym)) {
			nm[i].dso = "inlined";
			nm[i].dso_len = 7;
		}
		bound += 80 + nm[i].sym_len + nm[i].dso_len;
	}
	return bound;
}

/* An address's lines whose names are too long to cache (bound from
 * script_addr_names()), written as they are made: at most `left` of them
 * (1 or more). Returns how many. */
size_t script_put_long_lines(struct cs_script *sc, const struct cs_frame *f,
			     const char *const *names, size_t n, size_t bound,
			     size_t left)
{
	size_t start, lines;

	if (bound > BUF_SIZE) {
		/* absurd names: written piecewise */
		if (n > left - 1)
			n = left - 1;
		return put_addr_lines(sc, f, names, n);
	}
	room(sc, bound);
	start = sc->len;
	lines = put_addr_lines(sc, f, names, n);
	if (lines > left) {
		sc->len = start + script_prefix_len(sc->buf + start,
						    sc->len - start, left);
		lines = left;
	}
	return lines;
}

/* An address's lines when not cached nor made for its place before:
 * resolved, formatted into the line cache and written from there by
 * reference. Returns how many lines it wrote (at most `left`), and in
 * *all how many it has. */
static size_t put_addr_new(struct cs_script *sc, uint32_t pid,
			   struct cs_frame *f, uint64_t space, size_t left,
			   size_t *all)
{
	const char *names[INLINES_MAX];
	struct line_names nm[INLINES_MAX + 1];	/* the inlined calls', then its own */
	struct cs_loc_lens lens;
	size_t n = 0, bound, lines, len;
	char *text, *p;

	/* the machine's cache would hold what the line cache holds */
	cs_machine_resolve_once(sc->machine, pid, f->cpumode, f->addr, &f->loc,
				&lens);
	if (!sc->no_inline && f->loc.sym && !f->loc.kernel) {
		n = cs_machine_inlines(sc->machine, pid, f->addr, names,
				       INLINES_MAX);
		if (n > INLINES_MAX)
			n = INLINES_MAX;
	}
	bound = script_addr_names(sc, f, &lens, names, n, nm);
	*all = n + 1;
	/* long names: written, never cached */
	if (bound > LC_MAX_TEXT)
		return script_put_long_lines(sc, f, names, n, bound, left);
	line_cache_room(sc, bound);
	if (sc->fmt)
		return put_def_op(sc, f, space, nm, n + 1, left);
	text = p = sc->arena + sc->arena_len;
	for (size_t i = 0; i <= n; i++) {
		p = script_frame_to(p, f, '\t', &nm[i]);
		*p++ = '\n';
	}
	len = (size_t)(p - text);
	lines = n + 1;
	line_keep(sc, space, f->addr, len, lines);
	if (lines > left) {
		len = script_prefix_len(text, len, left);
		lines = left;
	}
	put_ref(sc, text, len);
	return lines;
}

/* The formatting thread writes e's text, of whose lines `left` may be
 * written. Returns how many are. */
static inline size_t put_ref_op(struct cs_script *sc,
				const struct line_ent *e, size_t left)
{
	uint64_t *op = op_room(sc, 8);
	size_t lines = LE_LINES(e), cut = lines > left ? left : 0;

	*op = OP_REF | (uint64_t)cut << 8 | (uint64_t)lines << 16 |
	      (uint64_t)LE_LEN(e) << 24 | (uint64_t)LE_OFF(e) << 40;
	sc->len += 8;
	return cut ? cut : lines;
}

/* An address in no map, as script_frame_to() writes it and its newline: perf
 * shows it unknown. */
char *script_unknown_to(char *p, uint64_t addr, unsigned int fields)
{
	*p++ = '\t';
	p = hex_to(p, addr, 16);
	if (fields & CS_SCRIPT_SYM)
		p = cpy(p, " [unknown]", 10);
	if (fields & CS_SCRIPT_DSO)
		p = cpy(p, " ([unknown])", 12);
	*p++ = '\n';
	return p;
}

/* A user address in no map: in a system-wide profile most of them are
 * garbage frames of code without frame pointers (a third of the real
 * profile's frames), seen once or twice each, so its line is made where
 * it is written and never kept in the arena, which would start over
 * three times as often; the line cache keeps only that the address is
 * in no map (an entry without text). One line. */
static size_t put_unknown(struct cs_script *sc, uint64_t addr)
{
	uint64_t *op;
	char *p;

	if (sc->fmt) {
		op = op_room(sc, 16);
		op[0] = OP_UNK | (uint64_t)sc->fields << 8;
		op[1] = addr;
		sc->len += 16;
		return 1;
	}
	p = room(sc, 64);
	sc->len += (size_t)(script_unknown_to(p, addr, sc->fields) - p);
	return 1;
}

/* With fmt_names: address addr is named on the formatting thread, which
 * keeps its line under the line cache's slot (OP_AT_KEEP). A user
 * address is given by where it lies (cs_machine_user_place(): bin, off),
 * a kernel one (OP_AT_KERNEL) by cs_machine_kernel_place()'s answers
 * (bin: the symbol table, off: whether it is outside the kernel). Their
 * symbols were loaded here, as resolving the address here would have:
 * at this point of the stream, with what that prints. */
static void put_at(struct cs_script *sc, uint64_t flags, uint32_t slot,
		   uint64_t addr, const void *bin, uint64_t off)
{
	uint64_t *op = op_room(sc, 32);

	sc->ops->at_ops[sc->ops->nr_at_ops++] = (uint32_t)sc->len;
	op[0] = OP_AT | (uint64_t)sc->fields << 8 | flags | (uint64_t)slot << 32;
	op[1] = addr;
	op[2] = (uint64_t)(uintptr_t)bin;
	op[3] = off;
	sc->len += 32;
}

/* Where addr is named with fmt_names, into *bin and *off (and
 * OP_AT_KERNEL into *flags), its symbols loaded; false when it is named
 * here: a user address in no map, a KSYMBOL's, a kernel address without
 * fmt_kernel. fp: where a user address lies, if looked up yet. */
static inline bool at_place(struct cs_script *sc, uint32_t pid, uint64_t addr,
		     bool kernel, const struct frame_place *fp,
		     const void **bin, uint64_t *off, uint64_t *flags)
{
	bool outside;

	if (kernel) {
		if (!sc->fmt_kernel ||
		    !cs_machine_kernel_place(sc->machine, addr, bin, &outside))
			return false;
		*off = outside;
		*flags |= OP_AT_KERNEL;
		return true;
	}
	if (fp && fp->bin) {
		if (fp->bin == &no_map)
			return false;
		*bin = fp->bin;
		*off = fp->off;
	} else if (!cs_machine_user_place(sc->machine, pid, addr, bin, off)) {
		return false;
	}
	if (sc->no_inline)
		cs_machine_place_load(sc->machine, *bin);
	else
		cs_machine_place_load_inlines(sc->machine, *bin);
	return true;
}

/* A frame's line with fmt_names, when at_place() finds where it is
 * named. One line. */
static bool put_at_op(struct cs_script *sc, uint32_t pid, uint32_t slot,
		      bool kernel, uint64_t space, uint64_t addr,
		      const struct frame_place *fp)
{
	struct line_ent e;
	uint64_t flags = space <= LE_SPACE_MAX ? OP_AT_KEEP : 0, off;
	const void *bin;
	bool unsure;

	if (!at_place(sc, pid, addr, kernel, fp, &bin, &off, &flags))
		return false;
	put_at(sc, flags, slot, addr, bin, off);
	/* one line, unless its binary has inlined calls to show: then
	 * that thread knows how many (the entry's lines: 0) */
	unsure = sc->stack_counts && !kernel && cs_machine_place_inlined(bin);
	if (unsure)
		sc->stack_unsure[sc->stack_user] += INLINES_MAX;
	e = line_ent_of(space, addr, 0, LE_AT, !unsure);
	line_keep_at(sc, space, &e);
	return true;
}

/* The one frame of a sample without a callchain, after its space. With
 * fmt_names it is named on the formatting thread, as in a stack, since
 * only that thread may look in the symbol tables. */
static void put_ip_frame(struct cs_script *sc, uint32_t pid,
			 struct cs_frame *f)
{
	uint64_t flags = OP_AT_IP, off;
	const void *bin;

	if (sc->fmt_names && f->kind == CS_FRAME_ADDR &&
	    at_place(sc, pid, f->addr, cs_machine_is_kernel(f->cpumode, f->addr),
		     NULL, &bin, &off, &flags)) {
		put_at(sc, flags, 0, f->addr, bin, off);
		return;
	}
	cs_frame_resolve(sc->machine, pid, f);
	script_put_frame(sc, f, ' ');
}

/* Writes e's text, of whose lines `left` may be written; returns how
 * many are. */
static inline size_t put_cached(struct cs_script *sc,
				const struct line_ent *e, size_t left)
{
	size_t len = LE_LEN(e);
	uint64_t *op;

	if (!len)			/* in no map */
		return put_unknown(sc, e->addr);
	if (len == LE_AT) {		/* kept by the formatting thread */
		op = op_room(sc, 8);
		sc->ops->at_ops[sc->ops->nr_at_ops++] = (uint32_t)sc->len;
		*op = OP_SLOT | (uint64_t)sc->fields << 8 |
		      (uint64_t)(e - sc->lines) << 32;
		sc->len += 8;
		/* its lines, as many as that thread shows, if known here
		 * (put_at_op(), stack_learn()) */
		if (!LE_LINES(e)) {
			sc->stack_unsure[sc->stack_user] += INLINES_MAX;
			return 1;
		}
		return LE_LINES(e) > left ? left : LE_LINES(e);
	}
	if (sc->fmt)
		return put_ref_op(sc, e, left);
	if (LE_LINES(e) > left) {
		put_ref(sc, sc->arena + LE_OFF(e),
			script_prefix_len(sc->arena + LE_OFF(e), len, left));
		return left;
	}
	put_ref(sc, sc->arena + LE_OFF(e), len);
	return LE_LINES(e);
}

/* Each of the lines of text (len bytes) with addr in place of the
 * address it was made for: after its lead, the 16 bytes of script_frame_to(). */
void script_readdress(char *text, size_t len, size_t lines, uint64_t addr)
{
	char *end = text + len, *p = text;

	for (; lines && p + 17 <= end; lines--) {
		hex_to(p + 1, addr, 16);
		if (lines > 1 && !(p = memchr(p + 17, '\n', (size_t)(end - p - 17))))
			break;
		p++;
	}
}

/* addr's lines from pl's, made for another address of the same binary
 * and offset: the same text, or a copy with addr in it. Returns how many
 * of them it wrote (at most `left`), or 0 when the copy would start the
 * arena over (pl's text with it). */
static size_t put_place(struct cs_script *sc, uint64_t space, uint64_t addr,
			const struct cs_place_line *pl, size_t left)
{
	struct line_ent e;
	size_t cut = pl->lines > left ? left : 0;
	char *text;
	uint64_t *op;

	if (pl->addr == addr) {
		e = line_ent_of(space, addr, pl->text, pl->len, pl->lines);
		line_keep_at(sc, space, &e);
		return put_cached(sc, &e, left);
	}
	if (sc->arena_len + pl->len > sc->arena_cap)
		return 0;
	if (sc->fmt) {
		op = op_room(sc, 24);
		op[0] = OP_COPY | (uint64_t)cut << 8 | (uint64_t)pl->len << 16 |
			(uint64_t)pl->text << 32;
		op[1] = addr;
		op[2] = pl->lines;
		sc->len += 24;
		line_keep(sc, space, addr, pl->len, pl->lines);
		return cut ? cut : pl->lines;
	}
	text = memcpy(sc->arena + sc->arena_len, sc->arena + pl->text, pl->len);
	script_readdress(text, pl->len, pl->lines, addr);
	e = line_ent_of(space, addr, sc->arena_len, pl->len, pl->lines);
	line_keep(sc, space, addr, pl->len, pl->lines);
	return put_cached(sc, &e, left);
}

/* Where user address addr of pid lies, into *fp, and its slot asked
 * for. (Kernel addresses have none: they share one space, the line cache
 * keeps them; as a victim cache for them the table cost 17% on synthetic
 * profiles, whose kernel addresses are all new, and saved 1% on the real
 * one.) */
static inline __attribute__((always_inline)) void
find_place(struct cs_script *sc, uint32_t pid, uint64_t addr,
	   struct frame_place *fp)
{
	if (!cs_machine_user_place(sc->machine, pid, addr, &fp->bin, &fp->off)) {
		fp->bin = &no_map;
		return;
	}
	fp->pl = NULL;
	if (!sc->places)		/* fmt_names: that thread's business */
		return;
	if (sc->place_rest) {
		sc->place_rest--;
		return;
	}
	fp->pl = cs_place_lines_slot(sc->places, fp->bin, fp->off);
	__builtin_prefetch(fp->pl);
}

/* A profile whose addresses are all new (a synthetic one) finds nothing
 * in the place table, and each lookup is a cache miss and a store: when
 * fewer than one in sixteen of a window's lookups find their lines, the
 * table is left alone for eight windows' worth, then tried again. */
static void place_judge(struct cs_script *sc, bool found)
{
	sc->place_hits += found;
	if (++sc->place_probes < PLACE_WINDOW)
		return;
	if (sc->place_hits < PLACE_WINDOW / 16)
		sc->place_rest = PLACE_REST;
	sc->place_pays = sc->place_hits >= PLACE_WINDOW / 4;
	sc->place_probes = sc->place_hits = 0;
}

/* An address's lines when not cached: made from the lines of its place
 * (place_lines.h), or resolved and formatted into the line cache, and
 * written from there by reference. fp: where it lies, if looked up yet.
 * Returns how many lines it wrote (at most `left`). */
static size_t put_addr_slow(struct cs_script *sc, uint32_t pid,
			    struct cs_frame *f, bool kernel, uint64_t space,
			    uint32_t slot, size_t left, struct frame_place *fp)
{
	struct cs_place_line *pl = NULL;
	uint64_t starts;
	size_t start, lines, all;

	if (!kernel) {
		if (!fp->bin)
			find_place(sc, pid, f->addr, fp);
		if (fp->bin == &no_map) {
			struct line_ent e = line_ent_of(space, f->addr, 0, 0, 1);

			line_keep_at(sc, space, &e);
			return put_unknown(sc, f->addr);
		}
		if (sc->fmt_names &&
		    put_at_op(sc, pid, slot, false, space, f->addr, fp))
			return 1;
		pl = fp->pl;
		if (pl && cs_place_lines_holds(sc->places, pl, fp->bin, fp->off) &&
		    (lines = put_place(sc, space, f->addr, pl, left))) {
			place_judge(sc, true);
			return lines;
		}
		if (pl)
			place_judge(sc, false);
	} else if (sc->fmt_names &&
		   put_at_op(sc, pid, slot, true, space, f->addr, NULL)) {
		return 1;
	}
	start = sc->arena_len;
	starts = sc->arena_starts;
	lines = put_addr_new(sc, pid, f, space, left, &all);
	if (sc->arena_starts != starts)
		start = 0;
	/* cached: its text is the arena's last */
	if (pl && sc->arena_len != start) {
		*pl = (struct cs_place_line){
			.bin = fp->bin, .off = fp->off, .addr = f->addr,
			.text = (uint32_t)start,
			.len = (uint16_t)(sc->arena_len - start),
			.lines = (uint8_t)all,
			.gen = cs_place_lines_gen(sc->places),
		};
	}
	return lines;
}

/* OP_STACK: flags say whether the counts start over, and which one the
 * next lines count in. */
static void stack_op(struct cs_script *sc, uint64_t flags)
{
	uint64_t *op = op_room(sc, 8);

	*op = OP_STACK | flags | (uint64_t)sc->max_stack << 32;
	sc->len += 8;
	sc->stack_user = flags & OP_STACK_USER;
}

/* A frame line that is no address's, from a resolved frame. With
 * stack_counts it goes as OP_LINE, that the formatting thread may count
 * it (its names are a marker's: short texts of ours). */
static void put_marker(struct cs_script *sc, const struct cs_frame *f)
{
	struct line_names nm;
	uint64_t *op;
	size_t len, bound;

	if (!sc->stack_counts) {
		script_put_frame(sc, f, '\t');
		put_ch(sc, '\n');
		return;
	}
	script_frame_names(sc, f, NULL, &nm);
	len = script_frame_len(f, &nm) + 1;
	bound = nm.sym_len + nm.dso_len + 80;	/* script_frame_to()'s room */
	op = op_room(sc, 8 + bound);
	*op = OP_LINE | (uint64_t)len << 8;
	*script_frame_to((char *)(op + 1), f, '\t', &nm) = '\n';
	sc->len += (8 + len + 7) & ~(size_t)7;
}

/* st's first n frames, just walked, of pid: each frame's line slot
 * worked out and asked for. The line cache is bigger than the CPU's
 * caches: every slot asked for at once rather than each waited for in
 * turn, and with a sample held, while that one is written. */
static inline void stack_ask(struct cs_script *sc, struct stack *st,
			     uint32_t pid, size_t n, bool unwound)
{
	const struct cs_frame *f = st->frames;
	size_t ask = unwound || n < sc->max_stack ? n : sc->max_stack;
	uint64_t uspace = cs_machine_user_space(sc->machine, pid);
	uint64_t kspace = cs_machine_kernel_space(sc->machine);
	const struct line_ent *lines = sc->lines;
	uint32_t *slots = st->slots;
	struct frame_place *places = st->places;

	st->ask = ask;
	st->pid = pid;
	st->unwound = unwound;
	st->uspace = uspace;
	st->kspace = kspace;
	/* (a slot's top bit: the frame is the kernel's) */
	for (size_t i = 0; i < ask; i++) {
		bool kernel = cs_machine_is_kernel(f[i].cpumode, f[i].addr);
		uint32_t slot = line_slot(kernel ? kspace : uspace, f[i].addr);

		slots[i] = slot | (uint32_t)kernel << 31;
		__builtin_prefetch(&lines[slot]);
		places[i].bin = NULL;
	}
}

/* Where each user address of st the line cache misses lies, its slot in
 * the place table asked for the same way. Called when the samples
 * before st's are written but the last HELD - 1: what those add to the
 * line cache is looked for here in vain (and found when st is written),
 * what they push out is looked for when st is written (stack_put()):
 * only time is lost. (Not while the table is left alone: a miss then
 * finds its map as it resolves, and the map lookup's last answer is its
 * own, not the stack's last frame's.) */
static inline void stack_place(struct cs_script *sc, struct stack *st)
{
	const struct cs_frame *f = st->frames;
	const uint32_t *slots = st->slots;
	uint64_t uspace = st->uspace;

	for (size_t i = 0; i < st->ask && !sc->place_rest; i++)
		if (f[i].kind == CS_FRAME_ADDR && !(slots[i] >> 31) &&
		    !line_holds(&sc->lines[slots[i]], uspace, f[i].addr))
			find_place(sc, st->pid, f[i].addr, &st->places[i]);
}

/* Whether frame i of st, which the line cache misses, loads something
 * when it is named: its binary's symbols or DWARF, the kernel's symbols
 * (with stack_counts, kernel addresses are named on this thread). */
static bool frame_loads(struct cs_script *sc, struct stack *st, size_t i,
			bool kernel)
{
	struct frame_place *fp = &st->places[i];

	if (kernel)
		return cs_machine_kernel_loads(sc->machine);
	if (!fp->bin)
		find_place(sc, st->pid, st->frames[i].addr, fp);
	return fp->bin != &no_map &&
	       cs_machine_place_loads(fp->bin, !sc->no_inline);
}

/* After script_fmt_stack_used(), the formatting thread idle: the lines
 * it made for st's frames before i that it named, into their entries
 * here (LE_AT, 0 lines: not known), so that a stack that has them again
 * counts them exactly and need not wait. An LE_AT entry's slot there
 * holds what the entry's OP_AT sent (every OP_AT kept there replaces
 * this thread's entry of its slot), if it was made since (at_gen). */
static void stack_learn(struct cs_script *sc, const struct stack *st,
			size_t i)
{
	const struct cs_script *c = sc->fmt->out;

	for (size_t j = 0; j < i; j++) {
		uint32_t slot = st->slots[j] & (LC_SLOTS - 1);
		struct line_ent *e = &sc->lines[slot];
		const struct at_text *t = &c->at_texts[slot];
		uint64_t space = st->slots[j] >> 31 ? st->kspace : st->uspace;

		if (st->frames[j].kind != CS_FRAME_ADDR ||
		    !line_holds(e, space, st->frames[j].addr) ||
		    LE_LEN(e) != LE_AT || LE_LINES(e) || t->gen != c->at_gen ||
		    c->at_addrs[slot].addr != e->addr)
			continue;
		*e = line_ent_of(space, e->addr, 0, LE_AT, t->lines);
	}
}

/* With stack_counts, frame i of st is a miss in the count `user` whose
 * lines so far are *lines, of which this thread counted those named there
 * as one each: stack_unsure bounds the lines it missed (their inlined
 * calls). Whether the stack shows frame i: when the two leave it open and
 * naming it would load what -j 1 loads only for a frame it shows (a
 * binary's symbols and DWARF, their cache files, its count of binaries
 * missing or of another build), the count is made exact - this thread
 * waits for that one, which counted the lines - and the frame is passed
 * over where -j 1 would. Otherwise it is sent whatever the count: that
 * thread shows as much of it as its count allows. */
static __attribute__((noinline, cold)) bool
stack_shows(struct cs_script *sc, struct stack *st, size_t i, bool kernel,
	    bool user, size_t *lines)
{
	size_t *unsure = &sc->stack_unsure[user];

	if (*lines + *unsure < sc->max_stack || !frame_loads(sc, st, i, kernel))
		return true;
	*lines = script_fmt_stack_used(sc, user);
	*unsure = 0;
	stack_learn(sc, st, i);
	return *lines < sc->max_stack;
}

/* st's frame lines, after stack_ask() and stack_place(), with the
 * machine as it was then. --max-stack, as perf applies it: to the whole
 * chain, but a sample unwound from its stack copy has two, the kernel's
 * and the unwound user part (perf resolves the first up to max_stack
 * frames, then unwinds up to max_stack more), and each has its own
 * count. With stack_counts an address named on the formatting thread
 * counts here as one line, and stack_unsure bounds what that missed. */
static void stack_put(struct cs_script *sc, struct stack *st)
{
	struct cs_frame *f = st->frames;
	size_t used[2] = { 0, 0 }, max = sc->max_stack;
	uint32_t pid = st->pid;

	if (sc->stack_counts) {
		stack_op(sc, OP_STACK_RESET);
		sc->stack_unsure[0] = sc->stack_unsure[1] = 0;
	}
	for (size_t i = 0; i < st->ask && (st->unwound || used[0] < max); i++) {
		const struct line_ent *e;
		uint32_t slot = st->slots[i];
		bool kernel = f[i].kind == CS_FRAME_ADDR && slot >> 31;
		bool user = st->unwound && !kernel;
		size_t *lines = &used[user];
		uint64_t space = kernel ? st->kspace : st->uspace;

		if (*lines >= max)
			continue;
		if (sc->stack_counts && user != sc->stack_user)
			stack_op(sc, user ? OP_STACK_USER : 0);
		if (f[i].kind != CS_FRAME_ADDR) {
			cs_frame_resolve(sc->machine, pid, &f[i]);
			put_marker(sc, &f[i]);
			++*lines;
			continue;
		}
		slot &= LC_SLOTS - 1;
		e = &sc->lines[slot];
		if (!line_holds(e, space, f[i].addr)) {
			if (!sc->stack_unsure[user] ||
			    stack_shows(sc, st, i, kernel, user, lines))
				*lines += put_addr_slow(sc, pid, &f[i], kernel,
							space, slot, max - *lines,
							&st->places[i]);
			continue;
		}
		*lines += put_cached(sc, e, max - *lines);
	}
	put_ch(sc, '\n');
}

/* A stack written at once: the three steps in a row. */
static void put_frames(struct cs_script *sc, struct stack *st, uint32_t pid,
		       size_t n, bool unwound)
{
	stack_ask(sc, st, pid, n, unwound);
	stack_place(sc, st);
	stack_put(sc, st);
}

static int script_change(void *ctx, const struct cs_event *ev);

static int script_begin(void *ctx, struct cs_session *s)
{
	struct cs_script *sc = ctx;
	size_t n = cs_session_nr_evsels(s);

	script_out_session(sc, s);
	if (sc->fmt)
		script_out_session(sc->fmt->out, s);
	sc->machine = cs_session_machine(s);
	cs_session_on_change(s, script_change, sc);
	for (size_t i = 0; i < n; i++) {
		const struct cs_evsel *e = cs_session_evsel(s, i);
		int w = e && e->name ? (int)strlen(e->name) : 9;

		if (w > sc->name_width)
			sc->name_width = w;
	}
	/* read there only after the first batch is handed over, as are
	 * the tables script_fmt_names_start() gives that thread */
	if (sc->fmt)
		sc->fmt->out->name_width = sc->name_width;
	/* with a formatting thread addresses are named there - but for a
	 * session that classifies stacks (--stats), which resolves them on
	 * this thread as they come: the symbol tables cannot be that
	 * thread's */
	if (sc->fmt && !cs_session_completeness(s))
		return script_fmt_names_start(sc);
	/* otherwise this thread decides what is cached, and only it */
	return cs_place_lines_new(&sc->places);
}

uint64_t cs_script_unformatted(const struct cs_script *sc)
{
	return sc->unformatted;
}

size_t cs_script_fmt_given_up(const struct cs_script *sc)
{
	return sc->fmt_given_up;
}

enum cs_script_fmt_reason cs_script_fmt_reason(const struct cs_script *sc,
					       size_t *waits)
{
	if (waits)
		*waits = sc->fmt_waits;
	return sc->fmt_reason;
}

size_t cs_script_line_cache_grown(const struct cs_script *sc)
{
	return sc->arena_cap > LC_ARENA ? sc->arena_cap : 0;
}

static bool is_tracepoint(const struct cs_evsel *e)
{
	return e && e->type == CS_PERF_TYPE_TRACEPOINT;
}

/* perf's fields for an event: -F's for all, else the defaults of its
 * type (a tracepoint shows its stack only when it has one). */
static unsigned int fields_for(const struct cs_script *sc,
			       const struct cs_evsel *e)
{
	if (sc->user_fields)
		return sc->user_fields;
	if (!is_tracepoint(e))
		return CS_SCRIPT_DEFAULT;
	if (sample_type_of(e) & CS_SAMPLE_CALLCHAIN)
		return CS_SCRIPT_DEFAULT_TRACEPOINT | CS_SCRIPT_IP |
		       CS_SCRIPT_SYM | CS_SCRIPT_SYMOFF | CS_SCRIPT_DSO;
	return CS_SCRIPT_DEFAULT_TRACEPOINT;
}

/* A tracepoint's fields, as libtraceevent formats them from the file's
 * formats. */
static void put_trace(struct cs_script *sc, const struct cs_evsel *e,
		      const struct cs_sample *smp)
{
	struct cs_tracepoints *tp = cs_session_tracepoints(sc->session);
	const char *text;
	long n;

	if (!is_tracepoint(e) || !smp->raw)
		return;
	n = tp ? cs_tracepoints_print(tp, e->config, (int)smp->cpu, smp->raw,
				      smp->raw_size, &text) : -ENOENT;
	if (n < 0) {
		sc->unformatted++;
		return;
	}
	script_put_mem(sc, text, (size_t)n);
}

/* A sample's head fields, each read on its own: the decoder has just
 * written them one by one, and the wider loads the compiler makes of a
 * copy of several (16 bytes at a time) cannot take them from the store
 * buffer - they wait until every store they span has reached the cache
 * (perf annotate: 60% of script_sample()'s samples). */
static struct sample_head head_of(const struct cs_sample *smp)
{
	return (struct sample_head){
		.pid = *(const volatile uint32_t *)&smp->pid,
		.tid = *(const volatile uint32_t *)&smp->tid,
		.cpu = *(const volatile uint32_t *)&smp->cpu,
		.time = *(const volatile uint64_t *)&smp->time,
		.period = *(const volatile uint64_t *)&smp->period,
	};
}

/* A sample's first line, sc->fields set. */
static inline void put_head(struct cs_script *sc, const struct cs_evsel *e,
			    const struct sample_head *sh)
{
	const char *comm = sc->fields & CS_SCRIPT_COMM ?
			   cs_machine_comm_at(sc->machine, sh->pid, sh->tid,
					      sh->time) : NULL;

	if (sc->fmt && !script_fmt_lags(sc->fmt))
		script_put_head_op(sc, e, sh, comm);
	else
		script_put_sample_head(sc, e, sh, comm);
}

/* The i-th stack of the ring from the oldest held: i == nr_held is the
 * free one. */
static struct stack *ring_at(struct cs_script *sc, size_t i)
{
	return &sc->stacks[(sc->first + i) % (HELD + 1)];
}

/* The oldest held sample written: the machine is still as it saw it.
 * Returns what script_sample() would have. */
static int put_oldest(struct cs_script *sc)
{
	struct stack *st = ring_at(sc, 0);
	int err;

	sc->first = (sc->first + 1) % (HELD + 1);
	sc->nr_held--;
	if (!st->placed)
		stack_place(sc, st);
	if ((err = script_fmt_look(sc)))
		return err;
	sc->fields = fields_for(sc, st->e);
	put_head(sc, st->e, &st->sh);
	put_ch(sc, '\n');
	stack_put(sc, st);
	return sc->io_error ? 1 : 0;
}

/* Every held sample written, oldest first. */
static int put_held(struct cs_script *sc)
{
	int err;

	while (sc->nr_held)
		if ((err = put_oldest(sc)))
			return err;
	return 0;
}

/* The pid and tid whose process and thread ev changes, when it changes
 * nothing else a sample is written with (a user map, a comm, a fork, an
 * exit); false for the others (the kernel's maps, its symbols, build
 * ids: ev NULL). */
static bool event_task(const struct cs_event *ev, uint32_t *pid,
		       uint32_t *tid)
{
	switch (ev ? ev->type : 0) {
	case CS_RECORD_MMAP:
	case CS_RECORD_MMAP2:
		if ((ev->misc & CS_MISC_CPUMODE_MASK) != CS_MISC_USER ||
		    ev->mmap.pid == UINT32_MAX)	/* the kernel's, then */
			return false;
		*pid = *tid = ev->mmap.pid;
		return true;
	case CS_RECORD_COMM:
		*pid = ev->comm.pid;
		*tid = ev->comm.tid;
		return true;
	case CS_RECORD_FORK:
	case CS_RECORD_EXIT:
		*pid = ev->fork.pid;
		*tid = ev->fork.tid;
		return true;
	}
	return false;
}

/* The session's hook: the machine is about to take ev. The held samples
 * are written first, as the machine is - but for a record of a process
 * and thread none of them is of (a system-wide profile's other
 * processes start, map and end between samples: a tenth of the real
 * profile's samples came before such a record). */
static int script_change(void *ctx, const struct cs_event *ev)
{
	struct cs_script *sc = ctx;
	uint32_t pid, tid;

	if (!sc->nr_held || !event_task(ev, &pid, &tid))
		return put_held(sc);
	for (size_t i = 0; i < sc->nr_held; i++) {
		const struct stack *st = ring_at(sc, i);

		if (st->pid == pid || st->sh.tid == tid)
			return put_held(sc);
	}
	return 0;
}

/* A sample written at once, the held one first: one whose first line
 * is not followed by its stack's lines alone (a tracepoint's fields,
 * the one frame of a sample without a callchain, none). */
static int put_sample_now(struct cs_script *sc, const struct cs_stitched *s,
			  const struct sample_head *sh)
{
	const struct cs_sample *smp = &s->event->sample;
	const struct cs_evsel *e = s->event->evsel;
	struct stack *st;
	size_t n;
	int err;

	if ((err = put_held(sc)) || (err = script_fmt_look(sc)))
		return err;
	st = ring_at(sc, 0);
	sc->fields = fields_for(sc, e);
	put_head(sc, e, sh);
	if (sc->fields & CS_SCRIPT_TRACE)
		put_trace(sc, e, smp);
	if (!(sc->fields & CS_SCRIPT_IP)) {
		put_ch(sc, '\n');
		return sc->io_error ? 1 : 0;
	}
	n = cs_frames_walk(s, st->frames, CS_FRAMES_MAX);
	if (n > CS_FRAMES_MAX)
		n = CS_FRAMES_MAX;
	if (sample_type_of(e) & CS_SAMPLE_CALLCHAIN) {
		put_ch(sc, '\n');
		put_frames(sc, st, smp->pid, n, s->state == CS_CHAIN_UNWOUND);
	} else if (n) {
		put_ch(sc, ' ');
		put_ip_frame(sc, smp->pid, &st->frames[0]);
		put_ch(sc, '\n');
	} else {
		put_ch(sc, '\n');
	}
	return sc->io_error ? 1 : 0;
}

/* A sample whose stack is deeper than HELD_FRAMES, walked into st (the
 * stack after the held ones), written at once, the held ones first: its
 * own frames give the slots it asks for time to come, and holding it
 * would only add work (a synthetic profile's stacks, of twelve frames
 * or so, took 3% more time held). */
static int put_deep(struct cs_script *sc, struct stack *st,
		    const struct cs_stitched *s, const struct sample_head *sh,
		    size_t n)
{
	const struct cs_evsel *e = s->event->evsel;
	int err;

	/* (writing them leaves st the first stack of the ring, and free) */
	if ((err = put_held(sc)) || (err = script_fmt_look(sc)))
		return err;
	sc->fields = fields_for(sc, e);
	put_head(sc, e, sh);
	put_ch(sc, '\n');
	put_frames(sc, st, sh->pid, n, s->state == CS_CHAIN_UNWOUND);
	return sc->io_error ? 1 : 0;
}

/* A sample with a stack is held while HELD more come (or until the
 * machine is to change, script_change()), its steps done samples apart:
 * when it comes, its stack is walked and its line slots asked for (and
 * the sample HELD before it written); at the next sample, the line
 * cache is read for it and the place table's slots asked for; when HELD
 * more have come, it is written. What each step asks for has the time
 * of a sample or more to come, while other work is done. */
static int script_sample(void *ctx, const struct cs_stitched *s)
{
	struct cs_script *sc = ctx;
	const struct cs_sample *smp = &s->event->sample;
	const struct cs_evsel *e = s->event->evsel;
	struct sample_head sh = head_of(smp);
	unsigned int fields = fields_for(sc, e);
	struct stack *st = ring_at(sc, sc->nr_held), *prev;
	size_t n;
	int err;

	if (!(sample_type_of(e) & CS_SAMPLE_CALLCHAIN) ||
	    (fields & CS_SCRIPT_TRACE) || !(fields & CS_SCRIPT_IP))
		return put_sample_now(sc, s, &sh);
	n = cs_frames_walk(s, st->frames, CS_FRAMES_MAX);
	if (n > CS_FRAMES_MAX)
		n = CS_FRAMES_MAX;
	if (n > HELD_FRAMES)
		return put_deep(sc, st, s, &sh, n);
	stack_ask(sc, st, smp->pid, n, s->state == CS_CHAIN_UNWOUND);
	st->placed = false;
	st->e = e;
	st->sh = sh;
	if (sc->nr_held == HELD && (err = put_oldest(sc)))
		return err;
	/* the one before it: its line slots came meanwhile */
	if (sc->nr_held && !(prev = ring_at(sc, sc->nr_held - 1))->placed) {
		stack_place(sc, prev);
		prev->placed = true;
	}
	sc->nr_held++;
	return 0;
}

static int script_deferred(void *ctx, const struct cs_event *ev)
{
	struct cs_script *sc = ctx;
	const struct cs_deferred *d = &ev->deferred;
	struct cs_stitched as_chain = {
		.event = ev,
		.chain = d->ips,
		.chain_nr = d->nr,
		.state = CS_CHAIN_UNMERGED,
	};
	struct cs_event fake;
	size_t n;
	int err;

	if (!sc->no_merge)
		return 0;
	if ((err = put_held(sc)) || (err = script_fmt_look(sc)))
		return err;
	sc->fields = fields_for(sc, ev->evsel);
	script_put_start(sc, ev->evsel, sc->fields & CS_SCRIPT_COMM ?
		  cs_machine_comm_at(sc->machine, ev->id.pid, ev->id.tid,
				     ev->id.time) : NULL,
		  ev->id.pid, ev->id.tid, ev->id.cpu, ev->id.time);
	script_put_mem(sc, "DEFERRED CALLCHAIN [cookie: ", 28);
	script_put_hex_w(sc, d->cookie, 0);
	script_put_mem(sc, "]\n", 2);
	if (!(sc->fields & CS_SCRIPT_IP)) {
		put_ch(sc, '\n');
		return sc->io_error ? 1 : 0;
	}
	/* the ips are user addresses of the record's task, with or without a
	 * leading marker: resolve them as a user-mode chain of that pid */
	memset(&fake, 0, sizeof(fake));
	fake.type = CS_RECORD_SAMPLE;
	fake.sample.pid = ev->id.pid;
	fake.sample.tid = ev->id.tid;
	fake.sample.misc = CS_MISC_USER;
	as_chain.event = &fake;
	n = d->nr ? cs_frames_walk(&as_chain, ring_at(sc, 0)->frames,
				   CS_FRAMES_MAX) : 0;
	if (n > CS_FRAMES_MAX)
		n = CS_FRAMES_MAX;
	put_frames(sc, ring_at(sc, 0), ev->id.pid, n, false);
	return sc->io_error ? 1 : 0;
}

static int script_end(void *ctx, struct cs_session *s)
{
	int err = put_held(ctx);

	(void)s;
	if (err)
		return err;
	return cs_script_flush(ctx) ? 1 : 0;
}

const struct cs_output_ops cs_script_ops = {
	.begin = script_begin,
	.sample = script_sample,
	.deferred = script_deferred,
	.end = script_end,
};
