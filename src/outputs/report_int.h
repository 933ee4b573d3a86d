/* report_int.h - what report.c (samples in), report_view.c (entries),
 * report_ranks.c (their order), report_table.c (the text) and
 * report_graph.c (call graphs) share: the report's tables, the view of
 * one event built at write time, and the helpers that name an entry's
 * columns. Internal to the report output;
 * its interface is report.h. */
#ifndef CS_REPORT_INT_H
#define CS_REPORT_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "outputs/out_names.h"
#include "outputs/report.h"
#include "outputs/stack_agg.h"
#include "lib/util/hash.h"
#include "lib/util/varint.h"

struct cs_handoff;
struct seen_frame;
struct seen_thread;
struct report_tmp;

#define REPORT_ERR_LEN 512

/* frame key flags */
#define F_KERNEL	(1u << 0)
#define F_COOKIE	(1u << 1)
#define F_MISSING	(1u << 2)	/* reason in bits 8.. */
#define F_INLINED	(1u << 3)	/* a function inlined at the address */
#define F_INLINED_SAME	(1u << 4)	/* ... named as the function it is in */

/* a thread key's flags: the event, and why an off-CPU sample waited */
#define THREAD_FLAGS(evsel, state)	((evsel) | (uint32_t)(state) << 24)
#define THREAD_EVSEL(flags)		((flags) & 0xffffffu)
#define THREAD_STATE(flags)		((enum cs_off_cpu_state)((flags) >> 24))

/* What a spill record's frames are coded against: the frame before
 * (report_spill_rec.c); sym and dso are ids of struct report_names */
struct report_spill_last {
	uint64_t sym, dso, addr;
};

/* The names (symbols' and dsos' strings, the session's: not copied) that
 * temporary files give by id (report_names.c). A file holds no address
 * of this process: a damaged byte read back is an id past the table,
 * refused with an error, not a pointer followed. Id 0 is NULL, the
 * others in the order first asked for; a pointer is one id (two equal
 * strings at two addresses are two). */
struct report_names {
	const char **name;		/* by id */
	size_t nr, cap;
	uint32_t *map;			/* ids by report_names_slot(); 0: empty */
	size_t mask;			/* the map's slots - 1 */
};

static inline size_t report_names_slot(const char *s, size_t mask)
{
	return (size_t)cs_hash_u64((uint64_t)(uintptr_t)s) & mask;
}

/* report_names.c: s, not in t, added as *id. 0 or -ENOMEM */
int report_names_add(struct report_names *t, const char *s, uint32_t *id);
void report_names_free(struct report_names *t);

/* s's id into *id, added if it has none. 0 or -ENOMEM */
static inline int report_names_id(struct report_names *t, const char *s,
				  uint32_t *id)
{
	if (!s) {
		*id = 0;
		return 0;
	}
	if (t->map)
		for (size_t slot = report_names_slot(s, t->mask); t->map[slot];
		     slot = (slot + 1) & t->mask)
			if (t->name[t->map[slot]] == s) {
				*id = t->map[slot];
				return 0;
			}
	return report_names_add(t, s, id);
}

/* The name of id, read back from a file: false for an id t never gave */
static inline bool report_names_get(const struct report_names *t, uint64_t id,
				    const char **s)
{
	if (id == 0) {
		*s = NULL;
		return true;
	}
	if (id >= t->nr)
		return false;
	*s = t->name[id];
	return true;
}

struct cs_report {
	struct cs_report_opts o;
	struct cs_agg *stacks;		/* frames + stacks, tag = thread id */
	struct cs_agg *threads;		/* key: comm, addr = pid << 32 | tid,
					 * flags = event */
	uint64_t pidtid_shown;		/* the bits of addr the sort keys show */
	uint32_t *ids;			/* CS_FRAMES_MAX, reused per sample */
	struct cs_agg_key *frame_keys;	/* the same */
	uint64_t *frame_sym_start;	/* the same */
	struct cs_handoff *handoff;	/* to the aggregation's thread; the
					 * tables are its own until flushed */
	bool flushed;			/* no hand-off (any more) */
	uint64_t *sym_start;		/* per frame id: all of its location
					 * that the graphs' order needs (the
					 * address without a symbol);
					 * big_alloc.h's */
	size_t cap_sym_start;
	uint64_t *ev_samples, *ev_period;	/* per event */
	bool *ev_off_cpu;		/* per event: its samples are off-CPU time */
	size_t nr_ev, cap_ev;
	bool has_inlined;		/* a frame is an inlined function */
	uint64_t *inlined;		/* a bit per frame id: an inlined
					 * function's (NULL: none is). Read for
					 * every frame of every stack at write
					 * time, where the frames' keys would
					 * be 40 times the bytes; made by
					 * cs_report_write() */
	size_t cap_inlined;		/* words */
	struct seen_frame *seen;	/* cs_report_add_walked()'s frames */
	struct seen_frame *seen_read;	/* the same on the reading thread,
					 * when the aggregation has its own:
					 * space, addr and cpumode only */
	uint32_t *slots;		/* CS_FRAMES_MAX, reused per sample */
	struct seen_thread *seen_threads;

	/* spill mode (report_spill.c): once the tables of frames and
	 * stacks pass the budget, every stack is a record of the temporary
	 * file spill */
	size_t budget;			/* bytes: o.memory, or 256 MiB */
	uint32_t since_check, check_every;	/* samples between looks */
	uint64_t input_done, input_total;	/* cs_report_progress(): the
					 * caller's, handed on with each
					 * sample */
	char why[REPORT_ERR_LEN];	/* cs_report_memory_note(): set at
					 * the switch, or when written in
					 * memory */
	struct report_tmp *spill;	/* NULL: in memory */
	/* set aside (report_spill.c): past 7/8 of the budget, when where
	 * the tables will end is not known, they stop growing and each
	 * later sample is a record of the file aside instead; at the end
	 * they take back as many as fit (report_aside_settle()) */
	struct report_tmp *aside;	/* NULL: nothing set aside */
	uint64_t aside_from;		/* spill mode: aside's records from
					 * here on follow spill's */
	uint64_t aside_nr, aside_back;	/* records set aside, taken back */
	uint64_t aside_samples;		/* samples counted before */
	size_t aside_tables;		/* the tables' bytes then */
	uint64_t spill_seq;		/* the next record's */
	struct cs_agg_key *seen_keys;	/* per slot of seen: its frame's key
					 * (spill mode has no frame ids) */
	char err[REPORT_ERR_LEN];	/* what went wrong with a temporary
					 * file, or "" */
	uint64_t tmp_written;		/* bytes written to temporary files */
	struct report_spill_last spill_last;	/* the record being written */
	struct report_names names;	/* the names the spill and aside
					 * files and those made from them
					 * give by id */
	uint64_t spill_items;		/* records and frames written to the
					 * spill and aside files: at least as
					 * many as the report's entries there */
};

/* ---- spill mode: temporary files (report_spill.c) --------------------------- */

/* A file in $TMPDIR (else /tmp), unlinked as soon as it is made; written
 * through a buffer, read back at any offset. Errors are negative errnos,
 * and the first one leaves a line naming the file in err. */
struct report_tmp {
	int fd;
	char *path;			/* for the messages only */
	char *buf;
	size_t len, cap;		/* buffered, not yet written */
	uint64_t size;			/* bytes in the file, the buffered too */
	char *err;			/* REPORT_ERR_LEN */
	uint64_t *written;		/* the bytes written, added there */
};

struct report_tmp_reader {
	struct report_tmp *f;
	uint64_t off, end;		/* what is left to read of the file */
	struct report_tmp *next;	/* then [next_off, next_end) of next */
	uint64_t next_off, next_end;
	char *buf;
	size_t pos, len, cap;
};

/* err: REPORT_ERR_LEN bytes for the first error; every byte written to
 * the file is counted in *written too */
int report_tmp_open(struct report_tmp *f, size_t buf_size, char *err,
		    uint64_t *written);
int report_tmp_write(struct report_tmp *f, const void *p, size_t n);
int report_tmp_flush(struct report_tmp *f);
void report_tmp_close(struct report_tmp *f);
/* Reads f's bytes [off, end) (flushing f first) */
int report_tmp_reader_open(struct report_tmp_reader *rd, struct report_tmp *f,
			   uint64_t off, uint64_t end, size_t buf_size);
/* n bytes into p: 0; 1 at the end of the range; or a negative errno (a
 * range that ends inside the n bytes is -EBADMSG, as report_tmp_bad()) */
int report_tmp_read(struct report_tmp_reader *rd, void *p, size_t n);
void report_tmp_reader_close(struct report_tmp_reader *rd);
/* The offset in rd->f of the next byte report_tmp_read() gives */
uint64_t report_tmp_reader_tell(const struct report_tmp_reader *rd);

/* One byte, as report_tmp_read(rd, b, 1), without a call while the
 * buffer has it: spill records are read a byte at a time */
static inline int report_tmp_byte(struct report_tmp_reader *rd, uint8_t *b)
{
	if (rd->pos < rd->len) {
		*b = (uint8_t)rd->buf[rd->pos++];
		return 0;
	}
	return report_tmp_read(rd, b, 1);
}

/* A record of the spill file: a stack (seq: its id if it was counted
 * before the switch, else the stack count then plus the sample's index
 * since) and its count, period and thread, then its nr frames innermost
 * first, each a struct report_spill_frame. The keys' strings are the
 * session's, which outlives the report; the file names them by their ids
 * in r->names. In the file they are coded (report_spill_rec.c):
 * variable-length numbers, each frame against the one before it in the
 * record. */
struct report_spill_rec {
	uint64_t seq, count, period;
	uint32_t thread, nr;
};

struct report_spill_frame {
	struct cs_agg_key key;
	uint64_t sym_start;		/* what r->sym_start would keep */
	uint32_t sym_id, dso_id;	/* key.sym's and key.dso's in the
					 * report's names: what is written */
};

/* report_spill_rec.c: the numbers of temporary files, 7 bits a byte (the
 * high bit: more follow; written by cs_varint_put()), at most 10 bytes.
 * get: 0, 1 at the end of the range before its first byte, or
 * -EBADMSG; inside: the same, but the end is an error too (the number is
 * inside a record that began at offset at). Errors leave a line naming
 * the file and at in rd->f->err (report_tmp_bad(), which returns err). */
#define REPORT_VARINT_MAX	CS_VARINT_MAX
int report_varint_get_slow(struct report_tmp_reader *rd, uint64_t at,
			   uint64_t *v);
int report_varint_inside_slow(struct report_tmp_reader *rd, uint64_t at,
			      uint64_t *v);

/* A number whose every byte may be in the buffer, read from there without
 * a call or a look at the range per byte (most are): whether it was; a
 * number past 64 bits is left to the slow path, which says so */
static inline bool report_varint_buffered(struct report_tmp_reader *rd,
					  uint64_t *v)
{
	const uint8_t *p;
	uint64_t x = 0;

	if (rd->len - rd->pos < REPORT_VARINT_MAX)
		return false;
	p = (const uint8_t *)rd->buf + rd->pos;
	for (unsigned int i = 0; i < REPORT_VARINT_MAX - 1; i++) {
		x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			rd->pos += i + 1;
			*v = x;
			return true;
		}
	}
	if (p[REPORT_VARINT_MAX - 1] > 1)
		return false;
	*v = x | (uint64_t)p[REPORT_VARINT_MAX - 1] << 63;
	rd->pos += REPORT_VARINT_MAX;
	return true;
}

static inline int report_varint_get(struct report_tmp_reader *rd, uint64_t at,
				    uint64_t *v)
{
	return report_varint_buffered(rd, v) ? 0 :
	       report_varint_get_slow(rd, at, v);
}

static inline int report_varint_inside(struct report_tmp_reader *rd,
				       uint64_t at, uint64_t *v)
{
	return report_varint_buffered(rd, v) ? 0 :
	       report_varint_inside_slow(rd, at, v);
}

/* The n numbers of one coded item that starts at `at` into v: 0; 1 when
 * the range ends before the first (its end); else the error of
 * report_varint_inside() for one that does not read whole */
static inline int report_varints_get(struct report_tmp_reader *rd, uint64_t at,
				     uint64_t *v, size_t n)
{
	int err = report_varint_get(rd, at, &v[0]);

	for (size_t i = 1; i < n && !err; i++)
		err = report_varint_inside(rd, at, &v[i]);
	return err;
}

/* v[0, n) coded into out (room for n * REPORT_VARINT_MAX): the bytes */
static inline size_t report_varints_put(uint8_t *out, const uint64_t *v,
					size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		len += cs_varint_put(out + len, v[i]);
	return len;
}

int report_tmp_bad(struct report_tmp_reader *rd, uint64_t at, int err,
		   const char *what);

/* The most bytes a record's head and a frame take coded: five numbers of
 * at most ten bytes each */
#define REPORT_SPILL_REC_MAX	50
#define REPORT_SPILL_FRAME_MAX	50

/* report_spill_rec.c: h coded into out (REPORT_SPILL_REC_MAX bytes), last
 * made ready for its first frame; then each frame f into out
 * (REPORT_SPILL_FRAME_MAX bytes), its names by f->sym_id and f->dso_id
 * (its key's pointers are not read). They return the bytes written. */
size_t report_spill_rec_encode(const struct report_spill_rec *h,
			       struct report_spill_last *last, uint8_t *out);
size_t report_spill_frame_encode(const struct report_spill_frame *f,
				 struct report_spill_last *last, uint8_t *out);
/* The next record of rd into *h and frames[0, h->nr) (room for
 * CS_FRAMES_MAX), the frames' names from names: 0; 1 at the end of the
 * range; or a negative errno, a record that does not decode (one that
 * ends early, a number past 64 bits or past its field, more than
 * CS_FRAMES_MAX frames, a thread not below nr_threads, a name id names
 * never gave) -EBADMSG with a line in rd->f->err naming its offset */
int report_spill_rec_read(struct report_tmp_reader *rd, uint32_t nr_threads,
			  const struct report_names *names,
			  struct report_spill_rec *h,
			  struct report_spill_frame *frames);

/* The bytes of the tables the budget weighs */
size_t report_tables_memory(const struct cs_report *r);
enum report_due {
	REPORT_KEEP,			/* the tables go on in memory */
	REPORT_ASIDE,			/* later samples go to the file aside */
	REPORT_SPILL,			/* the tables go to the file now */
};
/* What becomes of the tables now, a sample being done of total bytes
 * through the input (total 0: not known) that would make them allocate
 * step bytes more at once (cs_agg_step()); for REPORT_SPILL, r->why says
 * why */
enum report_due report_spill_due(struct cs_report *r, uint64_t done,
				 uint64_t total, size_t step);
/* The switch: every stack to the file, the tables freed. 0 or -errno */
int report_spill_start(struct cs_report *r);
/* The tables stop growing: later samples are records of r->aside. 0 or
 * -errno */
int report_aside_start(struct cs_report *r);
/* Whether so many samples were set aside that, growing the tables as the
 * samples before did, they would take them past 5/4 of the budget: then
 * the switch need not wait for the end (report_aside_spill()) */
bool report_aside_due(struct cs_report *r);
/* The switch while samples are set aside: the tables to the spill file,
 * and the samples from now on after those set aside. 0 or -errno */
int report_aside_spill(struct cs_report *r);
/* At the end of the input: the records set aside back into the tables
 * while, growing as those taken back make them grow, they would end
 * within the budget; else the switch, and the rest are read from the file
 * aside after the tables' records. 0 or -errno */
int report_aside_settle(struct cs_report *r);
/* report.c: seen_keys from the slots of seen, at the switch */
int report_spill_seen(struct cs_report *r);
/* report.c: a stack of the keys' frames (keys[i], sym_start[i]) counted
 * in the tables, count samples of period on thread's behalf; the
 * samples are not counted again. 0 or -ENOMEM */
int report_count_keys(struct cs_report *r, uint32_t thread,
		      const struct cs_agg_key *keys, const uint64_t *sym_start,
		      uint32_t nr, uint64_t count, uint64_t period);
/* A record's header, then its frames one by one, to the file the samples
 * go to now (aside while there is one, else spill) */
int report_spill_rec(struct cs_report *r, uint32_t thread, uint64_t count,
		     uint64_t period, uint32_t nr);
int report_spill_frame(struct cs_report *r, const struct cs_agg_key *key,
		       uint64_t sym_start);
/* Reads every record of spill mode, in the order of their seq: spill's,
 * then aside's not taken back */
int report_spill_reader_open(struct report_tmp_reader *rd, struct cs_report *r,
			     size_t buf_size);
/* The bytes report_spill_reader_open() reads */
uint64_t report_spill_bytes(const struct cs_report *r);
void report_spill_free(struct cs_report *r);

/* report_external.c: event evsel's section of the report from the spill
 * file, byte for byte what report_write_event() writes from the tables.
 * 0, -ENOMEM, -EIO or another negative errno (r->err names the file). */
int report_external_write(struct cs_report *r, unsigned int evsel,
			  const char *name, FILE *out);

/* ---- entries ------------------------------------------------------------ */

/* A profile of distinct stacks has millions of entries: 40 bytes each,
 * all that writing them needs; what only counting them and their sort
 * need is in struct entry_work, freed before the sort. */
struct entry {
	uint32_t thread;		/* a thread and frame that show the keys */
	uint32_t frame;
	uint64_t self_count, self_period;
	uint64_t child_count, child_period;
};

struct entry_work {
	uint32_t stamp;			/* last stack counted in child_* */
	uint32_t occ_nr;		/* occurrences counted, then filed */
	uint16_t max_depth;		/* longest chain its graph shows: a
					 * stack has at most CS_FRAMES_MAX */
};
_Static_assert(CS_FRAMES_MAX <= UINT16_MAX, "an entry's max_depth is 16 bits");

/* Asks for an entry's cache lines: both, where it crosses one */
static inline void report_prefetch_entry(const struct entry *e)
{
	__builtin_prefetch(e);
	__builtin_prefetch((const char *)(e + 1) - 1);
}

struct occurrence {
	uint32_t stack;
	uint32_t pos;			/* index of the entry's frame */
	bool self;			/* the entry is the stack's innermost */
};

/* Everything worked out for one event at write time. Its arrays (parts,
 * map, entries, work, occurrences) are big_alloc.h's: cs_big_free(). */
struct view {
	struct cs_report *r;
	unsigned int evsel;
	/*
	 * An entry's key is split in what its thread decides (comm, pid,
	 * tid) and what its frame does (dso, sym): each part is worked out
	 * once per thread or frame, and an entry is found by the pair in one
	 * probe of a table of u64s.
	 */
	bool by_sym;			/* sorts by symbol: a frame is its
					 * own part */
	struct cs_agg *keys;		/* thread parts -> ids */
	struct cs_agg *names;		/* comm and dso strings -> ids */
	uint32_t *thread_part;		/* per thread id; UINT32_MAX: not yet */
	uint32_t *frame_part;		/* per frame id (dso only); ditto */
	uint32_t *map;			/* entries by entry_key(): slots of
					 * cs_slot_make(), lib/util/hash.h */
	size_t map_cap;
	uint32_t map_hash_bits;
	struct entry *e;
	struct entry_work *work;	/* per entry, until the sort */
	size_t nr_e, cap_e;
	struct occurrence *occ;		/* of the entries that draw a graph */
	size_t nr_occ;
	uint32_t *occ_off;		/* entry i's in occ[occ_off[i],
					 * occ_off[i + 1]); NULL: none */
	uint64_t total_period, total_count;
};


/* Sorting a million entries compares keys tens of millions of times; with
 * strings all over the heap that was most of report's time. Each key is
 * ranked once instead - equal keys equal ranks, in cmp_keys()'s order -
 * and entries sort on integers in one small array. */
struct ranks {
	const struct cs_report *r;	/* whose frames and threads */
	uint32_t *comm;			/* per thread id */
	/* the per-frame arrays are big_alloc.h's */
	uint32_t *dso;			/* per frame id */
	uint32_t *sym;			/* per frame id */
	/* the columns' widths, worked out in the same passes */
	uint32_t *comm_len;		/* per thread id */
	uint16_t *dso_len, *sym_len;	/* per frame id; texts are at most
					 * 1023 bytes (report_entry_col_text) */
};

static inline const char *report_thread_comm(const struct cs_report *r,
					     uint32_t t)
{
	return cs_agg_frame_key(r->threads, t)->sym;
}

static inline uint64_t report_thread_pidtid(const struct cs_report *r,
					    uint32_t t)
{
	return cs_agg_frame_key(r->threads, t)->addr;
}

static inline enum cs_off_cpu_state
report_thread_state(const struct cs_report *r, uint32_t t)
{
	return THREAD_STATE(cs_agg_frame_key(r->threads, t)->flags);
}

static inline const char *report_state_text(enum cs_off_cpu_state s)
{
	return s == CS_OFF_CPU_NONE ? "on-CPU" : cs_off_cpu_state_name(s);
}

/* A dso's base name; "[unknown]" for none */
static inline const char *report_dso_short(const char *dso)
{
	const char *s;

	if (!dso)
		return "[unknown]";
	s = strrchr(dso, '/');
	return s && s[1] ? s + 1 : dso;
}

static inline double report_pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

/* report_table.c: the texts of an entry's columns, written into buf (len
 * bytes); they return the text's length. A frame's symbol text may be a
 * static string or buf. Functions of a frame's key and a thread, so that
 * the entries of the in-memory tables and those read back from a
 * temporary file (report_external.c) are written alike. */
const char *report_frame_sym_text(const struct cs_agg_key *k, char *buf,
				  size_t len);
size_t report_entry_sym_text(const struct cs_agg_key *k, char *buf, size_t len);
/* Its length in a buffer of 1024 bytes, the text not made */
size_t report_entry_sym_len(const struct cs_agg_key *k);
size_t report_entry_col_text(const struct cs_report *r, uint32_t thread,
			     const struct cs_agg_key *fk, enum cs_report_key key,
			     char *buf, size_t len);

/* ---- the table's text (report_table.c) ------------------------------------ */

#define REPORT_MAX_COLS (CS_REPORT__NR_KEYS + 3)

/* "%.2f%%" of part, remembered: neighbours in the table mostly weigh the
 * same */
struct report_pct {
	uint64_t part;
	bool valid;
	size_t len;
	char text[32];
};

/* What an entry's line is written with */
struct report_cols {
	const struct cs_report *r;
	const size_t *width;		/* REPORT_MAX_COLS */
	size_t nc;			/* columns before the sort keys' */
	bool children, off_cpu;
	uint64_t total;			/* the event's period */
};

/* The event's "# Samples" lines */
void report_event_head(const struct cs_report *r, bool off_cpu,
		       uint64_t count, uint64_t period, const char *name,
		       FILE *out);
/* The headers' widths into width[REPORT_MAX_COLS]; returns nc */
size_t report_cols_init(const struct cs_report *r, bool children, bool off_cpu,
			size_t *width);
void report_cols_head(const struct cs_report *r, const size_t *width,
		      size_t nc, bool children, bool off_cpu, FILE *out);
/* Widens width for entry e (frame key fk), measuring its texts */
void report_widen(const struct report_cols *c, size_t *width,
		  const struct entry *e, const struct cs_agg_key *fk);
/* The entry's line of the table (pct: two, zeroed once per table) */
void report_entry_line(const struct report_cols *c, struct report_pct *pct,
		       const struct entry *e, const struct cs_agg_key *fk,
		       FILE *out);
/* The table shows the entry (it ends at the first it does not show) */
bool report_entry_shown(const struct cs_report *r, uint64_t total,
			const struct entry *e, bool children);

/* report_view.c: the id in parts of what thread's keys (comm, pid, tid,
 * state) show - the same for threads that show the same - comm texts
 * interned in names. 0 or -ENOMEM. */
int report_thread_part_id(const struct cs_report *r, uint32_t thread,
			  struct cs_agg *names, struct cs_agg *parts,
			  uint32_t *out);

/* report_view.c: the event's entries, their counts and, for those that
 * draw a call graph, their occurrences, into v (whose r and evsel are
 * set); report_view_free() frees them, whatever this returned. 0 or
 * -ENOMEM. */
int report_view_entries(struct view *v);
void report_view_free(struct view *v);
/* r->inlined, once every frame is added. 0 or -ENOMEM. */
int report_mark_inlined(struct cs_report *r);
/* The entry is weighty enough for a call graph under it. */
bool report_draws_graph(const struct view *v, const struct entry *e);

/* report_table.c: event evsel's section of the report, named name, to
 * out. 0, -ENOMEM or -EIO. */
int report_write_event(struct cs_report *r, unsigned int evsel,
		       const char *name, FILE *out);

/* report_ranks.c: the orders of the state column and of the Symbol
 * column (rank_syms(): user before kernel, names by text, addresses by
 * value, a name against an address by the address's text), as
 * comparisons, strcmp()'s sign */
uint32_t report_state_rank(enum cs_off_cpu_state s);
int report_addr_text_cmp(const char *s, uint64_t addr);
int report_sym_cmp(const struct cs_agg_key *a, const struct cs_agg_key *b);

/* report_ranks.c: every key ranked once (a job: ctx is the struct ranks,
 * whose r is set; freed by report_ranks_free()), a column's width for an
 * entry, and the entries' order by the sort keys (*out: an array of
 * v->nr_e entry indexes, the caller frees it with cs_big_free()). 0 or
 * a negative errno. */
int report_ranks_make(void *ctx);
void report_ranks_free(struct ranks *rk);
size_t report_col_width(const struct view *v, const struct ranks *rk,
			const struct entry *e, enum cs_report_key key);
int report_entries_sort(struct view *v, const struct ranks *rk,
			uint32_t **out);

/* A call graph as it is drawn: the nodes that may be shown (every node of
 * the entry's stacks, or only those above the threshold), each node's
 * children in child[child_off, + child_nr) and the roots in root[], each
 * sorted as shown (period descending, then node_tie()). */
struct report_gnode {
	const struct cs_agg_key *key;	/* its frame */
	uint64_t period, count;
	uint32_t child_off, child_nr;
};

struct report_graph {
	const struct report_gnode *node;
	const uint32_t *child;
	const uint32_t *root;
	uint32_t nr_root;
	bool one_root;			/* every stack of the entry passes
					 * through root[0] */
	uint64_t total;			/* the event's period */
	double min_percent;		/* branches below are hidden */
};

/* report_graph.c: g drawn under an entry of period entry_period */
void report_graph_draw(const struct report_graph *g, uint64_t entry_period,
		       FILE *out);

/* report_graph.c: the call graph under entry e, whose period is
 * entry_period, written to out. 0 or a negative errno. */
int report_graph_print(const struct view *v, const struct entry *e,
		       uint64_t entry_period, FILE *out);

#endif
