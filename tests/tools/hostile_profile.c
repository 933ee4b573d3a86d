/* hostile_profile.c - a small, well-formed profile whose contents are
 * hostile: DSO paths that name anything, JIT addresses at or above
 * PERF_CONTEXT_MAX in a deferred user stack, a command name with markup,
 * control characters and bytes that are not UTF-8.
 *
 * One process (--pid, default 4242) maps each --dso PATH at its own address and
 * takes one sample in each (an ordinary [USER, ip] chain). Then a
 * deferred sample whose user stack (one CALLCHAIN_DEFERRED record) holds
 * 0x401000, 0xfffffffffffff100, 0xffffffffffffffff. Each --ksymbol NAME
 * registers a kernel symbol (a BPF program) of that name at KSYM_ADDR,
 * takes a kernel sample in it and unregisters it, so that the next takes
 * its place. Every sample's ip is printed, one per line, with the path
 * or name it falls in, so a test can find it in the output.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/perf_abi.h"
#include "lib/util/errbuf.h"
#include "lib/write/encode.h"
#include "lib/write/writer.h"

#define MAX_DSOS 32
#define MAP_BASE 0x10000000ULL		/* DSO i at MAP_BASE + i * MAP_STEP */
#define MAP_STEP 0x01000000ULL
#define KSYM_ADDR 0xffffffffc0001000ULL	/* every --ksymbol's, in turn */

static const char usage[] =
"usage: hostile_profile -o FILE [--pid PID] [--comm NAME] [--dso PATH]...\n"
"                       [--ksymbol NAME]...\n";

static struct cs_writer *w;
static uint8_t rec[65536];

static void put(long n)
{
	if (n < 0 || cs_writer_write(w, rec, (size_t)n)) {
		fprintf(stderr, "hostile_profile: %s\n",
			n < 0 ? "cannot encode a record" : cs_writer_error(w));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "comm", required_argument, NULL, 'c' },
		{ "dso", required_argument, NULL, 'd' },
		{ "pid", required_argument, NULL, 'p' },
		{ "ksymbol", required_argument, NULL, 'k' },
		{ 0 }
	};
	const char *out = NULL, *comm = "hostile", *dsos[MAX_DSOS];
	const char *ksyms[MAX_DSOS];
	struct cs_perf_attr a = {
		.type = CS_PERF_TYPE_SOFTWARE,
		.size = CS_PERF_ATTR_SIZE_VER7,
		.config = CS_PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 250000,
		.sample_type = CS_SAMPLE_IP | CS_SAMPLE_TID | CS_SAMPLE_TIME |
			       CS_SAMPLE_CALLCHAIN | CS_SAMPLE_PERIOD,
		.flags = CS_ATTR_SAMPLE_ID_ALL | CS_ATTR_MMAP | CS_ATTR_COMM |
			 CS_ATTR_MMAP2 | CS_ATTR_TASK | CS_ATTR_DEFER_CALLCHAIN |
			 CS_ATTR_DEFER_OUTPUT,
	};
	static const uint64_t jit[] = { 0x401000, 0xfffffffffffff100ULL,
					0xffffffffffffffffULL };
	struct cs_writer_opts wo = { 0 };
	struct cs_sample_id id = { 0 };
	struct cs_errbuf eb = { { 0 } };
	uint64_t ids[] = { 1 }, time = 1000000, chain[4];
	uint32_t pid = 4242;
	int nr = 0, nr_ksyms = 0, opt;

	while ((opt = getopt_long(argc, argv, "o:", lo, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'c': comm = optarg; break;
		case 'p': pid = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'd':
			if (nr == MAX_DSOS) {
				fprintf(stderr, "hostile_profile: at most %d DSOs\n",
					MAX_DSOS);
				return 2;
			}
			dsos[nr++] = optarg;
			break;
		case 'k':
			if (nr_ksyms == MAX_DSOS) {
				fprintf(stderr, "hostile_profile: at most %d kernel symbols\n",
					MAX_DSOS);
				return 2;
			}
			ksyms[nr_ksyms++] = optarg;
			break;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (!out || optind < argc) {
		fputs(usage, stderr);
		return 2;
	}
	if (cs_writer_open(out, -1, &wo, &eb, &w) ||
	    cs_writer_add_event(w, &a, "cpu-clock", ids, 1) ||
	    cs_writer_set_string(w, CS_FEAT_HOSTNAME, "hostile") ||
	    cs_writer_begin(w)) {
		fprintf(stderr, "hostile_profile: %s\n", eb.msg[0] ? eb.msg :
			cs_writer_error(w));
		return 1;
	}
	id.pid = id.tid = pid;
	id.time = time++;
	put(cs_encode_comm(&a, &(struct cs_comm){ pid, pid, comm }, true, &id,
			   rec, sizeof(rec)));
	for (int i = 0; i < nr; i++) {
		struct cs_mmap m = {
			.pid = pid, .tid = pid, .start = MAP_BASE + i * MAP_STEP,
			.len = MAP_STEP, .prot = 5, .flags = 2, .ino = 100 + i,
			.filename = dsos[i],
		};
		struct cs_sample s = {
			.ip = m.start + 0x1234, .pid = pid, .tid = pid,
			.period = 250000, .misc = CS_MISC_USER,
		};

		id.time = time++;
		put(cs_encode_mmap2(&a, &m, CS_MISC_USER, &id, rec, sizeof(rec)));
		s.time = time++;
		chain[0] = CS_CONTEXT_USER;
		chain[1] = s.ip;
		put(cs_encode_sample(&a, &s, chain, 2, rec, sizeof(rec)));
		printf("%" PRIx64 " %s\n", s.ip, dsos[i]);
	}

	for (int i = 0; i < nr_ksyms; i++) {
		struct cs_ksymbol k = { .addr = KSYM_ADDR, .len = 0x100,
					.ksym_type = 1, .name = ksyms[i] };
		struct cs_sample s = {
			.ip = KSYM_ADDR + 0x10, .pid = pid, .tid = pid,
			.period = 250000, .misc = CS_MISC_KERNEL,
		};

		id.time = time++;
		put(cs_encode_ksymbol(&a, &k, &id, rec, sizeof(rec)));
		s.time = time++;
		chain[0] = CS_CONTEXT_KERNEL;
		chain[1] = s.ip;
		put(cs_encode_sample(&a, &s, chain, 2, rec, sizeof(rec)));
		printf("%" PRIx64 " %s\n", s.ip, ksyms[i]);
		k.flags = 1;			/* unregistered */
		id.time = time++;
		put(cs_encode_ksymbol(&a, &k, &id, rec, sizeof(rec)));
	}

	/* the JIT stack: a kernel sample waiting for its deferred record */
	struct cs_sample s = {
		.ip = 0xffffffff81000010ULL, .pid = pid, .tid = pid,
		.time = time++, .period = 250000, .misc = CS_MISC_KERNEL,
	};
	chain[0] = CS_CONTEXT_KERNEL;
	chain[1] = s.ip;
	chain[2] = CS_CONTEXT_USER_DEFERRED;
	chain[3] = 0xb00000006ULL;
	put(cs_encode_sample(&a, &s, chain, 4, rec, sizeof(rec)));
	id.time = time++;
	put(cs_encode_deferred(&a, &(struct cs_deferred){ 0xb00000006ULL, 3, jit },
			       &id, rec, sizeof(rec)));
	for (int i = 0; i < 3; i++)
		printf("%" PRIx64 " jit\n", jit[i]);
	if (cs_writer_finish(w)) {
		fprintf(stderr, "hostile_profile: %s\n", cs_writer_error(w));
		return 1;
	}
	cs_writer_free(w);
	return 0;
}
