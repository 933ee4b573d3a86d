/* reader.h - turns a perf.data file or stream into records, in file order.
 *
 * File mode maps the file and hands out pointers into the mapping (stable
 * for the reader's lifetime). Pipe mode, COMPRESSED/COMPRESSED2 payloads
 * and foreign-endian files go through reader-owned buffers that the next
 * call may reuse: such records are marked !stable and must be copied by
 * whoever keeps them. Every record handed out is in native byte order and
 * has been bounds-checked: header.size >= 8, within the bytes that remain,
 * and (for the types we decode) internally consistent.
 */
#ifndef CS_READER_H
#define CS_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <callstitch/callstitch.h>

struct cs_errbuf;
struct cs_evlist;
struct cs_reader;			/* opaque */

struct cs_record {
	const void *bytes;		/* starts with struct cs_perf_event_header */
	size_t size;			/* header.size */
	uint64_t offset;		/* in the file, or bytes from stream start */
	uint64_t time;			/* its timestamp, or CS_NO_TIME */
	uint32_t type;
	bool stable;			/* bytes live until cs_reader_free() */
};

/* Opens path ("-" = stdin) or, if fd >= 0, reads fd (file or pipe; the
 * reader does not close a caller's fd). Reads the header, attrs, ids and
 * feature sections (in pipe mode these arrive later, as records, and are
 * absorbed by cs_reader_next()). Returns 0 and the reader in *out (caller
 * frees it), or a negative errno with the reason in eb. */
int cs_reader_open(const char *path, int fd, struct cs_errbuf *eb,
		   struct cs_reader **out);

/* The next record, in file order, into *rec. Returns 1, 0 at the end of the
 * data, or a negative errno (with eb filled: file, offset, what was wrong).
 * HEADER_ATTR, HEADER_FEATURE, HEADER_BUILD_ID, EVENT_UPDATE and
 * COMPRESSED(2) records are consumed here (they change the evlist, the file
 * info or the stream) and are also returned, so that `dump` can show them;
 * records found inside a compressed payload come out one by one. */
int cs_reader_next(struct cs_reader *r, struct cs_record *rec);

/* With on, the compressed payloads of a mapped file are inflated on a
 * second thread ahead of cs_reader_next(), from the first COMPRESSED
 * record on; the records, their offsets and errors stay what they are
 * without it. Set it before the first cs_reader_next(); a pipe is read
 * without it. */
void cs_reader_inflate_ahead(struct cs_reader *r, bool on);

/* The type of the record cs_reader_next() returns next, in a file or
 * stream of this machine's byte order, inside a compressed payload or
 * not; -1 where it cannot be told, and at the end. To tell, it may do
 * what that call would do first (read a stream into the reader's buffer,
 * inflate a payload's next chunk); an error doing so is the error of that
 * call. Only the thread that reads the records may ask. */
int cs_reader_peek_type(struct cs_reader *r);

/* Whether the reader has met a compressed payload (perf record -z). */
bool cs_reader_compressed(const struct cs_reader *r);

/* Where the reader's errors go from now on (NULL: its own buffer): a
 * caller reading on another thread gives it a buffer of that thread's. */
void cs_reader_set_errbuf(struct cs_reader *r, struct cs_errbuf *eb);

/* From now on a read of a stream waits on wake_fd too (-1: no more), and
 * fails with -ECANCELED, then and after, once wake_fd is readable: how a
 * reader blocked on a quiet pipe is stopped from another thread. The
 * caller owns wake_fd. */
void cs_reader_set_wake(struct cs_reader *r, int wake_fd);

/* The events of the file; grows in pipe mode as HEADER_ATTR records come. */
const struct cs_evlist *cs_reader_evlist(const struct cs_reader *r);
const struct cs_file_info *cs_reader_info(const struct cs_reader *r);
const char *cs_reader_path(const struct cs_reader *r);	/* for messages */

/* Build ids from the BUILD_ID feature and HEADER_BUILD_ID records. The
 * callback's pointers are valid only during the call. */
typedef int (*cs_build_id_fn)(void *ctx, int32_t pid, uint16_t misc,
			      const uint8_t *build_id, size_t size,
			      const char *path);
int cs_reader_for_each_build_id(const struct cs_reader *r, cs_build_id_fn fn,
				void *ctx);

/* Raw bytes of one feature section (native-endian parsing is the caller's
 * job); returns 0 and sets *data, *size, or -ENOENT. */
int cs_reader_feature(const struct cs_reader *r, int feat, const void **data,
		      size_t *size);

/* Total input size when known (file mode), for progress; 0 for pipes. */
uint64_t cs_reader_total(const struct cs_reader *r);

/* True once cs_reader_next() has returned 0 on a file whose header leaves
 * the data size open: its recorder died before it rewrote the header (perf
 * record or ours killed with SIGKILL). Every whole record was read; a last
 * record cut short was dropped. Callers say once that the recording was
 * cut short. */
bool cs_reader_truncated(const struct cs_reader *r);

/* Damage found while opening that costs metadata but no records (a
 * feature table that does not hold together): one line, or NULL. */
const char *cs_reader_warning(const struct cs_reader *r);

void cs_reader_free(struct cs_reader *r);

#endif
