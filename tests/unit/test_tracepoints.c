/* test_tracepoints.c - tracing data into formats, a tracepoint sample's
 * fields printed and read, and damaged data refused without a crash. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/trace/tracepoints.h"
#include "lib/write/feature.h"
#include "tp_example.h"

/* a format whose field lies far beyond any sample */
static const char far_format[] =
	"name: far\n"
	"ID: 900\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int x;\toffset:1000000;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"x=%d\", REC->x\n";

/* a sched_wakeup sample's raw data: the common fields, then its own */
static size_t wakeup_raw(uint8_t *raw, const char *comm, int32_t pid,
			 int32_t prio, int32_t cpu)
{
	uint16_t type = TP_WAKEUP_ID;
	int32_t common_pid = 77;

	memset(raw, 0, 40);
	memcpy(raw, &type, 2);
	memcpy(raw + 4, &common_pid, 4);
	strncpy((char *)raw + 8, comm, 16);
	memcpy(raw + 24, &pid, 4);
	memcpy(raw + 28, &prio, 4);
	memcpy(raw + 32, &cpu, 4);
	return 36;
}

static struct cs_tracepoints *parse_ok(struct cs_fbuf *b)
{
	struct cs_tracepoints *tp;
	const char *why;

	assert_int_equal(cs_tracepoints_new(b->p, b->len, &tp, &why), 0);
	return tp;
}

static void fields_print_as_the_format_says(void **state)
{
	const char *formats[] = { tp_wakeup_format };
	struct cs_fbuf b = { 0 };
	struct cs_tracepoints *tp;
	uint8_t raw[64];
	size_t n = wakeup_raw(raw, "deepstack", 4321, 120, 1);
	const char *text;
	long len;

	(void)state;
	tp_example_tracing_data(&b, formats, 1);
	tp = parse_ok(&b);
	assert_string_equal(cs_tracepoints_name(tp, TP_WAKEUP_ID), "sched:sched_wakeup");
	len = cs_tracepoints_print(tp, TP_WAKEUP_ID, 1, raw, n, &text);
	assert_string_equal(text, "comm=deepstack pid=4321 prio=120 target_cpu=001");
	assert_int_equal(len, (long)strlen(text));
	cs_tracepoints_free(tp);
	cs_fbuf_free(&b);
}

static void a_field_is_read_by_name(void **state)
{
	const char *formats[] = { tp_wakeup_format };
	struct cs_fbuf b = { 0 };
	struct cs_tracepoints *tp;
	const struct cs_tp_field *f;
	uint8_t raw[64];
	size_t n = wakeup_raw(raw, "x", -5, 98, 3);
	uint64_t v;

	(void)state;
	tp_example_tracing_data(&b, formats, 1);
	tp = parse_ok(&b);
	f = cs_tracepoints_field(tp, TP_WAKEUP_ID, "pid");
	assert_non_null(f);
	assert_int_equal(cs_tp_field_read(f, raw, n, &v), 0);
	assert_int_equal((int32_t)v, -5);
	assert_int_equal(cs_tp_field_read(f, raw, 26, &v), -EBADMSG);
	assert_null(cs_tracepoints_field(tp, TP_WAKEUP_ID, "comm"));	/* a string */
	assert_null(cs_tracepoints_field(tp, TP_WAKEUP_ID, "nosuch"));
	assert_null(cs_tracepoints_field(tp, 999, "pid"));
	cs_tracepoints_free(tp);
	cs_fbuf_free(&b);
}

static void unknown_or_short_samples_print_nothing(void **state)
{
	const char *formats[] = { tp_wakeup_format, far_format };
	struct cs_fbuf b = { 0 };
	struct cs_tracepoints *tp;
	uint8_t raw[64];
	size_t n = wakeup_raw(raw, "x", 1, 1, 1);
	const char *text;

	(void)state;
	tp_example_tracing_data(&b, formats, 2);
	tp = parse_ok(&b);
	assert_int_equal(cs_tracepoints_print(tp, 12345, 0, raw, n, &text), -ENOENT);
	assert_null(cs_tracepoints_name(tp, 12345));
	assert_int_equal(cs_tracepoints_print(tp, TP_WAKEUP_ID, 0, raw, 20, &text), -EBADMSG);
	/* a format pointing a megabyte past its sample is not trusted */
	assert_int_equal(cs_tracepoints_print(tp, 900, 0, raw, n, &text), -ENOENT);
	assert_null(cs_tracepoints_field(tp, 900, "x"));
	cs_tracepoints_free(tp);
	cs_fbuf_free(&b);
}

static void damaged_tracing_data_is_refused_at_every_length(void **state)
{
	const char *formats[] = { tp_wakeup_format };
	struct cs_fbuf b = { 0 };
	struct cs_tracepoints *tp;
	const char *why;

	(void)state;
	tp_example_tracing_data(&b, formats, 1);
	/* every cut before the saved cmdlines' size is an error; the whole
	 * data parses */
	for (size_t len = 0; len < b.len - 8 - 14; len++) {
		assert_int_equal(cs_tracepoints_new(b.p, len, &tp, &why), -EBADMSG);
		assert_non_null(why);
		assert_null(tp);
	}
	b.p[0] = 'X';
	assert_int_equal(cs_tracepoints_new(b.p, b.len, &tp, &why), -EBADMSG);
	assert_string_equal(why, "no tracing data magic");
	cs_fbuf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fields_print_as_the_format_says),
		cmocka_unit_test(a_field_is_read_by_name),
		cmocka_unit_test(unknown_or_short_samples_print_nothing),
		cmocka_unit_test(damaged_tracing_data_is_refused_at_every_length),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
