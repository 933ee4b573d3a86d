/* test_write.c - the perf.data writer: file and pipe layout, byte order,
 * compression and errors, checked on the bytes it writes. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <cmocka.h>

#include "lib/read/bytes.h"
#include "lib/util/errbuf.h"
#include "lib/write/encode.h"
#include "lib/write/writer.h"


struct out {
	char path[64];
	uint8_t *data;		/* the file as written */
	size_t size;
	uint8_t *recs;		/* the records handed to the writer, in order */
	size_t recs_len, recs_cap;
	size_t nr_recs;
};

static struct cs_perf_attr attr_for_test(void)
{
	struct cs_perf_attr a = {
		.type = CS_PERF_TYPE_SOFTWARE,
		.size = CS_PERF_ATTR_SIZE_VER9,
		.config = CS_PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 250000,
		.sample_type = CS_SAMPLE_IDENTIFIER | CS_SAMPLE_IP | CS_SAMPLE_TID |
			       CS_SAMPLE_TIME | CS_SAMPLE_CPU | CS_SAMPLE_PERIOD |
			       CS_SAMPLE_CALLCHAIN,
		.flags = CS_ATTR_SAMPLE_ID_ALL | CS_ATTR_DISABLED | CS_ATTR_COMM |
			 CS_ATTR_MMAP2 | CS_ATTR_DEFER_CALLCHAIN,
		.config3 = 0x1234,	/* past 128 bytes: must not be written */
	};
	return a;
}

static void slurp(struct out *o)
{
	FILE *f = fopen(o->path, "rb");

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	o->size = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	free(o->data);
	o->data = malloc(o->size + 1);
	assert_non_null(o->data);
	assert_int_equal(fread(o->data, 1, o->size, f), o->size);
	fclose(f);
}

static void keep(struct out *o, const void *rec, size_t n)
{
	if (o->recs_len + n > o->recs_cap) {
		o->recs_cap = 2 * (o->recs_len + n);
		o->recs = realloc(o->recs, o->recs_cap);
		assert_non_null(o->recs);
	}
	memcpy(o->recs + o->recs_len, rec, n);
	o->recs_len += n;
	o->nr_recs++;
}

/* Writes a small profile: comm, mmap2, nr samples with a deferred chain,
 * a deferred record, a round mark every 100 samples. */
static void write_profile(struct out *o, const struct cs_writer_opts *opts,
			  int nr, bool finish)
{
	struct cs_perf_attr a = attr_for_test();
	uint64_t ids[2] = { 7, 8 };
	static const char *const argv[] = { "gen_synth", "-o", "x.data" };
	static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef };
	struct cs_errbuf eb = { { 0 } };
	struct cs_writer *w;
	uint8_t buf[4096];
	long n;

	snprintf(o->path, sizeof(o->path), "/tmp/cs-test-write.XXXXXX");
	int fd = mkstemp(o->path);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(cs_writer_open(o->path, -1, opts, &eb, &w), 0);
	assert_int_equal(cs_writer_add_event(w, &a, "cpu-clock", ids, 2), 0);
	assert_int_equal(cs_writer_set_string(w, CS_FEAT_HOSTNAME, "synth-host"), 0);
	assert_int_equal(cs_writer_set_string(w, CS_FEAT_OSRELEASE, "6.19.0-synth"), 0);
	assert_int_equal(cs_writer_set_string(w, CS_FEAT_VERSION, "callstitch-test"), 0);
	assert_int_equal(cs_writer_set_string(w, CS_FEAT_ARCH, "x86_64"), 0);
	assert_int_equal(cs_writer_set_nr_cpus(w, 3, 4), 0);
	assert_int_equal(cs_writer_set_cmdline(w, 3, argv), 0);
	assert_int_equal(cs_writer_add_build_id(w, -1, CS_MISC_USER, bid, 20,
						"/usr/bin/synth"), 0);
	assert_int_equal(cs_writer_begin(w), 0);

	struct cs_sample_id id = { .pid = 100, .tid = 101, .time = 1000, .id = 7 };
	struct cs_comm c = { .pid = 100, .tid = 101, .comm = "synth" };

	n = cs_encode_comm(&a, &c, false, &id, buf, sizeof(buf));
	assert_int_equal(cs_writer_write(w, buf, (size_t)n), 0);
	keep(o, buf, (size_t)n);

	struct cs_mmap m = { .pid = 100, .tid = 101, .start = 0x400000, .len = 0x1000,
			     .prot = 5, .flags = 2, .filename = "/usr/bin/synth" };

	n = cs_encode_mmap2(&a, &m, CS_MISC_USER, &id, buf, sizeof(buf));
	assert_int_equal(cs_writer_write(w, buf, (size_t)n), 0);
	keep(o, buf, (size_t)n);
	for (int i = 0; i < nr; i++) {
		uint64_t chain[5] = { CS_CONTEXT_KERNEL, 0xffffffff81000000 + (uint64_t)i,
				      0xffffffff82000000, CS_CONTEXT_USER_DEFERRED,
				      0x5eed000000000000 + (uint64_t)i / 10 };
		struct cs_sample s = { .id = 7 + (uint64_t)(i & 1), .ip = chain[1],
				       .pid = 100, .tid = 101, .time = 2000 + (uint64_t)i,
				       .cpu = (uint32_t)(i & 1), .period = 250000,
				       .misc = CS_MISC_KERNEL };

		n = cs_encode_sample(&a, &s, chain, 5, buf, sizeof(buf));
		assert_true(n > 0);
		assert_int_equal(cs_writer_write(w, buf, (size_t)n), 0);
		keep(o, buf, (size_t)n);
		if (i % 10 == 9) {
			uint64_t user[3] = { 0x401000, 0x402000, (uint64_t)i };
			struct cs_deferred d = { .cookie = chain[4], .nr = 3, .ips = user };

			id.time = s.time;
			n = cs_encode_deferred(&a, &d, &id, buf, sizeof(buf));
			assert_int_equal(cs_writer_write(w, buf, (size_t)n), 0);
			keep(o, buf, (size_t)n);
		}
		if (i % 100 == 99)
			assert_int_equal(cs_writer_finished_round(w), 0);
	}
	if (finish)
		assert_int_equal(cs_writer_finish(w), 0);
	cs_writer_free(w);
	slurp(o);
}

static void out_free(struct out *o)
{
	unlink(o->path);
	free(o->data);
	free(o->recs);
}

/* The records of [p, end) without FINISHED_ROUND marks, appended to *acc. */
static size_t strip_rounds(const uint8_t *p, const uint8_t *end, uint8_t *acc)
{
	size_t n = 0;

	while (p < end) {
		uint16_t sz = cs_ld16(p + 6);

		assert_true(sz >= 8 && sz % 8 == 0 && sz <= end - p);
		if (cs_ld32(p) != CS_RECORD_FINISHED_ROUND) {
			memcpy(acc + n, p, sz);
			n += sz;
		}
		p += sz;
	}
	return n;
}

/* The payload of feature feat in a file-mode file, or NULL. */
static const uint8_t *feature(const struct out *o, int feat, uint64_t *size)
{
	const uint8_t *h = o->data;
	uint64_t table = cs_ld64(h + 40) + cs_ld64(h + 48);
	int k = 0;

	if (!(cs_ld64(h + 72 + 8 * (feat / 64)) & (1ULL << (feat % 64))))
		return NULL;
	for (int i = 0; i < feat; i++)
		if (cs_ld64(h + 72 + 8 * (i / 64)) & (1ULL << (i % 64)))
			k++;
	const uint8_t *sec = o->data + table + 16 * (size_t)k;

	*size = cs_ld64(sec + 8);
	assert_true(cs_ld64(sec) + *size <= o->size);
	return o->data + cs_ld64(sec);
}

static void file_mode_is_what_perf_reads(void **state)
{
	struct cs_writer_opts opts = { 0 };
	struct out o = { 0 };
	const uint8_t *h, *p;
	uint64_t sz;

	(void)state;
	write_profile(&o, &opts, 250, true);
	h = o.data;
	assert_int_equal(cs_ld64(h), CS_PERF_MAGIC2);
	assert_int_equal(cs_ld64(h + 8), 104);
	assert_int_equal(cs_ld64(h + 16), 128 + 16);	/* attr + its id section */
	assert_int_equal(cs_ld64(h + 32), 144);		/* one event */
	/* the attr: 128 bytes, perf 6.1's size, nothing of the longer struct */
	p = o.data + cs_ld64(h + 24);
	assert_int_equal(cs_ld32(p + 4), 128);
	assert_int_equal(cs_ld64(p + 24), attr_for_test().sample_type);
	assert_int_equal(cs_ld64(p + 40), attr_for_test().flags);
	assert_int_equal(cs_ld64(p + 128 + 8), 16);	/* two ids */
	assert_int_equal(cs_ld64(o.data + cs_ld64(p + 128)), 7);
	assert_int_equal(cs_ld64(o.data + cs_ld64(p + 128) + 8), 8);
	assert_true(cs_ld64(h + 24) + 144 <= cs_ld64(h + 40));
	/* data: the records as given, round marks between them */
	uint8_t *acc = malloc(o.recs_len);

	assert_non_null(acc);
	assert_true(cs_ld64(h + 40) + cs_ld64(h + 48) <= o.size);
	assert_int_equal(strip_rounds(o.data + cs_ld64(h + 40),
				      o.data + cs_ld64(h + 40) + cs_ld64(h + 48), acc),
			 o.recs_len);
	assert_memory_equal(acc, o.recs, o.recs_len);
	free(acc);
	/* features */
	p = feature(&o, CS_FEAT_HOSTNAME, &sz);
	assert_non_null(p);
	assert_int_equal(cs_ld32(p), 64);		/* perf pads strings to 64 */
	assert_string_equal((const char *)p + 4, "synth-host");
	assert_int_equal(sz, 68);
	p = feature(&o, CS_FEAT_NRCPUS, &sz);
	assert_non_null(p);
	assert_int_equal(cs_ld32(p), 4);			/* available first */
	assert_int_equal(cs_ld32(p + 4), 3);		/* then online */
	p = feature(&o, CS_FEAT_CMDLINE, &sz);
	assert_non_null(p);
	assert_int_equal(cs_ld32(p), 3);
	assert_string_equal((const char *)p + 8, "gen_synth");
	p = feature(&o, CS_FEAT_EVENT_DESC, &sz);
	assert_non_null(p);
	assert_int_equal(cs_ld32(p), 1);
	assert_int_equal(cs_ld32(p + 4), 128);
	assert_int_equal(cs_ld32(p + 8 + 128), 2);
	assert_string_equal((const char *)p + 8 + 128 + 8, "cpu-clock");
	assert_int_equal(cs_ld64(p + 8 + 128 + 8 + 64), 7);
	p = feature(&o, CS_FEAT_BUILD_ID, &sz);
	assert_non_null(p);
	assert_int_equal(cs_ld16(p + 4), CS_MISC_USER | CS_MISC_BUILD_ID_SIZE);
	assert_int_equal(cs_ld16(p + 6), sz);
	assert_int_equal(p[12], 0xde);
	assert_int_equal(p[12 + 20], 20);		/* the size byte */
	assert_string_equal((const char *)p + 36, "/usr/bin/synth");
	assert_non_null(feature(&o, CS_FEAT_OSRELEASE, &sz));
	assert_non_null(feature(&o, CS_FEAT_VERSION, &sz));
	assert_non_null(feature(&o, CS_FEAT_ARCH, &sz));
	assert_null(feature(&o, CS_FEAT_COMPRESSED, &sz));
	out_free(&o);
}

/* A writer killed after its buffer went to disk leaves a header saying
 * "data size 0": readers take the data to run to the end of the file. */
static void unfinished_file_says_data_size_zero(void **state)
{
	struct cs_writer_opts opts = { 0 };
	struct out o = { 0 };
	const uint8_t *h;

	(void)state;
	write_profile(&o, &opts, 60000, false);	/* > the 4 MiB buffer */
	h = o.data;
	assert_int_equal(cs_ld64(h), CS_PERF_MAGIC2);
	assert_int_equal(cs_ld64(h + 48), 0);
	assert_int_equal(cs_ld64(h + 72), 0);		/* no features yet */
	assert_true(o.size > cs_ld64(h + 40) + (1u << 20));
	/* what reached the disk is whole records, the first ones written */
	assert_true(o.size - cs_ld64(h + 40) <= o.recs_len + o.recs_len / 10);
	assert_memory_equal(o.data + cs_ld64(h + 40), o.recs, 4096);
	out_free(&o);
}

static void pipe_mode_sends_attrs_then_features_then_data(void **state)
{
	struct cs_writer_opts opts = { .pipe = true };
	struct out o = { 0 };
	const uint8_t *p, *end;
	uint64_t last_feat = 0;
	int feats = 0;

	(void)state;
	write_profile(&o, &opts, 150, true);
	assert_int_equal(cs_ld64(o.data), CS_PERF_MAGIC2);
	assert_int_equal(cs_ld64(o.data + 8), 16);
	p = o.data + 16;
	end = o.data + o.size;
	assert_int_equal(cs_ld32(p), CS_RECORD_HEADER_ATTR);
	assert_int_equal(cs_ld16(p + 6), 8 + 128 + 16);
	assert_int_equal(cs_ld32(p + 8 + 4), 128);
	assert_int_equal(cs_ld64(p + 8 + 128), 7);
	assert_int_equal(cs_ld64(p + 8 + 136), 8);
	p += cs_ld16(p + 6);
	assert_int_equal(cs_ld32(p), CS_RECORD_HEADER_BUILD_ID);
	assert_string_equal((const char *)p + 36, "/usr/bin/synth");
	p += cs_ld16(p + 6);
	while (cs_ld32(p) == CS_RECORD_HEADER_FEATURE) {
		uint64_t f = cs_ld64(p + 8);

		assert_int_equal(cs_ld16(p + 6) % 8, 0);
		assert_true(f > last_feat);
		if (f == CS_FEAT_HOSTNAME)
			assert_string_equal((const char *)p + 20, "synth-host");
		last_feat = f;
		feats++;
		p += cs_ld16(p + 6);
	}
	assert_true(feats >= 7);
	uint8_t *acc = malloc(o.recs_len);

	assert_non_null(acc);
	assert_int_equal(strip_rounds(p, end, acc), o.recs_len);
	assert_memory_equal(acc, o.recs, o.recs_len);
	free(acc);
	out_free(&o);
}

static uint8_t revbits(uint8_t b)
{
	uint8_t r = 0;

	for (int i = 0; i < 8; i++)
		if (b & (1u << i))
			r |= (uint8_t)(0x80u >> i);
	return r;
}

/* The big-endian file is the little-endian one with each field swapped at
 * its own width: u32 pairs in place, strings untouched, attr flags as a
 * big-endian compiler lays out bitfields. */
static void big_endian_swaps_every_field_at_its_width(void **state)
{
	struct cs_writer_opts le = { 0 }, be = { .big_endian = true };
	struct out l = { 0 }, b = { 0 };
	const uint8_t *lh, *bh, *la, *ba, *lp, *bp, *lend;

	(void)state;
	write_profile(&l, &le, 120, true);
	write_profile(&b, &be, 120, true);
	assert_int_equal(l.size, b.size);
	lh = l.data;
	bh = b.data;
	for (int i = 0; i < 13; i++)
		assert_int_equal(cs_ld64(bh + 8 * i), __builtin_bswap64(cs_ld64(lh + 8 * i)));
	la = l.data + cs_ld64(lh + 24);
	ba = b.data + cs_ld64(lh + 24);
	assert_int_equal(cs_ld32(ba), __builtin_bswap32(cs_ld32(la)));
	assert_int_equal(cs_ld32(ba + 4), __builtin_bswap32(128));
	assert_int_equal(cs_ld64(ba + 24), __builtin_bswap64(cs_ld64(la + 24)));
	for (int i = 0; i < 8; i++)
		assert_int_equal(ba[40 + i], revbits(la[40 + i]));
	/* records, field by field */
	lp = l.data + cs_ld64(lh + 40);
	bp = b.data + cs_ld64(lh + 40);
	lend = lp + cs_ld64(lh + 48);
	int samples = 0, comms = 0, deferred = 0;

	while (lp < lend) {
		uint32_t type = cs_ld32(lp);
		uint16_t size = cs_ld16(lp + 6);

		assert_int_equal(cs_ld32(bp), __builtin_bswap32(type));
		assert_int_equal(cs_ld16(bp + 6), __builtin_bswap16(size));
		if (type == CS_RECORD_SAMPLE) {
			/* identifier, ip, pid/tid, time, cpu/res, period, nr, ips */
			assert_int_equal(cs_ld64(bp + 8), __builtin_bswap64(cs_ld64(lp + 8)));
			assert_int_equal(cs_ld32(bp + 24), __builtin_bswap32(cs_ld32(lp + 24)));
			assert_int_equal(cs_ld32(bp + 28), __builtin_bswap32(cs_ld32(lp + 28)));
			for (size_t k = 32; k < size; k += 8)
				if (k != 40)
					assert_int_equal(cs_ld64(bp + k),
							 __builtin_bswap64(cs_ld64(lp + k)));
			assert_int_equal(cs_ld32(bp + 40), __builtin_bswap32(cs_ld32(lp + 40)));
			samples++;
		} else if (type == CS_RECORD_COMM) {
			assert_int_equal(cs_ld32(bp + 8), __builtin_bswap32(cs_ld32(lp + 8)));
			assert_memory_equal(bp + 16, lp + 16, 8);	/* "synth" */
			comms++;
		} else if (type == CS_RECORD_CALLCHAIN_DEFERRED) {
			assert_int_equal(cs_ld64(bp + 8), __builtin_bswap64(cs_ld64(lp + 8)));
			assert_int_equal(cs_ld64(bp + 16), __builtin_bswap64(3));
			assert_int_equal(cs_ld64(bp + 24), __builtin_bswap64(cs_ld64(lp + 24)));
			deferred++;
		}
		lp += size;
		bp += size;
	}
	assert_int_equal(samples, 120);
	assert_int_equal(comms, 1);
	assert_int_equal(deferred, 12);
	out_free(&l);
	out_free(&b);
}

/* -z: COMPRESSED records (8-aligned) whose payloads, read as one zstd
 * stream, give back every record; records may straddle two payloads. */
static void compressed_payloads_are_one_stream_of_the_records(void **state)
{
	struct cs_writer_opts opts = { .zstd_level = 3 };
	struct out o = { 0 };
	const uint8_t *h, *p, *end, *feat;
	uint8_t *acc, *plain;
	size_t acc_len = 0, got;
	uint64_t fsz;
	int compressed = 0;
	ZSTD_DStream *z = ZSTD_createDStream();

	(void)state;
	assert_non_null(z);
	ZSTD_initDStream(z);
	write_profile(&o, &opts, 5000, true);
	h = o.data;
	p = o.data + cs_ld64(h + 40);
	end = p + cs_ld64(h + 48);
	acc = malloc(o.recs_len + 65536);
	plain = malloc(o.recs_len + 65536);
	assert_non_null(acc);
	assert_non_null(plain);
	while (p < end) {
		uint16_t sz = cs_ld16(p + 6);

		assert_int_equal(sz % 8, 0);
		if (cs_ld32(p) == CS_RECORD_COMPRESSED) {
			ZSTD_inBuffer in = { p + 8, sz - 8u, 0 };
			ZSTD_outBuffer out = { acc + acc_len, o.recs_len + 65536 - acc_len, 0 };

			while (in.pos < in.size)
				assert_false(ZSTD_isError(ZSTD_decompressStream(z, &out, &in)));
			/* the COMPRESSED feature bounds one payload's output */
			assert_true(out.pos <= 2 * 61440);
			acc_len += out.pos;
			compressed++;
		} else {
			assert_int_equal(cs_ld32(p), CS_RECORD_FINISHED_ROUND);
		}
		p += sz;
	}
	assert_true(compressed > 5);
	got = strip_rounds(acc, acc + acc_len, plain);
	assert_int_equal(got, o.recs_len);
	assert_memory_equal(plain, o.recs, o.recs_len);
	assert_true(cs_ld64(h + 48) < o.recs_len / 2);
	feat = feature(&o, CS_FEAT_COMPRESSED, &fsz);
	assert_non_null(feat);
	assert_int_equal(fsz, 20);
	assert_int_equal(cs_ld32(feat + 4), 1);		/* zstd */
	assert_int_equal(cs_ld32(feat + 8), 3);		/* level */
	assert_true(cs_ld32(feat + 12) >= 2);		/* ratio */
	ZSTD_freeDStream(z);
	free(acc);
	free(plain);
	out_free(&o);
}

static void errors_name_the_file(void **state)
{
	struct cs_perf_attr a = attr_for_test();
	struct cs_writer_opts opts = { 0 }, be = { .big_endian = true };
	struct cs_errbuf eb = { { 0 } };
	struct cs_writer *w;
	uint8_t rec[16] = { 0 };
	int fds[2];

	(void)state;
	assert_int_equal(cs_writer_open("/nonexistent-dir/x.data", -1, &opts, &eb, &w),
			 -ENOENT);
	assert_null(w);
	assert_non_null(strstr(eb.msg, "/nonexistent-dir/x.data"));

	/* file mode must rewrite its header: a pipe cannot be file mode */
	assert_int_equal(pipe(fds), 0);
	cs_error_clear(&eb);
	assert_int_equal(cs_writer_open("pipe-out", fds[1], &opts, &eb, &w), -ESPIPE);
	assert_non_null(strstr(eb.msg, "pipe-out"));
	close(fds[0]);
	close(fds[1]);

	assert_int_equal(cs_writer_open("/dev/null", -1, &be, &eb, &w), 0);
	assert_int_equal(cs_writer_add_event(w, &a, NULL, NULL, 0), 0);
	/* before the data section */
	assert_int_equal(cs_writer_write(w, rec, sizeof(rec)), -EINVAL);
	assert_non_null(strstr(cs_writer_error(w), "/dev/null"));
	cs_writer_free(w);

	assert_int_equal(cs_writer_open("/dev/null", -1, &be, &eb, &w), 0);
	assert_int_equal(cs_writer_add_event(w, &a, NULL, NULL, 0), 0);
	assert_int_equal(cs_writer_begin(w), 0);
	/* a header that disagrees with the length */
	rec[0] = CS_RECORD_LOST;
	rec[6] = 24;
	assert_int_equal(cs_writer_write(w, rec, sizeof(rec)), -EINVAL);
	cs_writer_free(w);

	assert_int_equal(cs_writer_open("/dev/null", -1, &be, &eb, &w), 0);
	assert_int_equal(cs_writer_add_event(w, &a, NULL, NULL, 0), 0);
	assert_int_equal(cs_writer_begin(w), 0);
	/* a record we cannot swap field by field is refused, not garbled */
	rec[0] = CS_RECORD_AUXTRACE_INFO;
	rec[6] = 16;
	assert_int_equal(cs_writer_write(w, rec, sizeof(rec)), -EOPNOTSUPP);
	assert_non_null(strstr(cs_writer_error(w), "big-endian"));
	/* and the writer stays failed */
	assert_int_equal(cs_writer_finish(w), -EOPNOTSUPP);
	cs_writer_free(w);

	/* a full disk is told when the buffer goes out, naming the file */
	if (access("/dev/full", W_OK) == 0) {
		uint8_t big[4096] = { 0 };
		int err = 0;

		assert_int_equal(cs_writer_open("/dev/full", -1, &opts, &eb, &w), 0);
		assert_int_equal(cs_writer_add_event(w, &a, NULL, NULL, 0), 0);
		assert_int_equal(cs_writer_begin(w), 0);
		big[0] = CS_RECORD_FINISHED_INIT;
		memcpy(big + 6, &(uint16_t){ 4096 - 8 }, 2);
		for (int i = 0; i < 2048 && !err; i++)	/* 8 MiB > the buffer */
			err = cs_writer_write(w, big, 4096 - 8);
		if (!err)
			err = cs_writer_finish(w);
		assert_int_equal(err, -ENOSPC);
		assert_non_null(strstr(cs_writer_error(w), "/dev/full"));
		assert_non_null(strstr(cs_writer_error(w), "No space left"));
		cs_writer_free(w);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(file_mode_is_what_perf_reads),
		cmocka_unit_test(unfinished_file_says_data_size_zero),
		cmocka_unit_test(pipe_mode_sends_attrs_then_features_then_data),
		cmocka_unit_test(big_endian_swaps_every_field_at_its_width),
		cmocka_unit_test(compressed_payloads_are_one_stream_of_the_records),
		cmocka_unit_test(errors_name_the_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
