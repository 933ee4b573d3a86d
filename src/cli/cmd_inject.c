/* cmd_inject.c - `callstitch inject`: a perf.data that old tools read. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "abi/perf_abi.h"
#include "lib/read/reader.h"
#include "lib/util/errbuf.h"
#include "lib/util/replaceable.h"
#include "lib/write/writer.h"
#include "outputs/inject.h"

static const char usage_text[] =
	"usage: callstitch inject -o FILE [-i FILE] [--passthrough] [-z[N]] [-j N]\n"
	"\n"
	"Rewrites a profile with deferred user callchains into an ordinary\n"
	"perf.data: every sample gets its whole stack back (kernel part, then\n"
	"the user part from its deferred record), the deferred records are\n"
	"dropped and the deferral bits cleared, so tools that predate deferral\n"
	"(perf 6.1 report/script, ...) show full stacks. Side band, build ids\n"
	"and header metadata are kept. A sample whose user stack never came\n"
	"keeps its kernel part; the summary counts them.\n"
	"\n"
	"  -o, --output FILE     where to write (- for stdout: pipe mode unless a file)\n"
	"      --passthrough     copy every record unchanged, in file order (no\n"
	"                        stitching); only the container is rewritten\n"
	"                        (attrs of at most 128 bytes, no compression)\n"
	"  -z, --compress[=N]    zstd-compress the records (level N, default 1),\n"
	"                        as perf record -z does and perf 6.1 reads\n"
	"  -j, --jobs N          threads: with 2 or more the records are read\n"
	"                        and put in time order on a thread of their own\n"
	"                        while the stitching and writing go on, and a\n"
	"                        compressed profile is decompressed on another;\n"
	"                        the same output (default: the CPUs available)\n"
	CLI_INPUT_HELP
	"  -h, --help            this text\n";

enum { OPT_PASSTHROUGH = 0x2000 };
#define ZSTD_LEVEL_MAX 22

static const struct option long_options[] = {
	{ "output",      required_argument, NULL, 'o' },
	{ "passthrough", no_argument,       NULL, OPT_PASSTHROUGH },
	{ "compress",    optional_argument, NULL, 'z' },
	{ "jobs",        required_argument, NULL, 'j' },
	{ "help",        no_argument,       NULL, 'h' },
	CLI_INPUT_OPTIONS,
	{ NULL, 0, NULL, 0 }
};

static int add_build_id(void *ctx, int32_t pid, uint16_t misc,
			const uint8_t *build_id, size_t size, const char *path)
{
	return cs_writer_add_build_id(ctx, pid, misc, build_id, size, path);
}

/*
 * Header metadata the session does not hand to outputs: the BUILD_ID
 * feature (which binaries the samples were taken in, so that old tools
 * pick the right ones) and CPUID. Read from the input's header with a
 * reader of its own; the file is mapped, so this costs a second header
 * parse, not a second read. A stream (-i -) cannot be opened twice, and
 * needs not be: its build ids come as records, which inject.c copies.
 */
static int copy_metadata(const char *path, struct cs_writer *w)
{
	struct cs_errbuf eb = { { 0 } };
	struct cs_reader *r = NULL;
	const void *data;
	size_t size;
	int err;

	if (!strcmp(path, "-"))
		return 0;
	err = cs_reader_open(path, -1, &eb, &r);
	if (err) {
		cli_error("%s", eb.msg[0] ? eb.msg : strerror(-err));
		return err;
	}
	err = cs_reader_for_each_build_id(r, add_build_id, w);
	if (!err && !cs_reader_feature(r, CS_FEAT_CPUID, &data, &size) && size > 4) {
		/* a perf header string: u32 length, then NUL-padded bytes */
		uint32_t len;

		memcpy(&len, data, sizeof(len));
		if (len <= size - 4 && memchr((const char *)data + 4, '\0', len))
			err = cs_writer_set_string(w, CS_FEAT_CPUID, (const char *)data + 4);
	}
	/* the rest of the header (topology, caches, memory, PMU mappings,
	 * clock data, ...) goes across as it is; what the writer builds itself
	 * (build ids, strings, events, compression) and what describes the
	 * input's own container (DIR_FORMAT, COMPRESSED) does not */
	for (int feat = 1; !err && feat < CS_FEAT_LAST; feat++) {
		switch (feat) {
		case CS_FEAT_BUILD_ID: case CS_FEAT_HOSTNAME: case CS_FEAT_OSRELEASE:
		case CS_FEAT_VERSION: case CS_FEAT_ARCH: case CS_FEAT_NRCPUS:
		case CS_FEAT_CPUDESC: case CS_FEAT_CPUID: case CS_FEAT_CMDLINE:
		case CS_FEAT_EVENT_DESC: case CS_FEAT_COMPRESSED:
		case CS_FEAT_DIR_FORMAT:
			continue;
		}
		if (!cs_reader_feature(r, feat, &data, &size) && size)
			err = cs_writer_set_feature_raw(w, feat, data, size);
	}
	if (err)
		cli_error("%s", cs_writer_error(w)[0] ? cs_writer_error(w) : strerror(-err));
	cs_reader_free(r);
	return err;
}

static void summary(const char *output, const struct cs_inject_stats *st,
		    bool passthrough)
{
	if (passthrough) {
		fprintf(stderr, "callstitch: inject: copied %" PRIu64 " samples and %"
			PRIu64 " other records to %s\n", st->samples, st->records,
			output);
		return;
	}
	fprintf(stderr, "callstitch: inject: wrote %" PRIu64 " samples to %s: %"
		PRIu64 " stitched, %" PRIu64 " stitched late, %" PRIu64
		" kernel-only (user stack never came; kernel part kept), %" PRIu64
		" as recorded; %" PRIu64 " other records; %" PRIu64
		" deferred records dropped", st->samples, output, st->stitched,
		st->stitched_late, st->kernel_only, st->original, st->records,
		st->deferred_dropped);
	if (st->newer_dropped)
		fprintf(stderr, "; %" PRIu64 " records of types perf 6.1 does not"
			" know dropped", st->newer_dropped);
	if (st->unwound)
		fprintf(stderr, "; %" PRIu64 " user stacks unwound from their "
			"stack copies, which were left out", st->unwound);
	if (st->truncated)
		fprintf(stderr, "; %" PRIu64 " user stacks cut to fit a record",
			st->truncated);
	if (st->retimed)
		fprintf(stderr, "; %" PRIu64 " comm/mmap records moved back to the "
			"samples that wait for them (exec)", st->retimed);
	fputc('\n', stderr);
}

int cmd_inject(int argc, char **argv)
{
	struct cli_input in = { .cmd = "inject" };
	struct cs_inject_opts iopts = { 0 };
	struct cs_writer_opts wopts = { 0 };
	struct cs_writer *w = NULL;
	struct cs_inject *inj = NULL;
	struct cs_session *s = NULL;
	struct cs_errbuf eb = { { 0 } };
	const char *output = NULL;
	struct cs_replace out = { .fd = -1 };
	struct stat sb;
	int opt, fd = -1, rc = 1, err;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "o:i:qhz::j:", long_options, NULL)) != -1) {
		switch (opt) {
		case 'o':
			output = optarg;
			break;
		case 'z': {
			char *end;
			long level = optarg ? strtol(optarg, &end, 10) : 1;

			if (optarg && (*end || end == optarg || level < 1 ||
				       level > ZSTD_LEVEL_MAX)) {
				cli_error("inject: --compress level '%s' is not 1..%d",
					  optarg, ZSTD_LEVEL_MAX);
				return 129;
			}
			wopts.zstd_level = (int)level;
			break;
		}
		case OPT_PASSTHROUGH:
			iopts.passthrough = true;
			break;
		default:
			if (cli_option(&in, opt, optarg, usage_text, &rc))
				break;
			return rc;
		}
	}
	if (!cli_no_operands("inject", argc, argv, usage_text))
		return 129;
	if (!output) {
		cli_error("inject: no output file: use -o FILE (or -o - for stdout)");
		return 129;
	}
	iopts.input = cli_input_path(&in);
	/* passthrough: records as they are, in the order they are */
	in.no_merge = in.file_order = iopts.passthrough;
	in.no_progress = true;
	s = cli_open(&in);
	if (!s)
		return 1;

	if (!strcmp(output, "-")) {
		fd = STDOUT_FILENO;
	} else {
		/* mode 0600, as perf record makes perf.data: a profile shows
		 * command lines, paths and addresses */
		err = cs_replace_open(&out, output, 0600);
		if (err) {
			cli_error("inject: cannot create %s: %s", output, strerror(-err));
			goto out;
		}
		fd = out.fd;
	}
	/* a file at offset 0 gets a file-mode header; anything else (a pipe,
	 * a terminal, stdout appending to a file) the stream format */
	wopts.pipe = fstat(fd, &sb) || !S_ISREG(sb.st_mode) ||
		     lseek(fd, 0, SEEK_CUR) != 0;
	err = cs_writer_open(output, fd, &wopts, &eb, &w);
	if (err < 0) {
		cli_error("%s", eb.msg[0] ? eb.msg : strerror(-err));
		goto out;
	}
	if (copy_metadata(iopts.input, w))
		goto out;
	if (cs_inject_new(w, &iopts, &inj)) {
		cli_error("inject: out of memory");
		goto out;
	}
	rc = cli_run(s, &in, &cs_inject_ops, inj);
	if (rc && cs_inject_error(inj)[0])
		cli_error("%s", cs_inject_error(inj));
	if (!rc && fd != STDOUT_FILENO) {
		cs_writer_free(w);
		w = NULL;
		err = cs_replace_commit(&out);
		if (err) {
			cli_error("inject: writing %s: %s", output, strerror(-err));
			rc = 1;
		}
	}
	if (!rc && !in.quiet)
		summary(output, cs_inject_stats(inj), iopts.passthrough);
out:
	cs_writer_free(w);
	cs_replace_abort(&out);
	cs_inject_free(inj);
	cs_session_free(s);
	return rc;
}
