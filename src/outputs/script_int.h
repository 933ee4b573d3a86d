/* script_int.h - what the parts of script share: the printer, its
 * chunks and batches of operations, the line cache's entries, and the
 * helpers each part writes text with. Not an interface of its own: the
 * output's is script.h.
 *
 *   script.c       the printer, the line cache, stacks, the callbacks
 *   script_out.c   chunks, the writer thread, text put in a chunk
 *   script_head.c  a sample's first line
 *   script_fmt.c   the formatting thread
 */
#ifndef CS_SCRIPT_INT_H
#define CS_SCRIPT_INT_H

#include "outputs/script.h"
#include "outputs/place_lines.h"
#include "lib/machine/frames.h"
#include "abi/perf_abi.h"
#include "lib/machine/machine.h"
#include "lib/util/queue.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

/* A chunk's own text. Written at once and not read again (gathered, or
 * for /dev/null not read at all), it is a new line to
 * fetch every 64 bytes: a small chunk's lines are still in the CPU's
 * caches when it is filled again, where 256 KiB (with as much of iovecs)
 * pushed the run's other lines out (docs/performance.md, "script in one
 * thread: per-sample code"). */
#define BUF_SIZE (32u << 10)
#define PERF_MAX_STACK 127		/* perf script's default --max-stack */
#define LC_BITS 16			/* the line cache: slots */
#define LC_SLOTS (1u << LC_BITS)
_Static_assert(LC_BITS < 31, "a frame's slot number leaves its top bit free");
#define LC_TABLE (LC_SLOTS * 16u)	/* its slots' bytes */
#define LC_REGION (8u << 20)		/* the slots, then the text */
#define LC_ARENA (LC_REGION - LC_TABLE)	/* the text */
#define LC_REGION_MAX (16u << 20)	/* ... grown to, once, where it pays */
#define LC_ARENA_MAX (LC_REGION_MAX - LC_TABLE)
#define HUGE_PAGE (2u << 20)
#define LC_MAX_TEXT 4096		/* longer lines are not cached */
#define INLINES_MAX 32			/* inlined calls shown at an address */
#define CHUNKS 3			/* with a writer: being filled or written */
#define CHUNK_IOVS (2u << 10)		/* pieces of a chunk (below), IOV_MAX
					 * or two for each writev() */
#define OPS_SIZE (512u << 10)		/* a batch of operations (below) */
#define OPS_BATCHES 4			/* being filled, formatted or waiting */
#define NO_TEXT SIZE_MAX		/* text_at: no text operation open */
#define NAME_LEN_BITS 12		/* name_len(): slots */
#define HEADS 64			/* sample heads kept, by CPU */
#define PLACE_WINDOW 8192		/* place lookups judged at a time... */
#define PLACE_REST (8 * PLACE_WINDOW)	/* ... and skipped after a poor one */
#define HEAD_TEXT 96			/* ... up to their time */
#define HEAD_TAIL 64			/* ... after it */
#define HELD 3				/* samples held back (struct stack)... */
#define HELD_FRAMES 8			/* ... if their stacks are no deeper */
#ifdef IOV_MAX
#define PIECES IOV_MAX			/* pieces of text a writev() takes */
#else
#define PIECES 1024
#endif

#define STAGE_SIZE (128u << 10)		/* a chunk's pieces gathered (struct sink) */

/* Output on its way out: its own text, with references to cached text in
 * between, as the pieces writev() takes: each reference is put there as it
 * is made, after the own text before it, so that writing the chunk is
 * writev() of what is there (and the own text after the last reference),
 * or the pieces gathered into stage and written from there. */
struct chunk {
	char *buf;			/* BUF_SIZE */
	size_t len;
	struct iovec *iov;		/* CHUNK_IOVS: own text and cached text */
	size_t nr_iov;			/* the last one, if any, is cached text */
	size_t text_from;		/* own text not in iov yet starts here */
	char *stage;			/* STAGE_SIZE, made on its first gather */
};

/* Where chunks go: the stream's file descriptor, or the stream itself when
 * it has none (fmemopen()). A file or a pipe takes the kernel about 50 ns
 * a piece of a writev() besides the copy, and a frame's line is about 70
 * bytes: copied here into one buffer, the real profile's text went into a
 * file with 20% less CPU (docs/performance.md, "script's text gathered
 * before it is written"). /dev/null reads none of the bytes: there the
 * pieces go as they are. */
struct sink {
	FILE *out;
	int fd;				/* -1: through out */
	bool gather;			/* the pieces copied into a chunk's stage */
};

/* The writer thread and what it owns. */
struct writer {
	pthread_t thread;
	struct cs_queue *todo;		/* chunks to write, in order; NULL: stop */
	struct cs_queue *done;		/* written chunks, free to fill again */
	struct chunk chunks[CHUNKS];
	struct sink sink;
	atomic_int failed;		/* the errno of a failed write; 0: none */
	/* interrupted when a write fails: set before the first chunk comes */
	struct cs_session *session;
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
 *   OP_REF   cut << 8 | lines << 16 | len << 24 | off << 40: cached text,
 *            in the arena
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
 *   OP_STACK reset << 8 | user << 9 | max << 32: with lines named there
 *            (fmt_names without --no-inline) a stack's frame lines are
 *            counted there against --max-stack: with reset, both counts
 *            (a stack unwound from its copy has a user one beside the
 *            kernel's) start at max; the next lines count against the
 *            user one or not
 *   OP_LINE  len << 8, then len bytes of text: a frame line that is no
 *            address's (a marker), written if the count allows
 * cut: write only that many of the lines (0: all), as --max-stack asks.
 * The reading thread keeps the line cache and decides every hit, miss
 * and reset, and it knows the length of each new text (script_frame_len()), so
 * it knows where the formatting thread's arena has it - but for the
 * lines of OP_AT, whose names it never sees: their entries only say so
 * (LE_AT), and that thread keeps them in an arena of its own (at_*).
 * Naming a new address is most of what a miss costs, and with
 * --no-inline its line is one line whatever the names are, which is all
 * this thread needs to know of it (--max-stack). With inlined calls it
 * is not: an address's lines are as many as its DWARF says, so this
 * thread counts each as one, at least what it has, and the formatting
 * thread cuts the stack where the count it keeps says (OP_STACK). */
enum { OP_TEXT = 1, OP_HEAD, OP_REF, OP_DEF, OP_COPY, OP_UNK, OP_AT, OP_SLOT,
       OP_STACK, OP_LINE };
#define OP_AT_KEEP (1ull << 20)
#define OP_AT_IP (1ull << 21)
#define OP_AT_KERNEL (1ull << 22)
#define OP_STACK_RESET (1ull << 8)
#define OP_STACK_USER (1ull << 9)
#define AT_ARENA (4u << 20)		/* the formatting thread's own text */
#define AT_AHEAD 16			/* OP_AT and OP_SLOT looked at ahead */
#define AT_REGION (8u << 20)		/* at_texts, at_addrs, at_arena */

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

/* Each batch on cache lines of its own: the reading thread counts the
 * at_ops of the one it fills at every OP_AT and OP_SLOT, while the
 * formatting thread reads the fields of the one before it at every such
 * operation - on one line, each count took the line from the other CPU. */
struct ops {
	_Alignas(64) char *buf;		/* OPS_SIZE */
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
#define LE_SPACE_BITS 21
#define LE_OFF_BITS 24			/* LC_ARENA_MAX */
#define LE_LEN_BITS 13			/* LC_MAX_TEXT */
#define LE_SPACE_MAX ((1ull << LE_SPACE_BITS) - 2)
#define LE_AT ((1u << LE_LEN_BITS) - 1)	/* a length: the text is OP_AT's */
#define LE_FIELD(v, shift, bits) ((uint32_t)((v) >> (shift)) & ((1u << (bits)) - 1))
#define LE_OFF(e) LE_FIELD((e)->packed, LE_SPACE_BITS, LE_OFF_BITS)
#define LE_LEN(e) LE_FIELD((e)->packed, LE_SPACE_BITS + LE_OFF_BITS, LE_LEN_BITS)
#define LE_LINES(e) ((uint32_t)((e)->packed >> (LE_SPACE_BITS + LE_OFF_BITS + LE_LEN_BITS)))
_Static_assert(sizeof(struct line_ent) * LC_SLOTS == LC_TABLE &&
	       LC_REGION % HUGE_PAGE == 0, "the line cache fills whole huge pages");
_Static_assert(LC_ARENA_MAX <= 1u << LE_OFF_BITS && LC_MAX_TEXT < LE_AT &&
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
	int io_error;			/* the errno of a failed write; 0: none */
	struct chunk *filling;		/* being filled, by this thread */
	char *buf;			/* filling->buf */
	size_t len;			/* of filling's own text so far */
	struct chunk own;		/* the one chunk, without a writer */
	/* samples held back (struct stack): a ring of HELD + 1 stacks, the
	 * oldest held at `first`, then the others, then the free one */
	struct stack *stacks;
	size_t first, nr_held;
	struct line_ent *lines;		/* LC_SLOTS, then the arena */
	char *arena;			/* arena_cap bytes of line text */
	size_t arena_len;
	size_t arena_cap;		/* LC_ARENA, or LC_ARENA_MAX once grown */
	uint64_t arena_starts;		/* how many times it started over */
	struct writer *writer;		/* NULL: text written on this thread */
	size_t room_end;		/* room() gives room up to here */
	struct formatter *fmt;		/* NULL: no formatting thread */
	struct ops *ops;		/* with fmt: the batch buf points into */
	size_t text_at;			/* its open OP_TEXT, or NO_TEXT */
	bool reset_pending;		/* the line cache started over */
	struct name_len *name_lens;	/* with fmt: NAME_LEN_BITS slots */
	struct head_prefix *heads;	/* HEADS: sample heads, by CPU */
	uint64_t sec;			/* the last time's seconds */
	size_t sec_len;			/* their text's (0: none yet) */
	char sec_text[32];		/* cpy32(): padded, and the '.' */
	struct cs_place_lines *places;	/* the arena's text by binary and
					 * offset; NULL on the formatting thread */
	uint32_t place_probes, place_hits; /* in this window (PLACE_WINDOW) */
	bool place_pays;		/* the last window found a quarter */
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
	bool fmt_kernel;		/* with fmt_names: kernel addresses too */
	bool stack_counts;		/* fmt_names with inlined calls: this
					 * thread sends OP_STACK, and... */
	size_t stack_left[2];		/* ... the formatting thread counts a
					 * stack's lines: the kernel's (and all
					 * of one not unwound), the user's
					 * (SIZE_MAX: no OP_STACK yet) */
	bool stack_user;		/* which of them the lines count in */
	size_t stack_unsure[2];		/* with stack_counts, this thread's:
					 * how many lines each count of the
					 * stack may have missed (addresses
					 * named there, counted as one line,
					 * whose inlined calls it knows) */
	size_t fmt_given_up;		/* batches the formatting thread was
					 * sent before it was given up; 0: it
					 * was not (script_fmt_judge()) */
	enum cs_script_fmt_reason fmt_reason;	/* ... why */
	size_t fmt_waits;		/* ... its waits by then */
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
	uint8_t lines;			/* INLINES_MAX + 1 at most */
};
_Static_assert(INLINES_MAX + 1 <= UINT8_MAX && LC_ARENA_MAX <= 1u << 24 &&
	       LC_MAX_TEXT < 1u << 16,
	       "an address's lines, and OP_REF's fields, fit their bytes");

/* ... and what the line is made of, read only when it is made again
 * (put_at()'s bin and off). */
struct at_addr {
	const void *bin;
	uint64_t off, addr;
	bool kernel;
};
_Static_assert(LC_SLOTS * (sizeof(struct at_text) + sizeof(struct at_addr)) +
	       AT_ARENA <= AT_REGION && AT_REGION % HUGE_PAGE == 0,
	       "the formatting thread's tables and arena fill whole huge pages");

/* A sample's first line but its time, as put_head() last made it for a
 * CPU: the comm, pid and tid need not be measured and formatted again
 * for the next sample of the same thread there, nor the period and the
 * event's name that follow the time. */
struct head_prefix {
	bool used;
	const struct cs_evsel *e;	/* of the sample: its name, its fields */
	const char *comm;		/* interned: the same text, the same pointer */
	uint32_t pid, tid, cpu;
	unsigned int fields;
	size_t len;
	char text[HEAD_TEXT];		/* at least 32: cpy32() */
	bool tail_made;			/* tail is the period's and the name's */
	uint64_t tail_period;		/* ... for a sample of this period */
	size_t tail_len;
	char tail[HEAD_TAIL];		/* cpy64() */
};

/* Where a frame's address lies (find_place()), worked out for a stack's
 * uncached frames before any is written, so that their slots in the
 * place table are asked for at once, as the line cache's are. */
struct frame_place {
	const void *bin;		/* NULL: not looked up; &no_map: none */
	uint64_t off;
	struct cs_place_line *pl;	/* (bin, off)'s slot */
};

/* A sample's stack: its frames walked, and each frame's line slot
 * asked for (stack_ask()); then where those the line cache misses lie,
 * their place slots asked for (stack_place()); then written
 * (stack_put()). With samples held back, the steps of different samples
 * take turns, so that what one step asks for has the others' time to
 * come. */
struct stack {
	struct cs_frame *frames;	/* CS_FRAMES_MAX */
	uint32_t *slots;		/* the frames' line slots */
	struct frame_place *places;	/* where they lie */
	size_t ask;			/* frames looked at */
	uint32_t pid;
	uint64_t uspace, kspace;	/* the spaces the slots are of */
	bool unwound;			/* CS_CHAIN_UNWOUND */
	bool placed;			/* stack_place() done */
	/* the sample, held: its event and its first line's fields */
	const struct cs_evsel *e;
	struct sample_head sh;
};

/* The formatting thread and what it owns. */
struct formatter {
	pthread_t thread;
	struct cs_queue *todo;		/* batches to format, in order; NULL: stop */
	struct cs_queue *done;		/* formatted batches, free to fill again */
	struct ops batches[OPS_BATCHES];
	struct cs_script *out;		/* formats and writes them */
	struct name_len *name_lens;	/* the reading thread's */
	atomic_int failed;		/* its printer's io_error; 0: none */
	size_t sent;			/* batches, by the reading thread */
	/* whether the two threads run at once (script_fmt_judge()), by
	 * the scheduler's account of each: time run, time waited for a
	 * CPU (schedstat), in ns, at the last look */
	int schedstat[2];		/* this thread's, that one's; -1: none */
	uint64_t judged_wall, judged_run[2], judged_wait[2];
	unsigned int poor;		/* looks in a row that found no overlap */
	size_t waits;			/* script_fmt_stack_used()'s */
	size_t judged_waits;		/* ... at the last look */
	bool judge_due;			/* a look at the next sample */
	_Atomic pid_t tid;		/* the formatting thread's; 0: not yet */
	/* batches formatted: on a line of its own, which only the
	 * formatting thread writes */
	_Alignas(64) atomic_size_t formatted;
};

/* ---- script_out.c: chunks, the writer thread, text ----------------------- */

void script_sink_init(struct sink *s, FILE *out);
void script_out_session(struct cs_script *sc, struct cs_session *s);
void script_chunk_free(struct chunk *c);
int script_chunk_init(struct chunk *c);
int script_writer_start(struct cs_script *sc);
void script_chunk_out(struct cs_script *sc);
void script_out_drain(struct cs_script *sc);
void script_writer_stop(struct cs_script *sc);
char *script_room_slow(struct cs_script *sc, size_t n);
void script_text_close(struct cs_script *sc);
void script_put_mem(struct cs_script *sc, const char *s, size_t n);
void script_put_str(struct cs_script *sc, const char *s);
void script_put_pad(struct cs_script *sc, int n);
void script_put_str_w(struct cs_script *sc, const char *s, int width);
size_t script_fmt_dec(char *tmp, uint64_t v);
void script_put_rev(struct cs_script *sc, const char *tmp, size_t n, int width,
		    char padc);
void script_put_hex_w(struct cs_script *sc, uint64_t v, int width);
void script_put_dec_w(struct cs_script *sc, uint64_t v, int width, char padc);
void script_put_int_w(struct cs_script *sc, int32_t v, int width);

/* ---- script_head.c: a sample's first line -------------------------------- */

void script_put_sample_head(struct cs_script *sc, const struct cs_evsel *e,
			    const struct sample_head *sh, const char *comm);
void script_put_head_op(struct cs_script *sc, const struct cs_evsel *e,
			const struct sample_head *sh, const char *comm);
void script_put_start(struct cs_script *sc, const struct cs_evsel *e,
		      const char *comm, uint32_t pid, uint32_t tid, uint32_t cpu,
		      uint64_t time);

/* ---- script_fmt.c: the formatting thread --------------------------------- */

/* Whether the formatting thread has a whole batch waiting besides the one
 * it formats: then this thread makes the sample's first line itself. The
 * text is the same whichever makes it; which one has time to depends on
 * the profile (with fmt_names, naming new addresses there can make it
 * the slower of the two) and on what else the machine runs. */
static inline bool script_fmt_lags(const struct formatter *f)
{
	return f->sent - atomic_load_explicit(&f->formatted,
					      memory_order_relaxed) >= 2;
}

int script_fmt_names_start(struct cs_script *sc);
int script_fmt_judge(struct cs_script *sc);
int script_formatter_start(struct cs_script *sc,
			   const struct cs_script_opts *o);
void script_ops_out(struct cs_script *sc);
void script_ops_sync(struct cs_script *sc);
/* With stack_counts, in the middle of a stack: how many lines the count
 * `user` (OP_STACK) of it has shown - exactly, as the formatting thread
 * counted them, once it formatted everything sent (this thread waits). */
size_t script_fmt_stack_used(struct cs_script *sc, bool user);
void script_formatter_stop(struct cs_script *sc);

/* ---- script.c: frame lines ---------------------------------------------- */

int script_printer_new(const struct cs_script_opts *o, bool writer,
		       struct cs_script **out);
void script_frame_names(const struct cs_script *sc, const struct cs_frame *f,
			const struct cs_loc_lens *lens, struct line_names *nm);
size_t script_frame_len(const struct cs_frame *f, const struct line_names *nm);
char *script_frame_to(char *p, const struct cs_frame *f, char lead,
		      const struct line_names *nm);
void script_put_frame(struct cs_script *sc, const struct cs_frame *f,
		      char lead);
size_t script_prefix_len(const char *text, size_t len, size_t lines);
char *script_unknown_to(char *p, uint64_t addr, unsigned int fields);
void script_readdress(char *text, size_t len, size_t lines, uint64_t addr);
void script_lines_take(struct cs_script *sc, const struct cs_script *c);
size_t script_addr_names(const struct cs_script *sc, const struct cs_frame *f,
			 const struct cs_loc_lens *lens,
			 const char *const *names, size_t n,
			 struct line_names *nm);
size_t script_put_long_lines(struct cs_script *sc, const struct cs_frame *f,
			     const char *const *names, size_t n, size_t bound,
			     size_t left);

/* ---- helpers every part writes with -------------------------------------- */

/* Waits until the thread at the other end of a ring of n buffers has
 * given back the n - 1 not in hand (done: the queue it gives them back
 * on), and leaves them there: all it was sent is done with. */
static inline void ring_wait(struct cs_queue *done, size_t n)
{
	void *all[8];

	for (size_t i = 1; i < n; i++)
		all[i] = cs_queue_pop(done);
	for (size_t i = 1; i < n; i++)
		cs_queue_push(done, all[i]);
}
_Static_assert(CHUNKS <= 8 && OPS_BATCHES <= 8, "ring_wait() holds them all");

/* A thread's failed write (the errno it keeps in *failed; 0: none) is
 * this printer's from now on. */
static inline void take_failure(struct cs_script *sc, atomic_int *failed)
{
	int err = atomic_load(failed);

	if (err)
		sc->io_error = err;
}

/* With a formatting thread, a look at whether it pays, when one is due:
 * between samples (script_fmt_judge()). Returns 0 or its error. */
static inline int script_fmt_look(struct cs_script *sc)
{
	return sc->fmt && sc->fmt->judge_due ? script_fmt_judge(sc) : 0;
}

/* len bytes of cached text go out next, by reference: they stay in the
 * arena until the chunk is written (script_out_drain() before the arena is
 * reused). */
static inline void put_ref(struct cs_script *sc, const char *text, size_t len)
{
	struct chunk *c = sc->filling;

	/* a stack seen before was often cached in the order it is printed */
	if (c->nr_iov && c->text_from == sc->len) {
		struct iovec *last = &c->iov[c->nr_iov - 1];

		if ((const char *)last->iov_base + last->iov_len == text) {
			last->iov_len += len;
			return;
		}
	}
	if (c->nr_iov > CHUNK_IOVS - 2) {
		script_chunk_out(sc);
		c = sc->filling;
	}
	if (sc->len > c->text_from)
		c->iov[c->nr_iov++] = (struct iovec){ c->buf + c->text_from,
						      sc->len - c->text_from };
	c->iov[c->nr_iov++] = (struct iovec){ (void *)(uintptr_t)text, len };
	c->text_from = sc->len;
}

static inline char *room(struct cs_script *sc, size_t n)
{
	if (sc->len + n > sc->room_end)
		return script_room_slow(sc, n);
	return sc->buf + sc->len;
}

/* Room for an operation of size bytes (at most OPS_SIZE - 8): the text
 * before it is closed. */
static inline void *op_room(struct cs_script *sc, size_t size)
{
	script_text_close(sc);
	if (sc->len + size > OPS_SIZE)
		script_ops_out(sc);
	return sc->buf + sc->len;
}

static inline void put_ch(struct cs_script *sc, char c)
{
	char *p = room(sc, 1);

	*p = c;
	sc->len++;
}

static inline char *cpy(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

/* cpy() of a short text from a buffer of at least 32 bytes, to where
 * there is room for 32: one fixed-size copy (two moves), not a call of
 * memcpy() - three a sample for its first line. */
static inline char *cpy32(char *p, const char *s, size_t n)
{
	if (n > 32)
		return cpy(p, s, n);
	memcpy(p, s, 32);
	return p + n;
}

/* cpy() of a text of at most 64 bytes from a buffer of 64, to where there
 * is room for 64: two fixed-size copies, not a call of memcpy() */
static inline char *cpy64(char *p, const char *s, size_t n)
{
	memcpy(p, s, 32);
	if (n > 32)
		memcpy(p + 32, s + 32, 32);
	return p + n;
}

/* 8 hex digits of x, most significant first, as one word in memory order:
 * nibbles spread to bytes, then each byte made an ASCII digit */
static inline uint64_t hex8(uint32_t x)
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
static inline uint64_t blank(uint64_t digits, unsigned int k)
{
	uint64_t mask = k >= 8 ? ~0ULL : (1ULL << (8 * k)) - 1;

	return (digits & ~mask) | (0x2020202020202020ULL & mask);
}

/* %*lx, width 0 or 16; p has 16 bytes of room in either case. Written
 * as whole words from registers: a copy through an array on the stack
 * would wait for its two stores to reach the load of both (a store
 * forwarding stall), in every frame line. */
static inline char *hex_to(char *p, uint64_t v, int width)
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
static inline char *hex_to(char *p, uint64_t v, int width)
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

static inline uint64_t sample_type_of(const struct cs_evsel *e)
{
	return e ? e->sample_type : 0;
}

#endif
