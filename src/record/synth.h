/* synth.h - side-band records for what existed before the recording began.
 *
 * The kernel reports mmaps, comms and forks that happen while an event is
 * enabled; everything older is synthesised from /proc, as perf does: per
 * thread a FORK (so readers learn the process tree) then its COMM, per
 * process MMAP2 records of its executable mappings (and, with data_maps,
 * of its readable ones), and one MMAP for the kernel image. Synthesised records carry time 0 so they sort first.
 */
#ifndef CS_REC_SYNTH_H
#define CS_REC_SYNTH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "abi/perf_abi.h"

/* Receives each record; a non-zero return stops synthesis. */
typedef int (*cs_synth_fn)(void *ctx, const void *rec, size_t size);

struct cs_synth {
	const struct cs_perf_attr *attr;	/* layout of the sample_id trailer */
	uint64_t id;			/* event id the records are filed under */
	bool data_maps;			/* readable non-code maps too, marked
					 * MMAP_DATA, as perf's mmap_data: perf
					 * unwinds DWARF samples through them */
	cs_synth_fn emit;
	void *ctx;
	uint64_t records;		/* how many were emitted */
	uint64_t buf[1024];		/* one record (8 KiB, aligned) */
};

/* The kernel map: "[kernel.kallsyms]_text" from _text in /proc/kallsyms
 * to the end of the address space. Returns 0, -ENOENT when the kernel hides
 * its addresses (nothing emitted), or what emit returned. */
int cs_synth_kernel(struct cs_synth *s);

/* One process (a /proc/PID entry) with all its threads. Returns 0 (also
 * when the process vanished meanwhile), or what emit returned. */
int cs_synth_process(struct cs_synth *s, pid_t pid);

/* Every process in /proc. */
int cs_synth_all(struct cs_synth *s);

#endif
