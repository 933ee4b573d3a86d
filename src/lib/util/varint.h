/* varint.h - unsigned numbers written 7 bits a byte.
 *
 * The low 7 bits first, the high bit of a byte set when more follow: the
 * coding of protocol buffers (pprof's profile.proto) and of report's
 * temporary files. A 64-bit number takes 1 to CS_VARINT_MAX bytes.
 * Reading is left to each user: where the bytes come from, and what a
 * number cut short means, is theirs.
 */
#ifndef CS_VARINT_H
#define CS_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define CS_VARINT_MAX	10

/* Bytes v takes. */
static inline size_t cs_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Writes v at p, which has room for cs_varint_len(v) (at most
 * CS_VARINT_MAX) bytes; returns how many it wrote. */
static inline size_t cs_varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

#endif
