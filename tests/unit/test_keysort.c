/* test_keysort.c - keys of 1 to 4 words sort as qsort() sorts them, for
 * any number of jobs, sizes around the insertion runs and the parts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/util/keysort.h"

static size_t cmp_words;

static int cmp_key(const void *pa, const void *pb)
{
	const uint64_t *a = pa, *b = pb;

	for (size_t i = 0; i < cmp_words; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* few distinct values per word, so that ties reach the last word; the
 * top bit set in some, so that words compare unsigned */
static uint64_t word(unsigned int *seed)
{
	uint64_t v = (uint64_t)(rand_r(seed) % 5);

	return rand_r(seed) % 3 ? v : v | 1ULL << 63;
}

static void keys_sort_as_qsort(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 15, 16, 17, 33, 1000, 4095,
					9000, 40007 };
	unsigned int seed = 1;

	(void)state;
	for (size_t w = 1; w <= CS_KEYSORT_MAX_WORDS; w++) {
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			size_t n = sizes[s];
			uint64_t *a = malloc((n + 1) * w * sizeof(*a));
			uint64_t *b = malloc((n + 1) * w * sizeof(*b));

			assert_non_null(a);
			assert_non_null(b);
			for (unsigned int jobs = 1; jobs <= 5; jobs += 2) {
				for (size_t i = 0; i < n * w; i++)
					a[i] = word(&seed);
				/* a sorted stretch and a reversed one */
				for (size_t i = 0; i < n / 4; i++)
					a[i * w] = i;
				for (size_t i = n / 4; i < n / 2; i++)
					a[i * w] = n - i;
				memcpy(b, a, n * w * sizeof(*a));
				cmp_words = w;
				qsort(a, n, w * sizeof(*a), cmp_key);
				assert_int_equal(cs_keysort(b, n, w, jobs), 0);
				if (n)
					assert_memory_equal(a, b, n * w * sizeof(*a));
			}
			free(a);
			free(b);
		}
	}
}

static void key_sizes_are_checked(void **state)
{
	uint64_t k[10] = { 0 };

	(void)state;
	assert_int_equal(cs_keysort(k, 2, 0, 1), -EINVAL);
	assert_int_equal(cs_keysort(k, 2, CS_KEYSORT_MAX_WORDS + 1, 1), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keys_sort_as_qsort),
		cmocka_unit_test(key_sizes_are_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
