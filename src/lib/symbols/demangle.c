/* demangle.c - C++ and Rust names through libiberty.
 *
 * libiberty's default (auto) style tries Rust first - legacy Rust names are
 * valid Itanium C++ names with a hash suffix, which Rust demangling drops -
 * then the C++ ABI; v0 Rust names start with _R. perf shows names without
 * parameter lists unless verbose, and so do we.
 */
#include "lib/symbols/symtab.h"

#include <libiberty/demangle.h>
#include <stdlib.h>

char *cs_demangle(const char *name)
{
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	return cplus_demangle(name, DMGL_NO_OPTS);
}
