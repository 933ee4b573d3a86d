/* cursor.h - a bounds-checked walk over bytes in either byte order.
 *
 * Shared by the feature parser (reads a foreign file's sections without a
 * copy) and the record swapper (reads each length as it swaps it). Every
 * step checks the bytes that remain; the first step that does not fit
 * names itself in why, and every later step does nothing and yields 0, so
 * a walk checks once at its end instead of after every field.
 */
#ifndef CS_UTIL_CURSOR_H
#define CS_UTIL_CURSOR_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct cs_cursor {
	const uint8_t *p, *end;
	bool swap;			/* the bytes are in the other byte order */
	const char *why;		/* the first step that did not fit */
};

static inline bool cs_cursor_need(struct cs_cursor *c, uint64_t n,
				  const char *what)
{
	if (c->why)
		return false;
	if (n > (uint64_t)(c->end - c->p)) {
		c->why = what;
		return false;
	}
	return true;
}

/* Room for nr items of size bytes each: divides, so a hostile nr cannot
 * overflow the product. */
static inline bool cs_cursor_need_n(struct cs_cursor *c, uint64_t nr,
				    uint64_t size, const char *what)
{
	if (c->why)
		return false;
	if (nr > (uint64_t)(c->end - c->p) / size) {
		c->why = what;
		return false;
	}
	return true;
}

static inline void cs_cursor_skip(struct cs_cursor *c, uint64_t n,
				  const char *what)
{
	if (cs_cursor_need(c, n, what))
		c->p += n;
}

/* The next field of width 2, 4 or 8 bytes, in native order. Always
 * inlined: callers pass a constant width and the other branches fold. */
static inline __attribute__((always_inline)) uint64_t
cs_cursor_get(struct cs_cursor *c, unsigned int width, const char *what)
{
	uint64_t v = 0;

	if (!cs_cursor_need(c, width, what))
		return 0;
	if (width == 8) {
		memcpy(&v, c->p, 8);
		v = c->swap ? __builtin_bswap64(v) : v;
	} else if (width == 4) {
		uint32_t x;

		memcpy(&x, c->p, 4);
		v = c->swap ? __builtin_bswap32(x) : x;
	} else {
		uint16_t x;

		memcpy(&x, c->p, 2);
		v = c->swap ? __builtin_bswap16(x) : x;
	}
	c->p += width;
	return v;
}

#endif
