/* test_flame.c - the flame tree and the data it embeds in the page.
 *
 * src/outputs is not part of libcallstitch, so the tree's source is compiled
 * into this test directly (it depends on nothing but libc).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "outputs/flame.c"
#include "lib/machine/frames.h"

struct fx {
	struct cs_flame *f;
	char *buf;
	size_t len;
};

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));

	assert_non_null(x);
	assert_int_equal(cs_flame_new(&x->f), 0);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;

	cs_flame_free(x->f);
	free(x->buf);
	free(x);
	return 0;
}

static uint32_t fr(struct fx *x, const char *name, const char *dso, enum cs_flame_kind k)
{
	long id = cs_flame_frame(x->f, name, dso, k);

	assert_true(id >= 0);
	return (uint32_t)id;
}

static const char *json(struct fx *x, const struct cs_flame_meta *m)
{
	FILE *f;

	free(x->buf);
	x->buf = NULL;
	f = open_memstream(&x->buf, &x->len);
	assert_non_null(f);
	assert_int_equal(cs_flame_write_json(x->f, m, f), 0);
	fclose(f);
	return x->buf;
}

static const char *html(struct fx *x, const struct cs_flame_meta *m)
{
	FILE *f;

	free(x->buf);
	x->buf = NULL;
	f = open_memstream(&x->buf, &x->len);
	assert_non_null(f);
	assert_int_equal(cs_flame_write_html(x->f, m, f), 0);
	fclose(f);
	return x->buf;
}

/* the "nodes" array of the JSON, as text */
static char *nodes_of(const char *j)
{
	const char *p = strstr(j, "\"nodes\":[");
	const char *e;

	assert_non_null(p);
	p += strlen("\"nodes\":[");
	e = strchr(p, ']');
	assert_non_null(e);
	return strndup(p, (size_t)(e - p));
}

/* Sums the self counts of a preorder (frame, value, children) array: what
 * each node holds beyond its children. Their sum must be the root's value,
 * and a child must never hold more than its parent. */
static uint64_t check_tree(const char *nodes, uint64_t *root_value)
{
	size_t n = 0, cap = 1024;
	uint64_t *v = malloc(cap * sizeof(*v));
	char *end;

	assert_non_null(v);
	for (const char *p = nodes; *p; p = *end ? end + 1 : end) {
		if (n == cap) {
			cap *= 2;
			v = realloc(v, cap * sizeof(*v));
			assert_non_null(v);
		}
		v[n++] = strtoull(p, &end, 10);
		assert_true(end > p);
	}
	assert_int_equal(n % 3, 0);

	/* walk with a stack of (index, children left, children's sum) */
	size_t *st = malloc(n * sizeof(*st)), sp = 0;
	uint64_t *left = malloc(n * sizeof(*left)), *sum = malloc(n * sizeof(*sum));
	uint64_t self_total = 0;

	assert_true(st && left && sum);
	for (size_t i = 0; i < n / 3; i++) {
		if (sp) {
			assert_true(left[sp - 1] > 0);
			left[sp - 1]--;
			sum[sp - 1] += v[3 * i + 1];
			assert_true(v[3 * i + 1] <= v[3 * st[sp - 1] + 1]);
		} else {
			assert_int_equal(i, 0);	/* one root */
		}
		st[sp] = i;
		left[sp] = v[3 * i + 2];
		sum[sp] = 0;
		sp++;
		while (sp && !left[sp - 1]) {
			sp--;
			assert_true(sum[sp] <= v[3 * st[sp] + 1]);
			self_total += v[3 * st[sp] + 1] - sum[sp];
		}
	}
	assert_int_equal(sp, 0);
	*root_value = v[1];
	free(st);
	free(left);
	free(sum);
	free(v);
	return self_total;
}

static void a_frame_is_interned_once_per_name_dso_and_kind(void **state)
{
	struct fx *x = *state;
	uint32_t a = fr(x, "read", "/lib/libc.so.6", CS_FLAME_USER);

	assert_int_equal(fr(x, "read", "/lib/libc.so.6", CS_FLAME_USER), a);
	assert_int_not_equal(fr(x, "read", "/lib/libc.so.6", CS_FLAME_KERNEL), a);
	assert_int_not_equal(fr(x, "read", NULL, CS_FLAME_USER), a);
	assert_int_not_equal(fr(x, "read", "/other", CS_FLAME_USER), a);
	assert_string_equal(cs_flame_frame_name(x->f, a), "read");
}

static void equal_stacks_share_their_nodes(void **state)
{
	struct fx *x = *state;
	uint32_t s[] = { fr(x, "main", NULL, CS_FLAME_USER), fr(x, "work", NULL, CS_FLAME_USER) };

	assert_int_equal(cs_flame_add(x->f, s, 2, 1), 0);
	assert_int_equal(cs_flame_nr_nodes(x->f), 3);
	assert_int_equal(cs_flame_add(x->f, s, 2, 4), 0);
	assert_int_equal(cs_flame_nr_nodes(x->f), 3);
	assert_int_equal(cs_flame_add(x->f, s, 1, 2), 0);	/* a prefix: no new node */
	assert_int_equal(cs_flame_nr_nodes(x->f), 3);
	assert_int_equal(cs_flame_total(x->f), 7);
}

static void an_unknown_frame_id_is_refused(void **state)
{
	struct fx *x = *state;
	uint32_t s[] = { 12345 };

	assert_int_equal(cs_flame_add(x->f, s, 1, 1), -EINVAL);
	assert_int_equal(cs_flame_total(x->f), 0);
}

/* all=0; a..d are frames 1..4 in the order they were interned */
static void nodes_are_preorder_with_children_sorted_by_name(void **state)
{
	struct fx *x = *state;
	uint32_t d = fr(x, "d", NULL, CS_FLAME_USER);
	uint32_t c = fr(x, "c", NULL, CS_FLAME_USER);
	uint32_t b = fr(x, "b", NULL, CS_FLAME_USER);
	uint32_t a = fr(x, "a", NULL, CS_FLAME_USER);
	uint32_t s1[] = { a, c }, s2[] = { a, b }, s3[] = { d };
	char *nodes;

	assert_int_equal(cs_flame_add(x->f, s1, 2, 1), 0);
	assert_int_equal(cs_flame_add(x->f, s3, 1, 3), 0);
	assert_int_equal(cs_flame_add(x->f, s2, 2, 2), 0);
	nodes = nodes_of(json(x, NULL));
	/* all(6) -> a(3) -> b(2), c(1); d(3) */
	char want[64];
	snprintf(want, sizeof(want), "0,6,2,%u,3,2,%u,2,0,%u,1,0,%u,3,0", a, b, c, d);
	assert_string_equal(nodes, want);
	free(nodes);
}

static void counts_sum_to_the_samples_added(void **state)
{
	struct fx *x = *state;
	uint32_t ids[40];
	uint64_t added = 0, root;
	char *nodes;

	for (int i = 0; i < 40; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%d", i % 13);
		ids[i] = fr(x, name, NULL, i % 3 ? CS_FLAME_USER : CS_FLAME_KERNEL);
	}
	srand(7);
	for (int i = 0; i < 3000; i++) {
		uint32_t st[40];
		size_t depth = 1 + (size_t)rand() % 12;
		uint64_t count = 1 + (uint64_t)(rand() % 3);

		for (size_t k = 0; k < depth; k++)
			st[k] = ids[(size_t)rand() % 6 + k];
		assert_int_equal(cs_flame_add(x->f, st, depth, count), 0);
		added += count;
	}
	nodes = nodes_of(json(x, NULL));
	assert_int_equal(check_tree(nodes, &root), added);
	assert_int_equal(root, added);
	free(nodes);
}

static void a_single_top_folds_into_the_root(void **state)
{
	struct fx *x = *state;
	uint32_t ev = fr(x, "cpu-clock", NULL, CS_FLAME_OTHER);
	uint32_t m = fr(x, "main", NULL, CS_FLAME_USER);
	uint32_t s[] = { ev, m };
	struct cs_flame_meta meta = { .fold_single_top = true };
	char *nodes, want[32];

	assert_int_equal(cs_flame_add(x->f, s, 2, 5), 0);
	nodes = nodes_of(json(x, &meta));
	snprintf(want, sizeof(want), "0,5,1,%u,5,0", m);
	assert_string_equal(nodes, want);
	free(nodes);

	/* with a second event there is nothing to fold */
	s[0] = fr(x, "task-clock", NULL, CS_FLAME_OTHER);
	assert_int_equal(cs_flame_add(x->f, s, 2, 1), 0);
	nodes = nodes_of(json(x, &meta));
	assert_int_equal(strncmp(nodes, "0,6,2,", 6), 0);
	free(nodes);
}

static void a_stack_thousands_deep_is_written(void **state)
{
	struct fx *x = *state;
	static uint32_t st[CS_FRAMES_MAX];
	uint32_t a = fr(x, "recurse", NULL, CS_FLAME_USER);
	uint64_t root;
	char *nodes;

	for (size_t i = 0; i < CS_FRAMES_MAX; i++)
		st[i] = a;
	assert_int_equal(cs_flame_add(x->f, st, CS_FRAMES_MAX, 2), 0);
	assert_int_equal(cs_flame_nr_nodes(x->f), CS_FRAMES_MAX + 1);
	nodes = nodes_of(json(x, NULL));
	assert_int_equal(check_tree(nodes, &root), 2);
	free(nodes);
}

static void names_cannot_break_out_of_the_script_element(void **state)
{
	struct fx *x = *state;
	uint32_t s[] = {
		fr(x, "</script><script>alert(1)</script>", NULL, CS_FLAME_USER),
		fr(x, "<!-- \"q\" \\ \x01", NULL, CS_FLAME_USER),
		fr(x, "bad\xff\xc3utf8 \xe2\x82\xac ok", NULL, CS_FLAME_USER),
	};
	const char *page, *data;

	assert_int_equal(cs_flame_add(x->f, s, 3, 1), 0);
	page = html(x, &(struct cs_flame_meta){ .title = "a </title> & <b>" });
	data = strstr(page, "<script id=\"flame-data\" type=\"application/json\">");
	assert_non_null(data);
	data = strchr(data, '>') + 1;
	/* the data ends at the first "</script" after it: that must be ours */
	assert_memory_equal(strstr(data, "</script"), "</script>\n<script>", 18);
	assert_non_null(strstr(data, "\\u003c/script>\\u003cscript>alert(1)\\u003c/script>"));
	assert_non_null(strstr(data, "\\u003c!-- \\\"q\\\" \\\\ \\u0001"));
	assert_non_null(strstr(data, "bad\\ufffd\\ufffdutf8 \xe2\x82\xac ok"));
	assert_non_null(strstr(page, "<title>a &lt;/title&gt; &amp; &lt;b&gt;</title>"));
	assert_null(strstr(page, "@@"));
}

static void the_page_is_self_contained(void **state)
{
	struct fx *x = *state;
	const char *page = html(x, NULL);

	assert_non_null(strstr(page, "<!DOCTYPE html>"));
	assert_non_null(strstr(page, "window.callstitchFlame"));	/* script inlined */
	assert_non_null(strstr(page, "#chart {"));			/* style inlined */
	assert_null(strstr(page, "<script src"));
	assert_null(strstr(page, "<link"));
	assert_null(strstr(page, "http://"));
	assert_null(strstr(page, "https://"));
	assert_null(strstr(page, "@@"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(a_frame_is_interned_once_per_name_dso_and_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(equal_stacks_share_their_nodes, setup, teardown),
		cmocka_unit_test_setup_teardown(an_unknown_frame_id_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(nodes_are_preorder_with_children_sorted_by_name, setup, teardown),
		cmocka_unit_test_setup_teardown(counts_sum_to_the_samples_added, setup, teardown),
		cmocka_unit_test_setup_teardown(a_single_top_folds_into_the_root, setup, teardown),
		cmocka_unit_test_setup_teardown(a_stack_thousands_deep_is_written, setup, teardown),
		cmocka_unit_test_setup_teardown(names_cannot_break_out_of_the_script_element, setup, teardown),
		cmocka_unit_test_setup_teardown(the_page_is_self_contained, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
