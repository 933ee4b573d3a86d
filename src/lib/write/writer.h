/* writer.h - writes perf.data, in file or pipe mode, that perf 6.1 reads.
 *
 * Attrs are written at most 128 bytes long (perf 6.1 refuses larger ones);
 * bits of the longer struct are dropped. Records are written as given
 * (native byte order), unless big_endian is asked for (test files), in
 * which case the writer swaps them using the attrs it was given.
 */
#ifndef CS_WRITER_H
#define CS_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi/perf_abi.h"

struct cs_errbuf;
struct cs_writer;			/* opaque */

struct cs_writer_opts {
	bool pipe;			/* pipe mode: attrs and features as records */
	bool big_endian;		/* foreign byte order, for tests */
	int zstd_level;			/* > 0: zstd, in COMPRESSED (81) records
					 * as perf 6.1 reads them (perf record -z) */
};

/* Writes to path ("-" = stdout) or, if fd >= 0, to fd (not closed by the
 * writer; path then only names it in messages). File mode needs an output
 * that seeks, at offset 0. Returns 0 and the writer in *out (caller frees),
 * or a negative errno with eb filled. Later failures are returned by each
 * call and explained by cs_writer_error(). */
int cs_writer_open(const char *path, int fd, const struct cs_writer_opts *o,
		   struct cs_errbuf *eb, struct cs_writer **out);

/* Events, before cs_writer_begin(). The attr is copied; name may be NULL. */
int cs_writer_add_event(struct cs_writer *w, const struct cs_perf_attr *attr,
			const char *name, const uint64_t *ids, size_t nr_ids);

/* Header-feature metadata, before cs_writer_finish() (pipe mode: before
 * cs_writer_begin()). Strings are copied. */
int cs_writer_set_string(struct cs_writer *w, int feat, const char *value);
int cs_writer_set_cmdline(struct cs_writer *w, int argc, const char *const *argv);
int cs_writer_set_nr_cpus(struct cs_writer *w, uint32_t online, uint32_t avail);
int cs_writer_add_build_id(struct cs_writer *w, int32_t pid, uint16_t misc,
			   const uint8_t *build_id, size_t size, const char *path);

/* A feature section the writer does not build itself (topology, caches,
 * PMU mappings, ...), as raw bytes in native byte order, copied. Refused
 * (-EOPNOTSUPP) for a big-endian writer, which cannot swap a layout it does
 * not know, and (-EINVAL) for the features the writer builds: BUILD_ID,
 * the strings, NRCPUS, CMDLINE, EVENT_DESC, COMPRESSED, and DIR_FORMAT.
 * In pipe mode TRACING_DATA goes out as a HEADER_TRACING_DATA record (its
 * data follows it), as perf writes it. */
int cs_writer_set_feature_raw(struct cs_writer *w, int feat, const void *data,
			      size_t size);

/* Starts the data section. */
int cs_writer_begin(struct cs_writer *w);

/* One record, header included, 8-byte aligned size. */
int cs_writer_write(struct cs_writer *w, const void *rec, size_t size);
int cs_writer_finished_round(struct cs_writer *w);

/* Writes the buffered records out to the file, so that a writer killed
 * later (a recorder hit by SIGKILL) leaves them readable. Returns 0 or the
 * writer's error. */
int cs_writer_flush(struct cs_writer *w);

/* Bytes of records written so far (for progress). */
uint64_t cs_writer_data_size(const struct cs_writer *w);

/* Writes the feature sections and the final header (file mode). Until it
 * runs, a file-mode header says data size 0 and readers take the data to
 * run to the end of the file (so a killed recorder leaves a readable file). */
int cs_writer_finish(struct cs_writer *w);

/* The message of the first failure ("out.data: write: No space left on
 * device"), or "" if none; owned by the writer. */
const char *cs_writer_error(const struct cs_writer *w);

/* Closes the output if the writer opened it. Records still buffered are
 * dropped unless cs_writer_finish() ran. */
void cs_writer_free(struct cs_writer *w);

#endif
