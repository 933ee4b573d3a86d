/* sample_fields.h - the order of the fields perf writes at a sample's head
 * and in the sample_id trailer of the other kernel records, written down
 * once for the reader, the writer and the recorder.
 *
 * A sample opens with IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU
 * and PERIOD, each there when its sample_type bit is set; with
 * sample_id_all every other kernel record ends in a trailer of the id
 * fields TID, TIME, ID, STREAM_ID, CPU and then IDENTIFIER (first in a
 * sample and last in a trailer, so that the id sits at a fixed place
 * whatever the event). Each slot is 8 bytes: TID is pid and tid, CPU is
 * cpu and a reserved u32, so each of those is two 4-byte entries here.
 *
 * Each entry also says where callstitch keeps the field (struct
 * cs_sample, struct cs_sample_id), so that a walk of a table reads or
 * writes a head or a trailer whole. Walked unrolled, with the bits known
 * at compile time or held in a register, a walk folds to the straight
 * loads and stores one would write by hand.
 *
 * Who uses it: lib/read/evlist.c (each event's layout), lib/read/decode.c
 * (reads heads and trailers), lib/util/bswap_record.c (swaps them),
 * lib/write/encode.c (writes them), lib/write/swap.c (the id a record
 * names) and record/peek.c (the recorder's own fixed reads).
 */
#ifndef CS_ABI_SAMPLE_FIELDS_H
#define CS_ABI_SAMPLE_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include <callstitch/callstitch.h>
#include "abi/perf_abi.h"

/* The fields a sample and a trailer share, where struct cs_sample_id
 * keeps them. */
enum cs_id_field {
	CS_ID_PID,
	CS_ID_TID,
	CS_ID_TIME,
	CS_ID_ID,
	CS_ID_STREAM_ID,
	CS_ID_CPU,
	CS_ID_NR,
	CS_ID_NONE = CS_ID_NR,
};

/* One u64, or one half of a u32 pair, of a sample's head or a trailer. */
struct cs_field {
	uint64_t bit;		/* the sample_type bit that puts it there */
	uint8_t size;		/* 8, or 4 for each half of a pair */
	uint8_t id;		/* enum cs_id_field, or CS_ID_NONE */
	int16_t sample_at;	/* offset in struct cs_sample, or -1 */
	const char *name;	/* for "<name>" ran out messages */
};

#define CS_AT(f)	((int16_t)offsetof(struct cs_sample, f))

static const struct cs_field cs_sample_head[] = {
	{ CS_SAMPLE_IDENTIFIER,	8, CS_ID_ID,        CS_AT(id),        "identifier" },
	{ CS_SAMPLE_IP,		8, CS_ID_NONE,      CS_AT(ip),        "ip" },
	{ CS_SAMPLE_TID,	4, CS_ID_PID,       CS_AT(pid),       "pid" },
	{ CS_SAMPLE_TID,	4, CS_ID_TID,       CS_AT(tid),       "tid" },
	{ CS_SAMPLE_TIME,	8, CS_ID_TIME,      CS_AT(time),      "time" },
	{ CS_SAMPLE_ADDR,	8, CS_ID_NONE,      CS_AT(addr),      "addr" },
	{ CS_SAMPLE_ID,		8, CS_ID_ID,        CS_AT(id),        "id" },
	{ CS_SAMPLE_STREAM_ID,	8, CS_ID_STREAM_ID, CS_AT(stream_id), "stream id" },
	{ CS_SAMPLE_CPU,	4, CS_ID_CPU,       CS_AT(cpu),       "cpu" },
	{ CS_SAMPLE_CPU,	4, CS_ID_NONE,      -1,               "cpu" },
	{ CS_SAMPLE_PERIOD,	8, CS_ID_NONE,      CS_AT(period),    "period" },
};

/* A trailer's fields have no place in struct cs_sample (sample_at -1):
 * they go to struct cs_sample_id, by id. */
static const struct cs_field cs_trailer[] = {
	{ CS_SAMPLE_TID,	4, CS_ID_PID,       -1, "pid" },
	{ CS_SAMPLE_TID,	4, CS_ID_TID,       -1, "tid" },
	{ CS_SAMPLE_TIME,	8, CS_ID_TIME,      -1, "time" },
	{ CS_SAMPLE_ID,		8, CS_ID_ID,        -1, "id" },
	{ CS_SAMPLE_STREAM_ID,	8, CS_ID_STREAM_ID, -1, "stream id" },
	{ CS_SAMPLE_CPU,	4, CS_ID_CPU,       -1, "cpu" },
	{ CS_SAMPLE_CPU,	4, CS_ID_NONE,      -1, "cpu" },
	{ CS_SAMPLE_IDENTIFIER,	8, CS_ID_ID,        -1, "identifier" },
};

#undef CS_AT

#define CS_SAMPLE_HEAD_NR	(sizeof(cs_sample_head) / sizeof(cs_sample_head[0]))
#define CS_TRAILER_NR		(sizeof(cs_trailer) / sizeof(cs_trailer[0]))

/* The bits of cs_sample_head's fields (test_decode checks that they are
 * the table's), and the most bytes they take: nine u64s. */
#define CS_SAMPLE_HEAD_BITS (CS_SAMPLE_IDENTIFIER | CS_SAMPLE_IP | \
		CS_SAMPLE_TID | CS_SAMPLE_TIME | CS_SAMPLE_ADDR | CS_SAMPLE_ID | \
		CS_SAMPLE_STREAM_ID | CS_SAMPLE_CPU | CS_SAMPLE_PERIOD)
#define CS_SAMPLE_HEAD_MAX	(9 * 8)

/* Where struct cs_sample_id keeps each field. */
static const uint8_t cs_id_at[CS_ID_NR] = {
	[CS_ID_PID] = offsetof(struct cs_sample_id, pid),
	[CS_ID_TID] = offsetof(struct cs_sample_id, tid),
	[CS_ID_TIME] = offsetof(struct cs_sample_id, time),
	[CS_ID_ID] = offsetof(struct cs_sample_id, id),
	[CS_ID_STREAM_ID] = offsetof(struct cs_sample_id, stream_id),
	[CS_ID_CPU] = offsetof(struct cs_sample_id, cpu),
};

/* Bytes the fields of table (nr entries) that st selects take. */
static inline size_t cs_fields_size(const struct cs_field *table, size_t nr,
				    uint64_t st)
{
	size_t n = 0;

	for (size_t i = 0; i < nr; i++)
		if (st & table[i].bit)
			n += table[i].size;
	return n;
}

/* Byte offset, from the start of the fields of table (nr entries) that st
 * selects, of the first field that bit puts there; -1 when st lacks bit. */
static inline long cs_fields_at(const struct cs_field *table, size_t nr,
				uint64_t st, uint64_t bit)
{
	size_t at = 0;

	if (!(st & bit))
		return -1;
	for (size_t i = 0; i < nr; i++) {
		if (table[i].bit == bit)
			break;
		if (st & table[i].bit)
			at += table[i].size;
	}
	return (long)at;
}

/* The name of the first field of table that st selects and that does not
 * fit in left bytes, or NULL when they all fit. */
static inline const char *cs_fields_cut(const struct cs_field *table,
					size_t nr, uint64_t st, size_t left)
{
	size_t at = 0;

	for (size_t i = 0; i < nr; i++) {
		if (!(st & table[i].bit))
			continue;
		at += table[i].size;
		if (at > left)
			return table[i].name;
	}
	return NULL;
}

#endif
