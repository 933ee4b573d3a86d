/* elfimg.h - what callstitch needs from an ELF file: its build id, its
 * loadable segments (to turn a file offset into a symbol address) and its
 * function symbols. Reads through libelf; never keeps the file open.
 */
#ifndef CS_ELFIMG_H
#define CS_ELFIMG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cs_symtab;

#define CS_ELF_MAX_SEGS 16

struct cs_elf_seg {
	uint64_t offset, vaddr, filesz, memsz;
};

struct cs_elf_info {
	uint8_t build_id[20];
	uint8_t build_id_size;		/* 0: the file has no build id note */
	bool has_symtab;		/* .symtab present (not only .dynsym) */
	bool is_elf;
	uint16_t e_type;
	size_t nr_segs;
	struct cs_elf_seg segs[CS_ELF_MAX_SEGS];	/* executable PT_LOADs first */
	uint64_t plt_start, plt_end;	/* the PLT entries code calls, or 0, 0 */
	/* A binary without .symtab has its symbols in a debug file, which
	 * its .gnu_debuglink may name: read with the rest (debuglink_read)
	 * for such a binary, that the lookup need not open it again. */
	bool debuglink_read;
	char debuglink[256];		/* "": none (cs_elf_debuglink()) */
	uint32_t debuglink_crc;
};

/* Sets libelf's version, once for the process (any thread may be the
 * first). False when libelf does not know this version. */
bool cs_elf_init(void);

/* Reads the header facts of path. Returns 0, or a negative errno (-ENOENT,
 * -ENOEXEC for a file that is not ELF). */
int cs_elf_info_read(const char *path, struct cs_elf_info *info);

/* Adds path's function symbols to t (.symtab if present, else .dynsym),
 * names demangled. Returns the number added or a negative errno. */
long cs_elf_load_symbols(const char *path, struct cs_symtab *t);

/* Adds "name@plt" symbols for the PLT entries of path (x86-64 layout:
 * .plt.sec, or .plt after its header; info->plt_start..plt_end), as perf
 * shows calls through the PLT: each entry named after the relocation of
 * the GOT slot it jumps through. An IFUNC's slot (R_X86_64_IRELATIVE, no
 * symbol) is named after the symbol of syms (the binary's finished table,
 * may be NULL) that starts at its resolver, else "offset_0xOFF@plt" (OFF:
 * the entry's file offset), as perf 6.3 and later name them. Returns the
 * number added or a negative errno. */
long cs_elf_load_plt(const char *path, struct cs_symtab *syms,
		     struct cs_symtab *t);

/* The debug file name path's .gnu_debuglink section gives, and the CRC-32
 * of that file's contents, which it also records. Returns 0, -ENOENT if
 * there is none, or another negative errno. */
int cs_elf_debuglink(const char *path, char *name, size_t size, uint32_t *crc);

/* A file offset inside a loaded segment as a symbol address; the offset
 * itself when no segment holds it. */
uint64_t cs_elf_offset_to_vaddr(const struct cs_elf_info *info, uint64_t off);

/* "abcd..." for a build id; buf holds at least 2 * size + 1 bytes. */
void cs_build_id_hex(const uint8_t *id, size_t size, char *buf);

#endif
