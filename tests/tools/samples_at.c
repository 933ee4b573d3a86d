/* samples_at - a profile with one sample at each given address of a binary,
 * to ask a reader what it names each address.
 *
 *   samples_at [--data-over] OUT.data BINARY VADDR...
 *   samples_at --stack OUT.data BINARY VADDR [BINARY VADDR]...
 *   samples_at --stacks OUT.data FILE
 *
 * Writes OUT.data: one cpu-clock event, a process "probe" (pid 4242) with
 * BINARY's executable segment mapped (at 0x7f0000000000 plus its address
 * for a shared object, at its own address otherwise), and one user-mode
 * sample, without a callchain, at each VADDR (hex, the binary's own
 * address), in the order given. `perf script -F ip,sym` and `callstitch
 * script -F ip,sym` then print one line per VADDR. With --data-over a
 * data map (not executable, of another file) follows the text map and
 * covers it: a reader must still name the addresses from the code.
 * With --stack the profile has one sample instead, with a user callchain
 * of the given frames, innermost first: frame i at VADDR i of BINARY i,
 * each binary mapped once (a shared object 4 GiB after the one before),
 * to ask a reader which binaries a stack's frames make it load.
 * With --stacks, one such sample for each line of FILE ('-': standard
 * input) that holds --stack's pairs (a blank line is skipped), each
 * binary mapped just before the first sample whose stack has it: many
 * stacks for a reader that decides, stack by stack, what to load.
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
#define MAX_FRAMES 16		/* --stack, --stacks: a stack's */
#define MAX_BINS 64		/* ... and the binaries of them all */

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

/* The map of path's executable segment, as the loader makes it, a
 * shared object's at dyn_base; *base: where the binary's address 0 lies. */
static struct cs_mmap text_map(const char *path, uint64_t dyn_base,
			       uint64_t *base)
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
		*base = eh.e_type == ET_DYN ? dyn_base : 0;
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

/* Whether arg is a hex address; its value into *v. */
static bool parse_hex(const char *arg, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(arg, &end, 16);
	return !errno && !*end && end != arg;
}

static uint64_t hex_arg(const char *arg)
{
	uint64_t v;

	if (!parse_hex(arg, &v)) {
		fprintf(stderr, "samples_at: '%s' is not a hex address\n", arg);
		exit(2);
	}
	return v;
}

/* One user sample of the probe at ip, with the callchain chain[0, nr). */
static void put_sample(uint64_t ip, const uint64_t *chain, uint64_t nr)
{
	struct cs_sample_id id = sid(PID);
	struct cs_sample s = { .ip = ip, .pid = PID, .tid = PID,
			       .time = id.time, .period = 1000000,
			       .misc = CS_MISC_USER };

	put(cs_encode_sample(&attr, &s, chain, nr, buf, sizeof(buf)));
}

/* The binaries of the stacks, in the order they were mapped. */
static struct {
	char *path;
	uint64_t base;			/* where its address 0 lies */
} bins[MAX_BINS];
static int nr_bins;

/* Where path's address 0 lies in the probe: its text mapped first when
 * no stack had it yet, a shared object 4 GiB after the one before. */
static uint64_t bin_base(const char *path)
{
	struct cs_mmap m;
	struct cs_sample_id id;
	int i = 0;

	while (i < nr_bins && strcmp(bins[i].path, path))
		i++;
	if (i < nr_bins)
		return bins[i].base;
	if (nr_bins == MAX_BINS) {
		fprintf(stderr, "samples_at: more than %d binaries\n", MAX_BINS);
		exit(2);
	}
	m = text_map(path, DYN_BASE + ((uint64_t)nr_bins << 32), &bins[i].base);
	if (!(bins[i].path = strdup(path))) {
		fprintf(stderr, "samples_at: out of memory\n");
		exit(1);
	}
	nr_bins++;
	id = sid(PID);
	put(cs_encode_mmap2(&attr, &m, CS_MISC_USER, &id, buf, sizeof(buf)));
	return bins[i].base;
}

/* One sample whose user callchain is frames[0, n), innermost first:
 * frame i at vaddrs[i] of binary paths[i], mapped first if new. */
static void put_stack(char *const *paths, const uint64_t *vaddrs, int n)
{
	uint64_t chain[1 + MAX_FRAMES];

	chain[0] = CS_CONTEXT_USER;
	for (int i = 0; i < n; i++)
		chain[1 + i] = bin_base(paths[i]) + vaddrs[i];
	put_sample(chain[1], chain, 1 + (uint64_t)n);
}

/* --stack: the pairs of BINARY VADDR in args[0, n), one sample. */
static void put_stack_args(char **args, int n)
{
	char *paths[MAX_FRAMES];
	uint64_t vaddrs[MAX_FRAMES];
	int frames = n / 2;

	if (n % 2 || !frames || frames > MAX_FRAMES) {
		fprintf(stderr, "samples_at: --stack wants 1 to %d pairs of BINARY VADDR\n",
			MAX_FRAMES);
		exit(2);
	}
	for (int i = 0; i < frames; i++) {
		paths[i] = args[2 * i];
		vaddrs[i] = hex_arg(args[2 * i + 1]);
	}
	put_stack(paths, vaddrs, frames);
}

/* --stacks: a sample for each line of file that has pairs of BINARY
 * VADDR; a blank line is skipped. */
static void put_stacks(const char *file)
{
	FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
	char *line = NULL, *paths[MAX_FRAMES], *save;
	uint64_t vaddrs[MAX_FRAMES];
	unsigned long nr = 0, samples = 0;
	size_t cap = 0;

	if (!f) {
		fprintf(stderr, "samples_at: %s: %s\n", file, strerror(errno));
		exit(2);
	}
	while (getline(&line, &cap, f) > 0) {
		char *tok = strtok_r(line, " \t\n", &save);
		int n = 0;

		nr++;
		for (; tok; tok = strtok_r(NULL, " \t\n", &save), n++) {
			if (n == 2 * MAX_FRAMES)
				break;
			if (n % 2 == 0)
				paths[n / 2] = tok;
			else if (!parse_hex(tok, &vaddrs[n / 2]))
				break;
		}
		if (!n)			/* blank */
			continue;
		if (tok && n % 2) {
			fprintf(stderr, "samples_at: %s:%lu: '%s' is not a hex address\n",
				file, nr, tok);
			exit(2);
		}
		if (tok || n % 2) {
			fprintf(stderr, "samples_at: %s:%lu: a stack is 1 to %d pairs of BINARY VADDR\n",
				file, nr, MAX_FRAMES);
			exit(2);
		}
		put_stack(paths, vaddrs, n / 2);
		samples++;
	}
	if (ferror(f)) {
		fprintf(stderr, "samples_at: %s: %s\n", file, strerror(errno));
		exit(1);
	}
	if (!samples) {
		fprintf(stderr, "samples_at: %s: no stack\n", file);
		exit(2);
	}
	free(line);
	if (f != stdin)
		fclose(f);
}

/* One binary's map (and with data_over a data map over it), then one
 * sample without a callchain at each of the addresses args[0, n). */
static void put_samples(const char *path, char **args, int n, bool data_over)
{
	uint64_t base;
	struct cs_mmap m = text_map(path, DYN_BASE, &base);
	struct cs_sample_id id = sid(PID);

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
	for (int i = 0; i < n; i++)
		put_sample(base + hex_arg(args[i]), NULL, 0);
}

static const char usage[] =
"usage: samples_at [--data-over] OUT.data BINARY VADDR...\n"
"   or: samples_at --stack OUT.data BINARY VADDR [BINARY VADDR]...\n"
"   or: samples_at --stacks OUT.data FILE\n"
"\n"
"Writes OUT.data, a profile of one process (\"probe\") with user samples\n"
"at addresses of binaries (VADDR: hex, the binary's own address): by\n"
"default one sample at each VADDR of BINARY, without a callchain.\n"
"\n"
"      --data-over   ... and a data map over BINARY's text\n"
"      --stack       one sample, with the user callchain of the pairs of\n"
"                    BINARY VADDR, innermost first (up to 16)\n"
"      --stacks      one such sample for each line of FILE ('-': standard\n"
"                    input) that has pairs, blank lines skipped; each\n"
"                    binary mapped just before the first sample that has\n"
"                    it (up to 64 binaries)\n"
"  -h, --help        this text\n";

int main(int argc, char **argv)
{
	struct cs_errbuf eb = { { 0 } };
	struct cs_writer_opts o = { 0 };
	uint64_t ids[] = { 7 };
	struct cs_sample_id id;
	struct cs_comm c = { PID, PID, "probe" };
	const char *mode = argc > 1 && argv[1][0] == '-' && argv[1][1] ? argv[1] : "";
	bool data_over = !strcmp(mode, "--data-over");
	bool stack = !strcmp(mode, "--stack"), stacks = !strcmp(mode, "--stacks");

	if (!strcmp(mode, "-h") || !strcmp(mode, "--help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (*mode && !data_over && !stack && !stacks) {
		fprintf(stderr, "samples_at: unknown option '%s'\n%s", mode, usage);
		return 2;
	}
	if (*mode) {
		argc--;
		argv++;
	}
	if (stacks ? argc != 3 : argc < 4) {
		fputs(usage, stderr);
		return 2;
	}

	attr.type = CS_PERF_TYPE_SOFTWARE;
	attr.size = CS_PERF_ATTR_SIZE_VER7;
	attr.config = CS_PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = 1000000;
	attr.sample_type = CS_SAMPLE_IP | CS_SAMPLE_TID | CS_SAMPLE_TIME |
			   CS_SAMPLE_PERIOD |
			   (stack || stacks ? CS_SAMPLE_CALLCHAIN : 0);
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
	if (stack)
		put_stack_args(argv + 2, argc - 2);
	else if (stacks)
		put_stacks(argv[2]);
	else
		put_samples(argv[2], argv + 3, argc - 3, data_over);
	if (cs_writer_finish(w)) {
		fprintf(stderr, "samples_at: %s\n", cs_writer_error(w));
		return 1;
	}
	cs_writer_free(w);
	for (int i = 0; i < nr_bins; i++)
		free(bins[i].path);
	return 0;
}
