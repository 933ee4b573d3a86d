/* inlines.h - which functions were inlined at an address, from DWARF.
 *
 * perf script shows, above a frame, one line per function inlined at its
 * address. The debug info of a binary (or of its separate debug file) is
 * opened on first use; a CU's inlined calls are indexed when an address
 * first falls in it, and each call is named once. Answers are not cached
 * per address: a lookup is two binary searches, and callers cache what
 * they make of an address (script's lines, out_inlines.c).
 */
#ifndef CS_INLINES_H
#define CS_INLINES_H

#include <stddef.h>
#include <stdint.h>

struct cs_inlines;			/* opaque */

/* Opens path's DWARF. Returns 0 and a handle in *out (caller frees),
 * -ENODATA when the file has no debug info, or another negative errno. */
int cs_inlines_open(const char *path, struct cs_inlines **out);

/* cs_inlines_open() but for its last step: an image of the debug
 * sections built here (not read from the cache, symcache.h) is not saved
 * yet. cs_inlines_save() saves it, on any thread, while this handle
 * answers lookups on another: a worker opens, the reading thread saves
 * only what it uses. */
int cs_inlines_open_unsaved(const char *path, struct cs_inlines **out);

/* Saves what cs_inlines_open_unsaved() built and did not save, once; a
 * no-op for a handle with nothing to save (or NULL). Reads only the image
 * and copies made at the open, never what lookups change. */
void cs_inlines_save(struct cs_inlines *in);

/* Names of the functions inlined at vaddr (an address in the file's own
 * address space), innermost first, without the function they are inlined
 * into. Fills names[0..cap) and returns how many there are. Names
 * (linkage names demangled, else plain names) live until cs_inlines_free. */
size_t cs_inlines_at(struct cs_inlines *in, uint64_t vaddr, const char **names,
		     size_t cap);

void cs_inlines_free(struct cs_inlines *in);

#endif
