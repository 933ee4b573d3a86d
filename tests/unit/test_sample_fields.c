/* test_sample_fields.c - every sample head and every sample_id trailer
 * layout, written, swapped and peeked where the ABI puts each field.
 *
 * The reader's side is test_decode's. Here the other users of
 * abi/sample_fields.h are checked against the ABI's order written out
 * again below, apart from that table: the writer's encoders
 * (cs_encode_sample, the trailer, cs_encode_set_time), the byte-order
 * walker both reader and writer use (cs_bswap_body through
 * cs_wswap_record), the writer's cs_wswap_record_id, and the recorder's
 * cs_rec_peek_sample and cs_rec_peek_trailer_tid. Each field has its own
 * value with distinct bytes, so that a field out of place, at the wrong
 * width or swapped as the wrong width shows.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/write/encode.h"
#include "lib/write/swap.h"
#include "lib/util/bswap_record.h"
#include "record/peek.h"

/* The ABI's orders (include/uapi/linux/perf_event.h), apart from
 * sample_fields.h: the bit each slot of a head and of a trailer needs. */
static const uint64_t head_order[] = {
	CS_SAMPLE_IDENTIFIER, CS_SAMPLE_IP, CS_SAMPLE_TID, CS_SAMPLE_TIME,
	CS_SAMPLE_ADDR, CS_SAMPLE_ID, CS_SAMPLE_STREAM_ID, CS_SAMPLE_CPU,
	CS_SAMPLE_PERIOD,
};
static const uint64_t trailer_order[] = {
	CS_SAMPLE_TID, CS_SAMPLE_TIME, CS_SAMPLE_ID, CS_SAMPLE_STREAM_ID,
	CS_SAMPLE_CPU, CS_SAMPLE_IDENTIFIER,
};

#define HEAD_LAYOUTS	(1u << (sizeof(head_order) / sizeof(head_order[0])))
#define TRAILER_LAYOUTS	(1u << (sizeof(trailer_order) / sizeof(trailer_order[0])))

/* Each value's bytes differ from each other's and within it, so a swap
 * of the wrong width or a field read from a neighbour's place shows. */
#define V_IDENT		0x1112131415161718ULL
#define V_IP		0x2122232425262728ULL
#define V_PID		0x31323334U
#define V_TID		0x41424344U
#define V_TIME		0x5152535455565758ULL
#define V_ADDR		0x6162636465666768ULL
#define V_ID		0x7172737475767778ULL
#define V_STREAM	0x8182838485868788ULL
#define V_CPU		0x91929394U
#define V_PERIOD	0xa1a2a3a4a5a6a7a8ULL

static uint64_t pick(const uint64_t *order, size_t nr, unsigned int mask)
{
	uint64_t st = 0;

	for (size_t i = 0; i < nr; i++)
		if (mask & (1u << i))
			st |= order[i];
	return st;
}

static uint64_t head_type(unsigned int mask)
{
	return pick(head_order, sizeof(head_order) / sizeof(head_order[0]), mask);
}

static uint64_t trailer_type(unsigned int mask)
{
	return pick(trailer_order, sizeof(trailer_order) / sizeof(trailer_order[0]),
		    mask);
}

/* A record being built, native or already in the other byte order. */
struct rb {
	uint8_t b[512];
	size_t n;
	bool swapped;
};

static void put64(struct rb *r, uint64_t v)
{
	if (r->swapped)
		v = __builtin_bswap64(v);
	memcpy(r->b + r->n, &v, 8);
	r->n += 8;
}

static void put32(struct rb *r, uint32_t v)
{
	if (r->swapped)
		v = __builtin_bswap32(v);
	memcpy(r->b + r->n, &v, 4);
	r->n += 4;
}

static void start(struct rb *r, bool swapped, uint32_t type)
{
	memset(r, 0, sizeof(*r));
	r->swapped = swapped;
	r->n = 8;
	memcpy(r->b, &type, 4);
}

/* Sets header.size, in the record's byte order; returns it. */
static size_t end(struct rb *r)
{
	uint32_t type;
	uint16_t size = (uint16_t)r->n, misc = 0;

	memcpy(&type, r->b, 4);
	if (r->swapped) {
		type = __builtin_bswap32(type);
		size = __builtin_bswap16(size);
	}
	memcpy(r->b, &type, 4);
	memcpy(r->b + 4, &misc, 2);
	memcpy(r->b + 6, &size, 2);
	return r->n;
}

/* A head of sample_type st in the ABI's order; ident and id are what
 * IDENTIFIER and ID hold. */
static void put_head(struct rb *r, uint64_t st, uint64_t ident, uint64_t id)
{
	if (st & CS_SAMPLE_IDENTIFIER)
		put64(r, ident);
	if (st & CS_SAMPLE_IP)
		put64(r, V_IP);
	if (st & CS_SAMPLE_TID) {
		put32(r, V_PID);
		put32(r, V_TID);
	}
	if (st & CS_SAMPLE_TIME)
		put64(r, V_TIME);
	if (st & CS_SAMPLE_ADDR)
		put64(r, V_ADDR);
	if (st & CS_SAMPLE_ID)
		put64(r, id);
	if (st & CS_SAMPLE_STREAM_ID)
		put64(r, V_STREAM);
	if (st & CS_SAMPLE_CPU) {
		put32(r, V_CPU);
		put32(r, 0);
	}
	if (st & CS_SAMPLE_PERIOD)
		put64(r, V_PERIOD);
}

/* A sample_id trailer of sample_type st in the ABI's order. */
static void put_trailer(struct rb *r, uint64_t st, uint64_t time,
			uint64_t ident, uint64_t id)
{
	if (st & CS_SAMPLE_TID) {
		put32(r, V_PID);
		put32(r, V_TID);
	}
	if (st & CS_SAMPLE_TIME)
		put64(r, time);
	if (st & CS_SAMPLE_ID)
		put64(r, id);
	if (st & CS_SAMPLE_STREAM_ID)
		put64(r, V_STREAM);
	if (st & CS_SAMPLE_CPU) {
		put32(r, V_CPU);
		put32(r, 0);
	}
	if (st & CS_SAMPLE_IDENTIFIER)
		put64(r, ident);
}

/* An EXIT record whose trailer is of sample_type st. */
static size_t exit_record(struct rb *r, bool swapped, uint64_t st,
			  uint64_t time, uint64_t ident, uint64_t id)
{
	start(r, swapped, CS_RECORD_EXIT);
	put32(r, 100);
	put32(r, 1);
	put32(r, 101);
	put32(r, 1);
	put64(r, 4000);
	put_trailer(r, st, time, ident, id);
	return end(r);
}

static struct cs_perf_attr attr_of(uint64_t st)
{
	struct cs_perf_attr a;

	memset(&a, 0, sizeof(a));
	a.size = CS_PERF_ATTR_SIZE_VER7;
	a.type = CS_PERF_TYPE_SOFTWARE;
	a.sample_type = st;
	a.flags = CS_ATTR_SAMPLE_ID_ALL;
	return a;
}

/* ---- the writer's encoders ---- */

/* cs_encode_sample writes every one of the 512 heads in the ABI's order,
 * IDENTIFIER and ID both from the sample's id, CPU's reserved half 0. */
static void every_head_layout_is_encoded_in_the_abi_order(void **state)
{
	struct cs_sample s = {
		.id = V_ID, .ip = V_IP, .pid = V_PID, .tid = V_TID,
		.time = V_TIME, .addr = V_ADDR, .stream_id = V_STREAM,
		.cpu = V_CPU, .period = V_PERIOD,
	};

	(void)state;
	for (unsigned int mask = 0; mask < HEAD_LAYOUTS; mask++) {
		uint64_t st = head_type(mask);
		struct cs_perf_attr a = attr_of(st);
		uint8_t buf[256];
		struct rb want;
		long n;

		start(&want, false, CS_RECORD_SAMPLE);
		put_head(&want, st, V_ID, V_ID);
		end(&want);
		memset(buf, 0xee, sizeof(buf));
		n = cs_encode_sample(&a, &s, NULL, 0, buf, sizeof(buf));
		assert_int_equal(n, want.n);
		assert_memory_equal(buf, want.b, want.n);
		/* a buffer just big enough (the field-by-field path), and one
		 * byte short */
		memset(buf, 0xee, sizeof(buf));
		n = cs_encode_sample(&a, &s, NULL, 0, buf, want.n);
		assert_int_equal(n, want.n);
		assert_memory_equal(buf, want.b, want.n);
		assert_int_equal(cs_encode_sample(&a, &s, NULL, 0, buf, want.n - 1),
				 -ENOSPC);
	}
}

/* Every one of the 64 trailers is written in the ABI's order, alone and
 * after a record's body, and cs_encode_set_time finds its time there. */
static void every_trailer_layout_is_encoded_in_the_abi_order(void **state)
{
	struct cs_sample_id id = {
		.pid = V_PID, .tid = V_TID, .time = V_TIME, .id = V_ID,
		.stream_id = V_STREAM, .cpu = V_CPU,
	};
	struct cs_fork_exit f = {
		.pid = 100, .ppid = 1, .tid = 101, .ptid = 1, .time = 4000,
	};

	(void)state;
	for (unsigned int mask = 0; mask < TRAILER_LAYOUTS; mask++) {
		uint64_t st = trailer_type(mask);
		struct cs_perf_attr a = attr_of(st);
		uint8_t buf[256];
		struct rb want;
		long n;

		start(&want, false, 0);
		put_trailer(&want, st, V_TIME, V_ID, V_ID);
		memset(buf, 0xee, sizeof(buf));
		n = cs_encode_sample_id(&a, &id, buf, sizeof(buf));
		assert_int_equal(n, want.n - 8);
		assert_memory_equal(buf, want.b + 8, want.n - 8);
		memset(buf, 0xee, sizeof(buf));
		n = cs_encode_sample_id(&a, &id, buf, want.n - 8);
		assert_int_equal(n, want.n - 8);
		assert_memory_equal(buf, want.b + 8, want.n - 8);
		if (st)
			assert_int_equal(cs_encode_sample_id(&a, &id, buf,
							     want.n - 9), -ENOSPC);

		exit_record(&want, false, st, V_TIME, V_ID, V_ID);
		n = cs_encode_fork_exit(&a, CS_RECORD_EXIT, &f, &id, buf,
					sizeof(buf));
		assert_int_equal(n, want.n);
		assert_memory_equal(buf, want.b, want.n);

		/* the time moved, nothing else touched */
		exit_record(&want, false, st, 0x0102030405060708ULL, V_ID, V_ID);
		assert_int_equal(cs_encode_set_time(&a, buf, (size_t)n,
						    0x0102030405060708ULL),
				 (st & CS_SAMPLE_TIME) ? 0 : -EINVAL);
		assert_memory_equal(buf, want.b, want.n);
	}
}

/* ---- byte order: the walker the reader and the writer share ---- */

/* The word the swapper names for a head of st that ends left bytes in:
 * the field it ends in (TID's pid or tid half, CPU's either). */
static const char *want_cut(uint64_t st, size_t left)
{
	static const char *const name[] = {
		"identifier", "ip", "pid", "time", "addr", "id", "stream id",
		"cpu", "period",
	};
	size_t at = 0;

	for (size_t i = 0; i < sizeof(head_order) / sizeof(head_order[0]); i++) {
		if (!(st & head_order[i]))
			continue;
		if (head_order[i] == CS_SAMPLE_TID && left >= at + 4 &&
		    left < at + 8)
			return "tid";
		if (left < at + 8)
			return name[i];
		at += 8;
	}
	return NULL;
}

/* Each of the 512 heads goes to the other byte order field by field at
 * its width (a u32 pair stays a pair), and back; a record that ends
 * inside its head names the field it ends in. */
static void every_head_layout_is_swapped_field_by_field(void **state)
{
	(void)state;
	for (unsigned int mask = 0; mask < HEAD_LAYOUTS; mask++) {
		uint64_t st = head_type(mask);
		struct cs_perf_attr a = attr_of(st);
		struct cs_bswap_how back = { .dir = CS_BSWAP_TO_NATIVE, .attr = &a };
		struct rb native, foreign, rec;
		size_t n;

		start(&native, false, CS_RECORD_SAMPLE);
		put_head(&native, st, V_IDENT, V_ID);
		n = end(&native);
		start(&foreign, true, CS_RECORD_SAMPLE);
		put_head(&foreign, st, V_IDENT, V_ID);
		end(&foreign);

		rec = native;
		assert_int_equal(cs_wswap_record(&a, rec.b, n), 0);
		assert_memory_equal(rec.b, foreign.b, n);
		cs_bswap_header(rec.b);
		assert_null(cs_bswap_body(&back, CS_RECORD_SAMPLE, rec.b, n));
		assert_memory_equal(rec.b, native.b, n);
		for (size_t cut = 8; cut < n; cut += 4) {
			rec = foreign;
			assert_string_equal(cs_bswap_body(&back, CS_RECORD_SAMPLE,
							  rec.b, cut),
					    want_cut(st, cut - 8));
		}
	}
}

/* Each of the 64 trailers of a kernel record likewise. */
static void every_trailer_layout_is_swapped_field_by_field(void **state)
{
	(void)state;
	for (unsigned int mask = 0; mask < TRAILER_LAYOUTS; mask++) {
		uint64_t st = trailer_type(mask);
		struct cs_perf_attr a = attr_of(st);
		struct rb native, foreign, rec;
		size_t n = exit_record(&native, false, st, V_TIME, V_IDENT, V_ID);
		struct cs_bswap_how back = {
			.dir = CS_BSWAP_TO_NATIVE, .attr = &a,
			.trailer_size = n - 32,
		};

		exit_record(&foreign, true, st, V_TIME, V_IDENT, V_ID);
		rec = native;
		assert_int_equal(cs_wswap_record(&a, rec.b, n), 0);
		assert_memory_equal(rec.b, foreign.b, n);
		cs_bswap_header(rec.b);
		assert_null(cs_bswap_body(&back, CS_RECORD_EXIT, rec.b, n));
		assert_memory_equal(rec.b, native.b, n);
	}
}

/* ---- the id a record names, for the writer's byte swap ---- */

/* IDENTIFIER where there is one, else ID, else 0; from every head and
 * every trailer. */
static void every_layout_names_its_id_where_the_abi_puts_it(void **state)
{
	(void)state;
	for (unsigned int mask = 0; mask < HEAD_LAYOUTS; mask++) {
		uint64_t st = head_type(mask);
		struct cs_perf_attr a = attr_of(st);
		uint64_t want = (st & CS_SAMPLE_IDENTIFIER) ? V_IDENT :
				(st & CS_SAMPLE_ID) ? V_ID : 0;
		struct rb r;
		size_t n;

		start(&r, false, CS_RECORD_SAMPLE);
		put_head(&r, st, V_IDENT, V_ID);
		n = end(&r);
		assert_int_equal(cs_wswap_record_id(&a, r.b, n), want);
	}
	for (unsigned int mask = 0; mask < TRAILER_LAYOUTS; mask++) {
		uint64_t st = trailer_type(mask);
		struct cs_perf_attr a = attr_of(st);
		uint64_t want = (st & CS_SAMPLE_IDENTIFIER) ? V_IDENT :
				(st & CS_SAMPLE_ID) ? V_ID : 0;
		struct rb r;
		size_t n = exit_record(&r, false, st, V_TIME, V_IDENT, V_ID);

		assert_int_equal(cs_wswap_record_id(&a, r.b, n), want);
	}
}

/* ---- the recorder's fixed reads ---- */

/* Every one of the 512 heads, with a callchain after it: the recorder
 * finds ip, pid, tid, time and the chain where the ABI puts them, and a
 * record that ends inside its head is refused. */
static void every_head_layout_is_peeked_where_the_abi_puts_it(void **state)
{
	(void)state;
	for (unsigned int mask = 0; mask < HEAD_LAYOUTS; mask++) {
		uint64_t st = head_type(mask) | CS_SAMPLE_CALLCHAIN;
		struct cs_rec_sample s;
		size_t n, head;
		struct rb r;

		start(&r, false, CS_RECORD_SAMPLE);
		put_head(&r, st, V_IDENT, V_ID);
		head = r.n;
		put64(&r, 2);
		put64(&r, CS_CONTEXT_USER_DEFERRED);
		put64(&r, 0xc00c1e);
		n = end(&r);

		assert_int_equal(cs_rec_peek_sample(st, r.b, n, &s), 0);
		assert_int_equal(s.ip, (st & CS_SAMPLE_IP) ? V_IP : 0);
		assert_int_equal(s.pid, (st & CS_SAMPLE_TID) ? V_PID : 0);
		assert_int_equal(s.tid, (st & CS_SAMPLE_TID) ? V_TID : 0);
		assert_int_equal(s.time, (st & CS_SAMPLE_TIME) ? V_TIME : 0);
		assert_int_equal(s.chain_nr, 2);
		assert_ptr_equal(s.chain, (const void *)(r.b + head + 8));
		assert_int_equal(s.parsed, n);
		if (head > 8)
			assert_int_equal(cs_rec_peek_sample(st, r.b, head - 4, &s),
					 -EBADMSG);
	}
}

/* Every one of the 64 trailers: pid and tid where the ABI puts them,
 * -ENOENT without TID, -EBADMSG for a record too short for its trailer. */
static void every_trailer_layout_is_peeked_where_the_abi_puts_it(void **state)
{
	(void)state;
	for (unsigned int mask = 0; mask < TRAILER_LAYOUTS; mask++) {
		uint64_t st = trailer_type(mask);
		uint32_t pid = 0, tid = 0;
		struct rb r;
		size_t n = exit_record(&r, false, st, V_TIME, V_IDENT, V_ID);
		size_t tsize = n - 32;

		if (!(st & CS_SAMPLE_TID)) {
			assert_int_equal(cs_rec_peek_trailer_tid(st, r.b, n, &pid,
								 &tid), -ENOENT);
			continue;
		}
		assert_int_equal(cs_rec_peek_trailer_tid(st, r.b, n, &pid, &tid), 0);
		assert_int_equal(pid, V_PID);
		assert_int_equal(tid, V_TID);
		assert_int_equal(cs_rec_peek_trailer_tid(st, r.b, 8 + tsize - 8,
							 &pid, &tid), -EBADMSG);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_head_layout_is_encoded_in_the_abi_order),
		cmocka_unit_test(every_trailer_layout_is_encoded_in_the_abi_order),
		cmocka_unit_test(every_head_layout_is_swapped_field_by_field),
		cmocka_unit_test(every_trailer_layout_is_swapped_field_by_field),
		cmocka_unit_test(every_layout_names_its_id_where_the_abi_puts_it),
		cmocka_unit_test(every_head_layout_is_peeked_where_the_abi_puts_it),
		cmocka_unit_test(every_trailer_layout_is_peeked_where_the_abi_puts_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
