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
	int zstd_level;			/* > 0: COMPRESSED2 records (perf record -z) */
};

/* Writes to path ("-" = stdout) or, if fd >= 0, to fd (not closed by the
 * writer). Returns 0 and the writer in *out (caller frees), or a negative
 * errno with eb filled. */
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

/* Starts the data section. */
int cs_writer_begin(struct cs_writer *w);

/* One record, header included, 8-byte aligned size. */
int cs_writer_write(struct cs_writer *w, const void *rec, size_t size);
int cs_writer_finished_round(struct cs_writer *w);

/* Bytes of records written so far (for progress). */
uint64_t cs_writer_data_size(const struct cs_writer *w);

/* Writes the feature sections and the final header (file mode). Until it
 * runs, a file-mode header says data size 0 and readers take the data to
 * run to the end of the file (so a killed recorder leaves a readable file). */
int cs_writer_finish(struct cs_writer *w);

void cs_writer_free(struct cs_writer *w);

#endif
