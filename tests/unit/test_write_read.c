/* test_write_read.c - what the writer writes, the reader reads back: the
 * same records, events, ids and header metadata, in every form (file,
 * pipe, big-endian, zstd, all at once), and an unfinished file up to its
 * last record. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <callstitch/callstitch.h>
#include "lib/read/evlist.h"
#include "lib/read/reader.h"
#include "lib/util/errbuf.h"
#include "lib/write/encode.h"
#include "lib/write/writer.h"

struct recs {
	uint8_t *b;
	size_t len, cap, n;
};

static void recs_add(struct recs *r, const void *p, size_t n)
{
	if (r->len + n > r->cap) {
		r->cap = 2 * (r->len + n);
		r->b = realloc(r->b, r->cap);
		assert_non_null(r->b);
	}
	memcpy(r->b + r->len, p, n);
	r->len += n;
	r->n++;
}

static struct cs_perf_attr sampling_attr(void)
{
	struct cs_perf_attr a = {
		.type = CS_PERF_TYPE_SOFTWARE, .size = CS_PERF_ATTR_SIZE_VER7,
		.config = CS_PERF_COUNT_SW_CPU_CLOCK, .sample_period = 100000,
		.sample_type = CS_SAMPLE_IDENTIFIER | CS_SAMPLE_IP | CS_SAMPLE_TID |
			       CS_SAMPLE_TIME | CS_SAMPLE_CPU | CS_SAMPLE_PERIOD |
			       CS_SAMPLE_CALLCHAIN | CS_SAMPLE_RAW,
		.flags = CS_ATTR_SAMPLE_ID_ALL | CS_ATTR_DISABLED |
			 CS_ATTR_DEFER_CALLCHAIN,
	};
	return a;
}

static struct cs_perf_attr dummy_attr(void)
{
	struct cs_perf_attr a = sampling_attr();

	a.config = CS_PERF_COUNT_SW_DUMMY;
	a.flags |= CS_ATTR_MMAP | CS_ATTR_COMM | CS_ATTR_TASK | CS_ATTR_MMAP2 |
		   CS_ATTR_DEFER_OUTPUT;
	a.flags &= ~CS_ATTR_DEFER_CALLCHAIN;
	return a;
}

/* Writes a profile of every record kind gen_synth and the recorder use,
 * keeping the native records in *want. */
static void write_profile(const char *path, const struct cs_writer_opts *o,
			  int nr, bool finish, struct recs *want)
{
	struct cs_perf_attr sa = sampling_attr(), da = dummy_attr();
	uint64_t sids[2] = { 11, 12 }, dids[2] = { 21, 22 };
	static const char *const argv[] = { "callstitch", "record", "-g" };
	static const uint8_t bid[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
					 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
	struct cs_errbuf eb = { { 0 } };
	struct cs_writer *w;
	uint8_t buf[2048];
	long n;

	assert_int_equal(cs_writer_open(path, -1, o, &eb, &w), 0);
	assert_int_equal(cs_writer_add_event(w, &sa, "cpu-clock", sids, 2), 0);
	assert_int_equal(cs_writer_add_event(w, &da, "dummy:u", dids, 2), 0);
	assert_int_equal(cs_writer_set_string(w, CS_FEAT_HOSTNAME, "host-a"), 0);
	assert_int_equal(cs_writer_set_string(w, CS_FEAT_OSRELEASE, "6.19.1"), 0);
	assert_int_equal(cs_writer_set_string(w, CS_FEAT_VERSION, "callstitch 0"), 0);
	assert_int_equal(cs_writer_set_string(w, CS_FEAT_ARCH, "x86_64"), 0);
	assert_int_equal(cs_writer_set_nr_cpus(w, 2, 8), 0);
	assert_int_equal(cs_writer_set_cmdline(w, 3, argv), 0);
	assert_int_equal(cs_writer_add_build_id(w, 77, CS_MISC_USER, bid, 20,
						"/usr/lib/libx.so"), 0);
	assert_int_equal(cs_writer_begin(w), 0);

	struct cs_sample_id id = { .pid = 77, .tid = 78, .time = 10, .id = 21, .cpu = 1 };
	struct cs_comm c = { .pid = 77, .tid = 78, .comm = "worker" };
	struct cs_mmap m = { .pid = 77, .tid = 78, .start = 0x7f0000000000,
			     .len = 0x4000, .pgoff = 0x1000, .ino = 9, .prot = 5,
			     .flags = 2, .filename = "/usr/lib/libx.so" };
	struct cs_fork_exit f = { .pid = 77, .ppid = 1, .tid = 78, .ptid = 77,
				  .time = 9 };

	n = cs_encode_fork_exit(&da, CS_RECORD_FORK, &f, &id, buf, sizeof(buf));
	assert_int_equal(cs_writer_write(w, buf, (size_t)n), 0);
	recs_add(want, buf, (size_t)n);
	n = cs_encode_comm(&da, &c, true, &id, buf, sizeof(buf));
	assert_int_equal(cs_writer_write(w, buf, (size_t)n), 0);
	recs_add(want, buf, (size_t)n);
	n = cs_encode_mmap2(&da, &m, CS_MISC_USER, &id, buf, sizeof(buf));
	assert_int_equal(cs_writer_write(w, buf, (size_t)n), 0);
	recs_add(want, buf, (size_t)n);
	for (int i = 0; i < nr; i++) {
		uint64_t chain[6] = { CS_CONTEXT_KERNEL, 0xffffffff81000000 + (uint64_t)i,
				      0xffffffff81100000, 0xffffffff81200000,
				      CS_CONTEXT_USER_DEFERRED, 0xc00c1e0000 + (uint64_t)i / 7 };
		char raw[12];
		struct cs_sample s = {
			.id = 11 + (uint64_t)(i & 1), .ip = chain[1], .pid = 77,
			.tid = 78, .time = 100 + 2 * (uint64_t)i, .cpu = (uint32_t)(i & 1),
			.period = 100000, .raw = raw, .raw_size = sizeof(raw),
			.misc = CS_MISC_KERNEL,
		};

		memset(raw, 'a' + i % 26, sizeof(raw));
		n = cs_encode_sample(&sa, &s, chain, 6, buf, sizeof(buf));
		assert_true(n > 0);
		assert_int_equal(cs_writer_write(w, buf, (size_t)n), 0);
		recs_add(want, buf, (size_t)n);
		if (i % 7 == 6) {
			uint64_t user[4] = { 0x7f0000001000, 0x7f0000002000,
					     0x7f0000003000, (uint64_t)i };
			struct cs_deferred d = { .cookie = chain[5], .nr = 4, .ips = user };

			id.time = s.time + 1;
			id.id = 21 + (uint64_t)(i & 1);
			n = cs_encode_deferred(&da, &d, &id, buf, sizeof(buf));
			assert_int_equal(cs_writer_write(w, buf, (size_t)n), 0);
			recs_add(want, buf, (size_t)n);
		}
		if (i % 50 == 49) {
			struct cs_lost l = { .id = 21, .lost = 3 };

			n = cs_encode_lost(&da, &l, &id, buf, sizeof(buf));
			assert_int_equal(cs_writer_write(w, buf, (size_t)n), 0);
			recs_add(want, buf, (size_t)n);
			assert_int_equal(cs_writer_finished_round(w), 0);
		}
	}
	f.time = 100 + 2 * (uint64_t)nr;
	id.time = f.time;
	n = cs_encode_fork_exit(&da, CS_RECORD_EXIT, &f, &id, buf, sizeof(buf));
	assert_int_equal(cs_writer_write(w, buf, (size_t)n), 0);
	recs_add(want, buf, (size_t)n);
	if (finish)
		assert_int_equal(cs_writer_finish(w), 0);
	cs_writer_free(w);
}

struct found {
	int32_t pid;
	char path[64];
	uint8_t id[20];
	size_t size;
	int n;
};

static int on_build_id(void *ctx, int32_t pid, uint16_t misc,
		       const uint8_t *build_id, size_t size, const char *path)
{
	struct found *f = ctx;

	(void)misc;
	f->pid = pid;
	snprintf(f->path, sizeof(f->path), "%s", path);
	memcpy(f->id, build_id, size < 20 ? size : 20);
	f->size = size;
	f->n++;
	return 0;
}

static bool consumed_by_reader(uint32_t type)
{
	return type == CS_RECORD_HEADER_ATTR || type == CS_RECORD_HEADER_FEATURE ||
	       type == CS_RECORD_HEADER_BUILD_ID || type == CS_RECORD_COMPRESSED ||
	       type == CS_RECORD_COMPRESSED2 || type == CS_RECORD_FINISHED_ROUND;
}

static void round_trip(const struct cs_writer_opts *o)
{
	char path[] = "/tmp/cs-test-wr.XXXXXX";
	int fd = mkstemp(path);
	struct recs want = { 0 }, got = { 0 };
	struct cs_errbuf eb = { { 0 } };
	struct cs_reader *r;
	struct cs_record rec;
	const struct cs_evlist *l;
	const struct cs_file_info *info;
	struct found bf = { 0 };
	int ret;

	assert_true(fd >= 0);
	close(fd);
	write_profile(path, o, 3000, true, &want);
	ret = cs_reader_open(path, -1, &eb, &r);
	if (ret)
		fail_msg("%s", eb.msg);
	while ((ret = cs_reader_next(r, &rec)) == 1) {
		if (!consumed_by_reader(rec.type))
			recs_add(&got, rec.bytes, rec.size);
	}
	if (ret)
		fail_msg("%s", eb.msg);
	assert_int_equal(got.n, want.n);
	assert_int_equal(got.len, want.len);
	assert_memory_equal(got.b, want.b, want.len);

	l = cs_reader_evlist(r);
	assert_int_equal(cs_evlist_count(l), 2);
	const struct cs_evsel *s = cs_evlist_get(l, 0), *d = cs_evlist_get(l, 1);

	assert_string_equal(s->name, "cpu-clock");
	assert_string_equal(d->name, "dummy:u");
	assert_int_equal(s->nr_ids, 2);
	assert_int_equal(s->ids[1], 12);
	assert_int_equal(d->ids[0], 21);
	assert_int_equal(cs_evsel_attr(s)->sample_type, sampling_attr().sample_type);
	assert_int_equal(cs_evsel_attr(s)->flags, sampling_attr().flags);
	assert_int_equal(cs_evsel_attr(d)->flags, dummy_attr().flags);
	assert_int_equal(cs_evsel_attr(s)->size, 128);
	assert_ptr_equal(cs_evlist_find(l, 22), d);

	info = cs_reader_info(r);
	assert_string_equal(info->hostname, "host-a");
	assert_string_equal(info->os_release, "6.19.1");
	assert_string_equal(info->perf_version, "callstitch 0");
	assert_string_equal(info->arch, "x86_64");
	assert_string_equal(info->cmdline, "callstitch record -g");
	assert_int_equal(info->nr_cpus_online, 2);
	assert_int_equal(info->nr_cpus_avail, 8);
	assert_int_equal(info->pipe_mode, o->pipe);
	assert_int_equal(info->big_endian, o->big_endian);

	assert_int_equal(cs_reader_for_each_build_id(r, on_build_id, &bf), 0);
	assert_int_equal(bf.n, 1);
	assert_int_equal(bf.pid, 77);
	assert_int_equal(bf.size, 20);
	assert_int_equal(bf.id[19], 20);
	assert_string_equal(bf.path, "/usr/lib/libx.so");

	cs_reader_free(r);
	unlink(path);
	free(want.b);
	free(got.b);
}

static void file_reads_back(void **state)
{
	struct cs_writer_opts o = { 0 };

	(void)state;
	round_trip(&o);
}

static void pipe_reads_back(void **state)
{
	struct cs_writer_opts o = { .pipe = true };

	(void)state;
	round_trip(&o);
}

static void big_endian_file_reads_back(void **state)
{
	struct cs_writer_opts o = { .big_endian = true };

	(void)state;
	round_trip(&o);
}

static void compressed_file_reads_back(void **state)
{
	struct cs_writer_opts o = { .zstd_level = 3 };

	(void)state;
	round_trip(&o);
}

static void big_endian_compressed_pipe_reads_back(void **state)
{
	struct cs_writer_opts o = { .pipe = true, .big_endian = true, .zstd_level = 1 };

	(void)state;
	round_trip(&o);
}

/* A recorder killed before cs_writer_finish(): its header says data size
 * 0 and no features; the reader takes every record that reached the disk. */
static void unfinished_file_reads_to_its_last_record(void **state)
{
	char path[] = "/tmp/cs-test-wr.XXXXXX";
	int fd = mkstemp(path);
	struct cs_writer_opts o = { 0 };
	struct recs want = { 0 }, got = { 0 };
	struct cs_errbuf eb = { { 0 } };
	struct cs_reader *r;
	struct cs_record rec;
	int ret;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	/* ~5 MiB: more than the writer's buffer, so some reached the disk */
	write_profile(path, &o, 40000, false, &want);
	ret = cs_reader_open(path, -1, &eb, &r);
	if (ret)
		fail_msg("%s", eb.msg);
	while ((ret = cs_reader_next(r, &rec)) == 1)
		if (!consumed_by_reader(rec.type))
			recs_add(&got, rec.bytes, rec.size);
	if (ret)
		fail_msg("%s", eb.msg);
	assert_true(got.len > (1u << 20));
	assert_true(got.len < want.len);
	assert_memory_equal(got.b, want.b, got.len);
	assert_int_equal(cs_evlist_count(cs_reader_evlist(r)), 2);
	cs_reader_free(r);
	unlink(path);
	free(want.b);
	free(got.b);
}

struct bids {
	int n;
	char last[64];
};

static int count_build_id(void *ctx, int32_t pid, uint16_t misc,
			  const uint8_t *build_id, size_t size, const char *path)
{
	struct bids *b = ctx;

	(void)pid;
	(void)misc;
	(void)build_id;
	(void)size;
	b->n++;
	snprintf(b->last, sizeof(b->last), "%s", path);
	return 0;
}

/* A recorder learns build ids as it goes: in a stream they follow the
 * records already written, and the reader collects both kinds. */
static void build_id_added_to_a_stream_is_read(void **state)
{
	char path[] = "/tmp/cs-test-wr.XXXXXX";
	int fd = mkstemp(path);
	struct cs_writer_opts o = { .pipe = true, .zstd_level = 1 };
	struct cs_perf_attr sa = sampling_attr();
	static const uint8_t id[20] = { 0xab };
	struct cs_errbuf eb = { { 0 } };
	struct cs_writer *w;
	struct cs_reader *r;
	struct cs_record rec;
	struct bids b = { 0 };
	uint8_t buf[256];
	long n;
	int ret, lost = 0;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(cs_writer_open(path, -1, &o, &eb, &w), 0);
	assert_int_equal(cs_writer_add_event(w, &sa, "cpu-clock", NULL, 0), 0);
	assert_int_equal(cs_writer_add_build_id(w, -1, CS_MISC_KERNEL, id, 20,
						"[kernel.kallsyms]"), 0);
	assert_int_equal(cs_writer_begin(w), 0);
	struct cs_lost l = { .id = 11, .lost = 1 };
	struct cs_sample_id sid = { .pid = 1, .tid = 1, .time = 5 };

	n = cs_encode_lost(&sa, &l, &sid, buf, sizeof(buf));
	assert_int_equal(cs_writer_write(w, buf, (size_t)n), 0);
	assert_int_equal(cs_writer_add_build_id(w, 1, CS_MISC_USER, id, 20,
						"/usr/bin/late"), 0);
	assert_int_equal(cs_writer_finish(w), 0);
	cs_writer_free(w);

	assert_int_equal(cs_reader_open(path, -1, &eb, &r), 0);
	while ((ret = cs_reader_next(r, &rec)) == 1) {
		if (rec.type == CS_RECORD_LOST)
			lost++;
		if (rec.type == CS_RECORD_HEADER_BUILD_ID)
			assert_int_equal(lost, b.n++ ? 1 : 0);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(lost, 1);
	assert_int_equal(b.n, 2);
	b.n = 0;
	assert_int_equal(cs_reader_for_each_build_id(r, count_build_id, &b), 0);
	assert_int_equal(b.n, 2);
	assert_string_equal(b.last, "/usr/bin/late");
	cs_reader_free(r);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(file_reads_back),
		cmocka_unit_test(pipe_reads_back),
		cmocka_unit_test(big_endian_file_reads_back),
		cmocka_unit_test(compressed_file_reads_back),
		cmocka_unit_test(big_endian_compressed_pipe_reads_back),
		cmocka_unit_test(unfinished_file_reads_to_its_last_record),
		cmocka_unit_test(build_id_added_to_a_stream_is_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
