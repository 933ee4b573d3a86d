/* stack_agg.h - counts samples per unique stack, for the outputs.
 *
 * A profile repeats the same few thousand stacks millions of times. Each
 * frame is interned once into a small id, keyed by what the output cares
 * about (symbol and dso for a report or folded stacks, an address for
 * pprof); each stack is interned once into a stack id, keyed by its frame
 * ids and a caller-defined tag (a thread, a process name, an event). A
 * stack's frames are a path in an interned tree of (parent, frame) nodes
 * (call_tree.h), so stacks that share their outer frames share their
 * nodes. A sample then costs one hash probe per frame, and no allocation:
 * tables grow by doubling.
 *
 * The same table interns any short sequence of u32s, so outputs also use it
 * for their own composite keys (report entries).
 *
 * Strings in frame keys are compared by content but not copied: they must
 * outlive the table (the machine's strings live as long as the session).
 */
#ifndef CS_STACK_AGG_H
#define CS_STACK_AGG_H

#include <stddef.h>
#include <stdint.h>

#include <callstitch/callstitch.h>

struct cs_handoff;

struct cs_agg;			/* opaque */

/* What makes two frames the same. Zero a field to not tell frames apart by
 * it (e.g. addr = 0 to merge every address of one symbol). */
struct cs_agg_key {
	const char *sym;	/* NULL: unknown */
	const char *dso;	/* NULL: no map */
	uint64_t addr;
	uint32_t flags;		/* the caller's bits (kernel, marker, ...) */
};

/* An interned stack, as cs_agg_stack() shows it. */
struct cs_agg_stack {
	const uint32_t *frames;	/* frame ids, in the order they were added
				 * (in the buffer given to cs_agg_stack()) */
	uint32_t nr;
	uint32_t tag;
	uint64_t count;		/* sum of the counts added */
	uint64_t period;	/* sum of the periods added */
};

/* Returns 0 and a new, empty table in *out (the caller frees it with
 * cs_agg_free()), or -ENOMEM. */
int cs_agg_new(struct cs_agg **out);
void cs_agg_free(struct cs_agg *a);

/* Interns a frame: *id is its id (0, 1, ... in order of first sight). loc,
 * if not NULL, is copied the first time and kept as the frame's location
 * (pointers in it are not copied). Returns 0 or -ENOMEM. */
int cs_agg_frame(struct cs_agg *a, const struct cs_agg_key *key,
		 const struct cs_location *loc, uint32_t *id);

/* cs_agg_frame() (without locations) for keys[0, nr) into ids[0, nr),
 * faster than one at a time: the cache misses of the lookups overlap. */
int cs_agg_frames(struct cs_agg *a, const struct cs_agg_key *keys, size_t nr,
		  uint32_t *ids);

/* Like cs_agg_frame(), but copies key->sym and key->dso the first time the
 * frame is seen (the table frees the copies): for strings that may not
 * outlive the table, like a thread's command name. */
int cs_agg_frame_copy(struct cs_agg *a, const struct cs_agg_key *key,
		      uint32_t *id);

size_t cs_agg_nr_frames(const struct cs_agg *a);
/* The key and location of frame id; owned by the table. loc is all zero
 * when none was given. */
const struct cs_agg_key *cs_agg_frame_key(const struct cs_agg *a, uint32_t id);
const struct cs_location *cs_agg_frame_loc(const struct cs_agg *a, uint32_t id);

/* Adds count and period to the stack (tag, frames[0..nr)), interning it
 * the first time; *id (if not NULL) receives its id (0, 1, ... in order of
 * first sight). Give frames innermost first: stacks share the tree's
 * nodes from the last frame on. Returns 0 or -ENOMEM. */
int cs_agg_add(struct cs_agg *a, uint32_t tag, const uint32_t *frames,
	       uint32_t nr, uint64_t count, uint64_t period, uint32_t *id);

/* Like cs_agg_add() without adding: returns 0 and *id if the stack is
 * known, -ENOENT if not, or -ENOMEM (rebuilding after cs_agg_trim()). */
int cs_agg_find(struct cs_agg *a, uint32_t tag, const uint32_t *frames,
		uint32_t nr, uint32_t *id);

/* Frees what finds frames and stacks by their keys - about half the
 * table when stacks are distinct - once everything is added: reading
 * frames and stacks by id does not need it, and the next cs_agg_frame(),
 * cs_agg_add() or cs_agg_find() builds it again. */
void cs_agg_trim(struct cs_agg *a);

size_t cs_agg_nr_stacks(const struct cs_agg *a);
/* The bytes the table holds (the elements of its arrays in use, its
 * indexes whole; not the strings it copied): what report weighs against
 * its memory budget */
size_t cs_agg_memory(const struct cs_agg *a);
/* The most bytes that adding a stack of nr frames may allocate at once
 * beyond what cs_agg_memory() counts as it grows (an index doubled, while
 * the old one is still there): 0 when none of its indexes need grow */
size_t cs_agg_step(const struct cs_agg *a, uint32_t nr);
/* The most frames of any stack added: the room cs_agg_stack() needs. */
size_t cs_agg_max_depth(const struct cs_agg *a);
/* Fills *out with stack id, its frames copied into buf (room for
 * cs_agg_max_depth(a) ids; out->frames points there). Only reads the
 * table: threads may call it at once. */
void cs_agg_stack(const struct cs_agg *a, uint32_t id, uint32_t *buf,
		  struct cs_agg_stack *out);

/* Totals over every stack added. */
uint64_t cs_agg_total_count(const struct cs_agg *a);
uint64_t cs_agg_total_period(const struct cs_agg *a);

/* A sample's keys on their way to the thread that counts them (a batch of
 * lib/util/handoff, so that resolving and counting take a core each): this
 * header, room for `room` keys of which nr are used, then a string of
 * str_len bytes and its NUL - a name the table copies (a comm), which may
 * change before the record is read. */
struct cs_agg_rec {
	uint64_t period;
	uint32_t nr, room, str_len;
};

/* Appends a record with room for `room` keys and a copy of str[0, len) to
 * h's batch: the caller fills its keys (cs_agg_rec_room()), nr and period
 * before the next append. Returns it, or NULL on -ENOMEM. */
struct cs_agg_rec *cs_agg_rec_append(struct cs_handoff *h, size_t room,
				     const char *str, size_t len);

/* Where the producer writes the keys. */
static inline struct cs_agg_key *cs_agg_rec_room(struct cs_agg_rec *r)
{
	return (struct cs_agg_key *)(r + 1);
}

static inline const struct cs_agg_key *cs_agg_rec_keys(const struct cs_agg_rec *r)
{
	return (const struct cs_agg_key *)(r + 1);
}

static inline const char *cs_agg_rec_str(const struct cs_agg_rec *r)
{
	return (const char *)((const struct cs_agg_key *)(r + 1) + r->room);
}

/* Called for each record of a batch: its keys, its string, its period. */
typedef int (*cs_agg_rec_fn)(void *ctx, const struct cs_agg_key *keys,
			     uint32_t nr, const char *str, uint64_t period);

/* Calls fn for each record in buf[0, len) (a batch of the hand-off), in
 * order, until one returns an error. Returns 0 or that error. */
int cs_agg_rec_walk(const void *buf, size_t len, cs_agg_rec_fn fn, void *ctx);

#endif
