/* json.c - JSON strings and numbers for the outputs (see json.h). */
#include "outputs/json.h"

/* JSON string contents that are also safe inside <script>: '<' is escaped
 * so no "</script" or "<!--" can appear, bytes that are not UTF-8 become
 * U+FFFD (symbol names are bytes, JSON is text). */
static void put_chars(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		unsigned char c = *s;
		size_t len = 0;

		if (c == '"' || c == '\\') {
			putc('\\', out);
			putc(c, out);
			s++;
			continue;
		}
		if (c < 0x20 || c == '<' || c == 0x7f) {
			fprintf(out, "\\u%04x", c);
			s++;
			continue;
		}
		if (c < 0x80) {
			putc(c, out);
			s++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			len = 2;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4;
		for (size_t i = 1; i < len; i++)
			if ((s[i] & 0xc0) != 0x80)
				len = 0;
		/* overlong 3/4-byte forms, surrogates, beyond U+10FFFF */
		if ((len == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0))) ||
		    (len == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))))
			len = 0;
		if (!len) {
			fputs("\\ufffd", out);
			s++;
			continue;
		}
		fwrite(s, 1, len, out);
		s += len;
	}
}

void cs_json_str(FILE *out, const char *s)
{
	putc('"', out);
	put_chars(out, s ? s : "");
	putc('"', out);
}

void cs_json_u64(FILE *out, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite(p, 1, (size_t)(buf + sizeof(buf) - p), out);
}

