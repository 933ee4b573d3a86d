/* utf8.h - names are bytes (symbols, comms, paths from a profile), while
 * JSON and protobuf strings must be UTF-8: outputs that write text formats
 * keep the well-formed sequences and replace every other byte with U+FFFD.
 */
#ifndef CS_UTF8_H
#define CS_UTF8_H

#include <stddef.h>

/* Length (1-4) of the well-formed UTF-8 sequence starting at s, of the at
 * most n bytes there; 0 when s[0] starts none (a stray continuation byte,
 * an overlong form, a surrogate, beyond U+10FFFF, or cut short). */
static inline size_t cs_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
		return 0;
	return len;
}

#define CS_UTF8_REPLACEMENT "\xef\xbf\xbd"	/* U+FFFD */

#endif
