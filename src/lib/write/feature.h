/* feature.h - a growable byte buffer for header features and their records.
 *
 * Feature sections (file mode) and HEADER_FEATURE / HEADER_ATTR records
 * (pipe mode) are built here in memory, in the byte order of the file,
 * then handed to the writer's output in one piece.
 */
#ifndef CS_WRITE_FEATURE_H
#define CS_WRITE_FEATURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cs_fbuf {
	uint8_t *p;
	size_t len, cap;
	bool swap;			/* write numbers in the other byte order */
	bool oom;			/* an allocation failed: the content is short */
};

void cs_fbuf_bytes(struct cs_fbuf *b, const void *src, size_t n);
void cs_fbuf_zero(struct cs_fbuf *b, size_t n);
void cs_fbuf_u16(struct cs_fbuf *b, uint16_t v);
void cs_fbuf_u32(struct cs_fbuf *b, uint32_t v);
void cs_fbuf_u64(struct cs_fbuf *b, uint64_t v);
/* perf's header string: u32 length (NUL included, padded to 64), the bytes */
void cs_fbuf_string(struct cs_fbuf *b, const char *s);
/* Overwrites a u16 already written at off (header sizes known at the end). */
void cs_fbuf_put_u16_at(struct cs_fbuf *b, size_t off, uint16_t v);
void cs_fbuf_free(struct cs_fbuf *b);

#endif
