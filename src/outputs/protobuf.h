/* protobuf.h - just enough protocol buffers encoding to write a pprof
 * profile: varints, length-delimited fields and nested messages.
 *
 * A message is written into one growing buffer. A nested message is begun
 * (pb_begin() remembers where its body starts), its fields are written, and
 * pb_end() slides the body along to put the field key and the body's
 * length in front of it: no second buffer, no size pass.
 */
#ifndef CS_PROTOBUF_H
#define CS_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

struct pb_buf {
	uint8_t *p;
	size_t len, cap;
	int err;		/* first error (-ENOMEM); later calls do nothing */
};

enum pb_wire {
	PB_VARINT = 0,
	PB_LEN = 2,
};

void pb_free(struct pb_buf *b);

void pb_varint(struct pb_buf *b, uint64_t v);		/* a bare varint */
void pb_key(struct pb_buf *b, uint32_t field, enum pb_wire wire);

/* Scalar fields; the _opt forms write nothing for 0 (proto3 default). */
void pb_uint64(struct pb_buf *b, uint32_t field, uint64_t v);
void pb_uint64_opt(struct pb_buf *b, uint32_t field, uint64_t v);
void pb_int64(struct pb_buf *b, uint32_t field, int64_t v);
void pb_int64_opt(struct pb_buf *b, uint32_t field, int64_t v);
void pb_bool(struct pb_buf *b, uint32_t field, int v);
void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len);
/* s as UTF-8: a byte that starts no well-formed sequence becomes U+FFFD */
void pb_string(struct pb_buf *b, uint32_t field, const char *s);

/* A nested message or a packed repeated field: returns the body's start
 * to hand to pb_end(), which writes key and length before the body. */
size_t pb_begin(struct pb_buf *b);
void pb_end(struct pb_buf *b, uint32_t field, size_t start);

#endif
