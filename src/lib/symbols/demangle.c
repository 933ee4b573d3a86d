/* demangle.c - C++ and Rust names through libiberty.
 *
 * libiberty's default (auto) style tries Rust first - legacy Rust names are
 * valid Itanium C++ names with a hash suffix, which Rust demangling drops -
 * then the C++ ABI; v0 Rust names start with _R. perf shows names without
 * parameter lists unless verbose, and so do we.
 */
#include "lib/symbols/symtab.h"

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
