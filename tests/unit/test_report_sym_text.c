/* test_report_sym_text.c - the report table's Symbol column
 * (src/outputs/report_table.c): an address is written as perf's
 * "%-#.*llx" would, 16 hex digits after "0x" (none for 0), whatever its
 * digits; and report_entry_sym_len(), which the column widths take
 * without making the text, gives the length report_entry_sym_text()
 * makes in 1024 bytes for every kind of frame. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "outputs/report_int.h"

static size_t sym_text(const struct cs_agg_key *k, char *buf)
{
	return report_entry_sym_text(k, buf, 1024);
}

/* Addresses with every hex digit in every place, both halves of the
 * word, and the edges of each digit's range */
static void addresses_are_written_as_perf_does(void **state)
{
	uint64_t addrs[] = {
		0, 1, 9, 0xa, 0xf, 0x10, 0x9f, 0xa0, 0xffffffff, 0x100000000ULL,
		0x0123456789abcdefULL, 0xfedcba9876543210ULL,
		0xffffffff81000000ULL, 0x00007f0000001000ULL, UINT64_MAX,
		0x9999999999999999ULL, 0xaaaaaaaaaaaaaaaaULL,
	};
	char buf[1024], want[64];

	(void)state;
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		for (uint32_t kernel = 0; kernel < 2; kernel++) {
			struct cs_agg_key k = { .addr = addrs[i],
						.flags = kernel ? F_KERNEL : 0 };
			size_t n = sym_text(&k, buf);

			snprintf(want, sizeof(want), "[%c] %-#.*" PRIx64,
				 kernel ? 'k' : '.', 16, addrs[i]);
			assert_int_equal(n, strlen(want));
			assert_memory_equal(buf, want, n);
		}
	}
	/* a pseudo-random walk through the rest */
	for (uint64_t x = 0x2545f4914f6cdd1dULL, i = 0; i < 100000; i++) {
		struct cs_agg_key k;
		size_t n;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = (struct cs_agg_key){ .addr = x };
		n = sym_text(&k, buf);
		snprintf(want, sizeof(want), "[.] %-#.*" PRIx64, 16, x);
		assert_int_equal(n, strlen(want));
		assert_memory_equal(buf, want, n);
	}
}

static void lengths_match_the_text(void **state)
{
	static char long_name[3000];
	const char *names[] = { NULL, "", "main", "a::b<c>(int)", long_name };
	uint32_t flags[] = {
		0, F_KERNEL, F_COOKIE, F_MISSING, F_INLINED, F_INLINED | F_KERNEL,
	};
	char buf[1024];

	(void)state;
	memset(long_name, 'x', sizeof(long_name) - 1);
	for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
		for (size_t s = 0; s < sizeof(names) / sizeof(names[0]); s++)
			for (uint64_t addr = 0; addr < 3; addr++) {
				struct cs_agg_key k = {
					.sym = names[s],
					.addr = addr * 0x7f0000001234ULL,
					.flags = flags[f],
				};

				/* an inlined frame always has its name */
				if ((flags[f] & F_INLINED) && !names[s])
					continue;
				assert_int_equal(report_entry_sym_len(&k),
						 sym_text(&k, buf));
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(addresses_are_written_as_perf_does),
		cmocka_unit_test(lengths_match_the_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
