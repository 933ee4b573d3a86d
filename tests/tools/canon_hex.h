/* canon_hex.h - hex digits for the canonical stitched-sample lines that
 * gen_synth writes (the truth) and cs_canon prints (what the library made
 * of a file): both must spell numbers the same way. Hex without 0x, and
 * without snprintf, which would make 1M-sample files the slow part. */
#ifndef CS_CANON_HEX_H
#define CS_CANON_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Writes v at p (at most 16 bytes, no NUL); returns how many. */
static inline size_t canon_put_hex(char *p, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	size_t n = 0;

	do {
		tmp[n++] = digits[v & 15];
		v >>= 4;
	} while (v);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

#endif
