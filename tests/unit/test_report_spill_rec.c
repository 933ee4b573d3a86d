/* test_report_spill_rec.c - spill mode's records as bytes
 * (src/outputs/report_spill_rec.c): what is written is read back the
 * same, numbers at the boundaries of their byte counts too, and a record
 * cut short or out of range (a name id the report never gave among
 * them) is an error naming its offset; a report's temporary file damaged
 * byte by byte is written or refused with that error, never followed -
 * the spill and aside files as they lie on disk, and every byte the
 * report reads back from any of its temporary files (spill, partitions,
 * runs) as it reads it. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "abi/perf_abi.h"
#include "outputs/report_int.h"

/* The names the records' frames give by id */
static struct report_names names;

/* Every temporary file is read back by pread() (report_tmp_read()): this
 * one, linked into the test before libc's, can damage one byte of all
 * that the report reads, counted from when it is armed - so that the
 * partition and run files, made and read inside cs_report_write(), are
 * damaged as much as the spill file the test can reach */
static struct {
	bool armed;
	uint64_t at;		/* the byte to damage, of all read */
	uint64_t seen;		/* bytes read since armed */
	uint8_t flip;		/* xor'ed into it; 0: the byte zeroed */
} damage;

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	ssize_t r = syscall(SYS_pread64, fd, buf, n, off);

	if (r <= 0 || !damage.armed)
		return r;
	if (damage.at >= damage.seen && damage.at - damage.seen < (uint64_t)r) {
		uint8_t *b = (uint8_t *)buf + (damage.at - damage.seen);

		*b = damage.flip ? *b ^ damage.flip : 0;
	}
	damage.seen += (uint64_t)r;
	return r;
}

struct file {
	struct report_tmp f;
	char err[REPORT_ERR_LEN];
	uint64_t written;
};

static void file_open(struct file *t)
{
	memset(t, 0, sizeof(*t));
	assert_int_equal(report_tmp_open(&t->f, 64, t->err, &t->written), 0);
}

/* The frame's names' ids, as the report gives them */
static void name_frame(struct report_spill_frame *f)
{
	assert_int_equal(report_names_id(&names, f->key.sym, &f->sym_id), 0);
	assert_int_equal(report_names_id(&names, f->key.dso, &f->dso_id), 0);
}

static void put_rec(struct file *t, const struct report_spill_rec *h,
		    struct report_spill_frame *frames)
{
	struct report_spill_last last;
	uint8_t buf[REPORT_SPILL_FRAME_MAX];

	assert_int_equal(report_tmp_write(&t->f, buf,
					  report_spill_rec_encode(h, &last, buf)), 0);
	for (uint32_t i = 0; i < h->nr; i++) {
		name_frame(&frames[i]);
		assert_int_equal(report_tmp_write(&t->f, buf,
				 report_spill_frame_encode(&frames[i], &last, buf)), 0);
	}
}

static void put_bytes(struct file *t, const uint8_t *p, size_t n)
{
	assert_int_equal(report_tmp_write(&t->f, p, n), 0);
}

/* Reads [0, end) of the file: the first record's result */
static int get_rec(struct file *t, uint64_t end, uint32_t nr_threads,
		   struct report_spill_rec *h, struct report_spill_frame *frames)
{
	struct report_tmp_reader rd;
	int err;

	assert_int_equal(report_tmp_reader_open(&rd, &t->f, 0, end, 16), 0);
	err = report_spill_rec_read(&rd, nr_threads, &names, h, frames);
	report_tmp_reader_close(&rd);
	return err;
}

static const uint64_t edges[] = {
	0, 1, 127, 128, 16383, 16384, (1ULL << 21) - 1, 1ULL << 21,
	UINT32_MAX, 1ULL << 35, (1ULL << 56) - 1, 1ULL << 56,
	(1ULL << 63) - 1, 1ULL << 63, UINT64_MAX - 1, UINT64_MAX,
};
#define NR_EDGES (sizeof(edges) / sizeof(edges[0]))

static void numbers_take_seven_bits_a_byte(void **state)
{
	uint8_t buf[REPORT_VARINT_MAX];

	(void)state;
	assert_int_equal(cs_varint_put(buf, 0), 1);
	assert_int_equal(buf[0], 0);
	assert_int_equal(cs_varint_put(buf, 127), 1);
	assert_int_equal(cs_varint_put(buf, 128), 2);
	assert_int_equal(buf[0], 0x80);
	assert_int_equal(buf[1], 0x01);
	assert_int_equal(cs_varint_put(buf, 16383), 2);
	assert_int_equal(cs_varint_put(buf, 16384), 3);
	assert_int_equal(cs_varint_put(buf, (1ULL << 63) - 1), 9);
	assert_int_equal(cs_varint_put(buf, 1ULL << 63), 10);
	assert_int_equal(cs_varint_put(buf, UINT64_MAX), 10);
	assert_int_equal(buf[9], 0x01);
}

static void records_at_the_numbers_edges_read_back_the_same(void **state)
{
	static char s1[] = "main", s2[] = "helper", d1[] = "/bin/x";
	struct report_spill_frame *in = calloc(CS_FRAMES_MAX, sizeof(*in));
	struct report_spill_frame *out = calloc(CS_FRAMES_MAX, sizeof(*out));
	struct report_spill_rec h, got;
	struct report_tmp_reader rd;
	struct file t;

	(void)state;
	assert_non_null(in);
	assert_non_null(out);
	file_open(&t);
	/* every edge in every field; frames that go up and down by any
	 * step, with a sym_start equal to the address, above and below it */
	for (size_t e = 0; e < NR_EDGES; e++) {
		h = (struct report_spill_rec){
			.seq = edges[e], .count = edges[(e + 1) % NR_EDGES],
			.period = edges[(e + 2) % NR_EDGES],
			.thread = (uint32_t)(edges[e] % UINT32_MAX),
			.nr = (uint32_t)(e * 7 % 20),
		};
		for (uint32_t i = 0; i < h.nr; i++) {
			uint64_t a = edges[(e + i) % NR_EDGES];

			in[i] = (struct report_spill_frame){
				.key = {
					.sym = i % 3 == 0 ? NULL : i % 3 == 1 ? s1 : s2,
					.dso = i % 2 ? d1 : NULL, .addr = a,
					.flags = (uint32_t)edges[(e + 2 * i) % NR_EDGES],
				},
				.sym_start = i % 3 == 0 ? a : edges[(e + 3 * i) % NR_EDGES],
			};
		}
		put_rec(&t, &h, in);
	}
	/* the most frames a record has */
	h = (struct report_spill_rec){ .seq = 5, .count = 1, .period = 1000,
				       .thread = 3, .nr = CS_FRAMES_MAX };
	for (uint32_t i = 0; i < CS_FRAMES_MAX; i++)
		in[CS_FRAMES_MAX - 1 - i] = (struct report_spill_frame){
			.key = { .sym = s1, .dso = d1, .addr = 0x400000 + i * 16 },
			.sym_start = 0x400000 + i * 16 + (i & 1),
		};
	put_rec(&t, &h, in);

	assert_int_equal(report_tmp_reader_open(&rd, &t.f, 0, t.f.size, 32), 0);
	for (size_t e = 0; e < NR_EDGES; e++) {
		assert_int_equal(report_spill_rec_read(&rd, UINT32_MAX, &names, &got, out), 0);
		assert_true(got.seq == edges[e]);
		assert_true(got.count == edges[(e + 1) % NR_EDGES]);
		assert_true(got.period == edges[(e + 2) % NR_EDGES]);
		assert_int_equal(got.thread, (uint32_t)(edges[e] % UINT32_MAX));
		assert_int_equal(got.nr, (uint32_t)(e * 7 % 20));
		for (uint32_t i = 0; i < got.nr; i++) {
			uint64_t a = edges[(e + i) % NR_EDGES];

			assert_ptr_equal(out[i].key.sym,
					 i % 3 == 0 ? NULL : i % 3 == 1 ? s1 : s2);
			assert_ptr_equal(out[i].key.dso, i % 2 ? d1 : NULL);
			assert_true(out[i].key.addr == a);
			assert_int_equal(out[i].key.flags,
					 (uint32_t)edges[(e + 2 * i) % NR_EDGES]);
			assert_true(out[i].sym_start ==
				    (i % 3 == 0 ? a : edges[(e + 3 * i) % NR_EDGES]));
		}
	}
	assert_int_equal(report_spill_rec_read(&rd, UINT32_MAX, &names, &got, out), 0);
	assert_int_equal(got.nr, CS_FRAMES_MAX);
	assert_memory_equal(out, in, CS_FRAMES_MAX * sizeof(*in));
	/* and then the end, cleanly */
	assert_int_equal(report_spill_rec_read(&rd, UINT32_MAX, &names, &got, out), 1);
	assert_string_equal(t.err, "");
	report_tmp_reader_close(&rd);
	report_tmp_close(&t.f);
	free(in);
	free(out);
}

static void a_record_cut_short_anywhere_is_an_error(void **state)
{
	static char s1[] = "main";
	struct report_spill_frame in[3] = {
		{ .key = { .sym = s1, .addr = 0x1000 }, .sym_start = 0x1000 },
		{ .key = { .dso = s1, .addr = 1ULL << 40 }, .sym_start = 7 },
		{ .key = { .flags = 1u << 31 }, .sym_start = UINT64_MAX },
	};
	struct report_spill_rec h = { .seq = 300, .count = 2, .period = 1ULL << 40,
				      .thread = 1, .nr = 3 }, got;
	struct report_spill_frame out[3];
	struct file t;

	(void)state;
	file_open(&t);
	put_rec(&t, &h, in);
	assert_int_equal(get_rec(&t, t.f.size, 2, &got, out), 0);
	/* empty: the end, not an error */
	assert_int_equal(get_rec(&t, 0, 2, &got, out), 1);
	for (uint64_t end = 1; end < t.f.size; end++) {
		t.err[0] = 0;
		assert_int_equal(get_rec(&t, end, 2, &got, out), -EBADMSG);
		assert_non_null(strstr(t.err, "record at offset 0: it ends inside"));
	}
	report_tmp_close(&t.f);
}

static void numbers_and_fields_out_of_range_are_errors(void **state)
{
	static const uint8_t too_long[] = {	/* a 65th bit */
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02,
		0, 0, 0, 0,
	};
	static const uint8_t no_end[] = {	/* eleven bytes, all "more" */
		0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	};
	struct report_spill_frame fr = { .key = { .addr = 1 }, .sym_start = 1 };
	struct report_spill_rec h = { .seq = 1, .count = 1, .period = 1,
				      .thread = 2, .nr = 0 }, got;
	struct report_spill_frame *out = calloc(CS_FRAMES_MAX + 1, sizeof(*out));
	struct report_spill_last last;
	uint8_t buf[REPORT_SPILL_FRAME_MAX];
	struct file t;
	size_t n;

	(void)state;
	assert_non_null(out);
	file_open(&t);
	put_bytes(&t, too_long, sizeof(too_long));
	assert_int_equal(get_rec(&t, t.f.size, 8, &got, out), -EBADMSG);
	assert_non_null(strstr(t.err, "longer than 64 bits"));
	report_tmp_close(&t.f);

	file_open(&t);
	put_bytes(&t, no_end, sizeof(no_end));
	assert_int_equal(get_rec(&t, t.f.size, 8, &got, out), -EBADMSG);
	report_tmp_close(&t.f);

	/* thread 2 of a report of two threads */
	file_open(&t);
	put_rec(&t, &h, NULL);
	assert_int_equal(get_rec(&t, t.f.size, 3, &got, out), 0);
	t.err[0] = 0;
	assert_int_equal(get_rec(&t, t.f.size, 2, &got, out), -EBADMSG);
	assert_non_null(strstr(t.err, "thread"));
	report_tmp_close(&t.f);

	/* one frame more than a stack has: refused before any is read */
	file_open(&t);
	h.nr = CS_FRAMES_MAX + 1;
	put_bytes(&t, buf, report_spill_rec_encode(&h, &last, buf));
	for (uint32_t i = 0; i < h.nr; i++)
		put_bytes(&t, buf, report_spill_frame_encode(&fr, &last, buf));
	assert_int_equal(get_rec(&t, t.f.size, 8, &got, out), -EBADMSG);
	assert_non_null(strstr(t.err, "more frames"));
	report_tmp_close(&t.f);

	/* flags past 32 bits */
	file_open(&t);
	h.nr = 1;
	put_bytes(&t, buf, report_spill_rec_encode(&h, &last, buf));
	n = cs_varint_put(buf, (uint64_t)1 << 33);
	buf[n++] = 0;
	buf[n++] = 0;
	buf[n++] = 0;
	put_bytes(&t, buf, n);
	assert_int_equal(get_rec(&t, t.f.size, 8, &got, out), -EBADMSG);
	assert_non_null(strstr(t.err, "flags"));
	report_tmp_close(&t.f);
	free(out);
}

/* A frame names its symbol and dso by ids the report gave: one past
 * them (a damaged byte) is an error naming the record, not a pointer */
static void a_name_the_report_never_gave_is_an_error(void **state)
{
	static char s1[] = "main", d1[] = "/bin/x";
	struct report_spill_frame fr = { .key = { .sym = s1, .dso = d1, .addr = 8 },
					 .sym_start = 8 };
	struct report_spill_rec h = { .seq = 1, .count = 1, .period = 1,
				      .thread = 0, .nr = 1 }, got;
	struct report_spill_frame out[1];
	struct report_spill_last last;
	uint8_t buf[REPORT_SPILL_REC_MAX];
	struct file t;

	(void)state;
	for (int bad = 0; bad < 3; bad++) {
		name_frame(&fr);
		file_open(&t);
		/* a record before it, so that the offset is not 0 */
		put_rec(&t, &h, &fr);
		put_bytes(&t, buf, report_spill_rec_encode(&h, &last, buf));
		if (bad == 0)
			fr.sym_id = (uint32_t)names.nr;
		else if (bad == 1)
			fr.dso_id = (uint32_t)names.nr;
		else
			fr.sym_id = UINT32_MAX;
		put_bytes(&t, buf, report_spill_frame_encode(&fr, &last, buf));
		assert_int_equal(get_rec(&t, t.f.size, 1, &got, out), 0);
		assert_ptr_equal(out[0].key.sym, s1);
		assert_ptr_equal(out[0].key.dso, d1);
		{
			struct report_tmp_reader rd;
			uint64_t second;

			assert_int_equal(report_tmp_reader_open(&rd, &t.f, 0,
								t.f.size, 16), 0);
			assert_int_equal(report_spill_rec_read(&rd, 1, &names,
							       &got, out), 0);
			second = report_tmp_reader_tell(&rd);
			assert_int_equal(report_spill_rec_read(&rd, 1, &names,
							       &got, out), -EBADMSG);
			report_tmp_reader_close(&rd);
			assert_non_null(strstr(t.err, "temporary file "));
			{
				char want[64];

				snprintf(want, sizeof(want), "record at offset %"
					 PRIu64 ": a frame's name", second);
				assert_non_null(strstr(t.err, want));
			}
		}
		report_tmp_close(&t.f);
	}
}

/* ---- a report's temporary files damaged ----------------------------------- */

static struct cs_frame named_frame(const char *sym, const char *dso, bool kernel)
{
	return (struct cs_frame){
		.cpumode = kernel ? CS_MISC_KERNEL : CS_MISC_USER,
		.kind = CS_FRAME_ADDR, .addr = 0x400000 + (uintptr_t)sym % 4096,
		.loc = { .sym = sym, .dso_name = dso, .kernel = kernel,
			 .sym_start = 0x400000 + (uintptr_t)sym % 4096 },
	};
}

/* Budgets for small_report(): every stack spilled, and made into 256
 * partitions when written; every stack spilled, but into few partitions
 * (a budget each holds 16 of the entries); samples set aside (the tables
 * pass 7/8 of the budget, the input's size not known) */
#define SPILL_ALL	1
#define SPILL_FEW_PARTS	(16 * 128 * 2)
#define SET_ASIDE	2200

/* A report of the budget's kind (above): its samples added, not written */
static struct cs_report *small_report(uint64_t memory)
{
	static const char *const syms[] = { "main", "run", "parse", "emit",
					    "alloc", "copy", "sys_read" };
	struct cs_report_opts o = { .graph = CS_REPORT_GRAPH_CALLER,
				    .graph_min_percent = 0.5,
				    .memory = memory };
	struct cs_report *r;

	assert_int_equal(cs_report_new(&o, &r), 0);
	for (unsigned int i = 0; i < 10; i++) {
		struct cs_frame f[4] = {
			named_frame(syms[i % 7], i % 3 ? "/usr/lib/libc.so.6" :
				    "[kernel.kallsyms]", i % 3 == 0),
			named_frame(syms[(i + 1) % 4], "/opt/w/work", false),
			named_frame(NULL, "/opt/w/work", false),
			named_frame("main", "/opt/w/work", false),
		};

		f[2].addr = 0x1000 + i;
		assert_int_equal(cs_report_add(r, 0, 10, 11 + i % 2, "work", f,
					       NULL, 4, 100 + i), 0);
	}
	assert_int_equal(cs_report_flush(r), 0);
	return r;
}

/* Writes r's report: 0, or the error (its line in cs_report_error()) */
static int write_report(struct cs_report *r)
{
	const char *evnames[] = { "cpu-clock" };
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int err;

	assert_non_null(m);
	err = cs_report_write(r, m, evnames, 1);
	fclose(m);
	free(text);
	return err;
}

/* r's error err after damage: -EBADMSG and one line naming a temporary
 * file and a record's offset; the line (r's) */
static const char *damage_error_line(struct cs_report *r, int err)
{
	const char *line = cs_report_error(r);

	assert_int_equal(err, -EBADMSG);
	assert_non_null(line);
	assert_non_null(strstr(line, "temporary file "));
	assert_non_null(strstr(line, ": record at offset "));
	assert_null(strchr(line, '\n'));
	return line;
}

/* Every byte of a temporary file of samples, damaged (a bit flipped low
 * or high, all of them, zeroed: one way a byte, in turn) before the
 * report is written: the report is written (the byte was a count, say)
 * or it fails with one line naming the temporary file and a record's
 * offset - never a read through an address the byte made up. */
static void damage_each_byte(bool aside)
{
	static const uint8_t flips[] = { 0x01, 0x08, 0x40, 0x80, 0xff };
	struct cs_report *r = small_report(aside ? SET_ASIDE : SPILL_ALL);
	struct report_tmp *f = aside ? r->aside : r->spill;
	uint64_t size;
	size_t failed = 0, runs = 0;

	assert_non_null(f);
	assert_int_equal(report_tmp_flush(f), 0);
	size = f->size;
	assert_true(size > 50);
	assert_int_equal(write_report(r), 0);
	cs_report_free(r);
	/* the two files hold the same records: each damages half the bytes,
	 * each of them every way in turn */
	for (uint64_t off = aside; off < size; off += 2) {
		size_t k = (off / 2) % (sizeof(flips) + 1);
		uint8_t b;
		int err;

		r = small_report(aside ? SET_ASIDE : SPILL_ALL);
		f = aside ? r->aside : r->spill;
		assert_int_equal(report_tmp_flush(f), 0);
		assert_int_equal(f->size, size);
		assert_int_equal(pread(f->fd, &b, 1, (off_t)off), 1);
		b = k < sizeof(flips) ? b ^ flips[k] : 0;
		assert_int_equal(pwrite(f->fd, &b, 1, (off_t)off), 1);
		err = write_report(r);
		runs++;
		if (err) {
			damage_error_line(r, err);
			failed++;
		}
		cs_report_free(r);
	}
	/* the names' bytes are among them: some damage is seen */
	assert_true(failed > 0 && failed < runs);
}

/* Every byte the report reads back, spill file, partitions and runs,
 * damaged in turn as it is read (one way a byte, as above): the report
 * is written or fails with one line naming a temporary file and an
 * offset. Damage the partitions and runs see must be among the errors:
 * their readers' checks are what this pins. */
static void damage_each_byte_read(void)
{
	static const uint8_t flips[] = { 0x01, 0x08, 0x40, 0x80, 0xff, 0 };
	struct cs_report *r = small_report(SPILL_FEW_PARTS);
	uint64_t total;
	size_t failed = 0, in_parts = 0, in_runs = 0;

	damage = (typeof(damage)){ .armed = true, .at = UINT64_MAX };
	assert_int_equal(write_report(r), 0);
	total = damage.seen;
	cs_report_free(r);
	assert_true(total > 100);
	for (uint64_t at = 0; at < total; at++) {
		int err;

		r = small_report(SPILL_FEW_PARTS);
		damage = (typeof(damage)){ .armed = true, .at = at,
					   .flip = flips[at % sizeof(flips)] };
		err = write_report(r);
		damage.armed = false;
		if (err) {
			const char *line = damage_error_line(r, err);

			in_parts += strstr(line, "occurrence") != NULL;
			in_runs += strstr(line, "an entry") != NULL;
			failed++;
		}
		cs_report_free(r);
	}
	assert_true(failed > 0 && failed < total);
	assert_true(in_parts > 0);
	assert_true(in_runs > 0);
}

static void damaged_spill_files_are_errors_not_crashes(void **state)
{
	(void)state;
	damage_each_byte(false);
}

static void damaged_aside_files_are_errors_not_crashes(void **state)
{
	(void)state;
	damage_each_byte(true);
}

static void damage_read_back_is_an_error_not_a_crash(void **state)
{
	(void)state;
	damage_each_byte_read();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(numbers_take_seven_bits_a_byte),
		cmocka_unit_test(records_at_the_numbers_edges_read_back_the_same),
		cmocka_unit_test(a_record_cut_short_anywhere_is_an_error),
		cmocka_unit_test(numbers_and_fields_out_of_range_are_errors),
		cmocka_unit_test(a_name_the_report_never_gave_is_an_error),
		cmocka_unit_test(damaged_spill_files_are_errors_not_crashes),
		cmocka_unit_test(damaged_aside_files_are_errors_not_crashes),
		cmocka_unit_test(damage_read_back_is_an_error_not_a_crash),
	};

	int failed;

	/* a report made from temporary files at a budget this small makes
	 * 256 partitions: a run of the damage tests is their files'
	 * creation, cheaper in memory */
	if (!getenv("TMPDIR") && !access("/dev/shm", W_OK))
		setenv("TMPDIR", "/dev/shm", 1);
	failed = cmocka_run_group_tests_name("report's spill records",
						 tests, NULL, NULL);

	report_names_free(&names);
	return failed;
}
