/* feature.c - the byte buffer features are built in. */
#include "lib/write/feature.h"

#include <stdlib.h>
#include <string.h>

#include "lib/write/swap.h"

/* perf pads header strings to this many bytes */
#define NAME_ALIGN 64

static bool grow(struct cs_fbuf *b, size_t n)
{
	if (b->oom)
		return false;
	if (n <= b->cap - b->len)
		return true;
	size_t cap = b->cap ? b->cap : 4096;

	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			b->oom = true;
			return false;
		}
		cap *= 2;
	}
	uint8_t *p = realloc(b->p, cap);

	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void cs_fbuf_bytes(struct cs_fbuf *b, const void *src, size_t n)
{
	if (!n || !grow(b, n))
		return;
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

void cs_fbuf_zero(struct cs_fbuf *b, size_t n)
{
	if (!n || !grow(b, n))
		return;
	memset(b->p + b->len, 0, n);
	b->len += n;
}

void cs_fbuf_u16(struct cs_fbuf *b, uint16_t v)
{
	if (b->swap)
		v = cs_bswap16(v);
	cs_fbuf_bytes(b, &v, sizeof(v));
}

void cs_fbuf_u32(struct cs_fbuf *b, uint32_t v)
{
	if (b->swap)
		v = cs_bswap32(v);
	cs_fbuf_bytes(b, &v, sizeof(v));
}

void cs_fbuf_u64(struct cs_fbuf *b, uint64_t v)
{
	if (b->swap)
		v = cs_bswap64(v);
	cs_fbuf_bytes(b, &v, sizeof(v));
}

void cs_fbuf_string(struct cs_fbuf *b, const char *s)
{
	size_t n = strlen(s) + 1;
	size_t padded = (n + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;

	cs_fbuf_u32(b, (uint32_t)padded);
	cs_fbuf_bytes(b, s, n);
	cs_fbuf_zero(b, padded - n);
}

void cs_fbuf_put_u16_at(struct cs_fbuf *b, size_t off, uint16_t v)
{
	if (b->oom || off > b->len || b->len - off < 2)
		return;
	if (b->swap)
		v = cs_bswap16(v);
	memcpy(b->p + off, &v, sizeof(v));
}

void cs_fbuf_free(struct cs_fbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}
