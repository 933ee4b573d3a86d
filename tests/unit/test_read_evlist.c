/* test_read_evlist.c - events and their ids: O(1) lookup by id, the shared
 * id layout (IDENTIFIER first in samples, last in trailers), the time read
 * from its fixed position, names from the file or derived. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include <callstitch/callstitch.h>
#include "abi/perf_abi.h"
#include "lib/read/evlist.h"
#include "lib/read/evlist_int.h"

static struct cs_perf_attr attr(uint32_t type, uint64_t config, uint64_t st)
{
	struct cs_perf_attr a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.config = config;
	a.size = CS_PERF_ATTR_SIZE_VER7;
	a.sample_type = st;
	a.flags = CS_ATTR_SAMPLE_ID_ALL;
	return a;
}

static void ids_find_their_event_among_many(void **state)
{
	struct cs_evlist *l;
	uint64_t st = CS_SAMPLE_IDENTIFIER | CS_SAMPLE_TID | CS_SAMPLE_TIME;
	struct cs_perf_attr a = attr(CS_PERF_TYPE_SOFTWARE, 0, st);
	struct cs_perf_attr d = attr(CS_PERF_TYPE_SOFTWARE, CS_PERF_COUNT_SW_DUMMY, st);
	uint64_t ids_a[1000], ids_d[1000];

	(void)state;
	for (int i = 0; i < 1000; i++) {
		ids_a[i] = 1000 + (uint64_t)i * 2;
		ids_d[i] = 1001 + (uint64_t)i * 2;
	}
	assert_int_equal(cs_evlist_new(&l), 0);
	assert_int_equal(cs_evlist_add(l, &a, NULL, ids_a, 1000), 0);
	assert_int_equal(cs_evlist_add(l, &d, NULL, ids_d, 500), 0);
	assert_int_equal(cs_evlist_add_ids(l, 1, ids_d + 500, 500), 0);
	assert_int_equal(cs_evlist_count(l), 2);
	for (int i = 0; i < 1000; i++) {
		assert_ptr_equal(cs_evlist_find(l, ids_a[i]), cs_evlist_get(l, 0));
		assert_ptr_equal(cs_evlist_find(l, ids_d[i]), cs_evlist_get(l, 1));
	}
	assert_null(cs_evlist_find(l, 5));
	assert_null(cs_evlist_find(l, 3000));
	assert_int_equal(cs_evlist_get(l, 1)->nr_ids, 1000);
	assert_string_equal(cs_evlist_get(l, 0)->name, "cpu-clock");
	assert_string_equal(cs_evlist_get(l, 1)->name, "dummy");
	assert_int_equal(cs_evlist_get(l, 1)->index, 1);
	assert_null(cs_evlist_get(l, 2));
	cs_evlist_free(l);
}

static void a_single_event_answers_every_id(void **state)
{
	struct cs_evlist *l;
	struct cs_perf_attr a = attr(CS_PERF_TYPE_SOFTWARE, 0, CS_SAMPLE_IP);

	(void)state;
	assert_int_equal(cs_evlist_new(&l), 0);
	assert_int_equal(cs_evlist_add(l, &a, NULL, NULL, 0), 0);
	assert_non_null(cs_evlist_find(l, 12345));
	cs_evlist_free(l);
}

static void a_different_id_layout_is_refused(void **state)
{
	struct cs_evlist *l;
	struct cs_perf_attr a = attr(CS_PERF_TYPE_SOFTWARE, 0, CS_SAMPLE_IP |
				     CS_SAMPLE_ID);
	struct cs_perf_attr b = attr(CS_PERF_TYPE_SOFTWARE, 0, CS_SAMPLE_IP |
				     CS_SAMPLE_TID | CS_SAMPLE_ID);
	struct cs_perf_attr c = attr(CS_PERF_TYPE_SOFTWARE, 0, CS_SAMPLE_IP |
				     CS_SAMPLE_ID | CS_SAMPLE_PERIOD);
	struct cs_perf_attr d = c;

	(void)state;
	d.flags = 0;		/* sample_id_all differs */
	assert_int_equal(cs_evlist_new(&l), 0);
	assert_int_equal(cs_evlist_add(l, &a, NULL, NULL, 0), 0);
	assert_int_equal(cs_evlist_add(l, &b, NULL, NULL, 0), -EINVAL);
	/* PERIOD comes after ID: the id stays where it was */
	assert_int_equal(cs_evlist_add(l, &c, NULL, NULL, 0), 0);
	assert_int_equal(cs_evlist_add(l, &d, NULL, NULL, 0), -EINVAL);
	cs_evlist_free(l);
}

static void names_are_derived_or_given(void **state)
{
	static const struct { uint32_t type; uint64_t config; const char *name; } n[] = {
		{ CS_PERF_TYPE_HARDWARE, 0, "cycles" },
		{ CS_PERF_TYPE_HARDWARE, 1, "instructions" },
		{ CS_PERF_TYPE_SOFTWARE, 0, "cpu-clock" },
		{ CS_PERF_TYPE_SOFTWARE, 1, "task-clock" },
		{ CS_PERF_TYPE_SOFTWARE, 9, "dummy" },
		{ CS_PERF_TYPE_RAW, 0x1c2, "r1c2" },
	};
	struct cs_evlist *l;

	(void)state;
	assert_int_equal(cs_evlist_new(&l), 0);
	for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
		struct cs_perf_attr a = attr(n[i].type, n[i].config, CS_SAMPLE_IP);

		assert_int_equal(cs_evlist_add(l, &a, NULL, NULL, 0), 0);
		assert_string_equal(cs_evlist_get(l, i)->name, n[i].name);
	}
	assert_int_equal(cs_evlist_set_name(l, 4, "dummy:u"), 0);
	assert_string_equal(cs_evlist_get(l, 4)->name, "dummy:u");
	assert_int_equal(cs_evlist_set_name(l, 99, "x"), -EINVAL);
	cs_evlist_free(l);
}

static void short_attrs_are_zero_extended(void **state)
{
	/* a 64-byte attr (VER0) followed by bytes that are not ours */
	uint8_t buf[sizeof(struct cs_perf_attr)];
	struct cs_perf_attr *a = (struct cs_perf_attr *)buf;
	struct cs_evlist *l;

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	memset(buf, 0, 64);
	a->type = CS_PERF_TYPE_SOFTWARE;
	a->size = 64;
	a->sample_type = CS_SAMPLE_IP;
	assert_int_equal(cs_evlist_new(&l), 0);
	assert_int_equal(cs_evlist_add(l, a, "x", NULL, 0), 0);
	assert_int_equal(cs_evsel_attr(cs_evlist_get(l, 0))->sample_regs_user, 0);
	assert_int_equal(cs_evsel_attr(cs_evlist_get(l, 0))->config4, 0);
	assert_int_equal(cs_evsel_attr(cs_evlist_get(l, 0))->sample_type, CS_SAMPLE_IP);
	cs_evlist_free(l);
}

/* Records built as u64 words: header, then the body. */
static void time_comes_from_its_fixed_position(void **state)
{
	struct cs_evlist *l;
	uint64_t st = CS_SAMPLE_IDENTIFIER | CS_SAMPLE_IP | CS_SAMPLE_TID |
		      CS_SAMPLE_TIME | CS_SAMPLE_CPU;
	struct cs_perf_attr a = attr(CS_PERF_TYPE_SOFTWARE, 0, st);
	struct cs_perf_attr b = attr(CS_PERF_TYPE_SOFTWARE, 9, CS_SAMPLE_IDENTIFIER |
				     CS_SAMPLE_TIME);
	uint64_t ida = 6, idb = 7;
	uint64_t sample[] = {
		CS_RECORD_SAMPLE | (uint64_t)48 << 48,
		6, 0x1234, 5 | 5ULL << 32, 777, 1,
	};
	uint64_t comm_b[] = {	/* COMM of event b: trailer TIME, IDENTIFIER */
		CS_RECORD_COMM | (uint64_t)40 << 48,
		5 | 5ULL << 32, 0x6f6f66, 888, 7,
	};
	uint64_t comm_a[] = {	/* COMM of event a: TID, TIME, CPU, IDENTIFIER */
		CS_RECORD_COMM | (uint64_t)56 << 48,
		5 | 5ULL << 32, 0x6f6f66, 5 | 5ULL << 32, 999, 1, 6,
	};
	uint64_t round[] = { CS_RECORD_FINISHED_ROUND | (uint64_t)8 << 48 };
	uint64_t unknown_id[] = {
		CS_RECORD_SAMPLE | (uint64_t)48 << 48,
		66, 0x1234, 5 | 5ULL << 32, 777, 1,
	};

	(void)state;
	assert_int_equal(cs_evlist_new(&l), 0);
	assert_int_equal(cs_evlist_add(l, &a, NULL, &ida, 1), 0);
	assert_int_equal(cs_evlist_add(l, &b, NULL, &idb, 1), 0);
	assert_int_equal(cs_evlist_record_time(l, sample, sizeof(sample)), 777);
	assert_ptr_equal(cs_evlist_event_of(l, sample, sizeof(sample)),
			 cs_evlist_get(l, 0));
	assert_int_equal(cs_evlist_record_time(l, comm_b, sizeof(comm_b)), 888);
	assert_ptr_equal(cs_evlist_event_of(l, comm_b, sizeof(comm_b)),
			 cs_evlist_get(l, 1));
	assert_int_equal(cs_evlist_record_time(l, comm_a, sizeof(comm_a)), 999);
	assert_int_equal(cs_evlist_record_time(l, round, sizeof(round)), CS_NO_TIME);
	assert_null(cs_evlist_event_of(l, round, sizeof(round)));
	assert_int_equal(cs_evlist_record_time(l, unknown_id, sizeof(unknown_id)),
			 CS_NO_TIME);
	/* too short to hold the id: no answer rather than a read past it */
	assert_null(cs_evlist_event_of(l, sample, 8));
	assert_int_equal(cs_evlist_record_time(l, comm_a, 16), CS_NO_TIME);
	cs_evlist_free(l);
}

static void sample_id_without_identifier_is_found_by_position(void **state)
{
	struct cs_evlist *l;
	/* ID after IP and TIME in a sample; in a trailer ID sits before CPU */
	uint64_t st = CS_SAMPLE_IP | CS_SAMPLE_TIME | CS_SAMPLE_ID | CS_SAMPLE_CPU;
	struct cs_perf_attr a = attr(CS_PERF_TYPE_SOFTWARE, 0, st);
	struct cs_perf_attr b = attr(CS_PERF_TYPE_SOFTWARE, 1, st);
	uint64_t ida[] = { 10, 11 }, idb[] = { 20, 21 };
	uint64_t sample[] = {
		CS_RECORD_SAMPLE | (uint64_t)40 << 48, 0x1, 500, 21, 0,
	};
	uint64_t exitr[] = {	/* EXIT body (24) + TIME, ID, CPU */
		CS_RECORD_EXIT | (uint64_t)56 << 48, 1, 1, 1, 600, 11, 0,
	};

	(void)state;
	assert_int_equal(cs_evlist_new(&l), 0);
	assert_int_equal(cs_evlist_add(l, &a, NULL, ida, 2), 0);
	assert_int_equal(cs_evlist_add(l, &b, NULL, idb, 2), 0);
	assert_ptr_equal(cs_evlist_event_of(l, sample, sizeof(sample)),
			 cs_evlist_get(l, 1));
	assert_int_equal(cs_evlist_record_time(l, sample, sizeof(sample)), 500);
	assert_ptr_equal(cs_evlist_event_of(l, exitr, sizeof(exitr)),
			 cs_evlist_get(l, 0));
	assert_int_equal(cs_evlist_record_time(l, exitr, sizeof(exitr)), 600);
	cs_evlist_free(l);
}

/* The reader's time without a branch on the type gives what the plain
 * one gives, for every type, size and layout: a time where there is one,
 * CS_NO_TIME where the record is too short or the layout has none. */
static void flat_record_time_is_the_plain_one(void **state)
{
	static const uint64_t layouts[] = {
		CS_SAMPLE_IDENTIFIER | CS_SAMPLE_IP | CS_SAMPLE_TID |
			CS_SAMPLE_TIME | CS_SAMPLE_CPU | CS_SAMPLE_PERIOD,
		CS_SAMPLE_IP | CS_SAMPLE_TID | CS_SAMPLE_TIME,
		CS_SAMPLE_IP | CS_SAMPLE_TID,			/* no time */
		CS_SAMPLE_TIME,
	};
	static const uint32_t types[] = {
		CS_RECORD_SAMPLE, CS_RECORD_CALLCHAIN_DEFERRED, CS_RECORD_COMM,
		CS_RECORD_MMAP2, CS_RECORD_EXIT,
	};
	uint64_t rec[32];

	(void)state;
	for (size_t i = 0; i < 32; i++)
		rec[i] = 0x1000 + i;
	for (size_t li = 0; li < sizeof(layouts) / sizeof(layouts[0]); li++) {
		for (int all = 0; all < 2; all++) {
			struct cs_perf_attr a = attr(CS_PERF_TYPE_SOFTWARE, 0,
						     layouts[li]);
			const struct cs_evsel_layout *lay;
			struct cs_evlist *l;
			uint64_t id = 1;

			if (!all)
				a.flags = 0;	/* no sample_id trailer */
			assert_int_equal(cs_evlist_new(&l), 0);
			assert_int_equal(cs_evlist_add(l, &a, NULL, &id, 1), 0);
			lay = cs_evsel_layout(cs_evlist_get(l, 0));
			for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ti++)
				for (size_t size = 8; size <= sizeof(rec); size += 8)
					assert_int_equal(
						cs_layout_record_time_flat(lay, rec, size,
									   types[ti]),
						cs_layout_record_time(lay, rec, size,
								      types[ti]));
			cs_evlist_free(l);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ids_find_their_event_among_many),
		cmocka_unit_test(a_single_event_answers_every_id),
		cmocka_unit_test(a_different_id_layout_is_refused),
		cmocka_unit_test(names_are_derived_or_given),
		cmocka_unit_test(short_attrs_are_zero_extended),
		cmocka_unit_test(time_comes_from_its_fixed_position),
		cmocka_unit_test(flat_record_time_is_the_plain_one),
		cmocka_unit_test(sample_id_without_identifier_is_found_by_position),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
