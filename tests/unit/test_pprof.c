/* test_pprof.c - the protobuf encoder and the pprof profile, decoded back. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "abi/perf_abi.h"
#include "outputs/protobuf.h"
#include "outputs/pprof.h"

/* ---- a minimal decoder, independent of the encoder ---- */

struct rd {
	const uint8_t *p, *end;
};

static uint64_t rd_varint(struct rd *r)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		assert_true(r->p < r->end);
		v |= (uint64_t)(*r->p & 0x7f) << shift;
		if (!(*r->p++ & 0x80))
			return v;
	}
	fail_msg("varint longer than 10 bytes");
	return 0;
}

/* Next field: returns false at the end. For PB_LEN, *sub is the body. */
static bool rd_field(struct rd *r, uint32_t *field, uint64_t *v, struct rd *sub)
{
	uint64_t key, len;

	if (r->p == r->end)
		return false;
	key = rd_varint(r);
	*field = (uint32_t)(key >> 3);
	switch (key & 7) {
	case 0:
		*v = rd_varint(r);
		return true;
	case 2:
		len = rd_varint(r);
		assert_true(len <= (uint64_t)(r->end - r->p));
		sub->p = r->p;
		sub->end = r->p + len;
		r->p += len;
		*v = len;
		return true;
	}
	fail_msg("unexpected wire type %u", (unsigned)(key & 7));
	return false;
}

static void varints_round_trip_at_every_length(void **state)
{
	static const uint64_t vals[] = { 0, 1, 127, 128, 300, 16383, 16384,
		(1ULL << 35) - 1, 1ULL << 56, UINT64_MAX };
	struct pb_buf b = { 0 };
	struct rd r;

	(void)state;
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		pb_varint(&b, vals[i]);
	r = (struct rd){ b.p, b.p + b.len };
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		assert_int_equal(rd_varint(&r), vals[i]);
	assert_ptr_equal(r.p, r.end);
	/* 300 is the protobuf documentation's example: ac 02 */
	pb_free(&b);
	pb_varint(&b, 300);
	assert_int_equal(b.len, 2);
	assert_int_equal(b.p[0], 0xac);
	assert_int_equal(b.p[1], 0x02);
	pb_free(&b);
}

static void nested_messages_get_their_length_in_front(void **state)
{
	struct pb_buf b = { 0 };
	struct rd r, sub, sub2;
	uint32_t f;
	uint64_t v;
	size_t outer, inner;
	char big[300];

	(void)state;
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	pb_uint64(&b, 1, 5);
	outer = pb_begin(&b);
	pb_int64(&b, 1, -2);
	inner = pb_begin(&b);
	pb_string(&b, 2, big);		/* a body over 127 bytes: 2-byte length */
	pb_end(&b, 7, inner);
	pb_bool(&b, 3, 1);
	pb_end(&b, 4, outer);
	pb_uint64_opt(&b, 9, 0);	/* not written */
	assert_int_equal(b.err, 0);

	r = (struct rd){ b.p, b.p + b.len };
	assert_true(rd_field(&r, &f, &v, &sub));
	assert_int_equal(f, 1);
	assert_int_equal(v, 5);
	assert_true(rd_field(&r, &f, &v, &sub));
	assert_int_equal(f, 4);
	assert_false(rd_field(&r, &f, &v, &sub2));

	assert_true(rd_field(&sub, &f, &v, &sub2));
	assert_int_equal(f, 1);
	assert_int_equal((int64_t)v, -2);
	assert_true(rd_field(&sub, &f, &v, &sub2));
	assert_int_equal(f, 7);
	{
		struct rd s3;

		assert_true(rd_field(&sub2, &f, &v, &s3));
		assert_int_equal(f, 2);
		assert_int_equal(v, strlen(big));
		assert_memory_equal(s3.p, big, strlen(big));
	}
	assert_true(rd_field(&sub, &f, &v, &sub2));
	assert_int_equal(f, 3);
	assert_int_equal(v, 1);
	assert_false(rd_field(&sub, &f, &v, &sub2));
	pb_free(&b);
}

/* ---- the profile ---- */

struct decoded {
	char *strings[64];
	size_t nr_strings;
	int64_t types[4][2];
	size_t nr_types;
	struct { uint64_t locs[8]; size_t nr_locs; int64_t vals[4]; size_t nr_vals;
		 int64_t label[4][3]; size_t nr_labels; } samples[16];
	size_t nr_samples;
	struct { uint64_t id, mapping, address, func, lines[4]; size_t nr_lines; } locs[32];
	size_t nr_locs;
	struct { uint64_t id; int64_t name, file; } funcs[32];
	size_t nr_funcs;
	struct { uint64_t id, start, limit, offset; int64_t file, build_id; bool has_functions; } maps[8];
	size_t nr_maps;
	int64_t time_nanos, duration, period, period_type[2], default_type;
};

static void packed(struct rd *r, uint64_t *out, size_t *nr, size_t cap)
{
	while (r->p < r->end) {
		assert_true(*nr < cap);
		out[(*nr)++] = rd_varint(r);
	}
}

static void decode(const uint8_t *data, size_t len, struct decoded *d)
{
	struct rd r = { data, data + len }, m, s, t;
	uint32_t f, g, h;
	uint64_t v, w, x;

	memset(d, 0, sizeof(*d));
	while (rd_field(&r, &f, &v, &m)) {
		switch (f) {
		case 1:
			while (rd_field(&m, &g, &w, &s))
				d->types[d->nr_types][g - 1] = (int64_t)w;
			d->nr_types++;
			break;
		case 2: {
			__typeof__(d->samples[0]) *sp = &d->samples[d->nr_samples++];
			uint64_t vals[4];

			while (rd_field(&m, &g, &w, &s)) {
				if (g == 1) {
					packed(&s, sp->locs, &sp->nr_locs, 8);
				} else if (g == 2) {
					size_t n = 0;

					packed(&s, vals, &n, 4);
					for (size_t i = 0; i < n; i++)
						sp->vals[i] = (int64_t)vals[i];
					sp->nr_vals = n;
				} else if (g == 3) {
					assert_true(sp->nr_labels < 4);
					while (rd_field(&s, &h, &x, &t))
						sp->label[sp->nr_labels][h - 1] = (int64_t)x;
					sp->nr_labels++;
				}
			}
			break;
		}
		case 3: {
			__typeof__(d->maps[0]) *mp = &d->maps[d->nr_maps++];

			while (rd_field(&m, &g, &w, &s)) {
				if (g == 1) mp->id = w;
				if (g == 2) mp->start = w;
				if (g == 3) mp->limit = w;
				if (g == 4) mp->offset = w;
				if (g == 5) mp->file = (int64_t)w;
				if (g == 6) mp->build_id = (int64_t)w;
				if (g == 7) mp->has_functions = w;
			}
			break;
		}
		case 4: {
			__typeof__(d->locs[0]) *lp = &d->locs[d->nr_locs++];

			while (rd_field(&m, &g, &w, &s)) {
				if (g == 1) lp->id = w;
				if (g == 2) lp->mapping = w;
				if (g == 3) lp->address = w;
				if (g == 4) {
					while (rd_field(&s, &h, &x, &t))
						if (h == 1)
							lp->func = x;
					assert_true(lp->nr_lines < 4);
					lp->lines[lp->nr_lines++] = lp->func;
				}
			}
			break;
		}
		case 5: {
			__typeof__(d->funcs[0]) *fp = &d->funcs[d->nr_funcs++];

			while (rd_field(&m, &g, &w, &s)) {
				if (g == 1) fp->id = w;
				if (g == 2) fp->name = (int64_t)w;
				if (g == 4) fp->file = (int64_t)w;
			}
			break;
		}
		case 6:
			assert_true(d->nr_strings < 64);
			d->strings[d->nr_strings++] = strndup((const char *)m.p, v);
			break;
		case 9: d->time_nanos = (int64_t)v; break;
		case 10: d->duration = (int64_t)v; break;
		case 11:
			while (rd_field(&m, &g, &w, &s))
				d->period_type[g - 1] = (int64_t)w;
			break;
		case 12: d->period = (int64_t)v; break;
		case 14: d->default_type = (int64_t)v; break;
		}
	}
}

static void decoded_free(struct decoded *d)
{
	for (size_t i = 0; i < d->nr_strings; i++)
		free(d->strings[i]);
}

static const char *str(const struct decoded *d, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < d->nr_strings);
	return d->strings[i];
}

/* p's profile, with the value columns of ev[0..nr), encoded and read
 * back into d (which copies what it keeps: free it with decoded_free). */
static void encode_and_decode(struct cs_pprof *p,
			      const struct cs_pprof_event *ev, size_t nr,
			      struct decoded *d)
{
	uint8_t *data;
	size_t len;

	assert_int_equal(cs_pprof_encode(p, ev, nr, &data, &len), 0);
	decode(data, len, d);
	free(data);
}

/* A sample's label: the string (or the number, printed) under key. */
static const char *label(const struct decoded *d, size_t sample,
			 const char *key, char *buf, size_t len)
{
	for (size_t i = 0; i < d->samples[sample].nr_labels; i++) {
		const int64_t *l = d->samples[sample].label[i];

		if (strcmp(str(d, l[0]), key))
			continue;
		if (l[1])
			return str(d, l[1]);
		snprintf(buf, len, "%" PRId64, l[2]);
		return buf;
	}
	return NULL;
}

static const char *loc_func_name(const struct decoded *d, uint64_t loc_id)
{
	for (size_t i = 0; i < d->nr_locs; i++) {
		if (d->locs[i].id != loc_id)
			continue;
		for (size_t j = 0; j < d->nr_funcs; j++)
			if (d->funcs[j].id == d->locs[i].func)
				return str(d, d->funcs[j].name);
		return NULL;
	}
	fail_msg("no location %" PRIu64, loc_id);
	return NULL;
}

static const uint8_t bid[20] = { 0x28, 0xc0, 0x9c, 0x46, 0xa2, 0xe0, 0x8a, 0x1a,
	0x41, 0x95, 0xa5, 0x7a, 0x1d, 0xef, 0xbe, 0x8d, 0x37, 0x7a, 0xa1, 0x56 };

static struct cs_frame uf(const char *sym, uint64_t addr)
{
	return (struct cs_frame){ .addr = addr, .cpumode = CS_MISC_USER,
		.kind = CS_FRAME_ADDR,
		.loc = { .sym = sym, .dso_name = "/opt/fixt/workload",
			 .map_start = 0x5000, .map_end = 0x9000, .map_pgoff = 0x1000,
			 .build_id = bid, .build_id_size = 20 } };
}

static struct cs_frame kf(const char *sym, uint64_t addr)
{
	return (struct cs_frame){ .addr = addr, .cpumode = CS_MISC_KERNEL,
		.kind = CS_FRAME_ADDR,
		.loc = { .sym = sym, .dso_name = "[kernel.kallsyms]", .kernel = true,
			 .map_start = 0xffffffff81000000ULL,
			 .map_end = 0xffffffff83000000ULL } };
}

static void profile_decodes_to_what_was_added(void **state)
{
	struct cs_pprof_opts o = { .end_nanos = 5000000000LL };
	struct cs_pprof *p;
	struct cs_frame a[] = { uf("leaf", 0x5100), uf("main", 0x5200) };
	struct cs_frame b[] = { kf("schedule", 0xffffffff81000100ULL),
		{ .cpumode = CS_MISC_USER, .kind = CS_FRAME_MISSING_USER,
		  .addr = 0x123, .missing = CS_MISSING_END } };
	struct cs_pprof_event ev[] = { { .name = "cpu-clock", .freq = 4000 } };
	struct decoded d;
	int64_t count = 0, ns = 0;

	(void)state;
	assert_int_equal(cs_pprof_new(&o, &p), 0);
	assert_int_equal(cs_pprof_add(p, 0, 7, 8, "work", 1000, a, 2, 250000), 0);
	assert_int_equal(cs_pprof_add(p, 0, 7, 8, "work", 2000, a, 2, 250000), 0);
	assert_int_equal(cs_pprof_add(p, 0, 7, 9, "work", 3000, b, 2, 240000), 0);
	assert_int_equal(cs_pprof_samples(p), 3);
	encode_and_decode(p, ev, 1, &d);

	assert_string_equal(str(&d, 0), "");
	assert_int_equal(d.nr_types, 2);
	assert_string_equal(str(&d, d.types[0][0]), "samples");
	assert_string_equal(str(&d, d.types[0][1]), "count");
	assert_string_equal(str(&d, d.types[1][0]), "cpu");
	assert_string_equal(str(&d, d.types[1][1]), "nanoseconds");
	assert_string_equal(str(&d, d.period_type[0]), "cpu");
	assert_int_equal(d.period, 250000);	/* 1 s / 4000 Hz */
	assert_string_equal(str(&d, d.default_type), "cpu");
	assert_int_equal(d.duration, 2000);
	assert_int_equal(d.time_nanos, 5000000000LL - 2000);

	assert_int_equal(d.nr_samples, 2);	/* one per unique stack */
	for (size_t i = 0; i < d.nr_samples; i++) {
		assert_int_equal(d.samples[i].nr_vals, 2);
		count += d.samples[i].vals[0];
		ns += d.samples[i].vals[1];
		char buf[32];

		assert_string_equal(label(&d, i, "pid", buf, sizeof(buf)), "7");
		assert_string_equal(label(&d, i, "comm", buf, sizeof(buf)), "work");
	}
	{
		char buf[32];

		assert_string_equal(label(&d, 1, "tid", buf, sizeof(buf)), "9");
	}
	assert_int_equal(count, 3);
	assert_int_equal(ns, 740000);

	/* leaf first */
	assert_int_equal(d.samples[0].nr_locs, 2);
	assert_string_equal(loc_func_name(&d, d.samples[0].locs[0]), "leaf");
	assert_string_equal(loc_func_name(&d, d.samples[0].locs[1]), "main");
	assert_string_equal(loc_func_name(&d, d.samples[1].locs[0]), "schedule");
	assert_string_equal(loc_func_name(&d, d.samples[1].locs[1]),
			    "[user stack missing: end]");

	/* user mapping first (pprof's main binary), with its build id */
	assert_int_equal(d.nr_maps, 2);
	assert_int_equal(d.maps[0].id, 1);
	assert_int_equal(d.maps[0].start, 0x5000);
	assert_int_equal(d.maps[0].limit, 0x9000);
	assert_int_equal(d.maps[0].offset, 0x1000);
	assert_string_equal(str(&d, d.maps[0].file), "/opt/fixt/workload");
	assert_string_equal(str(&d, d.maps[0].build_id),
			    "28c09c46a2e08a1a4195a57a1defbe8d377aa156");
	assert_true(d.maps[0].has_functions);
	assert_string_equal(str(&d, d.maps[1].file), "[kernel.kallsyms]");
	for (size_t i = 0; i < d.nr_locs; i++) {
		if (d.locs[i].address == 0x5100)
			assert_int_equal(d.locs[i].mapping, 1);
		if (d.locs[i].address == 0xffffffff81000100ULL)
			assert_int_equal(d.locs[i].mapping, 2);
	}
	decoded_free(&d);
	cs_pprof_free(p);
}

static void each_event_gets_its_own_value_column(void **state)
{
	struct cs_pprof_opts o = { 0 };
	struct cs_pprof *p;
	struct cs_frame a[] = { uf("main", 0x5200) };
	struct cs_pprof_event ev[] = { { .name = "cpu-clock", .period = 1000 },
				       { .name = "dummy:u" },
				       { .name = "page-faults", .period = 1 } };
	struct decoded d;

	(void)state;
	assert_int_equal(cs_pprof_new(&o, &p), 0);
	assert_int_equal(cs_pprof_add(p, 0, 1, 1, "w", 1, a, 1, 1000), 0);
	assert_int_equal(cs_pprof_add(p, 2, 1, 1, "w", 2, a, 1, 3), 0);
	encode_and_decode(p, ev, 3, &d);
	assert_int_equal(d.nr_types, 3);	/* samples, cpu, page-faults */
	assert_string_equal(str(&d, d.types[2][0]), "page-faults");
	assert_string_equal(str(&d, d.types[2][1]), "count");
	assert_int_equal(d.nr_samples, 2);
	assert_int_equal(d.samples[0].vals[1], 1000);
	assert_int_equal(d.samples[0].vals[2], 0);
	assert_int_equal(d.samples[1].vals[1], 0);
	assert_int_equal(d.samples[1].vals[2], 3);
	assert_int_equal(d.time_nanos, 0);	/* no wall clock given */
	decoded_free(&d);
	cs_pprof_free(p);
}

static void written_file_is_gzip(void **state)
{
	struct cs_pprof_opts o = { 0 };
	struct cs_pprof *p;
	struct cs_frame a[] = { uf("main", 0x5200) };
	struct cs_pprof_event ev[] = { { .name = "cpu-clock", .period = 1000 } };
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	(void)state;
	assert_int_equal(cs_pprof_new(&o, &p), 0);
	assert_int_equal(cs_pprof_add(p, 0, 1, 1, "w", 1, a, 1, 1000), 0);
	m = open_memstream(&text, &len);
	assert_int_equal(cs_pprof_write(p, ev, 1, m), 0);
	fclose(m);
	assert_true(len > 18);
	assert_int_equal((uint8_t)text[0], 0x1f);	/* gzip magic */
	assert_int_equal((uint8_t)text[1], 0x8b);
	free(text);
	cs_pprof_free(p);
}

/* pprof calls the first mapping the profile's binary */
static void program_mapping_comes_before_libraries_and_kernel(void **state)
{
	struct cs_pprof_opts o = { 0 };
	struct cs_pprof *p;
	struct cs_frame lib = { .addr = 0x7f0000001000, .cpumode = CS_MISC_USER,
		.kind = CS_FRAME_ADDR, .loc = { .sym = "start_thread",
		.dso_name = "/lib/libc.so.6", .map_start = 0x7f0000000000,
		.map_end = 0x7f0000100000 } };
	struct cs_frame a[] = { kf("schedule", 0xffffffff81000100ULL), lib };
	struct cs_frame b[] = { uf("main", 0x5200), lib };
	struct cs_pprof_event ev[] = { { .name = "cpu-clock", .period = 1 } };
	struct decoded d;

	(void)state;
	assert_int_equal(cs_pprof_new(&o, &p), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(cs_pprof_add(p, 0, 1, 1, "w", 1, a, 2, 1), 0);
	assert_int_equal(cs_pprof_add(p, 0, 1, 1, "w", 2, b, 2, 1), 0);
	encode_and_decode(p, ev, 1, &d);
	assert_int_equal(d.nr_maps, 3);
	assert_string_equal(str(&d, d.maps[0].file), "/opt/fixt/workload");
	assert_string_equal(str(&d, d.maps[1].file), "/lib/libc.so.6");
	assert_string_equal(str(&d, d.maps[2].file), "[kernel.kallsyms]");
	for (size_t i = 0; i < d.nr_locs; i++)
		if (d.locs[i].address == 0x5200)
			assert_int_equal(d.locs[i].mapping, 1);
		else if (d.locs[i].address == 0x7f0000001000)
			assert_int_equal(d.locs[i].mapping, 2);
		else
			assert_int_equal(d.locs[i].mapping, 3);
	decoded_free(&d);
	cs_pprof_free(p);
}

static const char *func_name(const struct decoded *d, uint64_t id)
{
	for (size_t j = 0; j < d->nr_funcs; j++)
		if (d->funcs[j].id == id)
			return str(d, d->funcs[j].name);
	fail_msg("no function %" PRIu64, id);
	return NULL;
}

/* profile.proto: a location's lines are the functions inlined there,
 * innermost first, the function they sit in last */
static void inlined_functions_are_lines_of_one_location(void **state)
{
	struct cs_pprof_opts o = { 0 };
	struct cs_pprof *p;
	struct cs_frame a[] = { uf("inner", 0x5100), uf("middle", 0x5100),
				uf("outer", 0x5100), uf("main", 0x5200) };
	uint8_t kinds[] = { CS_OUT_INLINED, CS_OUT_INLINED, 0, 0 };
	struct cs_pprof_event ev[] = { { .name = "cpu-clock", .period = 1 } };
	struct decoded d;

	(void)state;
	assert_int_equal(cs_pprof_new(&o, &p), 0);
	assert_int_equal(cs_pprof_add_inlined(p, 0, 1, 1, "w", 1, a, kinds, 4, 1), 0);
	assert_int_equal(cs_pprof_add_inlined(p, 0, 1, 1, "w", 2, a, kinds, 4, 1), 0);
	encode_and_decode(p, ev, 1, &d);
	assert_int_equal(d.nr_samples, 1);
	assert_int_equal(d.samples[0].nr_locs, 2);	/* outer's and main's */
	assert_int_equal(d.nr_locs, 2);
	for (size_t i = 0; i < d.nr_locs; i++) {
		if (d.locs[i].address != 0x5100) {
			assert_int_equal(d.locs[i].nr_lines, 1);
			continue;
		}
		assert_int_equal(d.locs[i].nr_lines, 3);
		assert_string_equal(func_name(&d, d.locs[i].lines[0]), "inner");
		assert_string_equal(func_name(&d, d.locs[i].lines[1]), "middle");
		assert_string_equal(func_name(&d, d.locs[i].lines[2]), "outer");
	}
	decoded_free(&d);
	cs_pprof_free(p);
}

/* Adds the same samples to p: a comm in a buffer changed after each,
 * none, inlined functions, off-CPU time, a stack of no frames and one of
 * CS_FRAMES_MAX (larger than a batch of the hand-off), a third event. */
static void add_every_kind(struct cs_pprof *p, struct cs_frame *deep)
{
	struct cs_frame a[] = { uf("inner", 0x5100), uf("outer", 0x5100),
				uf("main", 0x5200) };
	struct cs_frame k[] = { kf("schedule", 0xffffffff81000100ULL), uf("main", 0x5200) };
	uint8_t kinds[] = { CS_OUT_INLINED, 0, 0 };
	char comm[16];

	for (int i = 0; i < 3000; i++) {
		snprintf(comm, sizeof(comm), "w%d", i % 7);
		assert_int_equal(cs_pprof_add_inlined(p, (unsigned int)i % 2, 1,
						      (uint32_t)i % 5, comm, (uint64_t)i,
						      a, i % 3 ? kinds : NULL, 3, 10), 0);
		strcpy(comm, "changed");
		assert_int_equal(cs_pprof_add(p, 0, 2, 3, NULL, (uint64_t)i, a + 2,
					      (size_t)i % 2, 1), 0);
		assert_int_equal(cs_pprof_add_off_cpu(p, 1, CS_OFF_CPU_SLEEPING, 1, 1,
						      "s", (uint64_t)i, k, NULL, 2, 700), 0);
	}
	assert_int_equal(cs_pprof_add(p, 0, 4, 4, "deep", 5000, deep, CS_FRAMES_MAX, 1), 0);
	/* an event first seen in the last sample, still in the last batch */
	assert_int_equal(cs_pprof_add(p, 5, 4, 4, "late", 5001, a, 1, 1), 0);
}

/* -j: the samples counted on a thread of their own make the same bytes */
static void counted_on_a_thread_the_same_profile(void **state)
{
	struct cs_pprof_opts one = { .end_nanos = 1 }, two = { .end_nanos = 1, .jobs = 2 };
	struct cs_pprof_event ev[] = { { .name = "cpu-clock", .period = 1 },
				       { .name = "sched:sched_switch" } };
	struct cs_frame *deep = malloc(CS_FRAMES_MAX * sizeof(*deep));
	struct cs_pprof *p1, *p2;
	uint8_t *d1, *d2;
	size_t l1, l2;

	(void)state;
	assert_non_null(deep);
	for (size_t i = 0; i < CS_FRAMES_MAX; i++)
		deep[i] = uf("deep", 0x6000 + i);
	assert_int_equal(cs_pprof_new(&one, &p1), 0);
	assert_int_equal(cs_pprof_new(&two, &p2), 0);
	add_every_kind(p1, deep);
	add_every_kind(p2, deep);
	/* encoding waits for the last sample (of the second event) first */
	assert_int_equal(cs_pprof_encode(p2, ev, 2, &d2, &l2), 0);
	assert_int_equal(cs_pprof_encode(p1, ev, 2, &d1, &l1), 0);
	assert_int_equal(cs_pprof_samples(p2), cs_pprof_samples(p1));
	assert_int_equal(cs_pprof_samples(p2), 3 * 3000 + 2);
	assert_int_equal(l1, l2);
	assert_memory_equal(d1, d2, l1);
	free(d1);
	free(d2);
	cs_pprof_free(p1);
	cs_pprof_free(p2);
	free(deep);
}

/* -j: the file compressed on a thread of its own as it is encoded, in
 * pieces of 64 KiB, is the file compressed in one piece */
static void written_on_a_thread_the_same_file(void **state)
{
	struct cs_pprof_opts one = { .end_nanos = 1 }, two = { .end_nanos = 1, .jobs = 2 };
	struct cs_pprof_event ev[] = { { .name = "cpu-clock", .period = 1 } };
	struct cs_pprof *p[2];
	char *text[2];
	size_t len[2];

	(void)state;
	assert_int_equal(cs_pprof_new(&one, &p[0]), 0);
	assert_int_equal(cs_pprof_new(&two, &p[1]), 0);
	for (int k = 0; k < 2; k++) {
		FILE *f = open_memstream(&text[k], &len[k]);

		assert_non_null(f);
		/* distinct stacks: a few hundred KiB of samples */
		for (uint64_t i = 0; i < 20000; i++) {
			struct cs_frame a[] = { uf("leaf", 0x5000 + i), uf("main", 0x5200) };

			assert_int_equal(cs_pprof_add(p[k], 0, 1, 1, "w", i, a, 2, 1), 0);
		}
		assert_int_equal(cs_pprof_write(p[k], ev, 1, f), 0);
		fclose(f);
	}
	assert_true(len[0] > 64 * 1024);
	assert_int_equal(len[0], len[1]);
	assert_memory_equal(text[0], text[1], len[0]);
	for (int k = 0; k < 2; k++) {
		free(text[k]);
		cs_pprof_free(p[k]);
	}
}

/* a profile freed while samples are still on their way is not leaked */
static void freed_while_counting(void **state)
{
	struct cs_pprof_opts o = { .jobs = 2 };
	struct cs_frame a[] = { uf("main", 0x5200) };
	struct cs_pprof *p;

	(void)state;
	assert_int_equal(cs_pprof_new(&o, &p), 0);
	for (int i = 0; i < 10000; i++)
		assert_int_equal(cs_pprof_add(p, 0, 1, 1, "w", 1, a, 1, 1), 0);
	cs_pprof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(varints_round_trip_at_every_length),
		cmocka_unit_test(nested_messages_get_their_length_in_front),
		cmocka_unit_test(profile_decodes_to_what_was_added),
		cmocka_unit_test(each_event_gets_its_own_value_column),
		cmocka_unit_test(written_file_is_gzip),
		cmocka_unit_test(program_mapping_comes_before_libraries_and_kernel),
		cmocka_unit_test(inlined_functions_are_lines_of_one_location),
		cmocka_unit_test(counted_on_a_thread_the_same_profile),
		cmocka_unit_test(written_on_a_thread_the_same_file),
		cmocka_unit_test(freed_while_counting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
