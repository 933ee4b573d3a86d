/* names.c - the hostile-names input and a JSON well-formedness check. */
#include "names.h"
#include "fuzz.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int names_open(struct names_input *in, const uint8_t *data, size_t size)
{
	char *line;

	memset(in, 0, sizeof(*in));
	in->text = malloc(size + 1);
	if (!in->text)
		return -1;
	memcpy(in->text, data, size);
	in->text[size] = '\0';
	line = strsep(&in->text, "\n");
	in->next = in->text;
	in->text = line;		/* the start, to free */
	for (int i = 0; i < NAMES_MAX_META && line; i++)
		in->meta[i] = strsep(&line, "\t");
	return 0;
}

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h;
}

int names_next(struct names_input *in, struct names_stack *st)
{
	char *line, *field;

	if (!in->next)
		return 0;
	line = strsep(&in->next, "\n");
	st->comm = strsep(&line, ";");
	st->nr = 0;
	while ((field = strsep(&line, ";")) && st->nr < NAMES_MAX_FRAMES) {
		struct names_frame *f = &st->frames[st->nr++];

		f->name = strsep(&field, "\t");
		f->dso = field;
		f->kernel = f->name[0] == 'k';
		/* kernel text is high, user text low: the two never meet */
		f->addr = (hash(f->name) & 0xffffffffffULL) |
			  (f->kernel ? 0xffffffff00000000ULL : 0x400000ULL);
	}
	return 1;
}

void names_close(struct names_input *in)
{
	free(in->text);
}

/* ---- JSON ---- */

struct json {
	const char *start, *p, *end;
	int depth;
};

static void json_fail(const struct json *j, const char *why)
{
	fuzz_fail("names: invalid JSON at byte %td: %s", j->p - j->start, why);
}

static void ws(struct json *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' ||
				 *j->p == '\t' || *j->p == '\r'))
		j->p++;
}

static void lit(struct json *j, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n))
		json_fail(j, "unknown word");
	j->p += n;
}

static void string(struct json *j)
{
	const char *start = ++j->p;

	while (j->p < j->end && *j->p != '"') {
		unsigned char c = (unsigned char)*j->p;

		if (c < 0x20)
			json_fail(j, "raw control character in a string");
		if (c == '<')
			json_fail(j, "'<' in a string: it could close the page's <script>");
		if (c == '\\') {
			j->p++;
			if (j->p >= j->end)
				json_fail(j, "string ends in an escape");
			if (*j->p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (j->p + i >= j->end ||
					    !strchr("0123456789abcdefABCDEF", j->p[i]) ||
					    !j->p[i])
						json_fail(j, "bad \\u escape");
				j->p += 4;
			} else if (!*j->p || !strchr("\"\\/bfnrt", *j->p)) {
				json_fail(j, "bad escape");
			}
		}
		j->p++;
	}
	if (j->p >= j->end)
		json_fail(j, "unterminated string");
	if (!fuzz_utf8_ok((const uint8_t *)start, (size_t)(j->p - start)))
		json_fail(j, "string is not UTF-8");
	j->p++;
}

static void number(struct json *j)
{
	const char *start = j->p;

	if (j->p < j->end && *j->p == '-')
		j->p++;
	while (j->p < j->end && ((*j->p >= '0' && *j->p <= '9') ||
				 *j->p == '.' || *j->p == 'e' || *j->p == 'E' ||
				 *j->p == '+' || *j->p == '-'))
		j->p++;
	if (j->p == start || (j->p - start == 1 && *start == '-'))
		json_fail(j, "expected a value");
}

static void value(struct json *j)
{
	if (++j->depth > 10000)
		json_fail(j, "nested too deep");
	ws(j);
	if (j->p >= j->end)
		json_fail(j, "expected a value");
	switch (*j->p) {
	case '{':
	case '[': {
		char close = *j->p == '{' ? '}' : ']';
		bool obj = close == '}';

		j->p++;
		ws(j);
		if (j->p < j->end && *j->p == close) {
			j->p++;
			break;
		}
		for (;;) {
			if (obj) {
				ws(j);
				if (j->p >= j->end || *j->p != '"')
					json_fail(j, "expected a key");
				string(j);
				ws(j);
				if (j->p >= j->end || *j->p != ':')
					json_fail(j, "expected ':'");
				j->p++;
			}
			value(j);
			ws(j);
			if (j->p < j->end && *j->p == ',') {
				j->p++;
				continue;
			}
			if (j->p < j->end && *j->p == close) {
				j->p++;
				break;
			}
			json_fail(j, "expected ',' or a close");
		}
		break;
	}
	case '"': string(j); break;
	case 't': lit(j, "true"); break;
	case 'f': lit(j, "false"); break;
	case 'n': lit(j, "null"); break;
	default: number(j); break;
	}
	j->depth--;
}

void names_check_json(const char *text, size_t n)
{
	struct json j = { text, text, text + n, 0 };

	value(&j);
	ws(&j);
	if (j.p != j.end)
		json_fail(&j, "bytes after the value");
}
