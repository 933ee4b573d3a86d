/* encode.h - builds records from decoded structs (the inverse of decode.h).
 *
 * Used to synthesise profiles and to rewrite samples (inject). Writes into
 * a caller's buffer; returns the record size (8-byte aligned) or -ENOSPC
 * when cap is too small, -EINVAL when the record cannot be represented
 * (a record is at most 65535 bytes).
 */
#ifndef CS_ENCODE_H
#define CS_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include <callstitch/callstitch.h>
#include "abi/perf_abi.h"

/* A SAMPLE for attr; callchain taken from (chain, chain_nr), the other
 * fields from s. misc from s->misc. Laid out as the kernel writes it:
 * RAW data is zero-padded so that its u32 size plus data ends 8-aligned
 * (the written size counts the padding, as the kernel's does); a user
 * stack and AUX data must be whole u64s (-EINVAL otherwise); READ values
 * must match attr.read_format. */
long cs_encode_sample(const struct cs_perf_attr *attr, const struct cs_sample *s,
		      const uint64_t *chain, uint64_t chain_nr,
		      void *buf, size_t cap);

/* A sample_id trailer for attr, appended at buf; returns bytes written. */
long cs_encode_sample_id(const struct cs_perf_attr *attr,
			 const struct cs_sample_id *id, void *buf, size_t cap);

/* Sets the time in the sample_id trailer of a non-sample record of attr
 * (size bytes, native byte order) to time. Returns 0, or -EINVAL when
 * attr's records carry no time or the record is too short for the
 * trailer. */
int cs_encode_set_time(const struct cs_perf_attr *attr, void *rec, size_t size,
		       uint64_t time);

/* Side-band and deferred records, with the sample_id trailer of attr when
 * it has sample_id_all. */
long cs_encode_comm(const struct cs_perf_attr *attr, const struct cs_comm *c,
		    bool exec, const struct cs_sample_id *id, void *buf, size_t cap);
/* MMAP (type 1): what perf synthesises for the kernel ("[kernel.kallsyms]_text",
 * pid -1, pgoff = address of _text) and old kernels write for user maps. */
long cs_encode_mmap(const struct cs_perf_attr *attr, const struct cs_mmap *m,
		    uint16_t misc, const struct cs_sample_id *id, void *buf,
		    size_t cap);
long cs_encode_mmap2(const struct cs_perf_attr *attr, const struct cs_mmap *m,
		     uint16_t misc, const struct cs_sample_id *id, void *buf,
		     size_t cap);
long cs_encode_fork_exit(const struct cs_perf_attr *attr, uint32_t type,
			 const struct cs_fork_exit *f,
			 const struct cs_sample_id *id, void *buf, size_t cap);
long cs_encode_lost(const struct cs_perf_attr *attr, const struct cs_lost *l,
		    const struct cs_sample_id *id, void *buf, size_t cap);
/* KSYMBOL (type 17): a kernel symbol registered (a BPF program, a
 * trampoline) or, with flags 1, unregistered. */
long cs_encode_ksymbol(const struct cs_perf_attr *attr,
		       const struct cs_ksymbol *k,
		       const struct cs_sample_id *id, void *buf, size_t cap);
long cs_encode_deferred(const struct cs_perf_attr *attr,
			const struct cs_deferred *d,
			const struct cs_sample_id *id, void *buf, size_t cap);

#endif
