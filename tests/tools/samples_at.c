/* samples_at - a profile with one sample at each given address of a binary,
 * to ask a reader what it names each address.
 *
 *   samples_at [--data-over] OUT.data BINARY VADDR...
 *
 * Writes OUT.data: one cpu-clock event, a process "probe" (pid 4242) with
 * BINARY's executable segment mapped (at 0x7f0000000000 plus its address
 * for a shared object, at its own address otherwise), and one user-mode
 * sample, without a callchain, at each VADDR (hex, the binary's own
 * address), in the order given. `perf script -F ip,sym` and `callstitch
 * script -F ip,sym` then print one line per VADDR. With --data-over a
 * data map (not executable, of another file) follows the text map and
 * covers it: a reader must still name the addresses from the code.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi/perf_abi.h"
#include "lib/util/errbuf.h"
#include "lib/write/encode.h"
#include "lib/write/writer.h"

#define PID 4242
#define DYN_BASE 0x7f0000000000ULL

static struct cs_writer *w;
static struct cs_perf_attr attr;
static uint64_t now = 1000000000;
static uint64_t buf[1024];

static void put(long len)
{
	if (len < 0 || cs_writer_write(w, buf, (size_t)len)) {
		fprintf(stderr, "samples_at: cannot write a record (%ld): %s\n", len,
			cs_writer_error(w));
		exit(1);
	}
}

static struct cs_sample_id sid(uint32_t pid)
{
	now += 1000;
	return (struct cs_sample_id){ .pid = pid, .tid = pid, .time = now };
}

/* The map of path's executable segment, as the loader makes it; *base:
 * where the binary's address 0 lies. */
static struct cs_mmap text_map(const char *path, uint64_t *base)
{
	struct cs_mmap m = { .pid = PID, .tid = PID, .prot = 5, .flags = 2,
			     .filename = path };
	int fd = open(path, O_RDONLY);
	GElf_Ehdr eh;
	size_t nph;
	Elf *e;

	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE ||
	    !(e = elf_begin(fd, ELF_C_READ, NULL)) || !gelf_getehdr(e, &eh) ||
	    elf_getphdrnum(e, &nph)) {
		fprintf(stderr, "samples_at: %s: not an ELF file we can read\n", path);
		exit(1);
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		*base = eh.e_type == ET_DYN ? DYN_BASE : 0;
		m.start = *base + (ph.p_vaddr & ~0xfffULL);
		m.len = (ph.p_memsz + (ph.p_vaddr & 0xfff) + 0xfff) & ~0xfffULL;
		m.pgoff = ph.p_offset & ~0xfffULL;
		break;
	}
	if (!m.len) {
		fprintf(stderr, "samples_at: %s has no executable segment\n", path);
		exit(1);
	}
	elf_end(e);
	close(fd);
	return m;
}

int main(int argc, char **argv)
{
	struct cs_errbuf eb = { { 0 } };
	struct cs_writer_opts o = { 0 };
	uint64_t ids[] = { 7 };
	struct cs_sample_id id;
	struct cs_mmap m;
	struct cs_comm c = { PID, PID, "probe" };
	uint64_t base;
	bool data_over = argc > 1 && !strcmp(argv[1], "--data-over");

	if (data_over) {
		argc--;
		argv++;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: samples_at [--data-over] OUT.data BINARY VADDR...\n");
		return 2;
	}
	m = text_map(argv[2], &base);

	attr.type = CS_PERF_TYPE_SOFTWARE;
	attr.size = CS_PERF_ATTR_SIZE_VER7;
	attr.config = CS_PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = 1000000;
	attr.sample_type = CS_SAMPLE_IP | CS_SAMPLE_TID | CS_SAMPLE_TIME |
			   CS_SAMPLE_PERIOD;
	attr.flags = CS_ATTR_DISABLED | CS_ATTR_MMAP | CS_ATTR_COMM |
		     CS_ATTR_TASK | CS_ATTR_SAMPLE_ID_ALL | CS_ATTR_MMAP2 |
		     CS_ATTR_COMM_EXEC;
	if (cs_writer_open(argv[1], -1, &o, &eb, &w) ||
	    cs_writer_add_event(w, &attr, "cpu-clock", ids, 1) ||
	    cs_writer_set_string(w, CS_FEAT_ARCH, "x86_64") ||
	    cs_writer_set_nr_cpus(w, 1, 1) ||
	    cs_writer_begin(w)) {
		fprintf(stderr, "samples_at: %s%s\n", eb.msg, w ? cs_writer_error(w) : "");
		return 1;
	}
	id = sid(PID);
	put(cs_encode_comm(&attr, &c, true, &id, buf, sizeof(buf)));
	id = sid(PID);
	put(cs_encode_mmap2(&attr, &m, CS_MISC_USER, &id, buf, sizeof(buf)));
	if (data_over) {
		struct cs_mmap d = m;

		d.prot = 3;		/* read, write */
		d.flags = 1;		/* shared */
		d.pgoff = 0;
		d.filename = "/dev/shm/probe-data";
		id = sid(PID);
		put(cs_encode_mmap2(&attr, &d, CS_MISC_USER | CS_MISC_MMAP_DATA, &id,
				    buf, sizeof(buf)));
	}
	for (int i = 3; i < argc; i++) {
		char *end;
		uint64_t vaddr;
		struct cs_sample s;

		errno = 0;
		vaddr = strtoull(argv[i], &end, 16);
		if (errno || *end || end == argv[i]) {
			fprintf(stderr, "samples_at: '%s' is not a hex address\n", argv[i]);
			return 2;
		}
		id = sid(PID);
		s = (struct cs_sample){ .ip = base + vaddr, .pid = PID, .tid = PID,
					.time = id.time, .period = 1000000,
					.misc = CS_MISC_USER };
		put(cs_encode_sample(&attr, &s, NULL, 0, buf, sizeof(buf)));
	}
	if (cs_writer_finish(w)) {
		fprintf(stderr, "samples_at: %s\n", cs_writer_error(w));
		return 1;
	}
	cs_writer_free(w);
	return 0;
}
