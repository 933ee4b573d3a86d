/* dump.h - every record of a profile, in file order, decoded for people
 * (the shape of `perf report -D`).
 *
 * dump is the raw view: it reads the reader's records directly, without
 * ordering or stitching, so that what is in the file is what is shown —
 * the cookie of every deferred sample and every CALLCHAIN_DEFERRED record
 * included.
 */
#ifndef CS_DUMP_H
#define CS_DUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct cs_reader;
struct cs_errbuf;

struct cs_dump_opts {
	bool hex;		/* also the raw bytes of each record */
	bool header_only;	/* the summary of header, events, features */
	bool no_stats;		/* no per-type totals at the end */
};

/* Per-type totals of one dump, for callers and tests. */
struct cs_dump_counts {
	uint64_t records;
	uint64_t by_type[128];	/* types >= 127 in the last */
};

/* Writes r's header summary, then its records, to f. Returns 0, or a
 * negative errno with eb filled ("<path>: <TYPE> record at offset ...").
 * counts may be NULL. The records read before an error have been written. */
int cs_dump(struct cs_reader *r, FILE *f, const struct cs_dump_opts *o,
	    struct cs_dump_counts *counts, struct cs_errbuf *eb);

#endif
