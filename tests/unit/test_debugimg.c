/* test_debugimg.c - the in-memory image of a debug file's DWARF sections
 * reads as the file does. Uses libc's separate debug file (libc6-dbg),
 * whose sections are compressed; skipped without it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/symbols/debugimg.h"
#include "lib/symbols/elfimg.h"

static const char *const libcs[] = {
	"/lib/x86_64-linux-gnu/libc.so.6",
	"/usr/lib/x86_64-linux-gnu/libc.so.6",
};

/* libc's debug file, or false */
static bool libc_debug(char *path, size_t size)
{
	for (size_t i = 0; i < sizeof(libcs) / sizeof(libcs[0]); i++) {
		struct cs_elf_info info;
		char hex[41];

		if (cs_elf_info_read(libcs[i], &info) || !info.build_id_size)
			continue;
		cs_build_id_hex(info.build_id, info.build_id_size, hex);
		snprintf(path, size, "/usr/lib/debug/.build-id/%.2s/%s.debug",
			 hex, hex + 2);
		if (access(path, R_OK) == 0)
			return true;
	}
	return false;
}

static char *slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

/* The first `budget` DIEs below a and b (depth first) have the same tags
 * and names. */
static void same_tree(Dwarf_Die *a, Dwarf_Die *b, int *budget)
{
	Dwarf_Die ca, cb;
	int ra, rb;

	if (--*budget < 0)
		return;
	assert_int_equal(dwarf_tag(a), dwarf_tag(b));
	assert_string_equal(dwarf_diename(a) ? dwarf_diename(a) : "",
			    dwarf_diename(b) ? dwarf_diename(b) : "");
	ra = dwarf_child(a, &ca);
	rb = dwarf_child(b, &cb);
	assert_int_equal(ra, rb);
	while (ra == 0 && *budget > 0) {
		same_tree(&ca, &cb, budget);
		ra = dwarf_siblingof(&ca, &ca);
		rb = dwarf_siblingof(&cb, &cb);
		assert_int_equal(ra, rb);
	}
}

static void libc_image_reads_as_the_file(void **state)
{
	char path[4096], *image;
	Dwarf_Off off = 0, next;
	Elf *elf, *mem;
	Dwarf *dw_file, *dw_img;
	size_t size, hsize, cus = 0;
	int fd, fd2, err;

	(void)state;
	if (!libc_debug(path, sizeof(path)))
		skip();
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	err = cs_debugimg_build(elf, &image, &size);
	if (err == 1) {			/* a debug file built uncompressed */
		elf_end(elf);
		close(fd);
		skip();
	}
	assert_int_equal(err, 0);
	mem = elf_memory(image, size);
	assert_non_null(mem);
	dw_img = dwarf_begin_elf(mem, DWARF_C_READ, NULL);
	assert_non_null(dw_img);
	fd2 = open(path, O_RDONLY);
	dw_file = dwarf_begin(fd2, DWARF_C_READ);
	assert_non_null(dw_file);

	while (dwarf_nextcu(dw_file, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Off next2;
		size_t hsize2;
		Dwarf_Die a, b;
		Dwarf_Addr base, lo, hi, base2, lo2, hi2;
		ptrdiff_t pa = 0, pb = 0;
		int budget = cus % 25 == 0 ? 2000 : 1;

		assert_int_equal(dwarf_nextcu(dw_img, off, &next2, &hsize2,
					      NULL, NULL, NULL), 0);
		assert_int_equal(next, next2);
		assert_int_equal(hsize, hsize2);
		assert_non_null(dwarf_offdie(dw_file, off + hsize, &a));
		assert_non_null(dwarf_offdie(dw_img, off + hsize, &b));
		/* the CU's address ranges, from .debug_rnglists and
		 * .debug_addr, then its DIEs (.debug_abbrev, .debug_str) */
		do {
			pa = dwarf_ranges(&a, pa, &base, &lo, &hi);
			pb = dwarf_ranges(&b, pb, &base2, &lo2, &hi2);
			assert_int_equal(pa, pb);
			if (pa > 0) {
				assert_int_equal(lo, lo2);
				assert_int_equal(hi, hi2);
			}
		} while (pa > 0);
		same_tree(&a, &b, &budget);
		off = next;
		cus++;
	}
	assert_true(cus > 100);
	dwarf_end(dw_file);
	dwarf_end(dw_img);
	elf_end(mem);
	elf_end(elf);
	free(image);
	close(fd2);
	close(fd);
}

static void a_corrupt_section_is_refused(void **state)
{
	char path[4096], *file, *image = NULL;
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t len, shstrndx, size;
	bool flipped = false;

	(void)state;
	if (!libc_debug(path, sizeof(path)))
		skip();
	elf_version(EV_CURRENT);
	file = slurp(path, &len);
	elf = elf_memory(file, len);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		assert_non_null(gelf_getshdr(scn, &sh));
		if (!strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".debug_info") &&
		    (sh.sh_flags & SHF_COMPRESSED) && sh.sh_size > 1024) {
			/* in the middle of the deflate stream */
			file[sh.sh_offset + sh.sh_size / 2] ^= 0x5a;
			flipped = true;
		}
	}
	elf_end(elf);
	if (!flipped) {
		free(file);
		skip();
	}
	elf = elf_memory(file, len);
	assert_non_null(elf);
	assert_int_equal(cs_debugimg_build(elf, &image, &size), -EBADMSG);
	assert_null(image);
	elf_end(elf);
	free(file);
}

static void a_file_with_nothing_compressed_is_left_as_it_is(void **state)
{
	char *image = (char *)1;
	size_t size;
	Elf *elf;
	int fd;

	(void)state;
	elf_version(EV_CURRENT);
	fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	assert_int_equal(cs_debugimg_build(elf, &image, &size), 1);
	assert_null(image);
	elf_end(elf);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(libc_image_reads_as_the_file),
		cmocka_unit_test(a_corrupt_section_is_refused),
		cmocka_unit_test(a_file_with_nothing_compressed_is_left_as_it_is),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
