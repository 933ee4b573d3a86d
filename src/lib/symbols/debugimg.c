/* debugimg.c - DWARF sections for inline lookups, inflated once (see
 * debugimg.h). */
#include "lib/symbols/debugimg.h"

#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2		/* gABI; newer <elf.h> has it */
#endif

/* What DIE trees, names and address ranges are read from; line tables,
 * location lists, frames, macros and aranges are left out. */
static const char *const kept[] = {
	".debug_info", ".debug_types", ".debug_abbrev", ".debug_str",
	".debug_line_str", ".debug_str_offsets", ".debug_addr",
	".debug_ranges", ".debug_rnglists",
};
#define NR_KEPT (sizeof(kept) / sizeof(kept[0]))

struct part {
	const Elf_Data *raw;		/* the section's bytes in the file */
	GElf_Shdr sh;
	uint32_t ch_type;		/* 0: stored as is */
	uint64_t size;			/* uncompressed */
	uint64_t align;
	uint64_t off;			/* in the image */
	const char *name;		/* one of kept[] */
};

static int inflate_zlib(const uint8_t *src, size_t src_len, void *dst,
			size_t dst_len)
{
	z_stream z;
	int r;

	if (src_len > UINT_MAX || dst_len > UINT_MAX)
		return -EBADMSG;
	memset(&z, 0, sizeof(z));
	if (inflateInit(&z) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)src;
	z.avail_in = (uInt)src_len;
	z.next_out = dst;
	z.avail_out = (uInt)dst_len;
	r = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	return r == Z_STREAM_END && z.total_out == dst_len ? 0 : -EBADMSG;
}

static int unpack(const struct part *p, void *dst)
{
	const uint8_t *src = (const uint8_t *)p->raw->d_buf + sizeof(Elf64_Chdr);
	size_t src_len = p->raw->d_size - sizeof(Elf64_Chdr), r;

	switch (p->ch_type) {
	case 0:
		memcpy(dst, p->raw->d_buf, p->size);
		return 0;
	case ELFCOMPRESS_ZLIB:
		return inflate_zlib(src, src_len, dst, p->size);
	case ELFCOMPRESS_ZSTD:
		r = ZSTD_decompress(dst, p->size, src, src_len);
		return !ZSTD_isError(r) && r == p->size ? 0 : -EBADMSG;
	}
	return -EBADMSG;
}

static uint64_t align_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

/* The kept sections of elf in parts[]; 1 when the file is better left to
 * libdw as it is. */
static int find_parts(Elf *elf, struct part *parts, size_t *nr)
{
	bool compressed = false;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 1;
	*nr = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		struct part *p = &parts[*nr];
		const char *name;
		size_t k;

		if (!gelf_getshdr(scn, &p->sh) ||
		    !(name = elf_strptr(elf, shstrndx, p->sh.sh_name)))
			continue;
		/* dwz's shared file is found from the file's directory, and
		 * GNU's .zdebug_ compression is not SHF_COMPRESSED */
		if (!strcmp(name, ".gnu_debugaltlink") ||
		    !strcmp(name, ".debug_sup") || !strncmp(name, ".zdebug", 7))
			return 1;
		for (k = 0; k < NR_KEPT && strcmp(name, kept[k]); k++)
			;
		if (k == NR_KEPT || p->sh.sh_type == SHT_NOBITS)
			continue;
		for (size_t j = 0; j < *nr; j++)
			if (parts[j].sh.sh_name == p->sh.sh_name)
				return 1;	/* twice: libdw knows which */
		p->name = kept[k];
		p->raw = elf_rawdata(scn, NULL);
		if (!p->raw || !p->raw->d_buf)
			return 1;
		p->ch_type = 0;
		p->size = p->raw->d_size;
		p->align = p->sh.sh_addralign;
		if (p->sh.sh_flags & SHF_COMPRESSED) {
			Elf64_Chdr ch;

			if (p->raw->d_size < sizeof(ch))
				return -EBADMSG;
			memcpy(&ch, p->raw->d_buf, sizeof(ch));
			if (ch.ch_type != ELFCOMPRESS_ZLIB &&
			    ch.ch_type != ELFCOMPRESS_ZSTD)
				return 1;
			p->ch_type = ch.ch_type;
			p->size = ch.ch_size;
			p->align = ch.ch_addralign;
			compressed = true;
		}
		if (p->align < 8)
			p->align = 8;
		if (p->align > 4096 || (p->align & (p->align - 1)) ||
		    p->size > (1ULL << 32))
			return -EBADMSG;
		(*nr)++;
	}
	return compressed && *nr ? 0 : 1;
}

int cs_debugimg_build(Elf *elf, char **image, size_t *size)
{
	struct part parts[NR_KEPT];
	size_t nr, strsz = 1 + sizeof(".shstrtab");
	uint64_t off, shoff, total;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	GElf_Ehdr geh;
	char *img, *str;
	int err;

	*image = NULL;
	*size = 0;
	if (!gelf_getehdr(elf, &geh) || geh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    geh.e_ident[EI_DATA] != (BYTE_ORDER == LITTLE_ENDIAN ?
				     ELFDATA2LSB : ELFDATA2MSB) ||
	    geh.e_type == ET_REL)
		return 1;
	err = find_parts(elf, parts, &nr);
	if (err)
		return err;
	/* [ehdr][sections][.shstrtab][section headers] */
	off = sizeof(Elf64_Ehdr);
	for (size_t i = 0; i < nr; i++) {
		parts[i].off = align_up(off, parts[i].align);
		strsz += strlen(parts[i].name) + 1;
		off = parts[i].off + parts[i].size;
	}
	shoff = align_up(off + strsz, 8);
	total = shoff + (nr + 2) * sizeof(Elf64_Shdr);
	if (total > SIZE_MAX)
		return -ENOMEM;
	/* the sections fill their places; only the rest is cleared */
	img = malloc((size_t)total);
	if (!img)
		return -ENOMEM;
	memset(img, 0, (size_t)parts[0].off);
	memset(img + off, 0, (size_t)(total - off));
	for (size_t i = 0; i < nr; i++) {
		uint64_t end = parts[i].off + parts[i].size;

		if (i + 1 < nr)
			memset(img + end, 0, (size_t)(parts[i + 1].off - end));
		err = unpack(&parts[i], img + parts[i].off);
		if (err) {
			free(img);
			return err;
		}
	}

	str = img + off;
	sh = (Elf64_Shdr *)(img + shoff);
	strsz = 1;
	for (size_t i = 0; i < nr; i++) {
		const GElf_Shdr *o = &parts[i].sh;
		size_t len = strlen(parts[i].name) + 1;

		memcpy(str + strsz, parts[i].name, len);
		sh[i + 1] = (Elf64_Shdr){
			.sh_name = (uint32_t)strsz,
			.sh_type = o->sh_type,
			.sh_flags = o->sh_flags & ~(uint64_t)SHF_COMPRESSED,
			.sh_offset = parts[i].off,
			.sh_size = parts[i].size,
			.sh_addralign = parts[i].align,
			.sh_entsize = o->sh_entsize,
		};
		strsz += len;
	}
	memcpy(str + strsz, ".shstrtab", sizeof(".shstrtab"));
	sh[nr + 1] = (Elf64_Shdr){
		.sh_name = (uint32_t)strsz,
		.sh_type = SHT_STRTAB,
		.sh_offset = off,
		.sh_size = strsz + sizeof(".shstrtab"),
		.sh_addralign = 1,
	};

	eh = (Elf64_Ehdr *)img;
	memcpy(eh->e_ident, geh.e_ident, EI_NIDENT);
	eh->e_type = geh.e_type;
	eh->e_machine = geh.e_machine;
	eh->e_version = geh.e_version;
	eh->e_flags = geh.e_flags;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shoff = shoff;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = (uint16_t)(nr + 2);
	eh->e_shstrndx = (uint16_t)(nr + 1);
	*image = img;
	*size = (size_t)total;
	return 0;
}
