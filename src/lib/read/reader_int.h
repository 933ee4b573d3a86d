/* reader_int.h - the reader's insides, shared by its files (reader.c: the
 * sources and the record loop, features.c: feature sections, swap.c:
 * foreign byte order, zstream.c: compressed payloads). Not for use outside
 * src/lib/read.
 */
#ifndef CS_READER_INT_H
#define CS_READER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi/perf_abi.h"
#include "lib/read/reader.h"

struct cs_evlist;
struct cs_errbuf;

/* ---- byte order (swap.c) ---- */

/* Swaps one attr in place; only the fields within size bytes exist. */
void cs_swap_attr(void *attr, size_t size);
/* Swaps the header of the record at rec in place. */
void cs_swap_header(void *rec);
/* Swaps the body of a record whose header is already native. Fields the
 * reader and decoder read are swapped; bodies of records we only count are
 * left as they are. Returns NULL or what was wrong. */
const char *cs_swap_body(const struct cs_evlist *l, void *rec, size_t size);

/* ---- zstd stream (zstream.c) ---- */

struct cs_zstream;
int cs_zstream_new(struct cs_zstream **out);
void cs_zstream_free(struct cs_zstream *z);
/* Inflates, on a thread of its own, the payloads of the COMPRESSED
 * records in map[from, end) (a mapped data section, from the first
 * COMPRESSED record on) ahead of cs_zstream_next(); the records that come
 * out are the same. Call before the first feed. Returns 0, or a negative
 * errno (the stream then inflates as it is read). */
int cs_zstream_ahead(struct cs_zstream *z, const void *map, uint64_t from,
		     uint64_t end, bool swap);
/* Feeds the payload of the COMPRESSED record at file offset off; it must
 * stay readable until drained. */
void cs_zstream_feed(struct cs_zstream *z, uint64_t off, const void *in,
		     size_t size);
/* The next whole decompressed record: 1 and *rec, *size (valid until the
 * next call); 0 when the payload is used up (a record may be left
 * half-done, to be finished by the next payload); negative on an error,
 * with *why. The record's header is in file byte order. */
int cs_zstream_next(struct cs_zstream *z, bool swap, void **rec,
		    size_t *size, const char **why);
/* The type of the record cs_zstream_next() hands out next, in native byte
 * order: CS_ZSTREAM_PAYLOAD_DONE when the payload is used up (the reader's
 * next record is the outer one that follows), -1 when it cannot be told
 * (bytes to drop, a header split where no bytes are yet). It may inflate
 * the payload's next chunk, which cs_zstream_next() would do first; an
 * error doing so is kept and returned by that call. */
#define CS_ZSTREAM_PAYLOAD_DONE	(-2)
int cs_zstream_peek_type(struct cs_zstream *z);
/* Bytes of a record begun but not finished (for the end-of-data check). */
size_t cs_zstream_pending(const struct cs_zstream *z);
/* Drops n payload bytes that follow a record (AUXTRACE inside a stream).
 * They are dropped as they are decompressed; bytes still owed at the end
 * of the data show in cs_zstream_pending(). Returns 0. */
int cs_zstream_skip(struct cs_zstream *z, uint64_t n);

/* ---- feature sections (features.c) ---- */

struct cs_build_id_entry {
	int32_t pid;
	uint16_t misc;
	uint8_t size;
	uint8_t id[CS_BUILD_ID_SIZE_MAX];
	char *path;
};

struct cs_feat_store {
	struct cs_file_info info;	/* strings below are owned here */
	const void *raw[CS_FEAT_LAST];	/* file bytes of each feature */
	size_t raw_size[CS_FEAT_LAST];
	void *owned[CS_FEAT_LAST];	/* pipe mode: copies of the bytes */
	struct cs_build_id_entry *bids;
	size_t nr_bids, cap_bids;
};

/* Parses one feature section (file byte order) into st and, for
 * EVENT_DESC, names the evlist's events (l may be NULL: only checked).
 * At most slack bytes may follow the feature's fields: 0 for a file's
 * sections (perf writes them exactly), 7 for a stream's HEADER_FEATURE
 * records (padded to 8). Returns 0, or -EBADMSG / -ENOMEM with *why. */
int cs_feat_parse(struct cs_feat_store *st, struct cs_evlist *l, int feat,
		  const void *data, size_t size, bool swap, size_t slack,
		  const char **why);
/* One build id record (HEADER_BUILD_ID or an entry of the BUILD_ID
 * feature), in file byte order. */
int cs_feat_add_build_id(struct cs_feat_store *st, const void *rec,
			 size_t size, bool swap, const char **why);
void cs_feat_store_free(struct cs_feat_store *st);

#endif
