/* perf_abi.h - our own definitions of the perf_event ABI and perf.data format.
 *
 * We do not include <linux/perf_event.h>: the installed one predates deferred
 * callchains (Linux 6.19) and the record types perf added since, and a
 * profiler must read files from kernels newer than the one it was built on.
 * Values are facts of the ABI (include/uapi/linux/perf_event.h and perf's
 * util/event.h / util/header.h); see SPEC.md.
 */
#ifndef CS_PERF_ABI_H
#define CS_PERF_ABI_H

#include <stdint.h>

#include <callstitch/callstitch.h>

/* ---- perf_event_attr ---------------------------------------------------- */

enum {
	CS_PERF_TYPE_HARDWARE   = 0,
	CS_PERF_TYPE_SOFTWARE   = 1,
	CS_PERF_TYPE_TRACEPOINT = 2,
	CS_PERF_TYPE_HW_CACHE   = 3,
	CS_PERF_TYPE_RAW        = 4,
	CS_PERF_TYPE_BREAKPOINT = 5,
};

enum {
	CS_PERF_COUNT_HW_CPU_CYCLES   = 0,
	CS_PERF_COUNT_HW_INSTRUCTIONS = 1,
	CS_PERF_COUNT_SW_CPU_CLOCK    = 0,
	CS_PERF_COUNT_SW_TASK_CLOCK   = 1,
	CS_PERF_COUNT_SW_DUMMY        = 9,
};

/* sample_type bits */
#define CS_SAMPLE_IP             (1ULL << 0)
#define CS_SAMPLE_TID            (1ULL << 1)
#define CS_SAMPLE_TIME           (1ULL << 2)
#define CS_SAMPLE_ADDR           (1ULL << 3)
#define CS_SAMPLE_READ           (1ULL << 4)
#define CS_SAMPLE_CALLCHAIN      (1ULL << 5)
#define CS_SAMPLE_ID             (1ULL << 6)
#define CS_SAMPLE_CPU            (1ULL << 7)
#define CS_SAMPLE_PERIOD         (1ULL << 8)
#define CS_SAMPLE_STREAM_ID      (1ULL << 9)
#define CS_SAMPLE_RAW            (1ULL << 10)
#define CS_SAMPLE_BRANCH_STACK   (1ULL << 11)
#define CS_SAMPLE_REGS_USER      (1ULL << 12)
#define CS_SAMPLE_STACK_USER     (1ULL << 13)
#define CS_SAMPLE_WEIGHT         (1ULL << 14)
#define CS_SAMPLE_DATA_SRC       (1ULL << 15)
#define CS_SAMPLE_IDENTIFIER     (1ULL << 16)
#define CS_SAMPLE_TRANSACTION    (1ULL << 17)
#define CS_SAMPLE_REGS_INTR      (1ULL << 18)
#define CS_SAMPLE_PHYS_ADDR      (1ULL << 19)
#define CS_SAMPLE_AUX            (1ULL << 20)
#define CS_SAMPLE_CGROUP         (1ULL << 21)
#define CS_SAMPLE_DATA_PAGE_SIZE (1ULL << 22)
#define CS_SAMPLE_CODE_PAGE_SIZE (1ULL << 23)
#define CS_SAMPLE_WEIGHT_STRUCT  (1ULL << 24)
#define CS_SAMPLE_MAX            (1ULL << 25)	/* first unknown bit */

/* read_format bits */
#define CS_FORMAT_TOTAL_TIME_ENABLED (1ULL << 0)
#define CS_FORMAT_TOTAL_TIME_RUNNING (1ULL << 1)
#define CS_FORMAT_ID                 (1ULL << 2)
#define CS_FORMAT_GROUP              (1ULL << 3)
#define CS_FORMAT_LOST               (1ULL << 4)

/* branch_sample_type bit that adds hw_idx to PERF_SAMPLE_BRANCH_STACK */
#define CS_BRANCH_SAMPLE_HW_INDEX    (1ULL << 17)
#define CS_BRANCH_SAMPLE_COUNTERS    (1ULL << 19)

/* Bits of the flag word that follows read_format (bit 0 = disabled). */
#define CS_ATTR_DISABLED        (1ULL << 0)
#define CS_ATTR_INHERIT         (1ULL << 1)
#define CS_ATTR_PINNED          (1ULL << 2)
#define CS_ATTR_EXCLUSIVE       (1ULL << 3)
#define CS_ATTR_EXCLUDE_USER    (1ULL << 4)
#define CS_ATTR_EXCLUDE_KERNEL  (1ULL << 5)
#define CS_ATTR_EXCLUDE_HV      (1ULL << 6)
#define CS_ATTR_EXCLUDE_IDLE    (1ULL << 7)
#define CS_ATTR_MMAP            (1ULL << 8)
#define CS_ATTR_COMM            (1ULL << 9)
#define CS_ATTR_FREQ            (1ULL << 10)
#define CS_ATTR_INHERIT_STAT    (1ULL << 11)
#define CS_ATTR_ENABLE_ON_EXEC  (1ULL << 12)
#define CS_ATTR_TASK            (1ULL << 13)
#define CS_ATTR_WATERMARK       (1ULL << 14)
#define CS_ATTR_PRECISE_SHIFT   15		/* 2 bits */
#define CS_ATTR_MMAP_DATA       (1ULL << 17)
#define CS_ATTR_SAMPLE_ID_ALL   (1ULL << 18)
#define CS_ATTR_EXCLUDE_HOST    (1ULL << 19)
#define CS_ATTR_EXCLUDE_GUEST   (1ULL << 20)
#define CS_ATTR_EXCLUDE_CALLCHAIN_KERNEL (1ULL << 21)
#define CS_ATTR_EXCLUDE_CALLCHAIN_USER   (1ULL << 22)
#define CS_ATTR_MMAP2           (1ULL << 23)
#define CS_ATTR_COMM_EXEC       (1ULL << 24)
#define CS_ATTR_USE_CLOCKID     (1ULL << 25)
#define CS_ATTR_CONTEXT_SWITCH  (1ULL << 26)
#define CS_ATTR_WRITE_BACKWARD  (1ULL << 27)
#define CS_ATTR_NAMESPACES      (1ULL << 28)
#define CS_ATTR_KSYMBOL         (1ULL << 29)
#define CS_ATTR_BPF_EVENT       (1ULL << 30)
#define CS_ATTR_AUX_OUTPUT      (1ULL << 31)
#define CS_ATTR_CGROUP          (1ULL << 32)
#define CS_ATTR_TEXT_POKE       (1ULL << 33)
#define CS_ATTR_BUILD_ID        (1ULL << 34)
#define CS_ATTR_INHERIT_THREAD  (1ULL << 35)
#define CS_ATTR_REMOVE_ON_EXEC  (1ULL << 36)
#define CS_ATTR_SIGTRAP         (1ULL << 37)
#define CS_ATTR_DEFER_CALLCHAIN (1ULL << 38)	/* Linux 6.19 */
#define CS_ATTR_DEFER_OUTPUT    (1ULL << 39)	/* Linux 6.19 */

/*
 * perf_event_attr as laid out in memory and in perf.data. Fields past
 * attr.size are absent in older files and read as zero. The flag word is
 * kept as one u64 because C bitfield order is not portable and we need
 * bits the installed headers do not name.
 */
struct cs_perf_attr {
	uint32_t type;
	uint32_t size;
	uint64_t config;
	uint64_t sample_period;		/* or sample_freq when CS_ATTR_FREQ */
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags;			/* CS_ATTR_* */
	uint32_t wakeup_events;		/* or wakeup_watermark */
	uint32_t bp_type;
	uint64_t config1;		/* bp_addr, kprobe_func, ... */
	uint64_t config2;		/* bp_len, ... */
	uint64_t branch_sample_type;
	uint64_t sample_regs_user;
	uint32_t sample_stack_user;
	int32_t  clockid;
	uint64_t sample_regs_intr;
	uint32_t aux_watermark;
	uint16_t sample_max_stack;
	uint16_t reserved_2;
	uint32_t aux_sample_size;
	uint32_t aux_action;
	uint64_t sig_data;
	uint64_t config3;
	uint64_t config4;
};

#define CS_PERF_ATTR_SIZE_VER0  64
#define CS_PERF_ATTR_SIZE_VER1  72
#define CS_PERF_ATTR_SIZE_VER5 112
#define CS_PERF_ATTR_SIZE_VER7 128	/* the largest attr perf 6.1 accepts */
#define CS_PERF_ATTR_SIZE_VER8 136
#define CS_PERF_ATTR_SIZE_VER9 144
_Static_assert(sizeof(struct cs_perf_attr) == CS_PERF_ATTR_SIZE_VER9,
	       "cs_perf_attr layout");

/* ---- records ------------------------------------------------------------ */

struct cs_perf_event_header {
	uint32_t type;
	uint16_t misc;
	uint16_t size;
};

/* cpumodes (CS_MISC_KERNEL, ...) and record types are in callstitch.h */
#define CS_MISC_PROC_MAP_PARSE_TIMEOUT (1 << 12)
#define CS_MISC_MMAP_DATA       (1 << 13)	/* also COMM_EXEC, SWITCH_OUT, FORK_EXEC */
#define CS_MISC_COMM_EXEC       (1 << 13)
#define CS_MISC_SWITCH_OUT      (1 << 13)
/* on a FORK that a recorder synthesised for a task running before the
 * recording: the task's own MMAPs follow, its parent's maps are not its */
#define CS_MISC_FORK_EXEC       (1 << 13)
#define CS_MISC_MMAP_BUILD_ID   (1 << 14)
#define CS_MISC_EXACT_IP        (1 << 14)
#define CS_MISC_SWITCH_OUT_PREEMPT (1 << 14)
#define CS_MISC_EXT_RESERVED    (1 << 15)

/* record types and callchain context markers are in callstitch.h */

static inline int cs_is_context_marker(uint64_t ip)
{
	return ip >= CS_CONTEXT_MAX;
}

/* ---- perf.data file ----------------------------------------------------- */

#define CS_PERF_MAGIC2   0x32454c4946524550ULL	/* "PERFILE2" little endian */
#define CS_PERF_MAGIC2_SWAPPED 0x50455246494c4532ULL

struct cs_perf_file_section {
	uint64_t offset;
	uint64_t size;
};

struct cs_perf_file_header {
	uint64_t magic;
	uint64_t size;			/* sizeof this header: 104 */
	uint64_t attr_size;		/* size of one attr section entry */
	struct cs_perf_file_section attrs;
	struct cs_perf_file_section data;
	struct cs_perf_file_section event_types;	/* unused, zero */
	uint64_t adds_features[4];	/* bitmap of HEADER_* features */
};
_Static_assert(sizeof(struct cs_perf_file_header) == 104, "perf file header");

/* pipe mode starts with this 16-byte header; attrs come as HEADER_ATTR records */
struct cs_perf_pipe_file_header {
	uint64_t magic;
	uint64_t size;			/* 16 */
};

/* feature bits in adds_features; their sections follow the data section */
enum cs_feature {
	CS_FEAT_RESERVED      = 0,
	CS_FEAT_TRACING_DATA  = 1,
	CS_FEAT_BUILD_ID      = 2,
	CS_FEAT_HOSTNAME      = 3,
	CS_FEAT_OSRELEASE     = 4,
	CS_FEAT_VERSION       = 5,
	CS_FEAT_ARCH          = 6,
	CS_FEAT_NRCPUS        = 7,
	CS_FEAT_CPUDESC       = 8,
	CS_FEAT_CPUID         = 9,
	CS_FEAT_TOTAL_MEM     = 10,
	CS_FEAT_CMDLINE       = 11,
	CS_FEAT_EVENT_DESC    = 12,
	CS_FEAT_CPU_TOPOLOGY  = 13,
	CS_FEAT_NUMA_TOPOLOGY = 14,
	CS_FEAT_BRANCH_STACK  = 15,
	CS_FEAT_PMU_MAPPINGS  = 16,
	CS_FEAT_GROUP_DESC    = 17,
	CS_FEAT_AUXTRACE      = 18,
	CS_FEAT_STAT          = 19,
	CS_FEAT_CACHE         = 20,
	CS_FEAT_SAMPLE_TIME   = 21,
	CS_FEAT_MEM_TOPOLOGY  = 22,
	CS_FEAT_CLOCKID       = 23,
	CS_FEAT_DIR_FORMAT    = 24,
	CS_FEAT_BPF_PROG_INFO = 25,
	CS_FEAT_BPF_BTF       = 26,
	CS_FEAT_COMPRESSED    = 27,
	CS_FEAT_CPU_PMU_CAPS  = 28,
	CS_FEAT_CLOCK_DATA    = 29,
	CS_FEAT_HYBRID_TOPOLOGY = 30,
	CS_FEAT_PMU_CAPS      = 31,
	CS_FEAT_CPU_DOMAIN_INFO = 32,
	CS_FEAT_E_MACHINE     = 33,
	CS_FEAT_LAST,
	CS_FEAT_BITS          = 256,
};

/* a build id record in the BUILD_ID feature section and in HEADER_BUILD_ID */
#define CS_BUILD_ID_SIZE_MAX 20
#define CS_MISC_BUILD_ID_SIZE (1 << 15)	/* data[20] holds the size in its 21st byte */

#endif
