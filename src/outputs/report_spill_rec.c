/* report_spill_rec.c - spill mode's records as bytes (see report_int.h).
 *
 * A record was 40 bytes of header and 40 a frame (two pointers, the
 * address, the flags and sym_start, as they are in memory): ~13 times a
 * profile's size in temporary files. Now every number is a variable-length
 * integer (7 bits a byte, the high bit: more follow), and a frame's
 * names' ids (struct report_names: never this process's addresses, which
 * a damaged byte would turn into a wild pointer) and address are the
 * difference (zigzag: small either way) from the frame before it in the
 * record - a stack's frames mostly share their dso, and frames first
 * seen together got their names' ids together.
 * sym_start is written only where it is not the key's address (a frame
 * with a symbol is keyed by its start). Each record is coded on its own,
 * so that reading may start at any record (the file aside is read from
 * where the settling stopped). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "outputs/report_int.h"

/* a frame's first number: its flags, shifted past this bit */
#define FRAME_HAS_SYM_START	1u

static uint64_t zigzag(uint64_t now, uint64_t before)
{
	uint64_t d = now - before;

	return (d << 1) ^ (uint64_t)-(int64_t)(d >> 63);
}

static uint64_t unzigzag(uint64_t z, uint64_t before)
{
	return before + ((z >> 1) ^ (uint64_t)-(int64_t)(z & 1));
}

size_t report_spill_rec_encode(const struct report_spill_rec *h,
			       struct report_spill_last *last, uint8_t *out)
{
	size_t n = 0;

	memset(last, 0, sizeof(*last));
	n += cs_varint_put(out + n, h->seq);
	n += cs_varint_put(out + n, h->count);
	n += cs_varint_put(out + n, h->period);
	n += cs_varint_put(out + n, h->thread);
	n += cs_varint_put(out + n, h->nr);
	return n;
}

size_t report_spill_frame_encode(const struct report_spill_frame *f,
				 struct report_spill_last *last, uint8_t *out)
{
	uint64_t sym = f->sym_id, dso = f->dso_id;
	bool has_start = f->sym_start != f->key.addr;
	size_t n = 0;

	n += cs_varint_put(out + n, (uint64_t)f->key.flags << 1 |
				 (has_start ? FRAME_HAS_SYM_START : 0));
	n += cs_varint_put(out + n, zigzag(sym, last->sym));
	n += cs_varint_put(out + n, zigzag(dso, last->dso));
	n += cs_varint_put(out + n, zigzag(f->key.addr, last->addr));
	if (has_start)
		n += cs_varint_put(out + n, zigzag(f->sym_start, f->key.addr));
	last->sym = sym;
	last->dso = dso;
	last->addr = f->key.addr;
	return n;
}

/* ---- reading -------------------------------------------------------------- */

int report_tmp_bad(struct report_tmp_reader *rd, uint64_t at, int err,
		   const char *what)
{
	/* the first error is the one that explains the others */
	if (rd->f->err && !rd->f->err[0])
		snprintf(rd->f->err, REPORT_ERR_LEN, "temporary file %s: record "
			 "at offset %" PRIu64 ": %s", rd->f->path ? rd->f->path :
			 "(none)", at, what);
	return err;
}

int report_varint_get_slow(struct report_tmp_reader *rd, uint64_t at,
			   uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned int shift = 0;; shift += 7) {
		uint8_t b;
		int err = report_tmp_byte(rd, &b);

		if (err == 1 && shift)
			return report_tmp_bad(rd, at, -EBADMSG, "it ends inside a number");
		if (err)
			return err;
		/* the tenth byte holds the 64th bit only */
		if (shift == 63 && b > 1)
			return report_tmp_bad(rd, at, -EBADMSG, "a number longer than 64 bits");
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	*v = x;
	return 0;
}

int report_varint_inside_slow(struct report_tmp_reader *rd, uint64_t at,
			      uint64_t *v)
{
	int err = report_varint_get_slow(rd, at, v);

	return err == 1 ? report_tmp_bad(rd, at, -EBADMSG, "it ends inside the record") :
	       err;
}

int report_spill_rec_read(struct report_tmp_reader *rd, uint32_t nr_threads,
			  const struct report_names *names,
			  struct report_spill_rec *h,
			  struct report_spill_frame *frames)
{
	uint64_t at = report_tmp_reader_tell(rd), v[5];
	struct report_spill_last last = { 0 };
	int err = report_varints_get(rd, at, v, 5);

	if (err)
		return err;
	if (v[3] >= nr_threads)
		return report_tmp_bad(rd, at, -EBADMSG, "its thread is not one of the report's");
	if (v[4] > CS_FRAMES_MAX)
		return report_tmp_bad(rd, at, -EBADMSG, "it claims more frames than a stack has");
	*h = (struct report_spill_rec){
		.seq = v[0], .count = v[1], .period = v[2],
		.thread = (uint32_t)v[3], .nr = (uint32_t)v[4],
	};
	for (uint32_t i = 0; i < h->nr; i++) {
		struct report_spill_frame *f = &frames[i];
		uint64_t head, sym, dso, addr, start;

		if ((err = report_varint_inside(rd, at, &head)) ||
		    (err = report_varint_inside(rd, at, &sym)) ||
		    (err = report_varint_inside(rd, at, &dso)) ||
		    (err = report_varint_inside(rd, at, &addr)))
			return err;
		if (head >> 1 > UINT32_MAX)
			return report_tmp_bad(rd, at, -EBADMSG, "a frame's flags pass 32 bits");
		last.sym = unzigzag(sym, last.sym);
		last.dso = unzigzag(dso, last.dso);
		last.addr = unzigzag(addr, last.addr);
		start = last.addr;
		if ((head & FRAME_HAS_SYM_START) &&
		    (err = report_varint_inside(rd, at, &start)))
			return err;
		if (head & FRAME_HAS_SYM_START)
			start = unzigzag(start, last.addr);
		f->key = (struct cs_agg_key){
			.addr = last.addr, .flags = (uint32_t)(head >> 1),
		};
		if (!report_names_get(names, last.sym, &f->key.sym) ||
		    !report_names_get(names, last.dso, &f->key.dso))
			return report_tmp_bad(rd, at, -EBADMSG, "a frame's name "
					      "is not one of the report's");
		f->sym_id = (uint32_t)last.sym;
		f->dso_id = (uint32_t)last.dso;
		f->sym_start = start;
	}
	return 0;
}
