/* report_ext.h - what report_external.c (the entries and the table) and
 * report_ext_graph.c (the call graphs) share while an event's section is
 * made from spill mode's temporary file: the state of one event, the
 * records' walk and the keys' hashes. Internal to the report output. */
#ifndef CS_REPORT_EXT_H
#define CS_REPORT_EXT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/util/hash.h"
#include "outputs/report_int.h"

#define NONE		UINT32_MAX
#define MAX_PARTS	256
#define SKETCH_ROWS	4

/* An entry counted; in a run, as it is written */
struct ext_entry {
	struct entry e;			/* thread and counts (frame unused) */
	struct cs_agg_key fk;
	uint64_t h;			/* its key's hash */
	uint64_t seq;			/* first sight: (seq, k) */
	uint32_t tpart;
	uint32_t graph;			/* its graph among the drawn, or NONE */
	uint32_t sym_id, dso_id;	/* fk's names in the report's */
	uint16_t k, max_depth;
};

/* A node of a call graph above the sketch's threshold */
struct ext_node {
	struct cs_agg_key fk;
	uint64_t h1, h2;		/* its path's hash */
	uint64_t period, count, seq;	/* seq: the first record through it */
	uint64_t sym_start;
	uint32_t graph, parent;
	uint32_t kept;			/* index among the shown, or NONE */
};

/* A string's two hashes, remembered by its address (the session's
 * strings never change) */
#define MEMO_SLOTS 4096
struct memo {
	const char *s;
	uint64_t h1, h2;
};

/* One occurrence of a walk: the first place of an entry in a record */
struct walk_occ {
	uint32_t pos, k, len;
	uint32_t slot;			/* in ext.seen */
	uint64_t h;			/* the entry key's hash */
};

struct ext {
	struct cs_report *r;
	unsigned int evsel;
	bool children, callee, by_sym, by_dso;
	uint32_t *tpart;		/* per thread: what its keys show */
	struct memo *memo;
	uint64_t total_count, total_period;

	/* a record being read */
	struct report_spill_rec rec;
	struct report_spill_frame *frames;	/* CS_FRAMES_MAX */
	struct walk_occ *occ;		/* CS_FRAMES_MAX */
	size_t nr_occ;
	uint32_t *seen;			/* 2 CS_FRAMES_MAX slots: occ + 1 */

	/* entries */
	unsigned int nr_part;
	struct report_tmp part[MAX_PARTS];
	struct report_tmp runs;
	uint64_t run_off[MAX_PARTS + 1];
	size_t width[REPORT_MAX_COLS], nc, nr_show;

	/* the entries that draw a graph, found by their key */
	struct ext_entry *drawn;
	size_t nr_drawn, cap_drawn;
	uint32_t *drawn_map;		/* index + 1 */
	size_t drawn_cap;

	/* call graphs */
	uint64_t *sketch;		/* SKETCH_ROWS x sketch_w */
	size_t sketch_w;
	struct ext_node *node;
	size_t nr_node, cap_node;
	uint32_t *node_map;		/* index + 1 */
	size_t node_cap;
	struct report_gnode *gnode;	/* the nodes shown, by graph */
	uint32_t *gchild, *groot;
	uint32_t *root_off;		/* per graph: its roots in groot */
};

static inline uint64_t ext_mix(uint64_t h, uint64_t v)
{
	return cs_hash_u64(h ^ v) + 0x9e3779b97f4a7c15ULL;
}

/* report_external.c: a frame's key by content, 128 bits; frames equal by
 * content */
void ext_frame_hash(struct ext *x, const struct cs_agg_key *k, uint64_t *h1,
		    uint64_t *h2);
bool ext_frame_eq(const struct cs_agg_key *a, const struct cs_agg_key *b);
/* The next record into x->rec and x->frames: 0, 1 at the end, or an error */
int ext_read_rec(struct ext *x, struct report_tmp_reader *rd);
/* x->rec is of the event made */
bool ext_rec_of_event(const struct ext *x);
/* The record's entries at their first places of view_build()'s walk, into
 * x->occ */
void ext_walk(struct ext *x);
/* The drawn entry of key (tpart, fk) whose hash is h: its graph, or NONE */
uint32_t ext_drawn_find(const struct ext *x, uint32_t tpart,
			const struct cs_agg_key *fk, uint64_t h);

/* report_ext_graph.c: the call graphs of the drawn entries, found (0 or a
 * negative errno), and the one of entry e printed */
int ext_graphs_find(struct ext *x);
void ext_graph_print(const struct ext *x, const struct ext_entry *e,
		     FILE *out);

#endif
