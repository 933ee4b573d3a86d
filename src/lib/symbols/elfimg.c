/* elfimg.c - build id, segments and function symbols of an ELF file. */
#include "lib/symbols/elfimg.h"
#include "lib/symbols/symtab.h"
#include "lib/util/open_regular.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool elf_ready;

static void elf_init_once(void)
{
	elf_ready = elf_version(EV_CURRENT) != EV_NONE;
}

/* libelf's version is one global of the library: set once, whichever
 * thread reads a file first (symbol tables load on worker threads) */
bool cs_elf_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, elf_init_once);
	return elf_ready;
}

static int elf_open(const char *path, int *fd, Elf **elf)
{
	char magic[SELFMAG];

	if (!cs_elf_init())
		return -ENOSYS;
	/* a name from a profile may be anything: only a regular file that
	 * starts like an ELF header is handed to libelf */
	*fd = cs_open_regular(path, sizeof(Elf64_Ehdr));
	if (*fd < 0)
		return *fd == -EINVAL || *fd == -ENODATA ? -ENOEXEC : *fd;
	if (pread(*fd, magic, sizeof(magic), 0) != sizeof(magic) ||
	    memcmp(magic, ELFMAG, SELFMAG)) {
		close(*fd);
		return -ENOEXEC;
	}
	*elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF) {
		if (*elf)
			elf_end(*elf);
		close(*fd);
		return -ENOEXEC;
	}
	return 0;
}

/* Finds the GNU build id in one note buffer. */
static bool note_build_id(Elf_Data *data, struct cs_elf_info *info)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(name, "GNU", 4) && nh.n_descsz > 0) {
			size_t n = nh.n_descsz;

			if (n > sizeof(info->build_id))
				n = sizeof(info->build_id);
			memcpy(info->build_id, (const char *)data->d_buf + desc_off, n);
			info->build_id_size = (uint8_t)n;
			return true;
		}
	}
	return false;
}

/* The section named name, or NULL. */
static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, out))
			continue;
		n = elf_strptr(elf, shstrndx, out->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* With IBT the entries that code calls live in .plt.sec, without a
 * header; otherwise in .plt after a 16-byte header. Returns the section
 * and sets *first to the offset of its first entry. */
static Elf_Scn *plt_section(Elf *elf, GElf_Shdr *sh, uint64_t *first)
{
	Elf_Scn *plt = find_section(elf, ".plt.sec", sh);

	*first = 0;
	if (!plt) {
		plt = find_section(elf, ".plt", sh);
		*first = 16;
	}
	return plt;
}

static void plt_range(Elf *elf, struct cs_elf_info *info)
{
	uint64_t first;
	GElf_Shdr sh;

	if (!plt_section(elf, &sh, &first) || sh.sh_size <= first)
		return;
	info->plt_start = sh.sh_addr + first;
	info->plt_end = sh.sh_addr + sh.sh_size;
}

static int debuglink_of(Elf *elf, char *name, size_t size, uint32_t *crc);

int cs_elf_info_read(const char *path, struct cs_elf_info *info)
{
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	size_t phnum, i;
	int fd, err;
	Elf *elf;

	memset(info, 0, sizeof(*info));
	err = elf_open(path, &fd, &elf);
	if (err)
		return err;
	if (!gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &phnum)) {
		err = -ENOEXEC;
		goto out;
	}
	info->is_elf = true;
	info->e_type = eh.e_type;
	/* executable segments first: they are what ips fall into */
	for (int pass = 0; pass < 2; pass++) {
		for (i = 0; i < phnum && info->nr_segs < CS_ELF_MAX_SEGS; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (!!(ph.p_flags & PF_X) != (pass == 0))
				continue;
			info->segs[info->nr_segs++] = (struct cs_elf_seg){
				.offset = ph.p_offset, .vaddr = ph.p_vaddr,
				.filesz = ph.p_filesz, .memsz = ph.p_memsz,
			};
		}
	}
	plt_range(elf, info);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			info->has_symtab = true;
		if (sh.sh_type == SHT_NOTE && !info->build_id_size) {
			Elf_Data *d = elf_getdata(scn, NULL);

			if (d)
				note_build_id(d, info);
		}
	}
	/* stripped of sections: the note segment still says it */
	for (i = 0; i < phnum && !info->build_id_size; i++) {
		GElf_Phdr ph;
		Elf_Data *d;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
					 ELF_T_NHDR);
		if (d)
			note_build_id(d, info);
	}
	if (!info->has_symtab) {
		info->debuglink_read = true;
		if (debuglink_of(elf, info->debuglink, sizeof(info->debuglink),
				 &info->debuglink_crc))
			info->debuglink[0] = '\0';
	}
out:
	elf_end(elf);
	close(fd);
	return err;
}

/* Sections named like text or data, by index: perf keeps symbols there.
 * Worked out once per section, not once per symbol. */
static bool *symbol_sections(Elf *elf, size_t shstrndx, size_t *nr)
{
	Elf_Scn *scn = NULL;
	bool *ok;

	if (elf_getshdrnum(elf, nr) || !(ok = calloc(*nr ? *nr : 1, sizeof(*ok))))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		size_t i = elf_ndxscn(scn);
		const char *sec;
		GElf_Shdr sh;

		if (i >= *nr || !gelf_getshdr(scn, &sh))
			continue;
		sec = elf_strptr(elf, shstrndx, sh.sh_name);
		ok[i] = sec && (strstr(sec, "text") || strstr(sec, "data"));
	}
	return ok;
}

/* perf's filter: functions, objects and labels (local NOTYPE symbols such
 * as ld.so's _start) in sections named like text or data, and functions
 * in any section (_init and _fini live in .init and .fini). Objects
 * matter because a bad unwind can land in .rodata, and perf names the
 * spot. */
static bool wanted_sym(const GElf_Sym *s, const bool *sections, size_t nr)
{
	int type = GELF_ST_TYPE(s->st_info);
	int vis = GELF_ST_VISIBILITY(s->st_other);

	if (!s->st_name || s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE)
		return false;
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return true;
	if (type != STT_OBJECT &&
	    !(type == STT_NOTYPE && vis != STV_HIDDEN && vis != STV_INTERNAL))
		return false;
	return s->st_shndx < nr && sections[s->st_shndx];
}

static enum cs_sym_bind bind_of(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL: return CS_SYM_GLOBAL;
	case STB_WEAK:   return CS_SYM_WEAK;
	}
	return CS_SYM_LOCAL;
}

/* The name at off in a string table's data, and its length; NULL if off
 * is outside it or the name runs past its end. Read in place: the loop
 * over a binary's symbols asked libelf (elf_strptr) for every name. */
static const char *str_at(const Elf_Data *strs, size_t off, size_t *len)
{
	const char *s;
	const char *nul;

	if (!strs || !strs->d_buf || off >= strs->d_size)
		return NULL;
	s = (const char *)strs->d_buf + off;
	nul = memchr(s, '\0', strs->d_size - off);
	if (!nul)
		return NULL;
	*len = (size_t)(nul - s);
	return s;
}

static long load_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
		       struct cs_symtab *t)
{
	Elf_Data *d = elf_getdata(scn, NULL), *strs;
	Elf_Scn *str_scn = elf_getscn(elf, sh->sh_link);
	size_t n, i, shstrndx, nr_sections;
	long added = 0;
	bool *sections;

	if (!d || !sh->sh_entsize || elf_getshdrstrndx(elf, &shstrndx) ||
	    !str_scn || !(strs = elf_getdata(str_scn, NULL)))
		return 0;
	sections = symbol_sections(elf, shstrndx, &nr_sections);
	if (!sections)
		return -ENOMEM;
	n = sh->sh_size / sh->sh_entsize;
	/* at most n symbols, whose names are at most the string table */
	if (cs_symtab_reserve(t, n, strs->d_size)) {
		free(sections);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;
		size_t len;
		int err;

		if (!gelf_getsym(d, (int)i, &s) ||
		    !wanted_sym(&s, sections, nr_sections))
			continue;
		name = str_at(strs, s.st_name, &len);
		/* '$x'/'$d': ARM mapping symbols, not names */
		if (!name || !len || *name == '$')
			continue;
		err = cs_symtab_add_mangled(t, s.st_value, s.st_size,
					    bind_of(&s), name, len);
		if (err) {
			added = err;
			break;
		}
		added++;
	}
	free(sections);
	return added;
}

long cs_elf_load_symbols(const char *path, struct cs_symtab *t)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr sh_symtab, sh_dynsym, sh;
	long n = 0;
	int fd, err;
	Elf *elf;

	err = elf_open(path, &fd, &elf);
	if (err)
		return err;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && !symtab) {
			symtab = scn;
			sh_symtab = sh;
		} else if (sh.sh_type == SHT_DYNSYM && !dynsym) {
			dynsym = scn;
			sh_dynsym = sh;
		}
	}
	if (symtab)
		n = load_table(elf, symtab, &sh_symtab, t);
	else if (dynsym)
		n = load_table(elf, dynsym, &sh_dynsym, t);
	elf_end(elf);
	close(fd);
	return n;
}

uint64_t cs_elf_offset_to_vaddr(const struct cs_elf_info *info, uint64_t off)
{
	for (size_t i = 0; i < info->nr_segs; i++) {
		const struct cs_elf_seg *s = &info->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz)
			return off - s->offset + s->vaddr;
	}
	return off;
}

void cs_build_id_hex(const uint8_t *id, size_t size, char *buf)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < size; i++) {
		buf[2 * i] = hex[id[i] >> 4];
		buf[2 * i + 1] = hex[id[i] & 15];
	}
	buf[2 * size] = '\0';
}

/* cs_elf_debuglink() of an open file */
static int debuglink_of(Elf *elf, char *name, size_t size, uint32_t *crc)
{
	Elf_Data *d;
	GElf_Shdr sh;
	Elf_Scn *scn;
	size_t n;
	int err = -ENOENT;

	scn = find_section(elf, ".gnu_debuglink", &sh);
	d = scn && sh.sh_type != SHT_NOBITS ? elf_getdata(scn, NULL) : NULL;
	/* the name, NUL, padding to 4 bytes, then the CRC */
	if (d && d->d_size >= 8 &&
	    (n = strnlen(d->d_buf, d->d_size)) < size && n > 0 &&
	    ((n + 4) & ~(size_t)3) + 4 <= d->d_size) {
		const uint8_t *p = (const uint8_t *)d->d_buf + ((n + 4) & ~(size_t)3);

		const char *ident = elf_getident(elf, NULL);

		memcpy(name, d->d_buf, n + 1);
		/* in the file's byte order */
		if (ident && ident[EI_DATA] == ELFDATA2MSB)
			*crc = (uint32_t)p[3] | (uint32_t)p[2] << 8 |
			       (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
		else
			*crc = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
			       (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
		err = 0;
	}
	return err;
}

int cs_elf_debuglink(const char *path, char *name, size_t size, uint32_t *crc)
{
	int fd, err;
	Elf *elf;

	err = elf_open(path, &fd, &elf);
	if (err)
		return err;
	err = debuglink_of(elf, name, size, crc);
	elf_end(elf);
	close(fd);
	return err;
}

/* The GOT slot a PLT entry jumps through (jmp *disp32(%rip), possibly
 * after endbr64 / a bnd prefix), or 0. */
static uint64_t plt_got_slot(const uint8_t *code, size_t len, uint64_t addr)
{
	for (size_t k = 0; k + 6 <= len; k++) {
		if (code[k] == 0xff && code[k + 1] == 0x25) {
			int32_t disp;

			memcpy(&disp, code + k + 2, 4);
			return addr + k + 6 + (uint64_t)(int64_t)disp;
		}
	}
	return 0;
}

struct slot_rela {
	uint64_t slot;			/* GOT slot (r_offset) */
	size_t idx;			/* its relocation */
};

static int cmp_slot(const void *a, const void *b)
{
	const struct slot_rela *x = a, *y = b;

	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The relocations by GOT slot, sorted, so that each PLT entry finds its
 * own with a binary search. NULL on -ENOMEM. */
static struct slot_rela *index_slots(Elf_Data *rd, size_t n)
{
	struct slot_rela *v = malloc((n ? n : 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (size_t k = 0; k < n; k++) {
		GElf_Rela r;

		v[k].slot = gelf_getrela(rd, (int)k, &r) ? r.r_offset : 0;
		v[k].idx = k;
	}
	qsort(v, n, sizeof(*v), cmp_slot);
	return v;
}

/* The first relocation for slot, or fallback. */
static size_t rela_of_slot(const struct slot_rela *v, size_t n, uint64_t slot,
			   size_t fallback)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].slot == slot ? v[lo].idx : fallback;
}

/* The name an IFUNC's PLT entry is shown with: the symbol at the
 * relocation's addend (its resolver, which the IFUNC symbol and its
 * aliases name), else the entry's file offset. Returns the length, or -1
 * if it does not fit. */
static int ifunc_plt_name(struct cs_symtab *syms, const GElf_Rela *r,
			  uint64_t file_off, char *name, size_t size)
{
	const struct cs_sym *sym = syms ? cs_symtab_find(syms, (uint64_t)r->r_addend) :
				   NULL;

	if (sym && sym->start == (uint64_t)r->r_addend)
		return snprintf(name, size, "%s@plt", sym->name);
	return snprintf(name, size, "offset_%#" PRIx64 "@plt", file_off);
}

long cs_elf_load_plt(const char *path, struct cs_symtab *syms,
		     struct cs_symtab *t)
{
	struct slot_rela *slots = NULL;
	GElf_Shdr sh_plt, sh_rela, sh_dyn;
	Elf_Scn *plt, *rela, *dyn;
	Elf_Data *rd, *dd, *pd;
	uint64_t first, entsize = 16;
	size_t n, i, nent;
	long added = 0;
	int fd, err;
	Elf *elf;

	err = elf_open(path, &fd, &elf);
	if (err)
		return err;
	plt = plt_section(elf, &sh_plt, &first);
	rela = find_section(elf, ".rela.plt", &sh_rela);
	if (!plt || !rela || sh_plt.sh_type == SHT_NOBITS ||
	    sh_rela.sh_type != SHT_RELA || !sh_rela.sh_entsize ||
	    sh_plt.sh_size <= first)
		goto out;
	dyn = elf_getscn(elf, sh_rela.sh_link);
	if (!dyn || !gelf_getshdr(dyn, &sh_dyn) || !sh_dyn.sh_entsize)
		goto out;
	rd = elf_getdata(rela, NULL);
	dd = elf_getdata(dyn, NULL);
	pd = elf_getdata(plt, NULL);
	if (!rd || !dd || !pd || pd->d_size < sh_plt.sh_size)
		goto out;
	n = sh_rela.sh_size / sh_rela.sh_entsize;
	nent = (sh_plt.sh_size - first) / entsize;
	slots = index_slots(rd, n);
	if (!slots) {
		added = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nent; i++) {
		uint64_t off = first + i * entsize, addr = sh_plt.sh_addr + off;
		uint64_t slot = plt_got_slot((const uint8_t *)pd->d_buf + off,
					     entsize, addr);
		size_t r_idx;
		char name[512];
		const char *sym;
		char *dem;
		GElf_Rela r;
		GElf_Sym ds;
		int len;

		/* the entry says which GOT slot, hence which relocation, it
		 * serves; the relocations need not be in PLT order */
		r_idx = slot ? rela_of_slot(slots, n, slot, i) : i;
		if (r_idx >= n || !gelf_getrela(rd, (int)r_idx, &r))
			continue;
		if (GELF_R_TYPE(r.r_info) == R_X86_64_IRELATIVE) {
			len = ifunc_plt_name(syms, &r, sh_plt.sh_offset + off,
					     name, sizeof(name));
		} else {
			if (!gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &ds))
				continue;
			sym = elf_strptr(elf, sh_dyn.sh_link, ds.st_name);
			if (!sym || !*sym)
				continue;
			/* perf names a C++ target demangled: "operator delete@plt" */
			dem = cs_demangle(sym);
			len = snprintf(name, sizeof(name), "%s@plt", dem ? dem : sym);
			free(dem);
		}
		if (len < 0 || (size_t)len >= sizeof(name))
			continue;
		err = cs_symtab_add(t, addr, entsize, CS_SYM_GLOBAL, name,
				    (size_t)len, NULL);
		if (err) {
			added = err;
			break;
		}
		added++;
	}
out:
	free(slots);
	elf_end(elf);
	close(fd);
	return added;
}
