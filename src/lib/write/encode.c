/* encode.c - records from decoded structs, laid out as the kernel does. */
#include "lib/write/encode.h"
#include "abi/sample_fields.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* The largest record size that is 8-byte aligned and fits header.size. */
#define CS_RECORD_MAX 65528u

/*
 * A write cursor that keeps counting past the end of the buffer, so that a
 * record too big for the caller's buffer is told apart (-ENOSPC) from one
 * too big for any buffer (-EINVAL), without writing out of bounds.
 */
struct cur {
	uint8_t *buf;
	size_t cap;
	size_t len;
};

static void put(struct cur *c, const void *src, size_t n)
{
	if (c->len <= c->cap && n <= c->cap - c->len && n)
		memcpy(c->buf + c->len, src, n);
	c->len += n;
}

static void put64(struct cur *c, uint64_t v)
{
	put(c, &v, sizeof(v));
}

static void put32(struct cur *c, uint32_t v)
{
	put(c, &v, sizeof(v));
}

static void put_zero(struct cur *c, size_t n)
{
	static const uint8_t zero[64];

	while (n) {
		size_t k = n < sizeof(zero) ? n : sizeof(zero);

		put(c, zero, k);
		n -= k;
	}
}

static void pad8(struct cur *c)
{
	put_zero(c, (8 - (c->len & 7)) & 7);
}

/* A NUL-terminated string padded with zeros to the next 8-byte boundary. */
static void put_string(struct cur *c, const char *s)
{
	size_t n = strlen(s) + 1;

	put(c, s, n);
	pad8(c);
}

static void begin(struct cur *c, void *buf, size_t cap, uint32_t type,
		  uint16_t misc)
{
	struct cs_perf_event_header h = { .type = type, .misc = misc };

	c->buf = buf;
	c->cap = cap;
	c->len = 0;
	put(c, &h, sizeof(h));
}

/* Fixes header.size and says whether the record could be written. */
static long finish(struct cur *c)
{
	if (c->len > CS_RECORD_MAX)
		return -EINVAL;
	if (c->len > c->cap)
		return -ENOSPC;
	uint16_t size = (uint16_t)c->len;

	memcpy(c->buf + offsetof(struct cs_perf_event_header, size), &size,
	       sizeof(size));
	return (long)c->len;
}

/* Where from keeps field f: at its sample_at in a struct cs_sample (a
 * head), or at its id's place in a struct cs_sample_id (a trailer); CPU's
 * reserved half, kept nowhere, is 0. */
static inline __attribute__((always_inline)) const void *
field_in(const struct cs_field *f, const void *from, bool by_id)
{
	static const uint64_t zero;

	if (by_id && f->id != CS_ID_NONE)
		return (const char *)from + cs_id_at[f->id];
	if (!by_id && f->sample_at >= 0)
		return (const char *)from + f->sample_at;
	return &zero;
}

/* The fields of a head or a trailer (sample_fields.h's table of nr
 * entries) that st selects, from where from keeps them. With room for
 * any head or trailer (CS_SAMPLE_HEAD_MAX bytes) each is a plain store
 * of a known width (unrolled); else each goes through put(), which
 * counts what did not fit. */
static inline __attribute__((always_inline)) void
put_fields(struct cur *c, uint64_t st, const struct cs_field *table, size_t nr,
	   const void *from, bool by_id)
{
	if (c->len <= c->cap && c->cap - c->len >= CS_SAMPLE_HEAD_MAX) {
		uint8_t *p = c->buf + c->len;

#pragma GCC unroll 16
		for (size_t i = 0; i < nr; i++) {
			if (!(st & table[i].bit))
				continue;
			memcpy(p, field_in(&table[i], from, by_id), table[i].size);
			p += table[i].size;
		}
		c->len = (size_t)(p - c->buf);
		return;
	}
#pragma GCC unroll 16
	for (size_t i = 0; i < nr; i++)
		if (st & table[i].bit)
			put(c, field_in(&table[i], from, by_id), table[i].size);
}

static void put_sample_id(struct cur *c, const struct cs_perf_attr *attr,
			  const struct cs_sample_id *id)
{
	static const struct cs_sample_id none;

	if (!(attr->flags & CS_ATTR_SAMPLE_ID_ALL))
		return;
	put_fields(c, attr->sample_type, cs_trailer, CS_TRAILER_NR,
		   id ? id : &none, true);
}

long cs_encode_sample_id(const struct cs_perf_attr *attr,
			 const struct cs_sample_id *id, void *buf, size_t cap)
{
	struct cur c = { .buf = buf, .cap = cap };

	put_sample_id(&c, attr, id);
	if (c.len > c.cap)
		return -ENOSPC;
	return (long)c.len;
}

int cs_encode_set_time(const struct cs_perf_attr *attr, void *rec, size_t size,
		       uint64_t time)
{
	uint64_t t = attr->sample_type;
	size_t trailer = cs_fields_size(cs_trailer, CS_TRAILER_NR, t);
	long at = cs_fields_at(cs_trailer, CS_TRAILER_NR, t, CS_SAMPLE_TIME);

	if (!(attr->flags & CS_ATTR_SAMPLE_ID_ALL) || at < 0 ||
	    size < sizeof(struct cs_perf_event_header) + trailer)
		return -EINVAL;
	memcpy((unsigned char *)rec + size - trailer + (size_t)at, &time, 8);
	return 0;
}

/* How many u64 a sample's read_format values take, or -1 if read_size
 * cannot be right for attr. */
static int read_size_ok(const struct cs_perf_attr *attr, const struct cs_sample *s)
{
	uint64_t rf = attr->read_format;
	uint64_t per = 1 + !!(rf & CS_FORMAT_ID) + !!(rf & CS_FORMAT_LOST);
	uint64_t head = !!(rf & CS_FORMAT_TOTAL_TIME_ENABLED) +
			!!(rf & CS_FORMAT_TOTAL_TIME_RUNNING);

	if (!s->read)
		return 0;
	if (!(rf & CS_FORMAT_GROUP))
		return s->read_size == head + per;
	if (s->read_size < 1 + head)
		return 0;
	if (s->read[0] > (s->read_size - 1 - head) / per)
		return 0;
	return s->read_size == 1 + head + s->read[0] * per;
}

static unsigned int popcount64(uint64_t v)
{
	return (unsigned int)__builtin_popcountll(v);
}

long cs_encode_sample(const struct cs_perf_attr *attr, const struct cs_sample *s,
		      const uint64_t *chain, uint64_t chain_nr,
		      void *buf, size_t cap)
{
	uint64_t t = attr->sample_type;
	struct cur c;

	if (t & ~(CS_SAMPLE_MAX - 1))
		return -EINVAL;
	begin(&c, buf, cap, CS_RECORD_SAMPLE, s->misc);
	put_fields(&c, t, cs_sample_head, CS_SAMPLE_HEAD_NR, s, false);
	if (t & CS_SAMPLE_READ) {
		if (!read_size_ok(attr, s))
			return -EINVAL;
		put(&c, s->read, s->read_size * 8);
	}
	if (t & CS_SAMPLE_CALLCHAIN) {
		if (chain_nr > CS_RECORD_MAX / 8 || (chain_nr && !chain))
			return -EINVAL;
		put64(&c, chain_nr);
		put(&c, chain, chain_nr * 8);
	}
	if (t & CS_SAMPLE_RAW) {
		/* the kernel pads raw data so that size + data end aligned,
		 * and counts the padding in size */
		uint32_t padded = (uint32_t)(((uint64_t)s->raw_size + 4 + 7) / 8 * 8 - 4);

		if (s->raw_size > CS_RECORD_MAX || (s->raw_size && !s->raw))
			return -EINVAL;
		put32(&c, padded);
		put(&c, s->raw, s->raw_size);
		put_zero(&c, padded - s->raw_size);
	}
	if (t & CS_SAMPLE_BRANCH_STACK) {
		if (s->branch_nr > CS_RECORD_MAX / 24 || (s->branch_nr && !s->branches))
			return -EINVAL;
		put64(&c, s->branch_nr);
		if (attr->branch_sample_type & CS_BRANCH_SAMPLE_HW_INDEX)
			put64(&c, s->branch_hw_idx);
		put(&c, s->branches, s->branch_nr * sizeof(struct cs_branch_entry));
		if (attr->branch_sample_type & CS_BRANCH_SAMPLE_COUNTERS) {
			if (s->branch_nr && !s->branch_counters)
				return -EINVAL;
			put(&c, s->branch_counters, s->branch_nr * 8);
		}
	}
	if (t & CS_SAMPLE_REGS_USER) {
		put64(&c, s->user_regs_abi);
		if (s->user_regs_abi) {
			if (!s->user_regs)
				return -EINVAL;
			put(&c, s->user_regs, popcount64(attr->sample_regs_user) * 8);
		}
	}
	if (t & CS_SAMPLE_STACK_USER) {
		if (s->stack_user_size % 8 || s->stack_user_size > CS_RECORD_MAX ||
		    (s->stack_user_size && !s->stack_user))
			return -EINVAL;
		put64(&c, s->stack_user_size);
		if (s->stack_user_size) {
			put(&c, s->stack_user, s->stack_user_size);
			put64(&c, s->stack_user_dyn_size);
		}
	}
	if (t & (CS_SAMPLE_WEIGHT | CS_SAMPLE_WEIGHT_STRUCT))
		put64(&c, s->weight);
	if (t & CS_SAMPLE_DATA_SRC)
		put64(&c, s->data_src);
	if (t & CS_SAMPLE_TRANSACTION)
		put64(&c, s->transaction);
	if (t & CS_SAMPLE_REGS_INTR) {
		put64(&c, s->intr_regs_abi);
		if (s->intr_regs_abi) {
			if (!s->intr_regs)
				return -EINVAL;
			put(&c, s->intr_regs, popcount64(attr->sample_regs_intr) * 8);
		}
	}
	if (t & CS_SAMPLE_PHYS_ADDR)
		put64(&c, s->phys_addr);
	if (t & CS_SAMPLE_CGROUP)
		put64(&c, s->cgroup);
	if (t & CS_SAMPLE_DATA_PAGE_SIZE)
		put64(&c, s->data_page_size);
	if (t & CS_SAMPLE_CODE_PAGE_SIZE)
		put64(&c, s->code_page_size);
	/* last, whatever its bit number says (as the kernel writes it) */
	if (t & CS_SAMPLE_AUX) {
		if (s->aux_size % 8 || s->aux_size > CS_RECORD_MAX ||
		    (s->aux_size && !s->aux))
			return -EINVAL;
		put64(&c, s->aux_size);
		put(&c, s->aux, s->aux_size);
	}
	return finish(&c);
}

long cs_encode_comm(const struct cs_perf_attr *attr, const struct cs_comm *cm,
		    bool exec, const struct cs_sample_id *id, void *buf, size_t cap)
{
	struct cur c;

	if (!cm->comm)
		return -EINVAL;
	begin(&c, buf, cap, CS_RECORD_COMM, exec ? CS_MISC_COMM_EXEC : 0);
	put32(&c, cm->pid);
	put32(&c, cm->tid);
	put_string(&c, cm->comm);
	put_sample_id(&c, attr, id);
	return finish(&c);
}

long cs_encode_ksymbol(const struct cs_perf_attr *attr,
		       const struct cs_ksymbol *k,
		       const struct cs_sample_id *id, void *buf, size_t cap)
{
	struct cur c;

	if (!k->name)
		return -EINVAL;
	begin(&c, buf, cap, CS_RECORD_KSYMBOL, CS_MISC_KERNEL);
	put64(&c, k->addr);
	put32(&c, k->len);
	put32(&c, (uint32_t)k->ksym_type | (uint32_t)k->flags << 16);
	put_string(&c, k->name);
	put_sample_id(&c, attr, id);
	return finish(&c);
}

long cs_encode_mmap(const struct cs_perf_attr *attr, const struct cs_mmap *m,
		    uint16_t misc, const struct cs_sample_id *id, void *buf,
		    size_t cap)
{
	struct cur c;

	if (!m->filename)
		return -EINVAL;
	begin(&c, buf, cap, CS_RECORD_MMAP, misc);
	put32(&c, m->pid);
	put32(&c, m->tid);
	put64(&c, m->start);
	put64(&c, m->len);
	put64(&c, m->pgoff);
	put_string(&c, m->filename);
	put_sample_id(&c, attr, id);
	return finish(&c);
}

long cs_encode_mmap2(const struct cs_perf_attr *attr, const struct cs_mmap *m,
		     uint16_t misc, const struct cs_sample_id *id, void *buf,
		     size_t cap)
{
	struct cur c;

	if (!m->filename || (m->has_build_id && m->build_id_size > 20))
		return -EINVAL;
	misc &= (uint16_t)~CS_MISC_MMAP_BUILD_ID;
	if (m->has_build_id)
		misc |= CS_MISC_MMAP_BUILD_ID;
	begin(&c, buf, cap, CS_RECORD_MMAP2, misc);
	put32(&c, m->pid);
	put32(&c, m->tid);
	put64(&c, m->start);
	put64(&c, m->len);
	put64(&c, m->pgoff);
	if (m->has_build_id) {
		uint8_t b[24] = { m->build_id_size };

		memcpy(b + 4, m->build_id, m->build_id_size);
		put(&c, b, sizeof(b));
	} else {
		put32(&c, m->maj);
		put32(&c, m->min);
		put64(&c, m->ino);
		put64(&c, m->ino_generation);
	}
	put32(&c, m->prot);
	put32(&c, m->flags);
	put_string(&c, m->filename);
	put_sample_id(&c, attr, id);
	return finish(&c);
}

long cs_encode_fork_exit(const struct cs_perf_attr *attr, uint32_t type,
			 const struct cs_fork_exit *f,
			 const struct cs_sample_id *id, void *buf, size_t cap)
{
	struct cur c;

	if (type != CS_RECORD_FORK && type != CS_RECORD_EXIT)
		return -EINVAL;
	begin(&c, buf, cap, type, 0);
	put32(&c, f->pid);
	put32(&c, f->ppid);
	put32(&c, f->tid);
	put32(&c, f->ptid);
	put64(&c, f->time);
	put_sample_id(&c, attr, id);
	return finish(&c);
}

long cs_encode_lost(const struct cs_perf_attr *attr, const struct cs_lost *l,
		    const struct cs_sample_id *id, void *buf, size_t cap)
{
	struct cur c;

	begin(&c, buf, cap, CS_RECORD_LOST, 0);
	put64(&c, l->id);
	put64(&c, l->lost);
	put_sample_id(&c, attr, id);
	return finish(&c);
}

long cs_encode_deferred(const struct cs_perf_attr *attr,
			const struct cs_deferred *d,
			const struct cs_sample_id *id, void *buf, size_t cap)
{
	struct cur c;

	if (d->nr > CS_RECORD_MAX / 8 || (d->nr && !d->ips))
		return -EINVAL;
	begin(&c, buf, cap, CS_RECORD_CALLCHAIN_DEFERRED, CS_MISC_USER);
	put64(&c, d->cookie);
	put64(&c, d->nr);
	put(&c, d->ips, d->nr * 8);
	put_sample_id(&c, attr, id);
	return finish(&c);
}
