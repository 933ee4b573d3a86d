/* callstitch.h - the public interface of libcallstitch.
 *
 * Read a perf.data file (or a pipe), order its events in time, stitch
 * deferred user callchains back onto the samples that wait for them, and
 * hand every sample, with its whole stack, to the caller - pulled one at a
 * time, or pushed to callbacks:
 *
 *     CS_SESSION_OPTS(o, .path = "perf.data");
 *     struct cs_session *s;
 *     const struct cs_stitched *st;
 *     int err = cs_session_open(&o, &s);     // err < 0: cs_session_error(s)
 *     if (!err)
 *             while ((err = cs_session_next(s, &st)) > 0)
 *                     use(st);                // cs_frames_resolve(), ...
 *     cs_session_free(s);                     // err < 0: cs_session_error(s)
 *
 * Build with `pkg-config --cflags --libs callstitch`; examples/ holds two
 * whole programs.
 *
 * Conventions
 * - Functions return 0 (or a count) on success and a negative errno on
 *   failure; a session keeps a one-line message (cs_session_error()).
 * - Handles (cs_session, cs_machine) are opaque. Every call says who owns
 *   what it returns; "owned by the session" means valid until
 *   cs_session_free(), and pointers handed to a callback or returned by
 *   cs_session_next() are valid only until the callback returns or the next
 *   call.
 * - ABI: libcallstitch.so.0 exports exactly the functions below, with the
 *   symbol version CALLSTITCH_0. Structs the library hands out by pointer
 *   (cs_event, cs_stitched, cs_stats, cs_file_info, cs_evsel) only grow at
 *   their end. cs_session_opts carries its size (CS_SESSION_OPTS()), so
 *   options can be added without breaking old callers. Structs the caller
 *   allocates and the library fills (cs_location, cs_frame) change only
 *   with the SONAME.
 *
 * For callstitch's developers: a new public function is declared here, with
 * what it returns and who owns it, and listed in src/callstitch.map (the
 * test library_abi.sh fails on any difference between the two and the
 * library's exports); a new option goes at the end of cs_session_opts, a
 * new counter at the end of cs_stats. Nothing else of src/ is public: an
 * internal header never appears here.
 */
#ifndef CALLSTITCH_H
#define CALLSTITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct cs_session;		/* opaque: one opened profile */
struct cs_machine;		/* opaque: threads, maps and symbols */

/* ---- perf ABI values the structs below carry ---------------------------- */

/* cpumode: header.misc & CS_MISC_CPUMODE_MASK of a record */
#define CS_MISC_CPUMODE_MASK    7
#define CS_MISC_CPUMODE_UNKNOWN 0
#define CS_MISC_KERNEL          1
#define CS_MISC_USER            2
#define CS_MISC_HYPERVISOR      3
#define CS_MISC_GUEST_KERNEL    4
#define CS_MISC_GUEST_USER      5

/* cs_event.type: the perf record types (PERF_RECORD_*, and perf's own) */
enum cs_record_type {
	CS_RECORD_MMAP                 = 1,
	CS_RECORD_LOST                 = 2,
	CS_RECORD_COMM                 = 3,
	CS_RECORD_EXIT                 = 4,
	CS_RECORD_THROTTLE             = 5,
	CS_RECORD_UNTHROTTLE           = 6,
	CS_RECORD_FORK                 = 7,
	CS_RECORD_READ                 = 8,
	CS_RECORD_SAMPLE               = 9,
	CS_RECORD_MMAP2                = 10,
	CS_RECORD_AUX                  = 11,
	CS_RECORD_ITRACE_START         = 12,
	CS_RECORD_LOST_SAMPLES         = 13,
	CS_RECORD_SWITCH               = 14,
	CS_RECORD_SWITCH_CPU_WIDE      = 15,
	CS_RECORD_NAMESPACES           = 16,
	CS_RECORD_KSYMBOL              = 17,
	CS_RECORD_BPF_EVENT            = 18,
	CS_RECORD_CGROUP               = 19,
	CS_RECORD_TEXT_POKE            = 20,
	CS_RECORD_AUX_OUTPUT_HW_ID     = 21,
	CS_RECORD_CALLCHAIN_DEFERRED   = 22,	/* Linux 6.19 */
	CS_RECORD_KERNEL_MAX,

	/* synthesized by perf tools, never by the kernel */
	CS_RECORD_HEADER_ATTR          = 64,
	CS_RECORD_HEADER_EVENT_TYPE    = 65,
	CS_RECORD_HEADER_TRACING_DATA  = 66,
	CS_RECORD_HEADER_BUILD_ID      = 67,
	CS_RECORD_FINISHED_ROUND       = 68,
	CS_RECORD_ID_INDEX             = 69,
	CS_RECORD_AUXTRACE_INFO        = 70,
	CS_RECORD_AUXTRACE             = 71,
	CS_RECORD_AUXTRACE_ERROR       = 72,
	CS_RECORD_THREAD_MAP           = 73,
	CS_RECORD_CPU_MAP              = 74,
	CS_RECORD_STAT_CONFIG          = 75,
	CS_RECORD_STAT                 = 76,
	CS_RECORD_STAT_ROUND           = 77,
	CS_RECORD_EVENT_UPDATE         = 78,
	CS_RECORD_TIME_CONV            = 79,
	CS_RECORD_HEADER_FEATURE       = 80,
	CS_RECORD_COMPRESSED           = 81,
	CS_RECORD_FINISHED_INIT        = 82,
	CS_RECORD_COMPRESSED2          = 83,
	CS_RECORD_BPF_METADATA         = 84,
	CS_RECORD_SCHEDSTAT_CPU        = 85,
	CS_RECORD_SCHEDSTAT_DOMAIN     = 86,
	CS_RECORD_USER_MAX,
};

/* Callchain context markers: an entry of a callchain at or above
 * CS_CONTEXT_MAX is not an address but says whose addresses follow.
 * cs_frames_resolve() reads them for you. */
#define CS_CONTEXT_HV            ((uint64_t)-32)
#define CS_CONTEXT_KERNEL        ((uint64_t)-128)
#define CS_CONTEXT_USER          ((uint64_t)-512)
#define CS_CONTEXT_USER_DEFERRED ((uint64_t)-640)	/* Linux 6.19: next entry is the cookie */
#define CS_CONTEXT_GUEST         ((uint64_t)-2048)
#define CS_CONTEXT_GUEST_KERNEL  ((uint64_t)-2176)
#define CS_CONTEXT_GUEST_USER    ((uint64_t)-2560)
#define CS_CONTEXT_MAX           ((uint64_t)-4095)

/* ---- events ------------------------------------------------------------- */

/* One event of a profile: what its perf_event_attr asked for, its ids and
 * its name. Owned by the session. */
struct cs_evsel {
	const char *name;		/* "cpu-clock", from EVENT_DESC or derived */
	const uint64_t *ids;
	size_t nr_ids;
	unsigned int index;		/* position in the file's attr list */
	uint32_t type;			/* attr.type: PERF_TYPE_* */
	uint64_t config;		/* attr.config: PERF_COUNT_* */
	uint64_t sample_type;		/* attr.sample_type: PERF_SAMPLE_* bits */
	uint64_t sample_period;		/* attr.sample_period, or the frequency */
	bool freq;			/* sample_period is a frequency (Hz) */
	uint64_t sample_regs_user;	/* which registers cs_sample.user_regs holds */
	uint64_t sample_regs_intr;	/* and cs_sample.intr_regs */
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
	const uint64_t *user_regs;	/* one per bit of evsel->sample_regs_user */
	uint64_t stack_user_size;
	const void *stack_user;
	uint64_t stack_user_dyn_size;
	uint64_t weight;		/* PERF_SAMPLE_WEIGHT or the struct's u64 */
	uint64_t data_src;
	uint64_t transaction;
	uint64_t intr_regs_abi;
	const uint64_t *intr_regs;	/* one per bit of evsel->sample_regs_intr */
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
 * position in the file or stream, for messages and for how far a reader
 * is (a record of a compressed payload has that of the compressed record
 * it came out of: positions in the file as it lies). Which union member is valid
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
	CS_CHAIN_UNWOUND,	/* user part unwound from the sample's registers
				 * and stack copy (--call-graph dwarf) */
};

enum cs_missing_reason {
	CS_MISSING_NONE = 0,
	CS_MISSING_LOST,	/* superseded while LOST records were seen */
	CS_MISSING_SUPERSEDED,	/* a newer kernel entry of the tid came first */
	CS_MISSING_EXITED,	/* the task exited in the kernel */
	CS_MISSING_END,		/* recording stopped while it waited */
	CS_MISSING__COUNT,
};

/* "lost", "superseded", "exited", "end" or "none": a static string. */
const char *cs_missing_reason_name(enum cs_missing_reason r);

/* Why a task was off the CPU, from sched_switch's prev_state. */
enum cs_off_cpu_state {
	CS_OFF_CPU_NONE = 0,	/* an ordinary sample */
	CS_OFF_CPU_SLEEPING,	/* S (or an idle kthread's I): waited for an
				 * event - a read, a futex, a timer */
	CS_OFF_CPU_BLOCKED,	/* D: uninterruptible, mostly disk or other I/O */
	CS_OFF_CPU_PREEMPTED,	/* R: still runnable; the CPU went elsewhere */
	CS_OFF_CPU_OTHER,	/* stopped, traced, parked, dead */
	CS_OFF_CPU__COUNT,
};

/* "sleeping", "blocked on I/O", "preempted", "other" ("" for NONE); a
 * static string. */
const char *cs_off_cpu_state_name(enum cs_off_cpu_state s);

/*
 * A sample with its whole stack. `chain` is the merged callchain: the
 * kernel part, then a CS_CONTEXT_USER marker and the user ips (with the
 * chain_parts option, the marker and the user ips may be in `user`, and
 * with user_marker_implied too the marker may be left out); the deferred
 * marker and the cookie are gone. For KERNEL_ONLY it is the kernel part
 * alone and `cookie` names the entry whose user part is missing.
 */
struct cs_stitched {
	const struct cs_event *event;	/* the sample (event->sample) */
	const uint64_t *chain;
	uint64_t chain_nr;
	enum cs_chain_state state;
	enum cs_missing_reason missing;
	uint64_t cookie;		/* 0 unless deferred */
	/* With the session's off_cpu option, a switch-out (a
	 * sched:sched_switch sample with a stack) comes out once its task
	 * runs again, as off-CPU time: off_cpu says why it waited and
	 * event->sample.period is the nanoseconds until it ran again (0 when
	 * the file cannot say). CS_OFF_CPU_NONE for every other sample. */
	enum cs_off_cpu_state off_cpu;
	/* With the session's chain_parts option, the chain of a stitched
	 * sample comes in two parts, neither of them copied: `chain` is the
	 * kernel part, as recorded, and `user` what follows it (the user
	 * marker and the ips of the deferred record); the whole stack is
	 * chain[0 .. chain_nr) then user[0 .. user_nr). Otherwise, and for
	 * every sample that was not stitched, user_nr is 0 and `chain` is the
	 * whole stack. cs_frames_resolve() reads both.
	 *
	 * With the user_marker_implied option as well, `user` holds the
	 * deferred record's entries as they are, and when they do not begin
	 * with a context marker (CS_CONTEXT_USER, or CS_CONTEXT_USER_DEFERRED,
	 * which drafts of the feature wrote first) the CS_CONTEXT_USER marker
	 * before them is implied, not stored: the whole stack is then
	 * chain[0 .. chain_nr), CS_CONTEXT_USER, user[0 .. user_nr). For a
	 * mapped file `user` then points into the record itself; like
	 * everything handed to a callback it is valid until the callback
	 * returns. Without the option `user` always begins with its marker. */
	const uint64_t *user;
	uint64_t user_nr;
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
	uint64_t unwound;		/* samples whose user part was unwound */
	uint64_t unwind_refused;	/* ... not, their registers or stack copy
					 * being unusable (see the warning) */
	/* off-CPU time (the off_cpu option) */
	uint64_t off_cpu_samples;	/* switch-outs delivered as off-CPU time */
	uint64_t off_cpu_ns;		/* their time off the CPU */
	uint64_t off_cpu_unknown;	/* no switch-in on record: 0 ns */
	uint64_t off_cpu_at_end;	/* still off the CPU when it stopped */
	uint64_t deferred_used;		/* deferred records that completed
					 * waiting samples (unmerged: every one,
					 * handed out as it is) */
	uint64_t read_ahead;		/* records read and put in order on
					 * the reading thread (read_ahead) */
};

/* ---- stack completeness ------------------------------------------------- */

/* How a sample's user stack ends. */
enum cs_stack_end {
	CS_STACK_ROOT,		/* at _start, clone/clone3 or a thread start */
	CS_STACK_COPY_TOO_SMALL,/* dwarf: the stack copy ended first */
	CS_STACK_NO_CFI,	/* dwarf: a binary has no CFI for the pc */
	CS_STACK_NO_BINARY,	/* dwarf: a binary was not found */
	CS_STACK_BAD_CFI,	/* dwarf: CFI that leads nowhere */
	CS_STACK_FP_BROKEN,	/* fp, deferred: the frame-pointer chain broke */
	CS_STACK_UNKNOWN_CODE,	/* a frame in no binary or at no symbol */
	CS_STACK_TOO_DEEP,	/* the unwinder's frame limit */
	CS_STACK_MISSING,	/* deferred: the user part never came */
	CS_STACK__COUNT,
};

/* How a sample's user stack was made. */
enum cs_stack_kind {
	CS_STACK_KIND_FP,	/* frame pointers, walked at sample time */
	CS_STACK_KIND_DEFERRED,	/* frame pointers, walked on return to user */
	CS_STACK_KIND_DWARF,	/* unwound here from the stack copy */
	CS_STACK_KIND__COUNT,
};

struct cs_stack_stop {		/* stacks of one kind that ended early in one binary */
	const char *dso;	/* NULL: in no binary; owned by the machine */
	enum cs_stack_end end;
	enum cs_stack_kind kind;
	uint64_t stacks;
};

struct cs_completeness {
	uint64_t user_stacks;			/* samples with a user stack */
	uint64_t by_kind[CS_STACK_KIND__COUNT];
	uint64_t by_end[CS_STACK__COUNT];
	uint64_t no_user;			/* samples without (kernel threads) */
	const struct cs_stack_stop *stops;	/* most stacks first */
	size_t nr_stops;
};

const char *cs_stack_end_name(enum cs_stack_end e);
const char *cs_stack_kind_name(enum cs_stack_kind k);

/* ---- outputs ------------------------------------------------------------ */

/*
 * What an output implements, for cs_session_run(). Every callback is
 * optional; a non-zero return stops the run and is returned by
 * cs_session_run(). Events arrive in time order, after the session has
 * applied them to its cs_machine; stitched samples arrive when their stack
 * is complete (so a stitched sample can follow later events).
 */
struct cs_output_ops {
	int (*begin)(void *ctx, struct cs_session *s);
	int (*sample)(void *ctx, const struct cs_stitched *s);
	int (*deferred)(void *ctx, const struct cs_event *ev);	/* type 22 */
	int (*event)(void *ctx, const struct cs_event *ev);	/* the rest */
	int (*end)(void *ctx, struct cs_session *s);
};

/* ---- sessions ----------------------------------------------------------- */

/*
 * How to open a profile. Declare it with CS_SESSION_OPTS(), which sets sz:
 * the library reads only the fields the caller's header knew, and refuses
 * (-EINVAL) a caller that sets a field it does not know. Strings are
 * copied by nothing: they must live until cs_session_free().
 */
struct cs_session_opts {
	size_t sz;			/* sizeof(struct cs_session_opts) */
	const char *path;		/* NULL: "perf.data"; "-": stdin */
	int fd;				/* > 0: read this pipe or file instead of path */
	/* NULL: by the kernel's build id under symfs or in the archive, then
	 * /proc/kallsyms if recorded here, then perf's build-id cache */
	const char *kallsyms;
	/* perf's --symfs: binaries by recorded path or build id under it,
	 * before this host's; NULL: none */
	const char *symfs;
	bool no_merge;			/* deliver samples and type 22 as recorded */
	bool ordered_off;		/* file order, no sorting (dump) */
	/* called now and then while reading: bytes done of total (0 for a
	 * pipe) */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;		/* for progress, fetch_progress, warning */
	/* Binaries and debug files missing here are fetched by build id from
	 * the debuginfod servers DEBUGINFOD_URLS names (none when unset),
	 * into its cache; no_debuginfod turns that off. */
	bool no_debuginfod;
	/* A download while symbols load: the file as recorded, bytes so far,
	 * total (0: unknown); called once with what == NULL when it ends. */
	void (*fetch_progress)(void *ctx, const char *what, uint64_t done,
			       uint64_t total);
	/* Something the user should hear while the session runs (a symbol
	 * server that cannot be reached): one line, valid during the call. */
	void (*warning)(void *ctx, const char *msg);
	/* A `callstitch archive` (.tar.zst) of the profile's binaries, debug
	 * files and kernel symbols, looked in by build id; unpacked into a
	 * temporary directory that cs_session_free() removes. NULL: none. */
	const char *archive;
	/* A container's root file system: binaries and debug files by their
	 * recorded paths under it, JIT maps in its /tmp. NULL: none. */
	const char *sysroot;
	/* JIT symbol maps: a directory of perf-PID.map files, or one map file,
	 * used for its own pid and for JIT code whose process has no map
	 * anywhere else. NULL: /tmp/perf-PID.map only. */
	const char *jit_map;
	/* How each user stack ends, for cs_session_completeness(): costs a
	 * look at the last frames of every sample. */
	bool completeness;
	/* Switch-outs (sched:sched_switch samples with a stack) come out as
	 * off-CPU time once their task runs again: see cs_stitched.off_cpu. */
	bool off_cpu;
	/* Threads the session may use: with 2 or more, a compressed file
	 * (perf record -z) is decompressed on a second thread ahead of the
	 * reading; the output is the same. 0 or 1: one thread. */
	unsigned int jobs;
	/* A stitched sample's chain may come in two parts (cs_stitched.user),
	 * not joined into one array for each sample; false: one array, as
	 * callers built before the option expect. */
	bool chain_parts;
	/* A file's or a stream's records are read and put in time order on
	 * a thread of their own, ahead of the decoding, stitching and
	 * callbacks, which stay on the caller's thread; the output is the
	 * same. For a caller with a core to spare: it runs beside whatever
	 * threads `jobs` and the caller's output start. Compressed payloads
	 * are inflated on it when no inflater runs (jobs 0 or 1); with jobs
	 * 2 (a file's inflater has the second thread) a compressed profile
	 * is read ahead only up to its first payload; from jobs 3 both run.
	 * Not for a file of the other byte order (read as without it), nor
	 * when pulled (cs_session_next()). */
	bool read_ahead;
	/* What the caller will resolve of every sample (CS_PRELOAD_*, 0:
	 * nothing promised). With jobs >= 2, the symbols of the binaries the
	 * file's header lists as sampled (perf's build-id feature) and of the
	 * kernel are then loaded on jobs worker threads ahead of the first
	 * address resolved in each, instead of on the reading thread then:
	 * a first run (nothing in the symbol cache yet) takes less time. The
	 * answers, warnings and cache files are those of loading on first
	 * use. Promise only what the caller does: a binary the run would not
	 * load must not be loaded. A pipe lists no binaries ahead. */
	unsigned int preload;
	/* With chain_parts: a stitched chain's user part may come without
	 * its CS_CONTEXT_USER marker, implied instead (see cs_stitched.user
	 * for how to tell), so that it need not be copied behind one: for a
	 * mapped file it is the deferred record's own ips. false: `user`
	 * always begins with the marker, as callers built before the option
	 * expect. cs_frames_resolve() reads either; a caller that walks
	 * `user` itself must put the implied marker back where it writes
	 * the chain out as perf would (a perf.data file). No effect without
	 * chain_parts, nor on cs_session_next(), which joins chains. */
	bool user_marker_implied;
	/* new options go here, at the end */
};

/* cs_session_opts.preload: */
enum {
	CS_PRELOAD_SYMBOLS = 1u << 0,	/* every sample's frames are resolved
					 * (cs_machine_resolve()) */
	CS_PRELOAD_INLINES = 1u << 1,	/* ... and asked for their inlined
					 * calls (cs_machine_inlines()) */
	CS_PRELOAD_NOT_TRACEPOINTS = 1u << 2,	/* ... but not those of
					 * tracepoint events: nothing is
					 * preloaded for a file that has one */
};

#define CS_SESSION_OPTS(name, ...)					\
	struct cs_session_opts name = {					\
		.sz = sizeof(struct cs_session_opts), __VA_ARGS__	\
	}

/* Opens the profile and checks its header. Returns 0 and a new session in
 * *out. On failure returns a negative errno; *out still holds a session
 * (or NULL on -ENOMEM) whose cs_session_error() explains. The caller frees
 * *out with cs_session_free() either way. */
int cs_session_open(const struct cs_session_opts *opts, struct cs_session **out);

/* Push: reads every record and drives `ops` (ctx is passed through).
 * Returns 0, a negative errno of the input (message in cs_session_error()),
 * or what a callback returned. A session runs once. */
int cs_session_run(struct cs_session *s, const struct cs_output_ops *ops, void *ctx);

/*
 * Pull: the next stitched sample, instead of cs_session_run() (a session
 * is either pulled or run). Returns 1 and the sample in *out, 0 at the end
 * of the profile, or a negative errno (message in cs_session_error()).
 * *out and everything it points to are owned by the session and valid
 * until the next call.
 *
 * Samples come in the order, and with the machine in the state, that the
 * `sample` callback would see: side-band records are applied as they pass,
 * so cs_machine_resolve() answers for the sample's moment. No thread is
 * involved. A sample whose user stack was deferred is held until the
 * record with that stack arrives, so one call may read ahead many records;
 * the samples one record completes are kept (copied) and returned one per
 * call, which bounds the memory to what the callbacks would hold.
 */
int cs_session_next(struct cs_session *s, const struct cs_stitched **out);

/* The last error as one line: "perf.data: record at offset 0x1c40 ...".
 * Owned by the session; s may be NULL (after -ENOMEM from open). */
const char *cs_session_error(const struct cs_session *s);

/* After the end of the profile: what about the input is worth telling the
 * user (a recording cut short, read up to its last whole record; samples
 * whose stack copy could not be unwound), one warning a line, or NULL.
 * Owned by the session. */
const char *cs_session_warning(const struct cs_session *s);

/* Counters, updated as the session reads; owned by the session. */
const struct cs_stats *cs_session_stats(const struct cs_session *s);
/* How the user stacks of the samples delivered so far end; NULL unless
 * opts.completeness was set. Owned by the session; valid until the next
 * call or cs_session_free(). */
const struct cs_completeness *cs_session_completeness(struct cs_session *s);

/* The accounting every run keeps: samples = stitched + stitched late +
 * kernel-only (= the sum by reason) + as recorded, and deferred records =
 * used + duplicate + orphan. Returns NULL, or which sum does not hold
 * (a static string). cs_session_run() fails with -EPROTO if one does not. */
const char *cs_stats_mismatch(const struct cs_stats *st);
/* The session's machine (threads, maps, symbols); owned by the session. */
struct cs_machine *cs_session_machine(struct cs_session *s);
/* The profile's events: index i < cs_session_nr_evsels(), else NULL.
 * Owned by the session. */
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
/* Owned by the session; NULL if the profile was not opened. */
const struct cs_file_info *cs_session_info(const struct cs_session *s);

/* Frees the session and everything it owns (its machine included). */
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

/* Fills *loc for addr in process pid. cpumode is a CS_MISC_* mode (from
 * the sample or the last context marker before addr). */
void cs_machine_resolve(struct cs_machine *m, uint32_t pid, uint8_t cpumode,
			uint64_t addr, struct cs_location *loc);
/* The thread's current command name, or NULL if never seen. Owned by the
 * machine. */
const char *cs_machine_comm(struct cs_machine *m, uint32_t pid, uint32_t tid);

/* ---- a stack as frames -------------------------------------------------- */

enum cs_frame_kind {
	CS_FRAME_ADDR,		/* an ordinary address */
	CS_FRAME_COOKIE,	/* unmerged view: the cookie entry (addr = cookie) */
	CS_FRAME_MISSING_USER,	/* kernel-only: user part missing (addr = cookie) */
};

struct cs_frame {
	uint64_t addr;
	uint8_t cpumode;		/* CS_MISC_KERNEL, CS_MISC_USER, ... */
	enum cs_frame_kind kind;
	enum cs_missing_reason missing;	/* for CS_FRAME_MISSING_USER */
	struct cs_location loc;		/* resolved; strings owned by the machine */
};

/* Most frames a chain can have: a record is at most 64 KiB of u64s. */
#define CS_FRAMES_MAX 8192

/*
 * A stitched sample's stack as resolved frames, innermost first, the way
 * every callstitch output walks it: context markers are skipped but set
 * the cpumode of the frames after them, and a kernel-only sample ends in a
 * CS_FRAME_MISSING_USER frame saying why its user part is missing. Fills
 * out[0..cap) (the caller's array) and returns how many frames the stack
 * has, which may exceed cap. A sample without a callchain yields its ip; a
 * chain holding a context value the ABI does not define is corrupt and
 * yields none (as in perf), except in the user part of a stitched chain:
 * it came from a deferred record, which holds addresses only (JIT code may
 * sit at or above PERF_CONTEXT_MAX).
 */
size_t cs_frames_resolve(struct cs_machine *m, const struct cs_stitched *s,
			 struct cs_frame *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
