/* protobuf.c - protocol buffers encoding (see protobuf.h). */
#include "outputs/protobuf.h"
#include "outputs/utf8.h"
#include "lib/util/varint.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void pb_free(struct pb_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

static int reserve(struct pb_buf *b, size_t more)
{
	size_t n = b->cap ? b->cap : 4096;
	uint8_t *q;

	if (b->err)
		return b->err;
	if (more <= b->cap - b->len)
		return 0;
	if (more > SIZE_MAX / 4 - b->len)
		return b->err = -ENOMEM;
	while (n - b->len < more)
		n *= 2;
	q = realloc(b->p, n);
	if (!q)
		return b->err = -ENOMEM;
	b->p = q;
	b->cap = n;
	return 0;
}

void pb_varint(struct pb_buf *b, uint64_t v)
{
	if (reserve(b, 10))
		return;
	b->len += cs_varint_put(b->p + b->len, v);
}

void pb_key(struct pb_buf *b, uint32_t field, enum pb_wire wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

void pb_uint64(struct pb_buf *b, uint32_t field, uint64_t v)
{
	pb_key(b, field, PB_VARINT);
	pb_varint(b, v);
}

void pb_uint64_opt(struct pb_buf *b, uint32_t field, uint64_t v)
{
	if (v)
		pb_uint64(b, field, v);
}

/* int64 is a plain varint of the two's complement (negative: 10 bytes) */
void pb_int64(struct pb_buf *b, uint32_t field, int64_t v)
{
	pb_uint64(b, field, (uint64_t)v);
}

void pb_int64_opt(struct pb_buf *b, uint32_t field, int64_t v)
{
	if (v)
		pb_int64(b, field, v);
}

void pb_bool(struct pb_buf *b, uint32_t field, int v)
{
	pb_uint64(b, field, v ? 1 : 0);
}

void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len)
{
	pb_key(b, field, PB_LEN);
	pb_varint(b, len);
	if (reserve(b, len))
		return;
	if (len)
		memcpy(b->p + b->len, data, len);
	b->len += len;
}

/* A string field must hold UTF-8 (decoders may refuse the message
 * otherwise); names are bytes, so each byte that starts no well-formed
 * sequence becomes U+FFFD. */
void pb_string(struct pb_buf *b, uint32_t field, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), len, out = 0, bad = 0;

	for (size_t i = 0; i < n; i += len ? len : 1)
		if (!(len = cs_utf8_len(u + i, n - i)))
			bad++;
	if (!bad) {
		pb_bytes(b, field, s, n);
		return;
	}
	pb_key(b, field, PB_LEN);
	pb_varint(b, n + bad * 2);	/* 1 byte becomes 3 */
	if (reserve(b, n + bad * 2))
		return;
	for (size_t i = 0; i < n; i += len ? len : 1) {
		len = cs_utf8_len(u + i, n - i);
		if (len) {
			memcpy(b->p + b->len + out, u + i, len);
			out += len;
		} else {
			memcpy(b->p + b->len + out, CS_UTF8_REPLACEMENT, 3);
			out += 3;
		}
	}
	b->len += out;
}

size_t pb_begin(struct pb_buf *b)
{
	return b->len;
}

void pb_end(struct pb_buf *b, uint32_t field, size_t start)
{
	uint64_t body, key = (uint64_t)field << 3 | PB_LEN;
	size_t head;

	if (b->err)
		return;
	body = b->len - start;
	head = cs_varint_len(key) + cs_varint_len(body);
	if (reserve(b, head))
		return;
	memmove(b->p + start + head, b->p + start, body);
	start += cs_varint_put(b->p + start, key);
	cs_varint_put(b->p + start, body);
	b->len += head;
}
