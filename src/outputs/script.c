/* script.c - perf script's text layout, written without stdio formatting.
 *
 * A profile of a million samples is tens of millions of frame lines, most
 * of them the same few thousand addresses again. The text is built in
 * chunks: each chunk is the new text, with references in between to the
 * cached text of addresses seen before (the line cache), and goes out
 * with writev(), so that the cached text is never copied here - the
 * kernel takes it from the cache (and, for /dev/null, not at all). An
 * address the cache misses is looked for by the binary and offset it
 * lies at (place_lines.h), where another process may have shown it.
 *
 * With jobs >= 2 the text is made on a second thread from what the
 * reading thread sends it (see OP_TEXT), and with jobs >= 3 written on a
 * third. The bytes are the same as with one.
 */
#include "outputs/script.h"
#include "outputs/place_lines.h"
#include "lib/machine/frames.h"
#include "abi/perf_abi.h"
#include "lib/machine/machine.h"
#include "lib/trace/tracepoints.h"
#include "lib/util/queue.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>

#define BUF_SIZE (256u << 10)
#define PERF_MAX_STACK 127		/* perf script's default --max-stack */
#define LC_BITS 16			/* the line cache: slots */
#define LC_SLOTS (1u << LC_BITS)
_Static_assert(LC_BITS < 31, "a frame's slot number leaves its top bit free");
#define LC_TABLE (LC_SLOTS * 16u)	/* its slots' bytes */
#define LC_REGION (8u << 20)		/* the slots, then the text */
#define LC_ARENA (LC_REGION - LC_TABLE)	/* the text */
#define HUGE_PAGE (2u << 20)
#define LC_MAX_TEXT 4096		/* longer lines are not cached */
#define INLINES_MAX 32			/* inlined calls shown at an address */
#define CHUNKS 3			/* with a writer: being filled or written */
#define CHUNK_REFS (8u << 10)		/* cached texts a chunk refers to */
#define OPS_SIZE (2 * BUF_SIZE)		/* a batch of operations (below) */
#define OPS_BATCHES 4			/* being filled, formatted or waiting */
#define NO_TEXT SIZE_MAX		/* text_at: no text operation open */
#define NAME_LEN_BITS 12		/* name_len(): slots */
#define HEADS 64			/* sample heads kept, by CPU */
#define PLACE_WINDOW 8192		/* place lookups judged at a time... */
#define PLACE_REST (8 * PLACE_WINDOW)	/* ... and skipped after a poor one */
#define HEAD_TEXT 96			/* ... up to their time */
#ifdef IOV_MAX
#define PIECES IOV_MAX			/* pieces of text a writev() takes */
#else
#define PIECES 1024
#endif

/* len bytes of cached text, to be written after the chunk's first `at`
 * bytes of its own text */
struct text_ref {
	size_t at;
	const char *text;
	size_t len;
};

/* Output on its way out: its own text, with references to cached text in
 * between. */
struct chunk {
	char *buf;			/* BUF_SIZE */
	size_t len;
	struct text_ref *refs;		/* CHUNK_REFS */
	size_t nr_refs;
};

/* Where chunks go: the stream's file descriptor, written with writev(), or
 * the stream itself when it has none (fmemopen()). */
struct sink {
	FILE *out;
	int fd;				/* -1: through out */
};

/* The writer thread and what it owns. */
struct writer {
	pthread_t thread;
	struct cs_queue *todo;		/* chunks to write, in order; NULL: stop */
	struct cs_queue *done;		/* written chunks, free to fill again */
	struct chunk chunks[CHUNKS];
	struct sink sink;
	atomic_bool failed;
};

/* With a formatting thread, the reading thread sends it operations
 * instead of text, in batches: everything that needs the session (the
 * address space at that point of the stream, the thread's comm, a new
 * address's lines) is worked out here, and the text that only needs
 * those answers - the sample's first line, the cached frame lines - is
 * made there. Each operation starts 8-byte aligned with a word whose low
 * byte says what it is:
 *   OP_TEXT  len << 8, then len bytes of text
 *   OP_HEAD  fields << 8, then the rest of struct head_op
 *   OP_REF   cut << 8 | len << 16 | off << 32: cached text, in the arena
 *   OP_DEF   reset << 8 | cut << 16 | len << 32, then the rest of struct
 *            def_op: an address's lines, to be made into len bytes of
 *            text, appended to the arena (after starting it over, with
 *            reset) and written
 *   OP_COPY  cut << 8 | len << 16 | off << 32, the address, the lines: cached
 *            text made for another address of the same binary and offset
 *            (place_lines.h), appended to the arena with this address
 *            in each line, and written
 *   OP_UNK   fields << 8, then the address: an address in no map, one line
 *            not cached
 *   OP_AT    fields << 8 | keep << 20 | ip << 21 | kernel << 22 | slot << 32,
 *            then the address and where it is named (put_at()): an
 *            address named there (fmt_names), its line made in that
 *            thread's own arena and kept under the line cache's slot
 *            when keep; with ip, the one frame of a sample without a
 *            callchain, not kept
 *   OP_SLOT  fields << 8 | slot << 32: the line kept under that slot
 * cut: write only that many of the lines (0: all), as --max-stack asks.
 * The reading thread keeps the line cache and decides every hit, miss
 * and reset, and it knows the length of each new text (frame_len()), so
 * it knows where the formatting thread's arena has it - but for the
 * lines of OP_AT, whose names it never sees: their entries only say so
 * (LE_AT), and that thread keeps them in an arena of its own (at_*).
 * Naming a new address is most of what a miss costs, and with
 * --no-inline its line is one line whatever the names are, which is all
 * this thread needs to know of it (--max-stack). */
enum { OP_TEXT = 1, OP_HEAD, OP_REF, OP_DEF, OP_COPY, OP_UNK, OP_AT, OP_SLOT };
#define OP_AT_KEEP (1ull << 20)
#define OP_AT_IP (1ull << 21)
#define OP_AT_KERNEL (1ull << 22)
#define AT_ARENA (4u << 20)		/* the formatting thread's own text */
#define AT_AHEAD 16			/* OP_AT and OP_SLOT looked at ahead */

/* What a sample's first line shows of the sample: a struct cs_sample
 * has thirty more fields, which the formatting thread would zero for
 * each sample. */
struct sample_head {
	uint32_t pid, tid, cpu;
	uint64_t time, period;
};

struct head_op {
	uint64_t word;
	const struct cs_evsel *e;	/* lives as long as the session */
	const char *comm;		/* interned by the machine, or NULL */
	uint32_t pid, tid, cpu, pad;
	uint64_t time, period;
};

/* What a frame line shows after its address. */
struct line_names {
	const char *sym;		/* NULL: no sym field */
	const char *dso;		/* NULL: no dso field */
	size_t sym_len, dso_len;
	bool missing;			/* sym is why the user stack is missing */
	bool symoff;			/* +0xOFFSET after sym */
};

struct def_op {
	uint64_t word;
	uint64_t addr, sym_offset;
	uint32_t lines;
	uint32_t size;			/* of the operation, copies included */
	struct line_names nm[];		/* names live as long as the machine,
					 * or are copied after nm[lines] */
};

struct ops {
	char *buf;			/* OPS_SIZE */
	size_t len;
	bool sync;			/* then write all out, before it is back */
	uint32_t *at_ops;		/* OPS_SIZE / 8: where its OP_AT and
					 * OP_SLOT are, that the formatting
					 * thread may look ahead at them */
	size_t nr_at_ops;
};

/* One address's lines, as text: 16 bytes, so that the table (a
 * cache miss on most lookups) takes a third less of the CPU's caches. */
struct line_ent {
	uint64_t addr;
	uint64_t packed;		/* LE_* fields; UINT64_MAX: empty */
};

/* packed: the address space (spaces beyond LE_SPACE_MAX are not cached),
 * the text's offset in the arena, its length and its lines */
#define LE_SPACE_BITS 22
#define LE_OFF_BITS 23			/* LC_ARENA */
#define LE_LEN_BITS 13			/* LC_MAX_TEXT */
#define LE_SPACE_MAX ((1ull << LE_SPACE_BITS) - 2)
#define LE_AT ((1u << LE_LEN_BITS) - 1)	/* a length: the text is OP_AT's */
#define LE_FIELD(v, shift, bits) ((uint32_t)((v) >> (shift)) & ((1u << (bits)) - 1))
#define LE_OFF(e) LE_FIELD((e)->packed, LE_SPACE_BITS, LE_OFF_BITS)
#define LE_LEN(e) LE_FIELD((e)->packed, LE_SPACE_BITS + LE_OFF_BITS, LE_LEN_BITS)
#define LE_LINES(e) ((uint32_t)((e)->packed >> (LE_SPACE_BITS + LE_OFF_BITS + LE_LEN_BITS)))
_Static_assert(sizeof(struct line_ent) * LC_SLOTS == LC_TABLE &&
	       LC_REGION % HUGE_PAGE == 0, "the line cache fills whole huge pages");
_Static_assert(LC_ARENA <= 1u << LE_OFF_BITS && LC_MAX_TEXT < LE_AT &&
	       INLINES_MAX + 1 < 1u << (64 - LE_SPACE_BITS - LE_OFF_BITS - LE_LEN_BITS),
	       "a line entry's fields fit its packed word");

struct cs_script {
	struct sink sink;
	bool no_merge;
	bool no_inline;
	unsigned int fields;		/* of the sample being printed */
	unsigned int user_fields;	/* -F, or 0: perf's defaults per event */
	uint64_t unformatted;
	unsigned int max_stack;
	struct cs_session *session;
	struct cs_machine *machine;
	int name_width;			/* widest event name */
	bool io_error;
	struct chunk *filling;		/* being filled, by this thread */
	char *buf;			/* filling->buf */
	size_t len;			/* of filling's own text so far */
	struct chunk own;		/* the one chunk, without a writer */
	struct cs_frame *frames;	/* CS_FRAMES_MAX, reused */
	uint32_t *slots;		/* CS_FRAMES_MAX: the frames' line slots */
	struct frame_place *fplaces;	/* CS_FRAMES_MAX: where they lie */
	struct line_ent *lines;		/* LC_SLOTS, then the arena */
	char *arena;			/* LC_ARENA bytes of line text */
	size_t arena_len;
	uint64_t arena_starts;		/* how many times it started over */
	struct writer *writer;		/* NULL: text written on this thread */
	size_t room_end;		/* room() gives room up to here */
	struct formatter *fmt;		/* NULL: no formatting thread */
	struct ops *ops;		/* with fmt: the batch buf points into */
	size_t text_at;			/* its open OP_TEXT, or NO_TEXT */
	bool reset_pending;		/* the line cache started over */
	struct name_len *name_lens;	/* with fmt: NAME_LEN_BITS slots */
	struct head_prefix *heads;	/* HEADS: sample heads, by CPU */
	uint64_t sec, period;		/* the last time's seconds, period */
	size_t sec_len, period_len;	/* their texts' (0: none yet) */
	char sec_text[32], period_text[32];	/* cpy32() */
	struct cs_place_lines *places;	/* the arena's text by binary and
					 * offset; NULL on the formatting thread */
	uint32_t place_probes, place_hits; /* in this window (PLACE_WINDOW) */
	uint32_t place_rest;		/* places not looked up from here on */
	bool fmt_names;			/* with fmt: addresses are named there
					 * (OP_AT) */
	/* the formatting thread's, with fmt_names: the lines of OP_AT,
	 * by the line cache's slot */
	struct at_text *at_texts;	/* LC_SLOTS */
	struct at_addr *at_addrs;	/* LC_SLOTS */
	char *at_arena;			/* AT_ARENA bytes of their text */
	size_t at_len;
	uint8_t at_gen;			/* of at_arena's text; never 0 */
	struct cs_place_lines *at_places; /* at_arena's text by place */
};

struct name_len {
	const char *name;
	size_t len;
};

/* With fmt_names, where the formatting thread has a slot's line: read on
 * every hit, so 8 bytes, that the table may stay in the CPU's caches... */
struct at_text {
	uint32_t off;			/* in at_arena */
	uint16_t len;
	uint8_t gen;			/* at_gen when made; 0: never */
};

/* ... and what the line is made of, read only when it is made again
 * (put_at()'s bin and off). */
struct at_addr {
	const void *bin;
	uint64_t off, addr;
	bool kernel;
};

/* A sample's first line up to its time, as put_head() last made it for a
 * CPU: the comm, pid and tid need not be measured and formatted again
 * for the next sample of the same thread there. */
struct head_prefix {
	bool used;
	const struct cs_evsel *e;	/* of the sample: its name, its fields */
	const char *comm;		/* interned: the same text, the same pointer */
	uint32_t pid, tid, cpu;
	unsigned int fields;
	size_t name_len;		/* e's name's */
	size_t len;
	char text[HEAD_TEXT];		/* at least 32: cpy32() */
};

/* Where a frame's address lies (find_place()), worked out for a stack's
 * uncached frames before any is written, so that their slots in the
 * place table are asked for at once, as the line cache's are. */
struct frame_place {
	const void *bin;		/* NULL: not looked up; &no_map: none */
	uint64_t off;
	struct cs_place_line *pl;	/* (bin, off)'s slot */
};

static const char no_map;

/* The formatting thread and what it owns. */
struct formatter {
	pthread_t thread;
	struct cs_queue *todo;		/* batches to format, in order; NULL: stop */
	struct cs_queue *done;		/* formatted batches, free to fill again */
	struct ops batches[OPS_BATCHES];
	struct cs_script *out;		/* formats and writes them */
	struct name_len *name_lens;	/* the reading thread's */
	atomic_bool failed;
	size_t sent;			/* batches, by the reading thread */
	/* batches formatted: on a line of its own, which only the
	 * formatting thread writes */
	_Alignas(64) atomic_size_t formatted;
};

static uint32_t line_slot(uint64_t space, uint64_t addr)
{
	uint64_t h = (addr ^ space * 0x9e3779b97f4a7c15ULL) * 0xff51afd7ed558ccdULL;

	return (uint32_t)(h >> (64 - LC_BITS));
}

/* ---- writing chunks ------------------------------------------------------- */

/* All of n pieces: writev() may take fewer bytes than it was given (a
 * signal, a pipe, a full disk). False on an error. */
static bool writev_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		for (; n > 0 && (size_t)w >= iov->iov_len; iov++, n--)
			w -= (ssize_t)iov->iov_len;
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return true;
}

static bool sink_write(const struct sink *s, struct iovec *iov, int n)
{
	if (s->fd >= 0)
		return writev_all(s->fd, iov, n);
	for (int i = 0; i < n; i++)
		if (fwrite(iov[i].iov_base, 1, iov[i].iov_len, s->out) !=
		    iov[i].iov_len)
			return false;
	return true;
}

/* Writes the chunk, its own text and the cached text it refers to in
 * order, and empties it. False on an error. */
static bool chunk_write(const struct sink *s, struct chunk *c)
{
	struct iovec iov[PIECES];
	size_t at = 0;
	int n = 0;
	bool ok = true;

	for (size_t i = 0; i <= c->nr_refs; i++) {
		const struct text_ref *r = i < c->nr_refs ? &c->refs[i] : NULL;
		size_t to = r ? r->at : c->len;

		if (n > PIECES - 2) {
			ok = ok && sink_write(s, iov, n);
			n = 0;
		}
		if (to > at)
			iov[n++] = (struct iovec){ c->buf + at, to - at };
		if (r)
			iov[n++] = (struct iovec){ (void *)r->text, r->len };
		at = to;
	}
	ok = ok && sink_write(s, iov, n);
	c->len = 0;
	c->nr_refs = 0;
	return ok;
}

/* ---- the writer thread ---------------------------------------------------- */

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct chunk *c;

	while ((c = cs_queue_pop(w->todo))) {
		if (!chunk_write(&w->sink, c))
			atomic_store(&w->failed, true);
		cs_queue_push(w->done, c);
	}
	return NULL;
}

static void chunk_free(struct chunk *c)
{
	free(c->buf);
	free(c->refs);
}

static int chunk_init(struct chunk *c)
{
	c->buf = malloc(BUF_SIZE);
	c->refs = malloc(CHUNK_REFS * sizeof(struct text_ref));
	c->len = 0;
	c->nr_refs = 0;
	return c->buf && c->refs ? 0 : -ENOMEM;
}

static void writer_free(struct writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < CHUNKS; i++)
		chunk_free(&w->chunks[i]);
	cs_queue_free(w->todo);
	cs_queue_free(w->done);
	free(w);
}

/* Starts the writer thread. Returns 0, or -ENOMEM, or -EAGAIN when no
 * thread could be made. */
static int writer_start(struct cs_script *sc)
{
	struct writer *w = calloc(1, sizeof(*w));
	int err = -ENOMEM;

	if (!w || cs_queue_new(CHUNKS + 1, &w->todo) ||
	    cs_queue_new(CHUNKS, &w->done))
		goto fail;
	for (size_t i = 0; i < CHUNKS; i++) {
		if (chunk_init(&w->chunks[i]))
			goto fail;
		if (i)
			cs_queue_push(w->done, &w->chunks[i]);
	}
	w->sink = sc->sink;
	atomic_init(&w->failed, false);
	if (pthread_create(&w->thread, NULL, writer_main, w)) {
		err = -EAGAIN;
		goto fail;
	}
	sc->writer = w;
	sc->filling = &w->chunks[0];
	return 0;
fail:
	writer_free(w);
	return err;
}

/* The chunk being filled goes out: to the writer, an empty one taking its
 * place, or written here. */
static void ops_out(struct cs_script *sc);

static void chunk_out(struct cs_script *sc)
{
	struct writer *w = sc->writer;

	if (sc->fmt) {
		ops_out(sc);
		return;
	}
	sc->filling->len = sc->len;
	sc->len = 0;
	if (!w) {
		if (!chunk_write(&sc->sink, sc->filling))
			sc->io_error = true;
		return;
	}
	cs_queue_push(w->todo, sc->filling);
	sc->filling = cs_queue_pop(w->done);
	sc->buf = sc->filling->buf;
	if (atomic_load(&w->failed))
		sc->io_error = true;
}

/* Writes everything so far, the chunk being filled too, and waits until
 * it is written: then the line cache may be reused, or text written
 * another way. */
static void ops_sync(struct cs_script *sc);

static void out_drain(struct cs_script *sc)
{
	struct writer *w = sc->writer;
	struct chunk *all[CHUNKS];

	if (sc->fmt) {
		ops_sync(sc);
		return;
	}
	chunk_out(sc);
	if (!w)
		return;
	all[0] = sc->filling;
	for (size_t i = 1; i < CHUNKS; i++)
		all[i] = cs_queue_pop(w->done);
	for (size_t i = 1; i < CHUNKS; i++)
		cs_queue_push(w->done, all[i]);
	if (atomic_load(&w->failed))
		sc->io_error = true;
}

static void writer_stop(struct cs_script *sc)
{
	if (!sc->writer)
		return;
	cs_queue_push(sc->writer->todo, NULL);
	pthread_join(sc->writer->thread, NULL);
	writer_free(sc->writer);
	sc->writer = NULL;
	sc->filling = NULL;
	sc->buf = NULL;
}

/* len bytes of cached text go out next, by reference: they stay in the
 * arena until the chunk is written (out_drain() before the arena is
 * reused). */
static inline void put_ref(struct cs_script *sc, const char *text, size_t len)
{
	struct chunk *c = sc->filling;
	struct text_ref *last = c->nr_refs ? &c->refs[c->nr_refs - 1] : NULL;

	/* a stack seen before was often cached in the order it is printed */
	if (last && last->at == sc->len && last->text + last->len == text) {
		last->len += len;
		return;
	}
	if (c->nr_refs == CHUNK_REFS) {
		chunk_out(sc);
		c = sc->filling;
	}
	c->refs[c->nr_refs++] = (struct text_ref){ sc->len, text, len };
}

/* ---- the printer ---------------------------------------------------------- */

static int formatter_start(struct cs_script *sc,
			   const struct cs_script_opts *o);
static void formatter_stop(struct cs_script *sc);

/* A printer that makes and writes the text itself, on a writer thread of
 * its own when `writer`. */
static int printer_new(const struct cs_script_opts *o, bool writer,
		       struct cs_script **out)
{
	struct cs_script *sc = calloc(1, sizeof(*sc));
	int err;

	*out = NULL;
	if (!sc)
		return -ENOMEM;
	sc->sink.out = o->out ? o->out : stdout;
	/* what the stream holds goes first: from here on, writev() */
	sc->sink.fd = fflush(sc->sink.out) ? -1 : fileno(sc->sink.out);
	sc->room_end = BUF_SIZE;
	sc->text_at = NO_TEXT;
	/* no thread to be had: the same text, written on this one */
	if (writer && (err = writer_start(sc)) && err != -EAGAIN) {
		cs_script_free(sc);
		return err;
	}
	if (!sc->writer) {
		sc->filling = &sc->own;
		if (chunk_init(&sc->own)) {
			cs_script_free(sc);
			return -ENOMEM;
		}
	}
	sc->buf = sc->filling->buf;
	sc->frames = malloc(CS_FRAMES_MAX * sizeof(*sc->frames));
	sc->slots = malloc(CS_FRAMES_MAX * sizeof(*sc->slots));
	sc->fplaces = malloc(CS_FRAMES_MAX * sizeof(*sc->fplaces));
	sc->heads = calloc(HEADS, sizeof(*sc->heads));
	/* every frame looks a slot up, at random: on huge pages (where the
	 * kernel gives them) the lookups miss no TLB, and the text costs
	 * four page faults instead of two thousand */
	sc->lines = aligned_alloc(HUGE_PAGE, LC_REGION);
	if (!sc->frames || !sc->slots || !sc->fplaces || !sc->heads ||
	    !sc->lines) {
		cs_script_free(sc);
		return -ENOMEM;
	}
	madvise(sc->lines, LC_REGION, MADV_HUGEPAGE);
	sc->arena = (char *)(sc->lines + LC_SLOTS);
	sc->no_merge = o->no_merge;
	sc->no_inline = o->no_inline;
	sc->user_fields = o->fields;
	sc->fields = o->fields ? o->fields : CS_SCRIPT_DEFAULT;
	sc->max_stack = o->max_stack ? o->max_stack : PERF_MAX_STACK;
	*out = sc;
	return 0;
}

/* With a formatting thread and --no-inline, addresses are named there
 * (OP_AT): it gets the tables for their lines. */
static int fmt_names_start(struct cs_script *sc)
{
	struct cs_script *c = sc->fmt->out;

	/* the table is filled as slots are: zero pages until then */
	c->at_texts = calloc(LC_SLOTS, sizeof(*c->at_texts));
	c->at_addrs = calloc(LC_SLOTS, sizeof(*c->at_addrs));
	c->at_arena = malloc(AT_ARENA);
	if (!c->at_texts || !c->at_addrs || !c->at_arena ||
	    cs_place_lines_new(&c->at_places))
		return -ENOMEM;
	c->at_gen = 1;
	sc->fmt_names = true;
	return 0;
}

/* fmt_names given up before the first sample: the reading thread names
 * addresses and keeps the place table, as without a formatting thread
 * (which has not touched its tables yet). Returns 0 or -ENOMEM. */
static int fmt_names_stop(struct cs_script *sc)
{
	struct cs_script *c = sc->fmt->out;

	sc->fmt_names = false;
	free(c->at_texts);
	free(c->at_addrs);
	free(c->at_arena);
	cs_place_lines_free(c->at_places);
	c->at_texts = NULL;
	c->at_addrs = NULL;
	c->at_arena = NULL;
	c->at_places = NULL;
	return cs_place_lines_new(&sc->places);
}

/* With two threads, this one reads and the other formats and writes;
 * from three on, a third writes. */
int cs_script_new(const struct cs_script_opts *o, struct cs_script **out)
{
	int err = printer_new(o, false, out);

	/* this thread keeps the line cache (a formatting thread's printer
	 * only fills the arena as told) */
	if (!err)
		memset((*out)->lines, 0xff, LC_SLOTS * sizeof(*(*out)->lines));
	/* no thread to be had: the same text, made on this one */
	if (!err && o->jobs >= 2 &&
	    (err = formatter_start(*out, o)) == -EAGAIN)
		err = 0;
	if (!err && (*out)->fmt && o->no_inline)
		err = fmt_names_start(*out);
	/* otherwise the reading thread decides what is cached, and only it */
	else if (!err)
		err = cs_place_lines_new(&(*out)->places);
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
	formatter_stop(sc);
	writer_stop(sc);
	chunk_free(&sc->own);
	free(sc->frames);
	free(sc->slots);
	free(sc->fplaces);
	free(sc->heads);
	free(sc->lines);
	cs_place_lines_free(sc->places);
	free(sc->at_texts);
	free(sc->at_addrs);
	free(sc->at_arena);
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
	out_drain(sc);
	return sc->io_error ? -EIO : 0;
}

/* ---- formatting ----------------------------------------------------------- */

/* Room for one line's worth of output. Lines are bounded by the symbol and
 * path lengths, which room() is told. */
static char *room_slow(struct cs_script *sc, size_t n);

static char *room(struct cs_script *sc, size_t n)
{
	if (sc->len + n > sc->room_end)
		return room_slow(sc, n);
	return sc->buf + sc->len;
}

/* The end of an OP_TEXT: the next operation starts aligned after it. */
static void text_close(struct cs_script *sc)
{
	size_t n;

	if (sc->text_at == NO_TEXT)
		return;
	n = sc->len - sc->text_at - 8;
	if (n) {
		*(uint64_t *)(sc->buf + sc->text_at) = OP_TEXT | (uint64_t)n << 8;
		sc->len = (sc->len + 7) & ~(size_t)7;
	} else {
		sc->len = sc->text_at;
	}
	sc->text_at = NO_TEXT;
	sc->room_end = 0;
}

static char *room_slow(struct cs_script *sc, size_t n)
{
	if (!sc->fmt) {
		chunk_out(sc);
		return n > BUF_SIZE ? NULL : sc->buf + sc->len;
	}
	if (n > BUF_SIZE)
		return NULL;
	/* the text goes on in an OP_TEXT of its own: one is opened */
	text_close(sc);
	if (sc->len + 8 + n > OPS_SIZE)
		ops_out(sc);
	sc->text_at = sc->len;
	sc->len += 8;
	sc->room_end = OPS_SIZE;
	return sc->buf + sc->len;
}

/* Room for an operation of size bytes (at most OPS_SIZE - 8): the text
 * before it is closed. */
static inline void *op_room(struct cs_script *sc, size_t size)
{
	text_close(sc);
	if (sc->len + size > OPS_SIZE)
		ops_out(sc);
	return sc->buf + sc->len;
}

static void put_mem(struct cs_script *sc, const char *s, size_t n)
{
	char *p = room(sc, n);

	if (!p && sc->fmt) {
		/* an absurd name: in pieces, each an OP_TEXT */
		for (size_t k; n; s += k, n -= k) {
			k = n < BUF_SIZE ? n : BUF_SIZE;
			memcpy(room(sc, k), s, k);
			sc->len += k;
		}
		return;
	}
	if (!p) {
		struct iovec iov = { (void *)s, n };

		out_drain(sc);		/* what came before goes first */
		if (!sink_write(&sc->sink, &iov, 1))
			sc->io_error = true;
		return;
	}
	memcpy(p, s, n);
	sc->len += n;
}

static void put_str(struct cs_script *sc, const char *s)
{
	put_mem(sc, s, strlen(s));
}

static void put_ch(struct cs_script *sc, char c)
{
	char *p = room(sc, 1);

	*p = c;
	sc->len++;
}

static void put_pad(struct cs_script *sc, int n)
{
	char *p;

	if (n <= 0)
		return;
	p = room(sc, (size_t)n);
	memset(p, ' ', (size_t)n);
	sc->len += (size_t)n;
}

/* %*s */
static void put_str_w(struct cs_script *sc, const char *s, int width)
{
	size_t n = strlen(s);

	if ((int)n < width)
		put_pad(sc, width - (int)n);
	put_mem(sc, s, n);
}

static size_t fmt_hex(char *tmp, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	do {
		tmp[n++] = hex[v & 15];
		v >>= 4;
	} while (v);
	return n;			/* reversed */
}

static size_t fmt_dec(char *tmp, uint64_t v)
{
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return n;			/* reversed */
}

static void put_rev(struct cs_script *sc, const char *tmp, size_t n, int width,
		    char padc)
{
	char *p = room(sc, n + (width > 0 ? (size_t)width : 0));

	for (int k = (int)n; k < width; k++)
		*p++ = padc, sc->len++;
	for (size_t k = n; k-- > 0;)
		*p++ = tmp[k];
	sc->len += n;
}

static void put_hex_w(struct cs_script *sc, uint64_t v, int width)
{
	char tmp[16];

	put_rev(sc, tmp, fmt_hex(tmp, v), width, ' ');
}

static void put_dec_w(struct cs_script *sc, uint64_t v, int width, char padc)
{
	char tmp[20];

	put_rev(sc, tmp, fmt_dec(tmp, v), width, padc);
}

static void put_int_w(struct cs_script *sc, int32_t v, int width)
{
	char tmp[21];
	size_t n;

	if (v >= 0) {
		put_dec_w(sc, (uint64_t)v, width, ' ');
		return;
	}
	n = fmt_dec(tmp, (uint64_t)(-(int64_t)v));
	tmp[n++] = '-';
	put_rev(sc, tmp, n, width, ' ');
}

/* ---- samples -------------------------------------------------------------- */

static uint64_t sample_type_of(const struct cs_evsel *e)
{
	return e ? e->sample_type : 0;
}

/* comm, tid, [cpu], time: the part every line kind shares; comm is the
 * thread's at that time (the caller's cs_machine_comm_at()), NULL for one
 * perf would not know */
static void put_start(struct cs_script *sc, const struct cs_evsel *e,
		      const char *comm, uint32_t pid, uint32_t tid, uint32_t cpu,
		      uint64_t time)
{
	uint64_t st = sample_type_of(e);
	unsigned int f = sc->fields;

	if (f & CS_SCRIPT_COMM) {
		char unknown[16];

		if (!comm) {
			/* perf names a thread it never saw after its tid */
			snprintf(unknown, sizeof(unknown), ":%d", (int32_t)tid);
			comm = unknown;
		}
		/* perf pads the name only when no stack lines follow */
		if ((f & CS_SCRIPT_IP) && (st & CS_SAMPLE_CALLCHAIN))
			put_str(sc, comm);
		else
			put_str_w(sc, comm, 16);
		put_ch(sc, ' ');
	}
	if (st & CS_SAMPLE_TID) {
		if ((f & CS_SCRIPT_PID) && (f & CS_SCRIPT_TID)) {
			char tmp[21];
			size_t n;

			put_int_w(sc, (int32_t)pid, 7);
			put_ch(sc, '/');
			/* %-7d */
			n = fmt_dec(tmp, (uint32_t)tid);
			put_rev(sc, tmp, n, 0, ' ');
			put_pad(sc, 7 - (int)n);
			put_ch(sc, ' ');
		} else if (f & (CS_SCRIPT_PID | CS_SCRIPT_TID)) {
			put_int_w(sc, (int32_t)(f & CS_SCRIPT_PID ? pid : tid), 7);
			put_ch(sc, ' ');
		}
	}
	if ((st & CS_SAMPLE_CPU) && (f & CS_SCRIPT_CPU)) {
		put_ch(sc, '[');
		put_dec_w(sc, cpu, 3, '0');
		put_mem(sc, "] ", 2);
	}
	if ((st & CS_SAMPLE_TIME) && (f & CS_SCRIPT_TIME)) {
		char tmp[40];
		size_t n = 0;
		uint64_t us = time % 1000000000ULL / 1000;

		/* "%lu.%06lu" right-aligned in 12 */
		for (int k = 0; k < 6; k++, us /= 10)
			tmp[n++] = (char)('0' + us % 10);
		tmp[n++] = '.';
		n += fmt_dec(tmp + n, time / 1000000000ULL);
		put_rev(sc, tmp, n, 12, ' ');
		put_mem(sc, ": ", 2);
	}
}

/* put_frame() a piece at a time, for names too long for the buffer */
static void put_frame_pieces(struct cs_script *sc, const struct cs_frame *f,
			     char lead)
{
	const struct cs_location *l = &f->loc;
	unsigned int fl = sc->fields;

	put_ch(sc, lead);
	put_hex_w(sc, f->addr, 16);
	if (fl & CS_SCRIPT_SYM) {
		put_ch(sc, ' ');
		switch (f->kind) {
		case CS_FRAME_COOKIE:
			put_mem(sc, "(cookie)", 8);
			break;
		case CS_FRAME_MISSING_USER:
			put_mem(sc, "[user stack missing: ", 21);
			put_str(sc, cs_missing_reason_name(f->missing));
			put_ch(sc, ']');
			break;
		case CS_FRAME_ADDR:
			if (!l->sym) {
				put_mem(sc, "[unknown]", 9);
				break;
			}
			put_str(sc, l->sym);
			if (fl & CS_SCRIPT_SYMOFF) {
				put_mem(sc, "+0x", 3);
				put_hex_w(sc, l->sym_offset, 0);
			}
			break;
		}
	}
	if (fl & CS_SCRIPT_DSO) {
		put_mem(sc, " (", 2);
		put_str(sc, f->kind == CS_FRAME_ADDR && l->dso_name ?
			    l->dso_name : "[unknown]");
		put_ch(sc, ')');
	}
}

static char *cpy(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

/* cpy() of a short text from a buffer of at least 32 bytes, to where
 * there is room for 32: one fixed-size copy (two moves), not a call of
 * memcpy() - three a sample for its first line. */
static char *cpy32(char *p, const char *s, size_t n)
{
	if (n > 32)
		return cpy(p, s, n);
	memcpy(p, s, 32);
	return p + n;
}

/* 8 hex digits of x, most significant first, as one word in memory order:
 * nibbles spread to bytes, then each byte made an ASCII digit */
static uint64_t hex8(uint32_t x)
{
	uint64_t v = x, letter;

	v = (v | v << 16) & 0x0000ffff0000ffffULL;
	v = (v | v << 8) & 0x00ff00ff00ff00ffULL;
	v = (v | v << 4) & 0x0f0f0f0f0f0f0f0fULL;
	letter = (v + 0x0606060606060606ULL) >> 4 & 0x0101010101010101ULL;
	v += 0x3030303030303030ULL + letter * ('a' - '0' - 10);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* digits, a hex8() word, with its first k (at most 8) blanked */
static uint64_t blank(uint64_t digits, unsigned int k)
{
	uint64_t mask = k >= 8 ? ~0ULL : (1ULL << (8 * k)) - 1;

	return (digits & ~mask) | (0x2020202020202020ULL & mask);
}

/* %*lx, width 0 or 16; p has 16 bytes of room in either case. Written
 * as whole words from registers: a copy through an array on the stack
 * would wait for its two stores to reach the load of both (a store
 * forwarding stall), in every frame line. */
static char *hex_to(char *p, uint64_t v, int width)
{
	unsigned int n = v ? (67 - (unsigned int)__builtin_clzll(v)) / 4 : 1;
	uint64_t hi = hex8((uint32_t)(v >> 32)), lo = hex8((uint32_t)v);

	if (width == 16) {
		hi = blank(hi, 16 - n);
		lo = blank(lo, n >= 8 ? 0 : 8 - n);
		memcpy(p, &hi, 8);
		memcpy(p + 8, &lo, 8);
		return p + 16;
	}
	if (n > 8) {
		hi >>= 8 * (16 - n);	/* its last n - 8 digits first */
		memcpy(p, &hi, 8);
		memcpy(p + n - 8, &lo, 8);
	} else {
		lo >>= 8 * (8 - n);
		memcpy(p, &lo, 8);
	}
	return p + n;
}
#else
/* %*lx, width 0 or 16; p has 16 bytes of room in either case */
static char *hex_to(char *p, uint64_t v, int width)
{
	int n = v ? (67 - __builtin_clzll(v)) / 4 : 1;
	uint64_t w[2] = { hex8((uint32_t)(v >> 32)), hex8((uint32_t)v) };

	if (width == 16) {
		memcpy(p, w, 16);
		memset(p, ' ', (size_t)(16 - n));
		return p + 16;
	}
	memcpy(p, (const char *)w + 16 - n, (size_t)n);
	return p + n;
}
#endif

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

static void frame_names(const struct cs_script *sc, const struct cs_frame *f,
			struct line_names *nm)
{
	const struct cs_location *l = &f->loc;
	unsigned int fl = sc->fields;

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
		nm->sym_len = name_len(sc, nm->sym, l->kernel);
	}
	if (fl & CS_SCRIPT_DSO) {
		nm->dso = f->kind == CS_FRAME_ADDR && l->dso_name ?
			  l->dso_name : "[unknown]";
		nm->dso_len = name_len(sc, nm->dso, l->kernel);
	}
}

/* The length of what frame_to() writes. */
static size_t frame_len(const struct cs_frame *f, const struct line_names *nm)
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
static char *frame_to(char *p, const struct cs_frame *f, char lead,
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
static void put_frame(struct cs_script *sc, const struct cs_frame *f,
		      char lead)
{
	struct line_names nm;
	char *p;

	frame_names(sc, f, &nm);
	if (nm.sym_len > BUF_SIZE / 2 || nm.dso_len > BUF_SIZE / 2 ||
	    !(p = room(sc, nm.sym_len + nm.dso_len + 80))) {
		put_frame_pieces(sc, f, lead);
		return;
	}
	sc->len += (size_t)(frame_to(p, f, lead, &nm) - p);
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
		put_frame(sc, &inl, '\t');
		put_ch(sc, '\n');
	}
	put_frame(sc, f, '\t');
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
	if (sc->arena_len + bound <= LC_ARENA)
		return;
	/* with a formatting thread it is that thread's cache that starts
	 * over, at the next OP_DEF; this one only keeps the same account */
	if (sc->fmt)
		sc->reset_pending = true;
	else
		out_drain(sc);
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

/* The first `lines` lines of text[0..len) (which has more). */
static size_t prefix_len(const char *text, size_t len, size_t lines)
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
		len += frame_len(f, &nm[i]) + 1;
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
	size_t n = 0, bound, start, lines, len;
	char *text, *p;

	/* the machine's cache would hold what the line cache holds */
	cs_machine_resolve_once(sc->machine, pid, f->cpumode, f->addr, &f->loc);
	if (!sc->no_inline && f->loc.sym && !f->loc.kernel) {
		n = cs_machine_inlines(sc->machine, pid, f->addr, names,
				       INLINES_MAX);
		if (n > INLINES_MAX)
			n = INLINES_MAX;
	}
	frame_names(sc, f, &nm[n]);
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
	*all = n + 1;
	if (bound > BUF_SIZE) {
		/* absurd names: written piecewise, never cached */
		if (n > left - 1)
			n = left - 1;
		return put_addr_lines(sc, f, names, n);
	}
	if (bound > LC_MAX_TEXT) {
		/* long names: written, not cached */
		room(sc, bound);
		start = sc->len;
		lines = put_addr_lines(sc, f, names, n);
		if (lines > left) {
			sc->len = start + prefix_len(sc->buf + start,
						     sc->len - start, left);
			lines = left;
		}
		return lines;
	}
	line_cache_room(sc, bound);
	if (sc->fmt)
		return put_def_op(sc, f, space, nm, n + 1, left);
	text = p = sc->arena + sc->arena_len;
	for (size_t i = 0; i <= n; i++) {
		p = frame_to(p, f, '\t', &nm[i]);
		*p++ = '\n';
	}
	len = (size_t)(p - text);
	lines = n + 1;
	line_keep(sc, space, f->addr, len, lines);
	if (lines > left) {
		len = prefix_len(text, len, left);
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

	*op = OP_REF | (uint64_t)cut << 8 | (uint64_t)LE_LEN(e) << 16 |
	      (uint64_t)LE_OFF(e) << 32;
	sc->len += 8;
	return cut ? cut : lines;
}

/* An address in no map, as frame_to() writes it and its newline: perf
 * shows it unknown. */
static char *unknown_to(char *p, uint64_t addr, unsigned int fields)
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
	sc->len += (size_t)(unknown_to(p, addr, sc->fields) - p);
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
 * here: a user address in no map, a KSYMBOL's. fp: where a user address
 * lies, if looked up yet. */
static bool at_place(struct cs_script *sc, uint32_t pid, uint64_t addr,
		     bool kernel, const struct frame_place *fp,
		     const void **bin, uint64_t *off, uint64_t *flags)
{
	bool outside;

	if (kernel) {
		if (!cs_machine_kernel_place(sc->machine, addr, bin, &outside))
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
	cs_machine_place_load(sc->machine, *bin);
	return true;
}

/* A frame's line with fmt_names, when at_place() finds where it is
 * named. One line. */
static bool put_at_op(struct cs_script *sc, uint32_t pid, uint32_t slot,
		      bool kernel, uint64_t space, uint64_t addr,
		      const struct frame_place *fp)
{
	struct line_ent e = line_ent_of(space, addr, 0, LE_AT, 1);
	uint64_t flags = space <= LE_SPACE_MAX ? OP_AT_KEEP : 0, off;
	const void *bin;

	if (!at_place(sc, pid, addr, kernel, fp, &bin, &off, &flags))
		return false;
	put_at(sc, flags, slot, addr, bin, off);
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
	put_frame(sc, f, ' ');
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
		return 1;
	}
	if (sc->fmt)
		return put_ref_op(sc, e, left);
	if (LE_LINES(e) > left) {
		put_ref(sc, sc->arena + LE_OFF(e),
			prefix_len(sc->arena + LE_OFF(e), len, left));
		return left;
	}
	put_ref(sc, sc->arena + LE_OFF(e), len);
	return LE_LINES(e);
}

/* Each of the lines of text (len bytes) with addr in place of the
 * address it was made for: after its lead, the 16 bytes of frame_to(). */
static void readdress(char *text, size_t len, size_t lines, uint64_t addr)
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
	if (sc->arena_len + pl->len > LC_ARENA)
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
	readdress(text, pl->len, pl->lines, addr);
	e = line_ent_of(space, addr, sc->arena_len, pl->len, pl->lines);
	line_keep(sc, space, addr, pl->len, pl->lines);
	return put_cached(sc, &e, left);
}

/* Where user address addr of pid lies, into *fp, and its slot asked
 * for. (Kernel addresses have none: they share one space, the line cache
 * keeps them; as a victim cache for them the table cost 17% on synthetic
 * profiles, whose kernel addresses are all new, and saved 1% on the real
 * one.) */
static void find_place(struct cs_script *sc, uint32_t pid, uint64_t addr,
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

/* --max-stack, as perf applies it: to the whole chain, but a sample
 * unwound from its stack copy has two, the kernel's and the unwound user
 * part (perf resolves the first up to max_stack frames, then unwinds up to
 * max_stack more), and each has its own count. */
static void put_frames(struct cs_script *sc, uint32_t pid,
		       struct cs_frame *f, size_t n, bool unwound)
{
	uint64_t uspace = cs_machine_user_space(sc->machine, pid);
	uint64_t kspace = cs_machine_kernel_space(sc->machine);
	size_t used[2] = { 0, 0 }, max = sc->max_stack;
	size_t ask = unwound || n < max ? n : max;
	uint32_t *slot = sc->slots;
	struct frame_place *fp = sc->fplaces;

	/* the line cache is bigger than the CPU's caches: ask for every
	 * frame's slot at once rather than wait for each in turn (a slot's
	 * top bit: the frame is the kernel's) */
	for (size_t i = 0; i < ask; i++) {
		bool kernel = cs_machine_is_kernel(f[i].cpumode, f[i].addr);

		slot[i] = line_slot(kernel ? kspace : uspace, f[i].addr) |
			  (uint32_t)kernel << 31;
		__builtin_prefetch(&sc->lines[slot[i] & (LC_SLOTS - 1)]);
		fp[i].bin = NULL;
	}
	/* and where each user address the line cache misses lies, asking
	 * for its slot in the place table the same way */
	/* (not while the table is left alone: a miss then finds its map as
	 * it resolves, and the map lookup's last answer is its own, not the
	 * stack's last frame's) */
	for (size_t i = 0; i < ask && !sc->place_rest; i++)
		if (f[i].kind == CS_FRAME_ADDR && !(slot[i] >> 31) &&
		    !line_holds(&sc->lines[slot[i]], uspace, f[i].addr))
			find_place(sc, pid, f[i].addr, &fp[i]);
	for (size_t i = 0; i < ask && (unwound || used[0] < max); i++) {
		const struct line_ent *e;
		bool kernel = f[i].kind == CS_FRAME_ADDR && slot[i] >> 31;
		size_t *lines = &used[unwound && !kernel];
		uint64_t space = kernel ? kspace : uspace;

		if (*lines >= max)
			continue;
		if (f[i].kind != CS_FRAME_ADDR) {
			cs_frame_resolve(sc->machine, pid, &f[i]);
			put_frame(sc, &f[i], '\t');
			put_ch(sc, '\n');
			++*lines;
			continue;
		}
		e = &sc->lines[slot[i] & (LC_SLOTS - 1)];
		if (!line_holds(e, space, f[i].addr)) {
			*lines += put_addr_slow(sc, pid, &f[i], kernel, space,
						slot[i] & (LC_SLOTS - 1),
						max - *lines, &fp[i]);
			continue;
		}
		*lines += put_cached(sc, e, max - *lines);
	}
	put_ch(sc, '\n');
}

/* The decimal digits of v, ending at end; returns where they start. Two
 * at a time: every sample's first line has five or six numbers. */
static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324"
	"25262728293031323334353637383940414243444546474849"
	"50515253545556575859606162636465666768697071727374"
	"75767778798081828384858687888990919293949596979899";

static char *digits_before(char *end, uint64_t v)
{
	const char *pairs = digit_pairs;

	while (v >= 100) {
		end -= 2;
		memcpy(end, pairs + v % 100 * 2, 2);
		v /= 100;
	}
	if (v >= 10) {
		end -= 2;
		memcpy(end, pairs + v * 2, 2);
	} else {
		*--end = (char)('0' + v);
	}
	return end;
}

/* %*lu (pad ' ') or %0*lu (pad '0') */
static char *dec_to(char *p, uint64_t v, int width, char pad)
{
	char tmp[21], *q = digits_before(tmp + 21, v);
	int n = (int)(tmp + 21 - q);

	for (; width > n; width--)
		*p++ = pad;
	memcpy(p, q, (size_t)n);
	return p + n;
}

/* %*d */
static char *int_to(char *p, int32_t v, int width)
{
	char tmp[21], *q;
	int n;

	q = digits_before(tmp + 21, v < 0 ? (uint64_t)(-(int64_t)v) : (uint64_t)v);
	if (v < 0)
		*--q = '-';
	n = (int)(tmp + 21 - q);
	for (; width > n; width--)
		*p++ = ' ';
	memcpy(p, q, (size_t)n);
	return p + n;
}

/* Whether h holds the head of a sample of e by pid/tid on cpu. */
static bool head_holds(const struct head_prefix *h, const struct cs_evsel *e,
		       const struct sample_head *sh, const char *comm,
		       unsigned int fields)
{
	return h->used && h->e == e && h->comm == comm && h->pid == sh->pid &&
	       h->tid == sh->tid && h->cpu == sh->cpu && h->fields == fields;
}

/* A sample's first line up to its time (comm, pid and tid, CPU) into h,
 * and its event name's length; false when the comm is too long for h. */
static bool head_make(struct cs_script *sc, struct head_prefix *h,
		      const struct cs_evsel *e, const struct sample_head *sh,
		      const char *comm)
{
	uint64_t st = sample_type_of(e);
	unsigned int f = sc->fields;
	size_t comm_len = comm ? strlen(comm) : 0;
	char *p = h->text;

	h->used = false;
	/* the rest is at most 16 + 1 + 23 (pid/tid) + 13 (cpu) bytes */
	if (comm_len > HEAD_TEXT - 56)
		return false;
	if (comm) {
		/* perf pads the name only when no stack lines follow */
		if (!((f & CS_SCRIPT_IP) && (st & CS_SAMPLE_CALLCHAIN)))
			for (size_t k = comm_len; k < 16; k++)
				*p++ = ' ';
		p = cpy(p, comm, comm_len);
		*p++ = ' ';
	}
	if (st & CS_SAMPLE_TID) {
		if ((f & CS_SCRIPT_PID) && (f & CS_SCRIPT_TID)) {
			char *t;

			p = int_to(p, (int32_t)sh->pid, 7);
			*p++ = '/';
			/* %-7d of the tid as unsigned */
			t = p;
			p = dec_to(p, sh->tid, 0, ' ');
			while (p - t < 7)
				*p++ = ' ';
			*p++ = ' ';
		} else if (f & (CS_SCRIPT_PID | CS_SCRIPT_TID)) {
			p = int_to(p, (int32_t)(f & CS_SCRIPT_PID ? sh->pid :
						sh->tid), 7);
			*p++ = ' ';
		}
	}
	if ((st & CS_SAMPLE_CPU) && (f & CS_SCRIPT_CPU)) {
		*p++ = '[';
		p = dec_to(p, sh->cpu, 3, '0');
		*p++ = ']';
		*p++ = ' ';
	}
	h->len = (size_t)(p - h->text);
	h->name_len = f & CS_SCRIPT_EVENT ?
		      strlen(e && e->name ? e->name : "[unknown]") : 0;
	h->e = e;
	h->comm = comm;
	h->pid = sh->pid;
	h->tid = sh->tid;
	h->cpu = sh->cpu;
	h->fields = f;
	h->used = true;
	return true;
}

/* "%lu.%06lu" of a time in ns, right-aligned in 12, and ": ". The
 * seconds change once in thousands of samples: their digits are kept. */
static char *time_to(struct cs_script *sc, char *p, uint64_t time)
{
	uint64_t sec = time / 1000000000ULL;
	uint32_t us = (uint32_t)(time % 1000000000ULL / 1000);

	if (!sc->sec_len || sec != sc->sec) {
		char tmp[24], *q = digits_before(tmp + sizeof(tmp), sec);

		sc->sec = sec;
		sc->sec_len = (size_t)(tmp + sizeof(tmp) - q);
		memcpy(sc->sec_text, q, sc->sec_len);
	}
	for (size_t k = sc->sec_len + 7; k < 12; k++)
		*p++ = ' ';
	p = cpy32(p, sc->sec_text, sc->sec_len);
	*p++ = '.';
	memcpy(p, digit_pairs + us / 10000 * 2, 2);
	memcpy(p + 2, digit_pairs + us / 100 % 100 * 2, 2);
	memcpy(p + 4, digit_pairs + us % 100 * 2, 2);
	p += 6;
	*p++ = ':';
	*p++ = ' ';
	return p;
}

/* "%10lu " of a period: most events have one period, whose text is
 * kept. */
static char *period_to(struct cs_script *sc, char *p, uint64_t period)
{
	if (!sc->period_len || period != sc->period) {
		char *q = dec_to(sc->period_text, period, 10, ' ');

		*q++ = ' ';
		sc->period = period;
		sc->period_len = (size_t)(q - sc->period_text);
	}
	return cpy32(p, sc->period_text, sc->period_len);
}

/* A sample's first line up to the stack, as put_start() and the period
 * and event fields write it, in one go; false when its names are too long
 * for that (the caller then writes it piecewise). What comes before the
 * time is kept by CPU (head_make()): a CPU's samples come mostly from one
 * thread at a time. */
static bool put_head(struct cs_script *sc, const struct cs_evsel *e,
		     const struct sample_head *sh, const char *comm)
{
	uint64_t st = sample_type_of(e);
	unsigned int f = sc->fields;
	struct head_prefix *h = &sc->heads[sh->cpu % HEADS];
	const char *name = NULL;
	char *p, *start;

	if (!(f & CS_SCRIPT_COMM))
		comm = NULL;
	else if (!comm)
		return false;		/* ":TID": the rare way */
	if (!head_holds(h, e, sh, comm, f) && !head_make(sc, h, e, sh, comm))
		return false;
	if (f & CS_SCRIPT_EVENT)
		name = e && e->name ? e->name : "[unknown]";
	if (h->name_len > BUF_SIZE / 4 || (size_t)sc->name_width > BUF_SIZE / 4 ||
	    !(p = room(sc, h->len + h->name_len + (size_t)sc->name_width + 160)))
		return false;
	start = p;
	p = cpy32(p, h->text, h->len);
	if ((st & CS_SAMPLE_TIME) && (f & CS_SCRIPT_TIME))
		p = time_to(sc, p, sh->time);
	if ((st & CS_SAMPLE_PERIOD) && (f & CS_SCRIPT_PERIOD))
		p = period_to(sc, p, sh->period);
	if (name) {
		for (int k = (int)h->name_len; k < sc->name_width; k++)
			*p++ = ' ';
		p = cpy(p, name, h->name_len);
		*p++ = ':';
		*p++ = ' ';
	}
	sc->len += (size_t)(p - start);
	return true;
}

/* A sample's first line up to the stack (or its tracepoint fields). */
static void put_sample_head(struct cs_script *sc, const struct cs_evsel *e,
			    const struct sample_head *sh, const char *comm)
{
	if (put_head(sc, e, sh, comm))
		return;
	put_start(sc, e, comm, sh->pid, sh->tid, sh->cpu, sh->time);
	if ((sample_type_of(e) & CS_SAMPLE_PERIOD) &&
	    (sc->fields & CS_SCRIPT_PERIOD)) {
		put_dec_w(sc, sh->period, 10, ' ');
		put_ch(sc, ' ');
	}
	if (sc->fields & CS_SCRIPT_EVENT) {
		put_str_w(sc, e && e->name ? e->name : "[unknown]",
			  sc->name_width);
		put_mem(sc, ": ", 2);
	}
}

/* put_sample_head() on the formatting thread */
static void put_head_op(struct cs_script *sc, const struct cs_evsel *e,
			const struct sample_head *sh, const char *comm)
{
	struct head_op *h = op_room(sc, sizeof(*h));

	*h = (struct head_op){
		.word = OP_HEAD | (uint64_t)sc->fields << 8,
		.e = e, .comm = comm,
		.pid = sh->pid, .tid = sh->tid, .cpu = sh->cpu,
		.time = sh->time, .period = sh->period,
	};
	sc->len += sizeof(*h);
}

/* Whether the formatting thread has a whole batch waiting besides the one
 * it formats: then this thread makes the sample's first line itself. The
 * text is the same whichever makes it; which one has time to depends on
 * the profile (with fmt_names, naming new addresses there can make it
 * the slower of the two) and on what else the machine runs. */
static bool fmt_lags(const struct formatter *f)
{
	return f->sent - atomic_load_explicit(&f->formatted,
					      memory_order_relaxed) >= 2;
}

static int script_begin(void *ctx, struct cs_session *s)
{
	struct cs_script *sc = ctx;
	size_t n = cs_session_nr_evsels(s);

	sc->session = s;
	sc->machine = cs_session_machine(s);
	for (size_t i = 0; i < n; i++) {
		const struct cs_evsel *e = cs_session_evsel(s, i);
		int w = e && e->name ? (int)strlen(e->name) : 9;

		if (w > sc->name_width)
			sc->name_width = w;
	}
	/* read there only after the first batch is handed over */
	if (sc->fmt)
		sc->fmt->out->name_width = sc->name_width;
	/* a session that classifies stacks (--stats) resolves addresses on
	 * this thread as they come: the symbol tables cannot be the
	 * formatting thread's */
	if (sc->fmt_names && cs_session_completeness(s))
		return fmt_names_stop(sc);
	return 0;
}

uint64_t cs_script_unformatted(const struct cs_script *sc)
{
	return sc->unformatted;
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
	put_mem(sc, text, (size_t)n);
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

static int script_sample(void *ctx, const struct cs_stitched *s)
{
	struct cs_script *sc = ctx;
	const struct cs_event *ev = s->event;
	const struct cs_sample *smp = &ev->sample;
	const struct cs_evsel *e = ev->evsel;
	uint64_t st = sample_type_of(e);
	struct sample_head sh = head_of(smp);
	const char *comm;
	size_t n;

	sc->fields = fields_for(sc, e);
	comm = sc->fields & CS_SCRIPT_COMM ?
	       cs_machine_comm_at(sc->machine, smp->pid, smp->tid, smp->time) :
	       NULL;
	if (sc->fmt && !fmt_lags(sc->fmt))
		put_head_op(sc, e, &sh, comm);
	else
		put_sample_head(sc, e, &sh, comm);
	if (sc->fields & CS_SCRIPT_TRACE)
		put_trace(sc, e, smp);
	if (!(sc->fields & CS_SCRIPT_IP)) {
		put_ch(sc, '\n');
		return sc->io_error ? -EIO : 0;
	}
	n = cs_frames_walk(s, sc->frames, CS_FRAMES_MAX);
	if (n > CS_FRAMES_MAX)
		n = CS_FRAMES_MAX;
	if (st & CS_SAMPLE_CALLCHAIN) {
		put_ch(sc, '\n');
		put_frames(sc, smp->pid, sc->frames, n,
			   s->state == CS_CHAIN_UNWOUND);
	} else if (n) {
		put_ch(sc, ' ');
		put_ip_frame(sc, smp->pid, &sc->frames[0]);
		put_ch(sc, '\n');
	} else {
		put_ch(sc, '\n');
	}
	return sc->io_error ? -EIO : 0;
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

	if (!sc->no_merge)
		return 0;
	sc->fields = fields_for(sc, ev->evsel);
	put_start(sc, ev->evsel, sc->fields & CS_SCRIPT_COMM ?
		  cs_machine_comm_at(sc->machine, ev->id.pid, ev->id.tid,
				     ev->id.time) : NULL,
		  ev->id.pid, ev->id.tid, ev->id.cpu, ev->id.time);
	put_mem(sc, "DEFERRED CALLCHAIN [cookie: ", 28);
	put_hex_w(sc, d->cookie, 0);
	put_mem(sc, "]\n", 2);
	if (!(sc->fields & CS_SCRIPT_IP)) {
		put_ch(sc, '\n');
		return sc->io_error ? -EIO : 0;
	}
	/* the ips are user addresses of the record's task, with or without a
	 * leading marker: resolve them as a user-mode chain of that pid */
	memset(&fake, 0, sizeof(fake));
	fake.type = CS_RECORD_SAMPLE;
	fake.sample.pid = ev->id.pid;
	fake.sample.tid = ev->id.tid;
	fake.sample.misc = CS_MISC_USER;
	as_chain.event = &fake;
	n = d->nr ? cs_frames_walk(&as_chain, sc->frames, CS_FRAMES_MAX) : 0;
	if (n > CS_FRAMES_MAX)
		n = CS_FRAMES_MAX;
	put_frames(sc, ev->id.pid, sc->frames, n, false);
	return sc->io_error ? -EIO : 0;
}

static int script_end(void *ctx, struct cs_session *s)
{
	(void)s;
	return cs_script_flush(ctx);
}

const struct cs_output_ops cs_script_ops = {
	.begin = script_begin,
	.sample = script_sample,
	.deferred = script_deferred,
	.end = script_end,
};

/* ---- the formatting thread ------------------------------------------------ */

/* Room for n more bytes in at_arena. When it is full it starts over:
 * what refers to its text is written first, and a line kept there is
 * made again when it is next asked for. */
static void at_room(struct cs_script *c, size_t n)
{
	if (c->at_len + n <= AT_ARENA)
		return;
	out_drain(c);
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
 * off. */
static void at_resolve(const struct at_addr *a, struct cs_location *loc)
{
	if (a->kernel)
		cs_machine_kernel_place_resolve(a->bin, a->off, a->addr, loc);
	else
		cs_machine_place_resolve(a->bin, a->off, loc);
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
			       .gen = c->at_gen };
	if (pl->addr == a->addr)
		return true;
	text = memcpy(c->at_arena + c->at_len, c->at_arena + pl->text, pl->len);
	readdress(text, pl->len, 1, a->addr);
	t->off = (uint32_t)c->at_len;
	c->at_len += pl->len;
	return true;
}

/* a's line made in at_arena - a copy of the line made at the same place
 * for another address, or named and formatted - and where it is, into t.
 * False when it is too long to keep (as put_addr_new() decides): it is
 * written as it is made. Kernel addresses share one space: nothing to
 * share by place. */
static bool at_make(struct cs_script *c, const struct at_addr *a,
		    struct at_text *t)
{
	struct cs_place_line *pl = NULL;
	struct cs_frame fr = { .kind = CS_FRAME_ADDR, .addr = a->addr };
	struct line_names nm;
	char *text, *end;
	size_t bound;

	if (!a->kernel) {
		pl = cs_place_lines_slot(c->at_places, a->bin, a->off);
		if (at_copy(c, a, pl, t))
			return true;
	}
	at_resolve(a, &fr.loc);
	frame_names(c, &fr, &nm);
	bound = 80 + nm.sym_len + nm.dso_len;
	if (bound > LC_MAX_TEXT) {
		t->gen = 0;
		put_frame(c, &fr, '\t');
		put_ch(c, '\n');
		return false;
	}
	at_room(c, bound);
	text = c->at_arena + c->at_len;
	end = frame_to(text, &fr, '\t', &nm);
	*end++ = '\n';
	*t = (struct at_text){ .off = (uint32_t)c->at_len,
			       .len = (uint16_t)(end - text), .gen = c->at_gen };
	c->at_len += t->len;
	if (pl)
		*pl = (struct cs_place_line){
			.bin = a->bin, .off = a->off, .addr = a->addr,
			.text = t->off, .len = t->len, .lines = 1,
			.gen = cs_place_lines_gen(c->at_places),
		};
	return true;
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
			put_ref(c, c->at_arena + t->off, t->len);
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
			at_resolve(a, &fr.loc);
			put_frame(c, &fr, ' ');
			return;
		}
	}
	if (at_make(c, a, t))
		put_ref(c, c->at_arena + t->off, t->len);
}

/* The slots the OP_AT or OP_SLOT at p will read are asked for early: the
 * tables are bigger than the CPU's caches, and the batch says which
 * operations come next. */
static void op_prefetch(const struct cs_script *c, const char *p)
{
	const uint64_t *w = (const uint64_t *)p;

	switch (*w & 0xff) {
	case OP_AT:
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
		size_t cut, len;
		char *text, *q;

		switch (*w & 0xff) {
		case OP_TEXT:
			len = *w >> 8;
			put_mem(c, p + 8, len);
			p += (8 + len + 7) & ~(size_t)7;
			continue;
		case OP_HEAD: {
			const struct head_op *h = (const struct head_op *)p;
			struct sample_head sh = {
				.pid = h->pid, .tid = h->tid, .cpu = h->cpu,
				.time = h->time, .period = h->period,
			};

			c->fields = (unsigned int)(h->word >> 8);
			put_sample_head(c, h->e, &sh, h->comm);
			p += sizeof(*h);
			continue;
		}
		case OP_REF:
			text = c->arena + (*w >> 32);
			cut = (*w >> 8) & 0xff;
			len = (*w >> 16) & 0xffff;
			put_ref(c, text, cut ? prefix_len(text, len, cut) : len);
			p += 8;
			continue;
		case OP_COPY:
			len = (*w >> 16) & 0xffff;
			text = memcpy(c->arena + c->arena_len,
				      c->arena + (*w >> 32), len);
			readdress(text, len, w[2], w[1]);
			c->arena_len += len;
			cut = (*w >> 8) & 0xff;
			put_ref(c, text, cut ? prefix_len(text, len, cut) : len);
			p += 24;
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
			q = room(c, 64);
			c->len += (size_t)(unknown_to(q, w[1], (unsigned int)(*w >> 8)) - q);
			p += 16;
			continue;
		case OP_DEF: {
			const struct def_op *d = (const struct def_op *)p;
			struct cs_frame fr = { .addr = d->addr,
					       .loc.sym_offset = d->sym_offset };

			if ((*w >> 8) & 1) {
				/* what refers to the old text goes first */
				out_drain(c);
				c->arena_len = 0;
			}
			text = q = c->arena + c->arena_len;
			for (size_t i = 0; i < d->lines; i++) {
				q = frame_to(q, &fr, '\t', &d->nm[i]);
				*q++ = '\n';
			}
			len = (size_t)(q - text);
			/* frame_len() told the reading thread where the next
			 * text goes */
			if (len != *w >> 32)
				abort();
			c->arena_len += len;
			cut = (*w >> 16) & 0xff;
			put_ref(c, text, cut ? prefix_len(text, len, cut) : len);
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

	while ((b = cs_queue_pop(f->todo))) {
		if (!atomic_load(&f->failed)) {
			ops_run(f->out, b);
			if (b->sync)
				out_drain(f->out);
			if (f->out->io_error)
				atomic_store(&f->failed, true);
		}
		b->len = 0;
		b->nr_at_ops = 0;
		b->sync = false;
		cs_queue_push(f->done, b);
		atomic_fetch_add_explicit(&f->formatted, 1, memory_order_relaxed);
	}
	out_drain(f->out);
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
	free(f->name_lens);
	cs_script_free(f->out);
	cs_queue_free(f->todo);
	cs_queue_free(f->done);
	free(f);
}

/* Starts the formatting thread, which writes what it formats on a third
 * when o->jobs allows. Returns 0, or -ENOMEM, or -EAGAIN when no thread
 * could be made. */
static int formatter_start(struct cs_script *sc,
			   const struct cs_script_opts *o)
{
	struct formatter *f = calloc(1, sizeof(*f));
	int err = -ENOMEM;

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
	if ((err = printer_new(o, o->jobs >= 3, &f->out)))
		goto fail;
	atomic_init(&f->failed, false);
	atomic_init(&f->formatted, 0);
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
static void ops_out(struct cs_script *sc)
{
	struct formatter *f = sc->fmt;

	text_close(sc);
	sc->ops->len = sc->len;
	cs_queue_push(f->todo, sc->ops);
	f->sent++;
	sc->ops = cs_queue_pop(f->done);
	sc->buf = sc->ops->buf;
	sc->len = 0;
	if (atomic_load(&f->failed))
		sc->io_error = true;
}

/* out_drain() through the formatting thread: everything so far is
 * formatted and written when it returns. */
static void ops_sync(struct cs_script *sc)
{
	struct formatter *f = sc->fmt;
	struct ops *all[OPS_BATCHES];

	sc->ops->sync = true;
	ops_out(sc);
	all[0] = sc->ops;
	for (size_t i = 1; i < OPS_BATCHES; i++)
		all[i] = cs_queue_pop(f->done);
	for (size_t i = 1; i < OPS_BATCHES; i++)
		cs_queue_push(f->done, all[i]);
	if (atomic_load(&f->failed))
		sc->io_error = true;
}

static void formatter_stop(struct cs_script *sc)
{
	if (!sc->fmt)
		return;
	cs_queue_push(sc->fmt->todo, NULL);
	pthread_join(sc->fmt->thread, NULL);
	formatter_free(sc->fmt);
	sc->fmt = NULL;
	sc->name_lens = NULL;
	sc->buf = NULL;
}
