/* test_write_features.c - feature sections copied as raw bytes (inject
 * keeps a profile's topology, caches, PMU mappings, ...) come back from the
 * reader as they went in, in file and pipe mode, in feature-bit order. */
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

#include "abi/perf_abi.h"
#include "lib/read/reader.h"
#include "lib/util/errbuf.h"
#include "lib/write/writer.h"

static const uint8_t topology[] = { 1, 0, 0, 0, 4, 0, 0, 0, '0', '-', '1', 0 };
static const uint8_t pmu_map[] = { 1, 0, 0, 0, 4, 0, 0, 0, 8, 0, 0, 0,
				   'c', 'p', 'u', 0, 0, 0, 0, 0 };

static struct cs_perf_attr sample_attr(void)
{
	struct cs_perf_attr a = {
		.type = CS_PERF_TYPE_SOFTWARE,
		.size = CS_PERF_ATTR_SIZE_VER7,
		.sample_period = 4000,
		.sample_type = CS_SAMPLE_IP | CS_SAMPLE_TID | CS_SAMPLE_TIME,
		.flags = CS_ATTR_SAMPLE_ID_ALL | CS_ATTR_FREQ,
	};
	return a;
}

/* Writes a file (or stream) with the two raw features, reads it back. */
static void round_trip(bool pipe)
{
	char path[] = "/tmp/cs-test-feat.XXXXXX";
	struct cs_writer_opts o = { .pipe = pipe };
	struct cs_perf_attr a = sample_attr();
	struct cs_errbuf eb = { { 0 } };
	struct cs_writer *w = NULL;
	struct cs_reader *r = NULL;
	struct cs_record rec;
	const void *data;
	size_t size;
	uint64_t id = 7;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(cs_writer_open(path, fd, &o, &eb, &w), 0);
	assert_int_equal(cs_writer_add_event(w, &a, "cpu-clock", &id, 1), 0);
	/* set out of bit order: the writer must still emit them in order */
	assert_int_equal(cs_writer_set_feature_raw(w, CS_FEAT_PMU_MAPPINGS,
						   pmu_map, sizeof(pmu_map)), 0);
	assert_int_equal(cs_writer_set_feature_raw(w, CS_FEAT_CPU_TOPOLOGY,
						   topology, sizeof(topology)), 0);
	assert_int_equal(cs_writer_set_string(w, CS_FEAT_HOSTNAME, "box"), 0);
	assert_int_equal(cs_writer_begin(w), 0);
	assert_int_equal(cs_writer_finish(w), 0);
	cs_writer_free(w);
	close(fd);

	assert_int_equal(cs_reader_open(path, -1, &eb, &r), 0);
	while (cs_reader_next(r, &rec) > 0)	/* pipe mode: features are records */
		;
	assert_int_equal(cs_reader_feature(r, CS_FEAT_CPU_TOPOLOGY, &data, &size), 0);
	assert_true(size >= sizeof(topology));
	assert_memory_equal(data, topology, sizeof(topology));
	assert_int_equal(cs_reader_feature(r, CS_FEAT_PMU_MAPPINGS, &data, &size), 0);
	assert_true(size >= sizeof(pmu_map));
	assert_memory_equal(data, pmu_map, sizeof(pmu_map));
	assert_string_equal(cs_reader_info(r)->hostname, "box");
	cs_reader_free(r);
	unlink(path);
}

static void copied_features_read_back_from_a_file(void **state)
{
	(void)state;
	round_trip(false);
}

static void copied_features_read_back_from_a_stream(void **state)
{
	(void)state;
	round_trip(true);
}

static void features_the_writer_builds_cannot_be_copied(void **state)
{
	struct cs_writer_opts o = { 0 };
	struct cs_errbuf eb = { { 0 } };
	struct cs_writer *w = NULL;
	static const int built[] = { CS_FEAT_BUILD_ID, CS_FEAT_HOSTNAME,
		CS_FEAT_EVENT_DESC, CS_FEAT_CMDLINE, CS_FEAT_COMPRESSED,
		CS_FEAT_DIR_FORMAT, 0, CS_FEAT_LAST };

	(void)state;
	for (size_t i = 0; i < sizeof(built) / sizeof(built[0]); i++) {
		assert_int_equal(cs_writer_open("/dev/null", -1, &o, &eb, &w), 0);
		assert_int_equal(cs_writer_set_feature_raw(w, built[i], topology,
							   sizeof(topology)), -EINVAL);
		cs_writer_free(w);
		eb.msg[0] = '\0';
	}
}

static void a_big_endian_writer_refuses_bytes_it_cannot_swap(void **state)
{
	struct cs_writer_opts o = { .big_endian = true };
	struct cs_errbuf eb = { { 0 } };
	struct cs_writer *w = NULL;

	(void)state;
	assert_int_equal(cs_writer_open("/dev/null", -1, &o, &eb, &w), 0);
	assert_int_equal(cs_writer_set_feature_raw(w, CS_FEAT_CPU_TOPOLOGY, topology,
						   sizeof(topology)), -EOPNOTSUPP);
	cs_writer_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(copied_features_read_back_from_a_file),
		cmocka_unit_test(copied_features_read_back_from_a_stream),
		cmocka_unit_test(features_the_writer_builds_cannot_be_copied),
		cmocka_unit_test(a_big_endian_writer_refuses_bytes_it_cannot_swap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
