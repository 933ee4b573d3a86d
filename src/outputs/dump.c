/* dump.c - records in file order, decoded, for people (perf report -D). */
#include "outputs/dump.h"
#include "lib/read/reader.h"
#include "lib/read/evlist.h"
#include "lib/read/decode.h"
#include "lib/read/bytes.h"
#include "lib/util/errbuf.h"
#include "abi/perf_abi.h"

#include <callstitch/callstitch.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>

/* ---- names of bits -------------------------------------------------------- */

static const char *const sample_bits[] = {
	"IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU",
	"PERIOD", "STREAM_ID", "RAW", "BRANCH_STACK", "REGS_USER",
	"STACK_USER", "WEIGHT", "DATA_SRC", "IDENTIFIER", "TRANSACTION",
	"REGS_INTR", "PHYS_ADDR", "AUX", "CGROUP", "DATA_PAGE_SIZE",
	"CODE_PAGE_SIZE", "WEIGHT_STRUCT",
};

static const char *const read_bits[] = {
	"TOTAL_TIME_ENABLED", "TOTAL_TIME_RUNNING", "ID", "GROUP", "LOST",
};

static const char *const attr_bits[] = {
	"disabled", "inherit", "pinned", "exclusive", "exclude_user",
	"exclude_kernel", "exclude_hv", "exclude_idle", "mmap", "comm",
	"freq", "inherit_stat", "enable_on_exec", "task", "watermark",
	NULL, NULL,	/* precise_ip: two bits, shown as a number */
	"mmap_data", "sample_id_all", "exclude_host", "exclude_guest",
	"exclude_callchain_kernel", "exclude_callchain_user", "mmap2",
	"comm_exec", "use_clockid", "context_switch", "write_backward",
	"namespaces", "ksymbol", "bpf_event", "aux_output", "cgroup",
	"text_poke", "build_id", "inherit_thread", "remove_on_exec",
	"sigtrap", "defer_callchain", "defer_output",
};

static const char *const feat_names[CS_FEAT_LAST] = {
	[CS_FEAT_TRACING_DATA] = "TRACING_DATA", [CS_FEAT_BUILD_ID] = "BUILD_ID",
	[CS_FEAT_HOSTNAME] = "HOSTNAME", [CS_FEAT_OSRELEASE] = "OSRELEASE",
	[CS_FEAT_VERSION] = "VERSION", [CS_FEAT_ARCH] = "ARCH",
	[CS_FEAT_NRCPUS] = "NRCPUS", [CS_FEAT_CPUDESC] = "CPUDESC",
	[CS_FEAT_CPUID] = "CPUID", [CS_FEAT_TOTAL_MEM] = "TOTAL_MEM",
	[CS_FEAT_CMDLINE] = "CMDLINE", [CS_FEAT_EVENT_DESC] = "EVENT_DESC",
	[CS_FEAT_CPU_TOPOLOGY] = "CPU_TOPOLOGY",
	[CS_FEAT_NUMA_TOPOLOGY] = "NUMA_TOPOLOGY",
	[CS_FEAT_BRANCH_STACK] = "BRANCH_STACK",
	[CS_FEAT_PMU_MAPPINGS] = "PMU_MAPPINGS",
	[CS_FEAT_GROUP_DESC] = "GROUP_DESC", [CS_FEAT_AUXTRACE] = "AUXTRACE",
	[CS_FEAT_STAT] = "STAT", [CS_FEAT_CACHE] = "CACHE",
	[CS_FEAT_SAMPLE_TIME] = "SAMPLE_TIME",
	[CS_FEAT_MEM_TOPOLOGY] = "MEM_TOPOLOGY", [CS_FEAT_CLOCKID] = "CLOCKID",
	[CS_FEAT_DIR_FORMAT] = "DIR_FORMAT",
	[CS_FEAT_BPF_PROG_INFO] = "BPF_PROG_INFO", [CS_FEAT_BPF_BTF] = "BPF_BTF",
	[CS_FEAT_COMPRESSED] = "COMPRESSED",
	[CS_FEAT_CPU_PMU_CAPS] = "CPU_PMU_CAPS",
	[CS_FEAT_CLOCK_DATA] = "CLOCK_DATA",
	[CS_FEAT_HYBRID_TOPOLOGY] = "HYBRID_TOPOLOGY",
	[CS_FEAT_PMU_CAPS] = "PMU_CAPS",
	[CS_FEAT_CPU_DOMAIN_INFO] = "CPU_DOMAIN_INFO",
	[CS_FEAT_E_MACHINE] = "E_MACHINE",
};

static void bits(FILE *f, uint64_t v, const char *const *names, size_t n)
{
	const char *sep = "";

	if (!v) {
		fputs("0", f);
		return;
	}
	for (size_t i = 0; i < 64; i++) {
		if (!(v >> i & 1))
			continue;
		if (i < n && names[i])
			fprintf(f, "%s%s", sep, names[i]);
		else
			fprintf(f, "%sbit%zu", sep, i);
		sep = "|";
	}
}

#define NAMES(a) a, sizeof(a) / sizeof(a[0])

static const char *marker_name(uint64_t ip)
{
	switch (ip) {
	case CS_CONTEXT_HV:		return "HV";
	case CS_CONTEXT_KERNEL:		return "KERNEL";
	case CS_CONTEXT_USER:		return "USER";
	case CS_CONTEXT_USER_DEFERRED:	return "USER_DEFERRED";
	case CS_CONTEXT_GUEST:		return "GUEST";
	case CS_CONTEXT_GUEST_KERNEL:	return "GUEST_KERNEL";
	case CS_CONTEXT_GUEST_USER:	return "GUEST_USER";
	}
	return "context";
}

/* ---- header ---------------------------------------------------------------- */

static void attr_line(FILE *f, const struct cs_evsel *e)
{
	const struct cs_perf_attr *a = cs_evsel_attr(e);
	unsigned precise = (unsigned)(a->flags >> CS_ATTR_PRECISE_SHIFT & 3);

	fprintf(f, "# event %u: %s\n#   type %u, config %#" PRIx64 ", size %u, %s %"
		PRIu64 "\n#   sample_type ", e->index, e->name, a->type, a->config,
		a->size, (a->flags & CS_ATTR_FREQ) ? "sample_freq" : "sample_period",
		a->sample_period);
	bits(f, a->sample_type, NAMES(sample_bits));
	fputs(", read_format ", f);
	bits(f, a->read_format, NAMES(read_bits));
	fputs("\n#   flags ", f);
	bits(f, a->flags & ~(3ULL << CS_ATTR_PRECISE_SHIFT), NAMES(attr_bits));
	if (precise)
		fprintf(f, ", precise_ip %u", precise);
	if (a->flags & CS_ATTR_USE_CLOCKID)
		fprintf(f, ", clockid %d", a->clockid);
	if (a->sample_regs_user)
		fprintf(f, ", sample_regs_user %#" PRIx64, a->sample_regs_user);
	if (a->sample_stack_user)
		fprintf(f, ", sample_stack_user %u", a->sample_stack_user);
	if (a->branch_sample_type)
		fprintf(f, ", branch_sample_type %#" PRIx64, a->branch_sample_type);
	if (a->sample_max_stack)
		fprintf(f, ", sample_max_stack %u", a->sample_max_stack);
	fputs("\n#   ids {", f);
	for (size_t i = 0; i < e->nr_ids; i++)
		fprintf(f, "%s %" PRIu64, i ? "," : "", e->ids[i]);
	fputs(" }\n", f);
}

static int bid_line(void *ctx, int32_t pid, uint16_t misc,
		    const uint8_t *id, size_t size, const char *path)
{
	FILE *f = ctx;

	(void)misc;
	fputs("# build id ", f);
	for (size_t i = 0; i < size; i++)
		fprintf(f, "%02x", id[i]);
	fprintf(f, " pid %d %s\n", pid, path);
	return 0;
}

static void header(FILE *f, struct cs_reader *r)
{
	const struct cs_file_info *in = cs_reader_info(r);
	const struct cs_evlist *l = cs_reader_evlist(r);
	const char *sep = "";

	fprintf(f, "# callstitch dump of %s\n", cs_reader_path(r));
	fprintf(f, "# %s-endian, %s mode", in->big_endian ? "big" : "little",
		in->pipe_mode ? "pipe" : "file");
	if (!in->pipe_mode)
		fprintf(f, ", data at %#" PRIx64 " (%" PRIu64 " bytes), %"
			PRIu64 " bytes in all", in->data_offset, in->data_size,
			cs_reader_total(r));
	fputc('\n', f);
	if (in->hostname)	fprintf(f, "# hostname: %s\n", in->hostname);
	if (in->os_release)	fprintf(f, "# os release: %s\n", in->os_release);
	if (in->perf_version)	fprintf(f, "# perf version: %s\n", in->perf_version);
	if (in->arch)		fprintf(f, "# arch: %s\n", in->arch);
	if (in->nr_cpus_avail || in->nr_cpus_online)
		fprintf(f, "# nrcpus: %u online, %u available\n",
			in->nr_cpus_online, in->nr_cpus_avail);
	if (in->cpudesc)	fprintf(f, "# cpudesc: %s\n", in->cpudesc);
	if (in->total_mem_kb)	fprintf(f, "# total memory: %" PRIu64 " kB\n",
					in->total_mem_kb);
	if (in->cmdline)	fprintf(f, "# cmdline: %s\n", in->cmdline);
	if (in->clockid >= 0)	fprintf(f, "# clockid: %" PRId64 "\n", in->clockid);
	fputs("# features:", f);
	for (int i = 1; i < CS_FEAT_LAST; i++) {
		const void *d;
		size_t n;

		if (!cs_reader_feature(r, i, &d, &n)) {
			fprintf(f, "%s %s", sep, feat_names[i] ? feat_names[i] : "?");
			sep = "";
		}
	}
	fputc('\n', f);
	for (size_t i = 0; i < cs_evlist_count(l); i++)
		attr_line(f, cs_evlist_get(l, i));
	cs_reader_for_each_build_id(r, bid_line, f);
	fputs("#\n", f);
}

/* ---- records ---------------------------------------------------------------- */

static void hexdump(FILE *f, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i += 16) {
		fprintf(f, ".  %04zx: ", i);
		for (size_t k = i; k < i + 16; k++)
			if (k < n)
				fprintf(f, " %02x", b[k]);
			else
				fputs("   ", f);
		fputs("  ", f);
		for (size_t k = i; k < i + 16 && k < n; k++)
			fputc(b[k] >= 32 && b[k] < 127 ? b[k] : '.', f);
		fputc('\n', f);
	}
}

static void chain(FILE *f, const char *what, const uint64_t *ips, uint64_t nr)
{
	bool cookie_next = false;

	fprintf(f, "... %s: nr:%" PRIu64 "\n", what, nr);
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip = cs_ld64(&ips[i]);

		fprintf(f, ".....  %2" PRIu64 ": %016" PRIx64, i, ip);
		if (cookie_next)
			fputs(" (cookie)", f);
		else if (cs_is_context_marker(ip))
			fprintf(f, " (%s)", marker_name(ip));
		cookie_next = ip == CS_CONTEXT_USER_DEFERRED;
		fputc('\n', f);
	}
}

/* A sample's user or interrupt registers: the two come as one layout, the
 * values packed in the order of the set bits of the event's mask (vals
 * NULL when the sample carries none). */
static void regs(FILE *f, const char *which, uint64_t abi, uint64_t mask,
		 const uint64_t *vals)
{
	size_t k = 0;

	fprintf(f, "... %s regs: abi %" PRIu64, which, abi);
	for (int b = 0; vals && b < 64; b++)
		if (mask >> b & 1)
			fprintf(f, " r%d=%#" PRIx64, b, vals[k++]);
	fputc('\n', f);
}

static void sample(FILE *f, const struct cs_event *ev)
{
	const struct cs_sample *s = &ev->sample;
	uint64_t st = cs_evsel_attr(ev->evsel)->sample_type;

	fprintf(f, "(IP, %#x): %u/%u: %#" PRIx64 " period: %" PRIu64 " addr: %#"
		PRIx64 "\n", s->misc, s->pid, s->tid, s->ip, s->period, s->addr);
	fprintf(f, "... event: %s", ev->evsel->name);
	if (st & (CS_SAMPLE_ID | CS_SAMPLE_IDENTIFIER))
		fprintf(f, "  id: %" PRIu64, s->id);
	if (st & CS_SAMPLE_CPU)
		fprintf(f, "  cpu: %u", s->cpu);
	if (st & CS_SAMPLE_STREAM_ID)
		fprintf(f, "  stream_id: %" PRIu64, s->stream_id);
	fputc('\n', f);
	if (st & CS_SAMPLE_READ) {
		fputs("... read:", f);
		for (size_t i = 0; i < s->read_size; i++)
			fprintf(f, " %" PRIu64, cs_ld64(&s->read[i]));
		fputc('\n', f);
	}
	if (st & CS_SAMPLE_CALLCHAIN) {
		chain(f, "FP chain", s->callchain, s->callchain_nr);
		for (uint64_t i = 0; i + 1 < s->callchain_nr; i++)
			if (s->callchain[i] == CS_CONTEXT_USER_DEFERRED)
				fprintf(f, "... cookie: %#" PRIx64
					" (user stack deferred)\n",
					s->callchain[i + 1]);
	}
	if (st & CS_SAMPLE_RAW)
		fprintf(f, "... raw: %u bytes\n", s->raw_size);
	if (st & CS_SAMPLE_BRANCH_STACK) {
		fprintf(f, "... branch stack: nr:%" PRIu64, s->branch_nr);
		if (cs_evsel_attr(ev->evsel)->branch_sample_type & CS_BRANCH_SAMPLE_HW_INDEX)
			fprintf(f, " hw_idx:%" PRId64, (int64_t)s->branch_hw_idx);
		fputc('\n', f);
		for (uint64_t i = 0; i < s->branch_nr; i++) {
			const struct cs_branch_entry *b = &s->branches[i];

			fprintf(f, ".....  %2" PRIu64 ": %016" PRIx64 " -> %016"
				PRIx64 " flags %#" PRIx64, i, b->from, b->to,
				b->flags);
			if (s->branch_counters)
				fprintf(f, " counters %#" PRIx64,
					s->branch_counters[i]);
			fputc('\n', f);
		}
	}
	if (st & CS_SAMPLE_REGS_USER)
		regs(f, "user", s->user_regs_abi,
		     cs_evsel_attr(ev->evsel)->sample_regs_user, s->user_regs);
	if (st & CS_SAMPLE_STACK_USER)
		fprintf(f, "... user stack: size %" PRIu64 ", dyn_size %" PRIu64
			"\n", s->stack_user_size, s->stack_user_dyn_size);
	if (st & (CS_SAMPLE_WEIGHT | CS_SAMPLE_WEIGHT_STRUCT))
		fprintf(f, "... weight: %#" PRIx64 "\n", s->weight);
	if (st & CS_SAMPLE_DATA_SRC)
		fprintf(f, "... data_src: %#" PRIx64 "\n", s->data_src);
	if (st & CS_SAMPLE_TRANSACTION)
		fprintf(f, "... transaction: %#" PRIx64 "\n", s->transaction);
	if (st & CS_SAMPLE_REGS_INTR)
		regs(f, "intr", s->intr_regs_abi,
		     cs_evsel_attr(ev->evsel)->sample_regs_intr, s->intr_regs);
	if (st & CS_SAMPLE_PHYS_ADDR)
		fprintf(f, "... phys_addr: %#" PRIx64 "\n", s->phys_addr);
	if (st & CS_SAMPLE_CGROUP)
		fprintf(f, "... cgroup: %" PRIu64 "\n", s->cgroup);
	if (st & CS_SAMPLE_DATA_PAGE_SIZE)
		fprintf(f, "... data page size: %" PRIu64 "\n", s->data_page_size);
	if (st & CS_SAMPLE_CODE_PAGE_SIZE)
		fprintf(f, "... code page size: %" PRIu64 "\n", s->code_page_size);
	if (st & CS_SAMPLE_AUX)
		fprintf(f, "... aux: %" PRIu64 " bytes\n", s->aux_size);
}

static void user_record(FILE *f, const struct cs_event *ev)
{
	const uint8_t *b = ev->bytes;
	size_t n = ev->size;

	switch (ev->type) {
	case CS_RECORD_HEADER_ATTR:
		if (n >= 16) {
			uint32_t asz = cs_ld32(b + 12) ? cs_ld32(b + 12) : 64;

			fprintf(f, ": type %u config %#" PRIx64 " size %u, %zu ids\n",
				cs_ld32(b + 8), n >= 24 ? cs_ld64(b + 16) : 0, asz,
				asz <= n - 8 ? (n - 8 - asz) / 8 : 0);
			return;
		}
		break;
	case CS_RECORD_HEADER_FEATURE:
		if (n >= 16) {
			uint64_t id = cs_ld64(b + 8);

			fprintf(f, ": %s (%" PRIu64 "), %zu bytes\n",
				id < CS_FEAT_LAST && feat_names[id] ?
				feat_names[id] : "unknown", id, n - 16);
			return;
		}
		break;
	case CS_RECORD_EVENT_UPDATE:
		if (n >= 24) {
			uint64_t t = cs_ld64(b + 8);

			fprintf(f, "\n... id: %" PRIu64 "\n", cs_ld64(b + 16));
			if (t == 0)
				fprintf(f, "... unit: %.*s\n", (int)(n - 24), b + 24);
			else if (t == 2)
				fprintf(f, "... name: %.*s\n", (int)(n - 24), b + 24);
			else if (t == 1 && n >= 32) {
				double d;
				uint64_t v = cs_ld64(b + 24);

				memcpy(&d, &v, sizeof(d));
				fprintf(f, "... scale: %f\n", d);
			} else
				fprintf(f, "... type %" PRIu64 "\n", t);
			return;
		}
		break;
	case CS_RECORD_HEADER_BUILD_ID:
		if (n >= 36) {
			uint8_t sz = (cs_ld16(b + 4) & CS_MISC_BUILD_ID_SIZE) ?
				     b[32] : 20;

			fputs(": ", f);
			for (uint8_t i = 0; i < sz && i < 20; i++)
				fprintf(f, "%02x", b[12 + i]);
			fprintf(f, " pid %d %.*s\n", (int32_t)cs_ld32(b + 8),
				(int)(n - 36), b + 36);
			return;
		}
		break;
	case CS_RECORD_ID_INDEX:
		if (n >= 16) {
			uint64_t nr = cs_ld64(b + 8);

			fprintf(f, " nr: %" PRIu64 "\n", nr);
			if (nr > (n - 16) / 32)
				nr = (n - 16) / 32;
			for (uint64_t i = 0; i < nr; i++) {
				const uint8_t *e = b + 16 + i * 32;

				fprintf(f, " ... id: %" PRIu64 "  idx: %" PRIu64
					"  cpu: %" PRId64 "  tid: %" PRId64 "\n",
					cs_ld64(e), cs_ld64(e + 8),
					(int64_t)cs_ld64(e + 16),
					(int64_t)cs_ld64(e + 24));
			}
			return;
		}
		break;
	case CS_RECORD_THREAD_MAP:
		if (n >= 16) {
			uint64_t nr = cs_ld64(b + 8);

			fprintf(f, " nr: %" PRIu64, nr);
			if (nr > (n - 16) / 24)
				nr = (n - 16) / 24;
			for (uint64_t i = 0; i < nr; i++)
				fprintf(f, " thread: %" PRId64,
					(int64_t)cs_ld64(b + 16 + i * 24));
			fputc('\n', f);
			return;
		}
		break;
	case CS_RECORD_TIME_CONV:
		if (n >= 32) {
			fprintf(f, ": shift %" PRIu64 " mult %" PRIu64 " zero %"
				PRIu64 "\n", cs_ld64(b + 8), cs_ld64(b + 16),
				cs_ld64(b + 24));
			return;
		}
		break;
	case CS_RECORD_AUXTRACE:
		if (n >= 48) {
			fprintf(f, ": size %#" PRIx64 " offset %#" PRIx64 " ref %#"
				PRIx64 " idx %u tid %d cpu %d\n", cs_ld64(b + 8),
				cs_ld64(b + 16), cs_ld64(b + 24), cs_ld32(b + 32),
				(int32_t)cs_ld32(b + 36), (int32_t)cs_ld32(b + 40));
			return;
		}
		break;
	case CS_RECORD_HEADER_TRACING_DATA:
		if (n >= 12) {
			fprintf(f, ": %u bytes follow\n", cs_ld32(b + 8));
			return;
		}
		break;
	case CS_RECORD_COMPRESSED:
		fprintf(f, ": %zu bytes of zstd data\n", n - 8);
		return;
	case CS_RECORD_COMPRESSED2:
		if (n >= 16) {
			fprintf(f, ": %" PRIu64 " bytes of zstd data\n",
				cs_ld64(b + 8));
			return;
		}
		break;
	default:
		break;
	}
	fputc('\n', f);
}

static void id_suffix(FILE *f, const struct cs_event *ev)
{
	uint64_t st;

	if (!ev->has_id || !ev->evsel)
		return;
	st = cs_evsel_attr(ev->evsel)->sample_type;
	fputs("... sample_id:", f);
	if (st & CS_SAMPLE_TID)
		fprintf(f, " %u/%u", ev->id.pid, ev->id.tid);
	if (st & CS_SAMPLE_TIME)
		fprintf(f, " time %" PRIu64, ev->id.time);
	if (st & (CS_SAMPLE_ID | CS_SAMPLE_IDENTIFIER))
		fprintf(f, " id %" PRIu64, ev->id.id);
	if (st & CS_SAMPLE_STREAM_ID)
		fprintf(f, " stream_id %" PRIu64, ev->id.stream_id);
	if (st & CS_SAMPLE_CPU)
		fprintf(f, " cpu %u", ev->id.cpu);
	fputc('\n', f);
}

static void kernel_record(FILE *f, const struct cs_event *ev)
{
	const uint8_t *b = ev->bytes;

	switch (ev->type) {
	case CS_RECORD_MMAP:
	case CS_RECORD_MMAP2: {
		const struct cs_mmap *m = &ev->mmap;

		fprintf(f, " %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64,
			(int32_t)m->pid, (int32_t)m->tid, m->start, m->len, m->pgoff);
		if (ev->type == CS_RECORD_MMAP2) {
			if (m->has_build_id) {
				fputs(" build id ", f);
				for (int i = 0; i < m->build_id_size && i < 20; i++)
					fprintf(f, "%02x", m->build_id[i]);
			} else {
				fprintf(f, " %02x:%02x %" PRIu64 " %" PRIu64,
					m->maj, m->min, m->ino, m->ino_generation);
			}
			fprintf(f, "]: %c%c%c%c %s\n",
				(m->prot & 1) ? 'r' : '-', (m->prot & 2) ? 'w' : '-',
				(m->prot & 4) ? 'x' : '-',
				(m->flags & 1) ? 's' : 'p', m->filename);
		} else {
			fprintf(f, "]: %c %s\n",
				(ev->misc & CS_MISC_MMAP_DATA) ? 'r' : 'x',
				m->filename);
		}
		break;
	}
	case CS_RECORD_COMM:
		fprintf(f, "%s: %s:%u/%u\n", (ev->misc & CS_MISC_COMM_EXEC) ?
			" exec" : "", ev->comm.comm, ev->comm.pid, ev->comm.tid);
		break;
	case CS_RECORD_FORK:
	case CS_RECORD_EXIT:
		fprintf(f, "(%u:%u):(%u:%u)\n", ev->fork.pid, ev->fork.tid,
			ev->fork.ppid, ev->fork.ptid);
		break;
	case CS_RECORD_LOST:
		fprintf(f, ": id %" PRIu64 " lost %" PRIu64 "\n", ev->lost.id,
			ev->lost.lost);
		break;
	case CS_RECORD_LOST_SAMPLES:
		fprintf(f, ": lost %" PRIu64 "\n", ev->lost.lost);
		break;
	case CS_RECORD_THROTTLE:
	case CS_RECORD_UNTHROTTLE:
		fprintf(f, ": time %" PRIu64 " id %" PRIu64 " stream_id %" PRIu64
			"\n", cs_ld64(b + 8), cs_ld64(b + 16), cs_ld64(b + 24));
		break;
	case CS_RECORD_KSYMBOL:
		fprintf(f, " addr %#" PRIx64 " len %u type %u flags %#x name %s\n",
			ev->ksymbol.addr, ev->ksymbol.len, ev->ksymbol.ksym_type,
			ev->ksymbol.flags, ev->ksymbol.name);
		break;
	case CS_RECORD_SWITCH:
	case CS_RECORD_SWITCH_CPU_WIDE:
		fprintf(f, " %s%s", (ev->misc & CS_MISC_SWITCH_OUT) ? "OUT" : "IN ",
			(ev->misc & CS_MISC_SWITCH_OUT_PREEMPT) ? " preempt" : "");
		if (ev->type == CS_RECORD_SWITCH_CPU_WIDE)
			fprintf(f, "  next/prev pid/tid: %d/%d",
				(int32_t)cs_ld32(b + 8), (int32_t)cs_ld32(b + 12));
		fputc('\n', f);
		break;
	case CS_RECORD_AUX:
		fprintf(f, " offset %#" PRIx64 " size %#" PRIx64 " flags %#" PRIx64
			"\n", cs_ld64(b + 8), cs_ld64(b + 16), cs_ld64(b + 24));
		break;
	case CS_RECORD_ITRACE_START:
		fprintf(f, " pid %u tid %u\n", cs_ld32(b + 8), cs_ld32(b + 12));
		break;
	case CS_RECORD_CGROUP:
		fprintf(f, " cgroup: %" PRIu64 " %s\n", cs_ld64(b + 8),
			(const char *)b + 16);
		break;
	case CS_RECORD_CALLCHAIN_DEFERRED:
		fprintf(f, " cookie %#" PRIx64 ", nr %" PRIu64 "\n",
			ev->deferred.cookie, ev->deferred.nr);
		chain(f, "user chain", ev->deferred.ips, ev->deferred.nr);
		break;
	default:
		fputc('\n', f);
		break;
	}
	id_suffix(f, ev);
}

static void record(FILE *f, const struct cs_record *rec, const struct cs_event *ev,
		   bool inner, bool hex)
{
	const char *name = cs_record_type_name(ev->type);
	uint64_t t = ev->has_id ? ev->id.time : 0;

	fputc('\n', f);
	if (hex) {
		fprintf(f, "%#" PRIx64 "%s [%#zx]: event: %u\n", rec->offset,
			inner ? "+z" : "", rec->size, rec->type);
		hexdump(f, rec->bytes, rec->size);
	}
	fprintf(f, "%" PRIu64 " %#" PRIx64 "%s [%#zx]: PERF_RECORD_", t,
		rec->offset, inner ? "+z" : "", rec->size);
	if (name)
		fputs(name, f);
	else
		fprintf(f, "TYPE_%u (unknown, skipped)", ev->type);
	if (ev->type == CS_RECORD_SAMPLE)
		sample(f, ev);
	else if (ev->type < CS_RECORD_HEADER_ATTR)
		kernel_record(f, ev);
	else
		user_record(f, ev);
}

static void totals(FILE *f, const struct cs_dump_counts *c)
{
	fprintf(f, "\nAggregated stats:\n%20s events: %10" PRIu64 "\n", "TOTAL",
		c->records);
	for (int i = 0; i < 128; i++) {
		const char *n = cs_record_type_name((uint32_t)i);
		char buf[16];

		if (!c->by_type[i])
			continue;
		if (!n) {
			snprintf(buf, sizeof(buf), i == 127 ? "TYPE_127+" : "TYPE_%d", i);
			n = buf;
		}
		fprintf(f, "%20s events: %10" PRIu64 "  (%4.1f%%)\n", n,
			c->by_type[i], 100.0 * (double)c->by_type[i] /
			(double)c->records);
	}
}

int cs_dump(struct cs_reader *r, FILE *f, const struct cs_dump_opts *o,
	    struct cs_dump_counts *counts, struct cs_errbuf *eb)
{
	struct cs_dump_counts local;
	struct cs_record rec;
	struct cs_event ev;
	uint64_t zoff = UINT64_MAX;
	bool pipe;
	int err;

	if (!counts)
		counts = &local;
	memset(counts, 0, sizeof(*counts));
	pipe = cs_reader_info(r)->pipe_mode;
	if (!pipe) {
		header(f, r);
		if (o->header_only)
			return 0;
	} else {
		/* a stream tells its events and features as records: the
		 * summary comes after them, at the end */
		fprintf(f, "# callstitch dump of %s (pipe mode: events and "
			"features arrive as records, summed up at the end)\n",
			cs_reader_path(r));
	}
	while ((err = cs_reader_next(r, &rec)) > 0) {
		bool inner;

		err = cs_decode(cs_reader_evlist(r), rec.bytes, rec.size,
				rec.offset, cs_reader_path(r), &ev, eb);
		if (err)
			break;
		if (pipe && o->header_only)
			continue;
		inner = rec.offset == zoff && rec.type != CS_RECORD_COMPRESSED &&
			rec.type != CS_RECORD_COMPRESSED2;
		if (rec.type == CS_RECORD_COMPRESSED ||
		    rec.type == CS_RECORD_COMPRESSED2)
			zoff = rec.offset;
		record(f, &rec, &ev, inner, o->hex);
		counts->records++;
		counts->by_type[rec.type < 127 ? rec.type : 127]++;
	}
	if (err < 0)
		return err;
	if (pipe) {
		fputc('\n', f);
		header(f, r);
	}
	if (!o->no_stats && !o->header_only)
		totals(f, counts);
	return 0;
}
