/* json.c - JSON strings and numbers for the outputs (see json.h). */
#include "outputs/json.h"
#include "outputs/utf8.h"

#include <string.h>

/* JSON string contents that are also safe inside <script>: '<' is escaped
 * so no "</script" or "<!--" can appear, bytes that are not UTF-8 become
 * U+FFFD (symbol names are bytes, JSON is text). */
static void put_chars(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t left = strlen(str);

	while (left) {
		unsigned char c = *s;
		size_t len;

		if (c == '"' || c == '\\') {
			putc('\\', out);
			putc(c, out);
			len = 1;
		} else if (c < 0x20 || c == '<' || c == 0x7f) {
			fprintf(out, "\\u%04x", c);
			len = 1;
		} else if ((len = cs_utf8_len(s, left))) {
			fwrite(s, 1, len, out);
		} else {
			fputs("\\ufffd", out);
			len = 1;
		}
		s += len;
		left -= len;
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

