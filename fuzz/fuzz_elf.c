/* fuzz_elf.c - symbols from hostile files: ELF binaries (through libelf
 * and libdw) and saved symbol tables (the cache's format, mapped as is).
 *
 * A profile names its binaries, and what is at those paths may be
 * anything: a truncated copy, a file of another architecture, a debug file
 * from a broken toolchain, a cache file cut short by a full disk. Input:
 *
 *   "\x7fELF..."  an ELF file: its header facts, its function symbols,
 *                 its PLT names, its debug link and the functions inlined
 *                 at each symbol's start; then the finished table is saved
 *                 and opened again, and must come back the same
 *   anything else a saved symbol table under the key "fuzz" (seeds: tables
 *                 this harness saved), opened and searched
 *
 * Checked: a lookup's symbol holds the address looked up; a saved table
 * opens again with the same symbols. The symbol cache is off
 * (CS_CACHE_MAX_MB=0): every input is read afresh, and nothing is written
 * outside the harness's own files.
 */
#include "fuzz.h"
#include "lib/symbols/elfimg.h"
#include "lib/symbols/inlines.h"
#include "lib/symbols/symtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define KEY "fuzz"
#define MAX_LOOKUPS 512

/* Looks up every symbol's start, middle and last byte (at most
 * MAX_LOOKUPS symbols) and a few addresses no table should hold. */
static void search(struct cs_symtab *t)
{
	static const uint64_t odd[] = { 0, 1, UINT64_MAX, UINT64_MAX - 1,
					1ULL << 63 };
	size_t n = cs_symtab_count(t);

	for (size_t i = 0; i < n && i < MAX_LOOKUPS; i++) {
		const struct cs_sym *s = cs_symtab_at(t, i);
		uint64_t at[3] = { s->start, s->start + (s->end - s->start) / 2,
				   s->end - 1 };

		if (s->end < s->start)
			fuzz_fail("fuzz_elf: symbol %zu ends before it starts", i);
		for (int k = 0; k < 3; k++) {
			const struct cs_sym *f = cs_symtab_find(t, at[k]);

			if (f && (at[k] < f->start || at[k] >= f->end))
				fuzz_fail("fuzz_elf: %#llx found in [%#llx, %#llx)",
					  (unsigned long long)at[k],
					  (unsigned long long)f->start,
					  (unsigned long long)f->end);
			if (f && !f->name)
				fuzz_fail("fuzz_elf: a symbol without a name");
			/* symtab.h: the length ends at a NUL, and a
			 * damaged saved table may hold another before it */
			if (f && (f->name[f->name_len] != '\0' ||
				  strlen(f->name) > f->name_len))
				fuzz_fail("fuzz_elf: a name of %zu bytes said to "
					  "have %zu", strlen(f->name),
					  f->name_len);
		}
	}
	for (size_t k = 0; k < sizeof(odd) / sizeof(odd[0]); k++) {
		const struct cs_sym *f = cs_symtab_find(t, odd[k]);

		if (f && (odd[k] < f->start || odd[k] >= f->end))
			fuzz_fail("fuzz_elf: an odd address found outside its symbol");
	}
}

/* A path to a file that holds exactly data: the harness's memfd. */
static const char *input_path(const uint8_t *data, size_t size)
{
	static char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fuzz_file(data, size));
	return path;
}

/* Saves t, opens the copy and checks that it holds the same symbols. */
static void round_trip(struct cs_symtab *t)
{
	static int fd = -1;
	static char path[64];
	struct cs_symtab *back = NULL;
	size_t n = cs_symtab_count(t);

	if (fd < 0) {
		fd = memfd_create("fuzz-saved", MFD_CLOEXEC);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (fd < 0 || ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
		fuzz_fail("fuzz_elf: cannot make a memfd");
	if (cs_symtab_save(t, fd, KEY))
		return;			/* no memory: nothing to compare */
	if (cs_symtab_open_saved(path, KEY, &back))
		fuzz_fail("fuzz_elf: a table just saved does not open");
	if (cs_symtab_count(back) != n)
		fuzz_fail("fuzz_elf: %zu symbols saved, %zu back", n,
			  cs_symtab_count(back));
	for (size_t i = 0; i < n; i++) {
		const struct cs_sym *a = cs_symtab_at(t, i);
		const struct cs_sym *b = cs_symtab_at(back, i);

		if (a->start != b->start || a->end != b->end ||
		    strcmp(a->name, b->name))
			fuzz_fail("fuzz_elf: symbol %zu differs once saved", i);
	}
	cs_symtab_free(back);
}

static void elf_file(const uint8_t *data, size_t size)
{
	const char *path = input_path(data, size);
	struct cs_elf_info info;
	struct cs_symtab *t = NULL, *plt = NULL;
	struct cs_inlines *in = NULL;
	char link[256];
	uint32_t crc;

	if (cs_elf_info_read(path, &info))
		return;
	if (info.nr_segs > CS_ELF_MAX_SEGS)
		fuzz_fail("fuzz_elf: %zu segments for room for %d", info.nr_segs,
			  CS_ELF_MAX_SEGS);
	for (size_t i = 0; i < info.nr_segs; i++)
		cs_elf_offset_to_vaddr(&info, info.segs[i].offset + 1);
	cs_elf_debuglink(path, link, sizeof(link), &crc);
	if (cs_symtab_new(&t))
		return;
	if (cs_elf_load_symbols(path, t) >= 0 && !cs_symtab_finish(t)) {
		search(t);
		round_trip(t);
		if (info.plt_end > info.plt_start && !cs_symtab_new(&plt)) {
			if (cs_elf_load_plt(path, t, plt) >= 0 &&
			    !cs_symtab_finish(plt))
				search(plt);
			cs_symtab_free(plt);
		}
		if (!cs_inlines_open(path, &in)) {
			const char *names[16];
			size_t n = cs_symtab_count(t);

			for (size_t i = 0; i < n && i < MAX_LOOKUPS; i++)
				cs_inlines_at(in, cs_symtab_at(t, i)->start,
					      names, 16);
			cs_inlines_free(in);
		}
	}
	cs_symtab_free(t);
}

static void saved_table(const uint8_t *data, size_t size)
{
	struct cs_symtab *t = NULL;

	if (cs_symtab_open_saved(input_path(data, size), KEY, &t))
		return;
	search(t);
	cs_symtab_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool once;

	if (!once) {
		setenv("CS_CACHE_MAX_MB", "0", 1);
		once = true;
	}
	if (size >= 4 && !memcmp(data, "\x7f" "ELF", 4))
		elf_file(data, size);
	else
		saved_table(data, size);
	return 0;
}
