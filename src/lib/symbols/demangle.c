/* demangle.c - C++ and Rust names through libiberty.
 *
 * libiberty's default (auto) style tries Rust first - legacy Rust names are
 * valid Itanium C++ names with a hash suffix, which Rust demangling drops -
 * then the C++ ABI; v0 Rust names start with _R. perf shows names without
 * parameter lists unless verbose, and so do we.
 */
#include "lib/symbols/symtab.h"
#include "lib/util/pool.h"

#include <libiberty/demangle.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Whether a _Z name may be a legacy Rust one: "_ZN", and a last path
 * segment of a 16-digit hash, "17h<16 chars>E" - libiberty's own first
 * test. Any other _Z name fails Rust demangling, which scans it whole
 * first: a C++ table's aliases spent a quarter of their demangling there. */
static bool may_be_legacy_rust(const char *name)
{
	size_t len = strlen(name);

	return name[2] == 'N' && len > 3 + 20 && name[len - 1] == 'E' &&
	       !memcmp(name + len - 20, "17h", 3);
}

/* Where cplus_demangle_v3_callback() puts the name: a buffer on the
 * stack, which a longer name overflows (then demangled again the usual
 * way). */
struct into_buf {
	char text[1024];
	size_t len;
	bool overflow;
};

static void into_buf_add(const char *s, size_t len, void *opaque)
{
	struct into_buf *b = opaque;

	if (b->overflow || len > sizeof(b->text) - b->len) {
		b->overflow = true;
		return;
	}
	memcpy(b->text + b->len, s, len);
	b->len += len;
}

const char *cs_demangle_into(const char *name, struct cs_pool *pool,
			     size_t *len)
{
	struct into_buf b;
	char *dem, *copy;

	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	/* the C++ path of cs_demangle() without its malloc()ed string that
	 * grows as the name is made: the same text */
	b.len = 0;
	b.overflow = false;
	if (name[1] == 'Z' && !may_be_legacy_rust(name) &&
	    cplus_demangle_v3_callback(name, DMGL_NO_OPTS, into_buf_add, &b) &&
	    !b.overflow) {
		*len = b.len;
		return cs_pool_strndup(pool, b.text, b.len);
	}
	dem = cs_demangle(name);
	if (!dem)
		return NULL;
	*len = strlen(dem);
	copy = cs_pool_strndup(pool, dem, *len);
	free(dem);
	return copy;
}

char *cs_demangle(const char *name)
{
	char *dem;

	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	/* what the auto style tries after Rust fails; if it fails too, the
	 * auto style's whole chain, so that the result is the same */
	if (name[1] == 'Z' && !may_be_legacy_rust(name) &&
	    (dem = cplus_demangle_v3(name, DMGL_NO_OPTS)))
		return dem;
	return cplus_demangle(name, DMGL_NO_OPTS);
}
