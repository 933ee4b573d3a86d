/* callstitch.h - the public interface of libcallstitch.
 *
 * Read a perf.data file (or a pipe), order its events in time, stitch
 * deferred user callchains back onto the samples that wait for them, and
 * hand every sample, with its whole stack, to the caller:
 *
 *     struct cs_session_opts o = { .path = "perf.data" };
 *     struct cs_session *s;
 *     int err = cs_session_open(&o, &s);        // err < 0: cs_session_error(s)
 *     err = cs_session_run(s, &my_ops, my_ctx); // calls my_ops.sample(...)
 *     cs_session_free(s);
 *
 * Conventions: functions return 0 or a negative errno; handles are opaque;
 * every pointer handed to a callback is valid only during that callback.
 */
#ifndef CALLSTITCH_H
#define CALLSTITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cs_perf_attr;
struct cs_session;		/* opaque: one opened profile */
struct cs_machine;		/* opaque: threads, maps and symbols */

/* ---- events ------------------------------------------------------------- */

/* One event (perf_event_attr plus its ids and name) of a profile. */
struct cs_evsel {
	const struct cs_perf_attr *attr;	/* native byte order, zero-extended */
	const char *name;		/* "cpu-clock", from EVENT_DESC or derived */
	const uint64_t *ids;
	size_t nr_ids;
	unsigned int index;		/* position in the file's attr list */
};

/* The sample_id trailer (or the same fields of a sample). */
struct cs_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
};

struct cs_branch_entry {
	uint64_t from, to, flags;
};

/*
 * A decoded PERF_RECORD_SAMPLE. Fields whose PERF_SAMPLE_* bit is not set in
 * the event's sample_type are zero. Array pointers point into the record
 * (or into a byte-swapped copy of it) and live as long as the event does.
 */
struct cs_sample {
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
	uint64_t period;
	const uint64_t *read;		/* read_format values, read_size u64s */
	size_t read_size;
	const uint64_t *callchain;	/* as recorded, context markers included */
	uint64_t callchain_nr;
	const void *raw;
	uint32_t raw_size;
	uint64_t branch_nr;
	uint64_t branch_hw_idx;
	const struct cs_branch_entry *branches;
	const uint64_t *branch_counters;
	uint64_t user_regs_abi;
	const uint64_t *user_regs;	/* one per bit of attr.sample_regs_user */
	uint64_t stack_user_size;
	const void *stack_user;
	uint64_t stack_user_dyn_size;
	uint64_t weight;		/* PERF_SAMPLE_WEIGHT or the struct's u64 */
	uint64_t data_src;
	uint64_t transaction;
	uint64_t intr_regs_abi;
	const uint64_t *intr_regs;
	uint64_t phys_addr;
	uint64_t aux_size;
	const void *aux;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;
	uint16_t misc;			/* header.misc: cpumode and flags */
};

/* PERF_RECORD_CALLCHAIN_DEFERRED: the user stack of one kernel entry. */
struct cs_deferred {
	uint64_t cookie;
	uint64_t nr;
	const uint64_t *ips;		/* innermost first; may start with a marker */
};

struct cs_mmap {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	bool has_build_id;		/* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
	uint8_t build_id_size;
	uint8_t build_id[20];
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	const char *filename;		/* NUL-terminated inside the record */
};

struct cs_comm {
	uint32_t pid, tid;
	const char *comm;
};

struct cs_fork_exit {			/* FORK and EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct cs_lost {			/* LOST, and LOST_SAMPLES (id = 0) */
	uint64_t id;
	uint64_t lost;
};

struct cs_ksymbol {
	uint64_t addr;
	uint32_t len;
	uint16_t ksym_type, flags;
	const char *name;
};

/*
 * One record, decoded. `bytes` is the record as found (after decompression
 * and, for a foreign-endian file, in the file's byte order); `offset` is its
 * position in the file or stream, for messages. Which union member is valid
 * follows `type`; records we only count carry just the header and sample_id.
 */
struct cs_event {
	uint32_t type;			/* CS_RECORD_* */
	uint16_t misc;
	uint16_t size;
	uint64_t offset;
	const void *bytes;
	const struct cs_evsel *evsel;	/* NULL when the record names no event */
	struct cs_sample_id id;		/* from the sample_id trailer, if any */
	bool has_id;			/* sample_id_all trailer present and parsed */
	union {
		struct cs_sample sample;
		struct cs_deferred deferred;
		struct cs_mmap mmap;	/* MMAP and MMAP2 */
		struct cs_comm comm;
		struct cs_fork_exit fork;
		struct cs_lost lost;
		struct cs_ksymbol ksymbol;
	};
};

/* ---- stitched samples --------------------------------------------------- */

enum cs_chain_state {
	CS_CHAIN_ORIGINAL,	/* not deferred: delivered as recorded */
	CS_CHAIN_STITCHED,	/* user part from the record that followed */
	CS_CHAIN_STITCHED_LATE,	/* user part from a record seen before it */
	CS_CHAIN_KERNEL_ONLY,	/* the user part never came: see `missing` */
	CS_CHAIN_UNMERGED,	/* merging off: as recorded, cookie included */
};

enum cs_missing_reason {
	CS_MISSING_NONE = 0,
	CS_MISSING_LOST,	/* superseded while LOST records were seen */
	CS_MISSING_SUPERSEDED,	/* a newer kernel entry of the tid came first */
	CS_MISSING_EXITED,	/* the task exited in the kernel */
	CS_MISSING_END,		/* recording stopped while it waited */
	CS_MISSING__COUNT,
};

const char *cs_missing_reason_name(enum cs_missing_reason r);

/*
 * A sample with its whole stack. `chain` is the merged callchain: the
 * kernel part, then a CS_CONTEXT_USER marker and the user ips; the
 * deferred marker and the cookie are gone. For KERNEL_ONLY it is the kernel
 * part alone and `cookie` names the entry whose user part is missing.
 */
struct cs_stitched {
	const struct cs_event *event;	/* the sample (event->sample) */
	const uint64_t *chain;
	uint64_t chain_nr;
	enum cs_chain_state state;
	enum cs_missing_reason missing;
	uint64_t cookie;		/* 0 unless deferred */
};

struct cs_stats {
	uint64_t records;		/* all records read, of every type */
	uint64_t bytes;			/* bytes of records read */
	uint64_t samples;		/* PERF_RECORD_SAMPLE */
	uint64_t samples_deferred;	/* samples whose user part was deferred */
	uint64_t deferred_records;	/* PERF_RECORD_CALLCHAIN_DEFERRED */
	uint64_t stitched;
	uint64_t stitched_late;
	uint64_t kernel_only;
	uint64_t kernel_only_by[CS_MISSING__COUNT];
	uint64_t original;		/* delivered as recorded */
	uint64_t duplicate_records;
	uint64_t orphan_records;	/* matched no waiting sample */
	uint64_t lost_events;		/* sum of LOST records' counts */
	uint64_t lost_samples;		/* sum of LOST_SAMPLES records' counts */
	uint64_t max_pending;		/* most samples waiting at once */
	uint64_t by_type[128];		/* records per type (types >= 127 in the last) */
};

/* ---- outputs ------------------------------------------------------------ */

/*
 * What an output implements. Every callback is optional; a non-zero return
 * stops the run and is returned by cs_session_run(). Events arrive in time
 * order, after the session has applied them to its cs_machine; stitched
 * samples arrive when their stack is complete (so a stitched sample can
 * follow later events).
 */
struct cs_output_ops {
	int (*begin)(void *ctx, struct cs_session *s);
	int (*sample)(void *ctx, const struct cs_stitched *s);
	int (*deferred)(void *ctx, const struct cs_event *ev);	/* type 22 */
	int (*event)(void *ctx, const struct cs_event *ev);	/* the rest */
	int (*end)(void *ctx, struct cs_session *s);
};

/* ---- sessions ----------------------------------------------------------- */

struct cs_session_opts {
	const char *path;		/* "-" for stdin; ignored when fd >= 0 */
	int fd;				/* a pipe or file already open, or -1 */
	const char *kallsyms;		/* NULL: /proc/kallsyms if recorded here */
	const char *symfs;		/* NULL: binaries at their recorded paths */
	bool no_merge;			/* deliver samples and type 22 as recorded */
	bool ordered_off;		/* file order, no sorting (dump) */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
};

/* Opens and checks the profile's header. On failure *out still holds a
 * session (or NULL on -ENOMEM) whose cs_session_error() explains; the
 * caller frees it either way. */
int cs_session_open(const struct cs_session_opts *opts, struct cs_session **out);

/* Reads every record and drives `ops`. Returns 0, an error of the input
 * (message in cs_session_error()), or what a callback returned. */
int cs_session_run(struct cs_session *s, const struct cs_output_ops *ops, void *ctx);

/* The last error as one line: "perf.data: record at offset 0x1c40 ...". */
const char *cs_session_error(const struct cs_session *s);

/* After a run that succeeded: one line about the input worth telling the
 * user (a recording cut short, read up to its last whole record), or NULL.
 * Owned by the session. */
const char *cs_session_warning(const struct cs_session *s);

const struct cs_stats *cs_session_stats(const struct cs_session *s);
struct cs_machine *cs_session_machine(struct cs_session *s);
const struct cs_evsel *cs_session_evsel(const struct cs_session *s, size_t i);
size_t cs_session_nr_evsels(const struct cs_session *s);

/* During a run: whether thread tid has samples still waiting for their
 * deferred user stack, with the oldest one's time in *time. A stitched
 * sample resolves when its user stack arrives, so a COMM or MMAP the
 * thread makes meanwhile (an exec) already applies to those samples. */
bool cs_session_waiting_since(struct cs_session *s, uint32_t tid, uint64_t *time);

/* Feature-section metadata; NULL or 0 when the file does not carry it. */
struct cs_file_info {
	const char *hostname;
	const char *os_release;
	const char *perf_version;
	const char *arch;
	const char *cpudesc;
	const char *cmdline;		/* joined with spaces */
	uint32_t nr_cpus_online, nr_cpus_avail;
	uint64_t total_mem_kb;
	bool pipe_mode;
	bool big_endian;
	uint64_t data_offset, data_size;
	int64_t clockid;		/* -1 if absent */
};
const struct cs_file_info *cs_session_info(const struct cs_session *s);

void cs_session_free(struct cs_session *s);

/* ---- symbols ------------------------------------------------------------ */

/* Where an address lies. Strings belong to the machine and live until it is
 * freed. sym is NULL for an unknown symbol, dso_name NULL for no map. */
struct cs_location {
	const char *sym;		/* demangled */
	uint64_t sym_offset;		/* addr - symbol start */
	uint64_t sym_start;
	const char *dso_name;		/* path, or "[kernel.kallsyms]" */
	uint64_t dso_addr;		/* address inside the dso (file-relative) */
	const uint8_t *build_id;	/* NULL if unknown */
	uint8_t build_id_size;
	uint64_t map_start, map_end, map_pgoff;
	bool kernel;
};

/* cpumode is a CS_MISC_* mode (from the sample or the last context marker). */
void cs_machine_resolve(struct cs_machine *m, uint32_t pid, uint8_t cpumode,
			uint64_t addr, struct cs_location *loc);
/* The thread's current command name, or NULL if never seen. */
const char *cs_machine_comm(struct cs_machine *m, uint32_t pid, uint32_t tid);

#ifdef __cplusplus
}
#endif
#endif
