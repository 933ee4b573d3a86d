/* debugimg.h - the few DWARF sections inline lookups read, uncompressed,
 * as a small ELF image in memory.
 *
 * Debian's debug files compress every .debug_* section. libdw inflates all
 * of them when it opens a file, line tables and location lists included,
 * which inline lookups never read: for libc that was a third of the
 * inflating. The image holds only the sections that naming inlined calls
 * needs, each inflated once, and libdw opens it with elf_memory().
 */
#ifndef CS_DEBUGIMG_H
#define CS_DEBUGIMG_H

#include <stddef.h>

#include <libelf.h>

/* Builds the image of elf's debug sections in *image (malloc'd; the
 * caller frees it after the Elf and Dwarf made of it are ended) and its
 * size in *size. Returns 0, 1 when elf is better opened as it is (nothing
 * compressed, not a 64-bit file of this byte order, a relocatable object,
 * debug info in a dwz alternate file), or a negative errno (-ENOMEM,
 * -EBADMSG for a section that does not inflate to its recorded size). */
int cs_debugimg_build(Elf *elf, char **image, size_t *size);

#endif
