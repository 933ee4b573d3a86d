/* kallsyms.c - /proc/kallsyms text to a symbol table in one pass.
 *
 * The file has ~200k lines; a hand-written scanner keeps loading it well
 * under the time perf takes (no sscanf, no per-line allocation).
 */
#include "lib/symbols/symtab.h"

#include <stdint.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* a hex digit's value plus one; 0: not a hex digit */
static const uint8_t hexval1[256] = {
	['0'] = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
	['A'] = 11, 12, 13, 14, 15, 16,
	['a'] = 11, 12, 13, 14, 15, 16,
};

/* perf keeps text, weak, data and bss symbols; the rest (absolute, read-only
 * data, ...) would only shadow functions */
static bool wanted(char type)
{
	switch (type & ~0x20) {		/* ASCII upper case */
	case 'T': case 'W': case 'D': case 'B':
		return true;
	}
	return false;
}

static enum cs_sym_bind binding(char type)
{
	if (type == 'W')
		return CS_SYM_WEAK;
	return type >= 'A' && type <= 'Z' ? CS_SYM_GLOBAL : CS_SYM_LOCAL;
}

long cs_kallsyms_parse(struct cs_symtab *t, const char *buf, size_t len,
		       size_t *bad_line)
{
	const char *p = buf, *end = buf + len;
	size_t line = 0;
	long added = 0;
	char module[128];

	/* a line is at least 21 bytes (16 digits, " t ", a name, a newline)
	 * and its name is part of it */
	if (cs_symtab_reserve(t, len / 21 + 1, len))
		return -ENOMEM;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *name, *name_end, *q, *space;
		uint64_t addr = 0;
		int digits, v;
		char type;
		const char *mod = NULL;

		if (!eol)
			eol = end;
		line++;
		if (eol == p) {			/* empty line */
			p = eol + 1;
			continue;
		}
		q = p;
		while (q < eol && (v = hexval1[(unsigned char)*q])) {
			addr = addr << 4 | (uint64_t)(v - 1);
			q++;
		}
		digits = (int)(q - p);
		if (!digits || digits > 16 || q + 3 > eol || *q != ' ' ||
		    q[2] != ' ') {
			*bad_line = line;
			return -EBADMSG;
		}
		type = q[1];
		name = q + 3;
		/* the name ends at a tab (a module follows) or a space */
		name_end = memchr(name, '\t', (size_t)(eol - name));
		if (!name_end)
			name_end = eol;
		space = memchr(name, ' ', (size_t)(name_end - name));
		if (space)
			name_end = space;
		if (name_end == name) {
			*bad_line = line;
			return -EBADMSG;
		}
		if (name_end < eol) {
			const char *m = name_end;

			while (m < eol && (*m == '\t' || *m == ' '))
				m++;
			if (m < eol && *m == '[') {
				const char *me = memchr(m, ']', (size_t)(eol - m));
				size_t ml = me ? (size_t)(me - m) + 1 : 0;

				if (ml && ml < sizeof(module)) {
					memcpy(module, m, ml);
					module[ml] = '\0';
					mod = module;
				}
			}
		}
		if (wanted(type) && addr) {
			int err = cs_symtab_add(t, addr, 0, binding(type), name,
						(size_t)(name_end - name), mod);
			if (err)
				return err;
			added++;
		}
		p = eol + 1;
	}
	return added;
}
