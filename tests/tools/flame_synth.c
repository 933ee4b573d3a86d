/* flame_synth - a small deferred-callchain profile whose stacks and counts
 * are known, for the flame graph and inject tests.
 *
 *   flame_synth OUT.data KALLSYMS BINARY [empty]
 *
 * Writes OUT.data (one cpu-clock event with defer_callchain and
 * defer_output, as a 6.19+ kernel records it), a kallsyms file for its
 * made-up kernel, and on stdout the stitched truth as folded stacks
 * ("comm;outermost;...;innermost count", kernel frames included). User
 * frames are functions of BINARY (tests/workloads/deepstack), found
 * through its symbol table and mapped where the profile says it was.
 *
 * 100 samples in four shapes (tid 100 and 101, both "synth"):
 *   50  user mode, deferred, 10 per cookie; the last cookie's last sample
 *       comes after its record (stitched late)
 *   25  in a read() system call, deferred, 5 per cookie
 *   15  user mode with an ordinary (not deferred) user chain
 *   10  in a read() system call on tid 101 whose record never comes: the
 *       recording ends first (kernel-only, reason "end")
 * With "empty", only the side band: a profile without samples.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/perf_abi.h"
#include "lib/util/errbuf.h"
#include "lib/write/encode.h"
#include "lib/write/writer.h"

#define KBASE 0xffffffff81000000ULL
#define UBASE 0x555555554000ULL
#define PID 100

static const char *const ksyms[] = {
	"_text", "entry_SYSCALL_64", "do_syscall_64", "ksys_read", "vfs_read",
	"_etext",
};

static uint64_t kaddr(const char *name)
{
	for (size_t i = 0; i < sizeof(ksyms) / sizeof(ksyms[0]); i++)
		if (!strcmp(ksyms[i], name))
			return KBASE + 0x1000 * i + 0x10;
	fprintf(stderr, "flame_synth: no kernel symbol %s\n", name);
	exit(1);
}

static const char *const usyms[] = {
	"main", "deep_a", "deep_b", "deep_c", "recurse", "burn_cpu", "do_syscalls",
};
static uint64_t uvalue[sizeof(usyms) / sizeof(usyms[0])];
static uint64_t text_vaddr, text_off, text_len;

static uint64_t uaddr(const char *name)
{
	for (size_t i = 0; i < sizeof(usyms) / sizeof(usyms[0]); i++)
		if (!strcmp(usyms[i], name))
			return UBASE + uvalue[i] + 4;	/* loaded at UBASE */
	fprintf(stderr, "flame_synth: no user symbol %s\n", name);
	exit(1);
}

static void load_binary(const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	size_t nph;
	Elf_Scn *scn = NULL;

	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE ||
	    !(e = elf_begin(fd, ELF_C_READ, NULL)) || elf_getphdrnum(e, &nph)) {
		fprintf(stderr, "flame_synth: cannot read %s\n", path);
		exit(1);
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X)) {
			text_vaddr = ph.p_vaddr;
			text_off = ph.p_offset;
			text_len = ph.p_memsz;
		}
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC)
				continue;
			name = elf_strptr(e, sh.sh_link, s.st_name);
			for (size_t k = 0; name && k < sizeof(usyms) / sizeof(usyms[0]); k++)
				if (!strcmp(name, usyms[k]))
					uvalue[k] = s.st_value;
		}
	}
	for (size_t k = 0; k < sizeof(usyms) / sizeof(usyms[0]); k++)
		if (!uvalue[k]) {
			fprintf(stderr, "flame_synth: %s has no symbol %s\n", path, usyms[k]);
			exit(1);
		}
	if (!text_len) {
		fprintf(stderr, "flame_synth: %s has no executable segment\n", path);
		exit(1);
	}
	elf_end(e);
	close(fd);
}

static struct cs_writer *w;
static struct cs_perf_attr attr;
static uint64_t now = 1000000000;
static uint64_t buf[8192];

static void put(long len)
{
	if (len < 0 || cs_writer_write(w, buf, (size_t)len)) {
		fprintf(stderr, "flame_synth: cannot write a record (%ld): %s\n", len,
			cs_writer_error(w));
		exit(1);
	}
}

static struct cs_sample_id sid(uint32_t pid, uint32_t tid)
{
	now += 1000;
	return (struct cs_sample_id){ .pid = pid, .tid = tid, .time = now, .cpu = tid & 1 };
}

/* chain innermost first */
static void sample(uint32_t tid, uint16_t mode, const uint64_t *chain, size_t nr)
{
	struct cs_sample_id id = sid(PID, tid);
	struct cs_sample s = {
		.pid = PID, .tid = tid, .time = id.time, .cpu = id.cpu,
		.period = 1000000, .misc = mode,
	};

	for (size_t i = 0; i < nr; i++)
		if (!cs_is_context_marker(chain[i])) {
			s.ip = chain[i];
			break;
		}
	put(cs_encode_sample(&attr, &s, chain, nr, buf, sizeof(buf)));
}

static void deferred(uint32_t tid, uint64_t cookie, const uint64_t *ips, size_t nr)
{
	struct cs_sample_id id = sid(PID, tid);
	struct cs_deferred d = { .cookie = cookie, .nr = nr, .ips = ips };

	put(cs_encode_deferred(&attr, &d, &id, buf, sizeof(buf)));
}

int main(int argc, char **argv)
{
	struct cs_errbuf eb = { { 0 } };
	struct cs_writer_opts o = { 0 };
	uint64_t ids[] = { 7 };
	FILE *k;

	if (argc < 4 || argc > 5 || (argc == 5 && strcmp(argv[4], "empty"))) {
		fprintf(stderr, "usage: flame_synth OUT.data KALLSYMS BINARY [empty]\n");
		return 2;
	}
	load_binary(argv[3]);

	k = fopen(argv[2], "w");
	if (!k) {
		perror(argv[2]);
		return 1;
	}
	for (size_t i = 0; i < sizeof(ksyms) / sizeof(ksyms[0]); i++)
		fprintf(k, "%016llx T %s\n", (unsigned long long)(KBASE + 0x1000 * i), ksyms[i]);
	fclose(k);

	attr.type = CS_PERF_TYPE_SOFTWARE;
	attr.size = CS_PERF_ATTR_SIZE_VER7;
	attr.config = CS_PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = 1000000;
	attr.sample_type = CS_SAMPLE_IP | CS_SAMPLE_TID | CS_SAMPLE_TIME |
			   CS_SAMPLE_CALLCHAIN | CS_SAMPLE_CPU | CS_SAMPLE_PERIOD;
	attr.flags = CS_ATTR_DISABLED | CS_ATTR_INHERIT | CS_ATTR_MMAP | CS_ATTR_COMM |
		     CS_ATTR_TASK | CS_ATTR_SAMPLE_ID_ALL | CS_ATTR_MMAP2 |
		     CS_ATTR_COMM_EXEC | CS_ATTR_DEFER_CALLCHAIN | CS_ATTR_DEFER_OUTPUT;

	if (cs_writer_open(argv[1], -1, &o, &eb, &w) ||
	    cs_writer_add_event(w, &attr, "cpu-clock", ids, 1) ||
	    cs_writer_set_string(w, CS_FEAT_HOSTNAME, "synth-host") ||
	    cs_writer_set_string(w, CS_FEAT_OSRELEASE, "6.19.0-synth") ||
	    cs_writer_set_string(w, CS_FEAT_ARCH, "x86_64") ||
	    cs_writer_set_nr_cpus(w, 2, 2) ||
	    cs_writer_begin(w)) {
		fprintf(stderr, "flame_synth: %s%s\n", eb.msg, w ? cs_writer_error(w) : "");
		return 1;
	}

	/* side band: the kernel, the process, its second thread, the binary */
	{
		struct cs_sample_id id = sid((uint32_t)-1, 0);
		struct cs_mmap m = {
			.pid = (uint32_t)-1, .start = KBASE, .len = 0x10000,
			.pgoff = KBASE, .filename = "[kernel.kallsyms]_text",
		};
		struct cs_comm c = { PID, PID, "synth" };
		struct cs_fork_exit f = { PID, PID, PID + 1, PID, 0 };

		put(cs_encode_mmap(&attr, &m, CS_MISC_KERNEL, &id, buf, sizeof(buf)));
		id = sid(PID, PID);
		put(cs_encode_comm(&attr, &c, true, &id, buf, sizeof(buf)));
		m = (struct cs_mmap){
			.pid = PID, .tid = PID, .start = UBASE + (text_vaddr & ~0xfffULL),
			.len = (text_len + (text_vaddr & 0xfff) + 0xfff) & ~0xfffULL,
			.pgoff = text_off & ~0xfffULL, .prot = 5, .flags = 2,
			.filename = argv[3],
		};
		id = sid(PID, PID);
		put(cs_encode_mmap2(&attr, &m, CS_MISC_USER, &id, buf, sizeof(buf)));
		id = sid(PID, PID + 1);
		f.time = id.time;
		put(cs_encode_fork_exit(&attr, CS_RECORD_FORK, &f, &id, buf, sizeof(buf)));
		c = (struct cs_comm){ PID, PID + 1, "synth" };
		id = sid(PID, PID + 1);
		put(cs_encode_comm(&attr, &c, false, &id, buf, sizeof(buf)));
	}

	if (argc == 5)
		goto finish;

	const uint64_t spin[] = { uaddr("burn_cpu"), uaddr("recurse"), uaddr("deep_c"),
				  uaddr("deep_b"), uaddr("deep_a"), uaddr("main") };
	const uint64_t sys_user[] = { uaddr("do_syscalls"), uaddr("deep_b"),
				      uaddr("deep_a"), uaddr("main") };
	const uint64_t sys_kernel[] = { CS_CONTEXT_KERNEL, kaddr("vfs_read"),
					kaddr("ksys_read"), kaddr("do_syscall_64"),
					kaddr("entry_SYSCALL_64") };
	uint64_t chain[16];

	/* 50 user-mode samples in 5 kernel entries (say, interrupts) */
	for (uint64_t c = 1; c <= 5; c++) {
		uint64_t cookie = 0xa00000000ULL + c;

		chain[0] = CS_CONTEXT_USER_DEFERRED;
		chain[1] = cookie;
		for (int i = 0; i < (c == 5 ? 9 : 10); i++)
			sample(PID, CS_MISC_USER, chain, 2);
		deferred(PID, cookie, spin, 6);
		if (c == 5)	/* taken while the unwind ran: after the record */
			sample(PID, CS_MISC_USER, chain, 2);
	}
	/* 25 samples in 5 read() calls */
	for (uint64_t c = 1; c <= 5; c++) {
		uint64_t cookie = 0xb00000000ULL + c;

		memcpy(chain, sys_kernel, sizeof(sys_kernel));
		chain[5] = CS_CONTEXT_USER_DEFERRED;
		chain[6] = cookie;
		for (int i = 0; i < 5; i++)
			sample(PID, CS_MISC_KERNEL, chain, 7);
		deferred(PID, cookie, sys_user, 4);
	}
	/* 15 user-mode samples with an ordinary chain */
	chain[0] = CS_CONTEXT_USER;
	memcpy(chain + 1, sys_user, sizeof(sys_user));
	for (int i = 0; i < 15; i++)
		sample(PID, CS_MISC_USER, chain, 5);
	/* 10 samples of tid 101 in a read() that outlasts the recording */
	memcpy(chain, sys_kernel, sizeof(sys_kernel));
	chain[5] = CS_CONTEXT_USER_DEFERRED;
	chain[6] = 0xd00000001ULL;
	for (int i = 0; i < 10; i++)
		sample(PID + 1, CS_MISC_KERNEL, chain, 7);

finish:
	if (cs_writer_finish(w)) {
		fprintf(stderr, "flame_synth: %s\n", cs_writer_error(w));
		return 1;
	}
	cs_writer_free(w);
	if (argc == 5)
		return 0;

	printf("synth;main;deep_a;deep_b;deep_c;recurse;burn_cpu 50\n");
	printf("synth;main;deep_a;deep_b;do_syscalls;entry_SYSCALL_64;do_syscall_64;ksys_read;vfs_read 25\n");
	printf("synth;main;deep_a;deep_b;do_syscalls 15\n");
	printf("synth;[user stack missing: end];entry_SYSCALL_64;do_syscall_64;ksys_read;vfs_read 10\n");
	return 0;
}
