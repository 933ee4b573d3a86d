/* reformat.c - rewrites a profile in another form of perf.data: big-endian,
 * pipe mode, zstd-compressed, or any mix. Used by the reader's tests: the
 * same records in every form must read back the same.
 *
 *   reformat [--big-endian] [--pipe] [--zstd LEVEL] IN OUT
 *
 * Kernel records, FINISHED_ROUND and FINISHED_INIT are copied; events,
 * names, host metadata and build ids are carried over through the writer;
 * other synthesized records (ID_INDEX, THREAD_MAP, TIME_CONV, ...) carry
 * nothing a reader of samples needs and are dropped.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <callstitch/callstitch.h>
#include "abi/perf_abi.h"
#include "lib/read/reader.h"
#include "lib/read/evlist.h"
#include "lib/write/writer.h"
#include "lib/util/errbuf.h"

static int copy_build_id(void *ctx, int32_t pid, uint16_t misc,
			 const uint8_t *id, size_t size, const char *path)
{
	return cs_writer_add_build_id(ctx, pid, misc, id, size, path);
}

static int copy_info(struct cs_writer *w, const struct cs_file_info *in)
{
	static const struct { int feat; size_t off; } s[] = {
		{ CS_FEAT_HOSTNAME, offsetof(struct cs_file_info, hostname) },
		{ CS_FEAT_OSRELEASE, offsetof(struct cs_file_info, os_release) },
		{ CS_FEAT_VERSION, offsetof(struct cs_file_info, perf_version) },
		{ CS_FEAT_ARCH, offsetof(struct cs_file_info, arch) },
		{ CS_FEAT_CPUDESC, offsetof(struct cs_file_info, cpudesc) },
	};
	int err = 0;

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]) && !err; i++) {
		const char *v = *(const char *const *)((const char *)in + s[i].off);

		if (v)
			err = cs_writer_set_string(w, s[i].feat, v);
	}
	if (!err && (in->nr_cpus_online || in->nr_cpus_avail))
		err = cs_writer_set_nr_cpus(w, in->nr_cpus_online, in->nr_cpus_avail);
	if (!err && in->cmdline) {
		char *copy = strdup(in->cmdline), *save = NULL;
		const char *argv[256];
		int argc = 0;

		if (!copy)
			return -ENOMEM;
		for (char *t = strtok_r(copy, " ", &save); t && argc < 256;
		     t = strtok_r(NULL, " ", &save))
			argv[argc++] = t;
		err = cs_writer_set_cmdline(w, argc, argv);
		free(copy);
	}
	return err;
}

static int kept(uint32_t type)
{
	return type < CS_RECORD_HEADER_ATTR || type == CS_RECORD_FINISHED_ROUND ||
	       type == CS_RECORD_FINISHED_INIT;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "big-endian", no_argument, NULL, 'b' },
		{ "pipe", no_argument, NULL, 'p' },
		{ "zstd", required_argument, NULL, 'z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct cs_writer_opts o = { 0 };
	struct cs_errbuf eb = { { 0 } };
	struct cs_reader *r = NULL;
	struct cs_writer *w = NULL;
	const struct cs_evlist *l;
	struct cs_record rec;
	bool begun = false;
	int c, err;

	while ((c = getopt_long(argc, argv, "bpz:h", lo, NULL)) != -1) {
		switch (c) {
		case 'b': o.big_endian = true; break;
		case 'p': o.pipe = true; break;
		case 'z': o.zstd_level = atoi(optarg); break;
		case 'h':
			puts("usage: reformat [--big-endian] [--pipe] [--zstd LEVEL] IN OUT");
			return 0;
		default:
			return 2;
		}
	}
	if (argc - optind != 2) {
		fputs("usage: reformat [--big-endian] [--pipe] [--zstd LEVEL] IN OUT\n", stderr);
		return 2;
	}
	err = cs_reader_open(argv[optind], -1, &eb, &r);
	if (!err)
		err = cs_writer_open(argv[optind + 1], -1, &o, &eb, &w);
	if (err)
		goto out;
	/* in pipe mode the events arrive as records: read until the first
	 * record that is not a header record before describing them */
	while ((err = cs_reader_next(r, &rec)) > 0) {
		err = 0;
		if (!begun && kept(rec.type)) {
			l = cs_reader_evlist(r);
			for (size_t i = 0; i < cs_evlist_count(l) && !err; i++) {
				const struct cs_evsel *e = cs_evlist_get(l, i);

				err = cs_writer_add_event(w, cs_evsel_attr(e), e->name, e->ids,
							  e->nr_ids);
			}
			if (!err)
				err = copy_info(w, cs_reader_info(r));
			if (!err)
				err = cs_reader_for_each_build_id(r, copy_build_id, w);
			if (!err)
				err = cs_writer_begin(w);
			if (err)
				break;
			begun = true;
		}
		if (kept(rec.type) && (err = cs_writer_write(w, rec.bytes, rec.size)))
			break;
	}
	if (!err && begun)
		err = cs_writer_finish(w);
out:
	if (err) {
		const char *m = eb.msg[0] ? eb.msg : w ? cs_writer_error(w) : "";

		fprintf(stderr, "reformat: %s\n", m && *m ? m : strerror(-err));
	}
	cs_writer_free(w);
	cs_reader_free(r);
	return err ? 1 : 0;
}
