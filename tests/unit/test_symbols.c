/* test_symbols.c - symbol tables, kallsyms, demangling and ELF reading. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/symbols/elfimg.h"
#include "lib/symbols/symtab.h"
#include "lib/util/pool.h"

static struct cs_symtab *kallsyms(const char *text, long *added)
{
	struct cs_symtab *t;
	size_t bad = 0;

	assert_int_equal(cs_symtab_new(&t), 0);
	*added = cs_kallsyms_parse(t, text, strlen(text), &bad);
	assert_int_equal(cs_symtab_finish(t), 0);
	return t;
}

static void kallsyms_text_symbols_resolve_up_to_the_next(void **state)
{
	const char *text =
		"ffffffff81000000 T _text\n"
		"ffffffff81000100 t helper\n"
		"ffffffff81000200 r some_rodata\n"
		"ffffffff81000300 T do_thing\n";
	const struct cs_sym *s;
	long n;
	struct cs_symtab *t = kallsyms(text, &n);

	(void)state;
	assert_int_equal(n, 3);			/* rodata is not kept */
	s = cs_symtab_find(t, 0xffffffff81000150);
	assert_non_null(s);
	assert_string_equal(s->name, "helper");
	/* read-only data does not end helper: it runs to do_thing */
	s = cs_symtab_find(t, 0xffffffff81000250);
	assert_string_equal(s->name, "helper");
	assert_null(cs_symtab_find(t, 0xffffffff80ffffff));
	/* the last symbol ends a page past its page */
	assert_non_null(cs_symtab_find(t, 0xffffffff81001fff));
	assert_null(cs_symtab_find(t, 0xffffffff81002000));
	cs_symtab_free(t);
}

static void kallsyms_module_symbols_carry_their_module(void **state)
{
	const char *text =
		"ffffffff81000000 T _text\n"
		"ffffffffc0000000 t mod_fn\t[e1000]\n"
		"ffffffffc0000400 t mod_fn2\t[e1000]\n";
	const struct cs_sym *s;
	long n;
	struct cs_symtab *t = kallsyms(text, &n);

	(void)state;
	assert_int_equal(n, 3);
	s = cs_symtab_find(t, 0xffffffffc0000010);
	assert_string_equal(s->name, "mod_fn");
	assert_string_equal(s->module, "[e1000]");
	assert_null(cs_symtab_find(t, 0xffffffff81000000)->module);
	/* the kernel's last symbol does not swallow the gap to the modules */
	assert_null(cs_symtab_find(t, 0xffffffff90000000));
	cs_symtab_free(t);
}

static void kallsyms_aliases_the_last_in_file_order_wins(void **state)
{
	/* perf closes unsized symbols before choosing among aliases, so the
	 * last of a run at one address is the only sized one */
	const char *text =
		"ffffffff8c4aea90 T __ia32_sys_getppid\n"
		"ffffffff8c4aea90 T __x64_sys_getppid\n"
		"ffffffff8c4aeb00 T next_fn\n";
	long n;
	struct cs_symtab *t = kallsyms(text, &n);

	(void)state;
	assert_string_equal(cs_symtab_find(t, 0xffffffff8c4aeab9)->name,
			    "__x64_sys_getppid");
	cs_symtab_free(t);
}

static void kallsyms_bad_line_is_reported_with_its_number(void **state)
{
	const char *text = "ffffffff81000000 T _text\nnot a line\n";
	struct cs_symtab *t;
	size_t bad = 0;

	(void)state;
	assert_int_equal(cs_symtab_new(&t), 0);
	assert_int_equal(cs_kallsyms_parse(t, text, strlen(text), &bad), -EBADMSG);
	assert_int_equal(bad, 2);
	cs_symtab_free(t);
}

static void kallsyms_with_hidden_addresses_adds_nothing(void **state)
{
	const char *text = "0000000000000000 T _text\n0000000000000000 t x\n";
	long n;
	struct cs_symtab *t = kallsyms(text, &n);

	(void)state;
	assert_int_equal(n, 0);
	assert_int_equal(cs_symtab_count(t), 0);
	assert_null(cs_symtab_find(t, 0));
	cs_symtab_free(t);
}

static const char *alias_winner(const char *a, enum cs_sym_bind ba, uint64_t sa,
				const char *b, enum cs_sym_bind bb, uint64_t sb)
{
	static char name[64];
	struct cs_symtab *t;

	assert_int_equal(cs_symtab_new(&t), 0);
	assert_int_equal(cs_symtab_add(t, 0x1000, sa, ba, a, strlen(a), NULL), 0);
	assert_int_equal(cs_symtab_add(t, 0x1000, sb, bb, b, strlen(b), NULL), 0);
	assert_int_equal(cs_symtab_finish(t), 0);
	assert_int_equal(cs_symtab_count(t), 1);
	snprintf(name, sizeof(name), "%s", cs_symtab_find(t, 0x1000)->name);
	cs_symtab_free(t);
	return name;
}

static void aliases_at_one_address_follow_perfs_choice(void **state)
{
	(void)state;
	assert_string_equal(alias_winner("a", CS_SYM_GLOBAL, 0, "b", CS_SYM_LOCAL, 16), "b");
	assert_string_equal(alias_winner("open", CS_SYM_WEAK, 16, "__GI___libc_open",
					 CS_SYM_LOCAL, 16), "__GI___libc_open");
	assert_string_equal(alias_winner("x", CS_SYM_LOCAL, 16, "y", CS_SYM_GLOBAL, 16), "y");
	assert_string_equal(alias_winner("__x", CS_SYM_GLOBAL, 16, "_y", CS_SYM_GLOBAL, 16), "_y");
	assert_string_equal(alias_winner("__libc_open64", CS_SYM_LOCAL, 16,
					 "__GI___libc_open", CS_SYM_LOCAL, 16), "__GI___libc_open");
	assert_string_equal(alias_winner("same", CS_SYM_GLOBAL, 16, "also", CS_SYM_GLOBAL, 16), "same");
}

/* A binary's table comes in no order: sorted, it must answer as a sorted
 * one would, aliases chosen among by the same rules, ties by the order
 * they were added in (not by where the sort left them). */
static void unsorted_tables_are_sorted_stably(void **state)
{
	enum { N = 5000 };
	struct cs_symtab *t;
	char name[32];

	(void)state;
	assert_int_equal(cs_symtab_new(&t), 0);
	/* symbol k at 0x10000 + 16 * k, added in a scrambled order; every
	 * 7th has an alias equal by every rule, added after it */
	for (unsigned int i = 0; i < N; i++) {
		unsigned int k = (i * 761u) % N;	/* a permutation: 761 is
						 * prime to N */
		int n = snprintf(name, sizeof(name), "f%u", k);

		assert_int_equal(cs_symtab_add(t, 0x10000 + 16 * k, 16, CS_SYM_GLOBAL,
					       name, (size_t)n, NULL), 0);
		if (k % 7 == 0) {
			n = snprintf(name, sizeof(name), "g%u", k);
			assert_int_equal(cs_symtab_add(t, 0x10000 + 16 * k, 16,
						       CS_SYM_GLOBAL, name,
						       (size_t)n, NULL), 0);
		}
	}
	assert_int_equal(cs_symtab_finish(t), 0);
	assert_int_equal(cs_symtab_count(t), N);
	for (unsigned int k = 0; k < N; k++) {
		const struct cs_sym *s = cs_symtab_find(t, 0x10000 + 16 * k + 15);

		snprintf(name, sizeof(name), "f%u", k);
		assert_non_null(s);
		assert_string_equal(s->name, name);
	}
	cs_symtab_free(t);
}

static void sized_symbols_end_at_their_size(void **state)
{
	struct cs_symtab *t;

	(void)state;
	assert_int_equal(cs_symtab_new(&t), 0);
	assert_int_equal(cs_symtab_add(t, 0x1000, 0x10, CS_SYM_GLOBAL, "f", 1, NULL), 0);
	assert_int_equal(cs_symtab_add(t, 0x1100, 0, CS_SYM_GLOBAL, "g", 1, NULL), 0);
	assert_int_equal(cs_symtab_add(t, 0x1200, 8, CS_SYM_GLOBAL, "h", 1, NULL), 0);
	assert_int_equal(cs_symtab_finish(t), 0);
	assert_string_equal(cs_symtab_find(t, 0x100f)->name, "f");
	assert_null(cs_symtab_find(t, 0x1010));		/* a gap after f */
	assert_string_equal(cs_symtab_find(t, 0x11ff)->name, "g");
	assert_null(cs_symtab_find(t, 0x1208));
	cs_symtab_free(t);
}

static void check_demangle(const char *in, const char *want)
{
	struct cs_pool pool = { 0 };
	char *out = cs_demangle(in);
	const char *pooled;
	size_t len = 0;

	/* the pooled form gives the same text, with its length */
	pooled = cs_demangle_into(in, &pool, &len);
	if (!want) {
		assert_null(out);
		assert_null(pooled);
		return;
	}
	assert_non_null(out);
	assert_string_equal(out, want);
	assert_non_null(pooled);
	assert_string_equal(pooled, want);
	assert_int_equal(len, strlen(want));
	free(out);
	cs_pool_free(&pool);
}

static void cpp_and_rust_names_are_demangled(void **state)
{
	(void)state;
	check_demangle("_ZN3foo3barEv", "foo::bar");
	check_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi",
		       "std::vector<int, std::allocator<int> >::push_back");
	/* legacy Rust: the hash suffix goes */
	check_demangle("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write");
	/* Rust v0 */
	check_demangle("_RNvCs15kBYyAo9fc_7mycrate7example", "mycrate::example");
	/* ends like a legacy Rust name: Rust; with no hex hash, C++ */
	check_demangle("_ZN3foo17h0123456789abcdefE", "foo");
	check_demangle("_ZN3foo17hzzzzzzzzzzzzzzzzE", "foo::hzzzzzzzzzzzzzzzz");
	check_demangle("_ZN3fooC2Ev", "foo::foo");
	check_demangle("_ZN3fooD0Ev", "foo::~foo");
	check_demangle("main", NULL);
	check_demangle("_Znot_mangled_really", NULL);
	check_demangle("_ZN", NULL);
	check_demangle("_Z", NULL);
}

/* A name longer than cs_demangle_into()'s buffer on the stack is made the
 * usual way: the same text, whole. libiberty takes mangled names of up
 * to about a thousand characters; substitutions make a longer one. */
static void a_long_demangled_name_is_whole(void **state)
{
	char in[64 + 300], want[64 + 4 * 310];
	int n, w;

	(void)state;
	/* f<ns::A, ns::A, ns::A, ns::A>, A 300 a's: S1_ is ns::A again */
	n = sprintf(in, "_Z1fIN2ns300");
	memset(in + n, 'a', 300);
	sprintf(in + n + 300, "ES1_S1_S1_EvT_");
	w = sprintf(want, "f<");
	for (int k = 0; k < 4; k++) {
		w += sprintf(want + w, "%sns::", k ? ", " : "");
		memset(want + w, 'a', 300);
		w += 300;
	}
	sprintf(want + w, ">");
	assert_true(w > 1024);
	check_demangle(in, want);
}

/* ---- ELF ---------------------------------------------------------------- */

__attribute__((noinline)) int marker_function_for_symbols(int x);
__attribute__((noinline)) int marker_function_for_symbols(int x)
{
	return x * 3 + 1;
}

/* The mapping of /proc/self/exe that holds addr: start and file offset. */
static int self_mapping(uint64_t addr, uint64_t *start, uint64_t *pgoff)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int found = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, off;

		if (sscanf(line, "%lx-%lx %*s %lx", &s, &e, &off) == 3 &&
		    addr >= s && addr < e) {
			*start = s;
			*pgoff = off;
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

static void elf_symbols_resolve_a_live_address(void **state)
{
	uint64_t addr = (uint64_t)(uintptr_t)&marker_function_for_symbols + 5;
	struct cs_elf_info info;
	struct cs_symtab *t;
	const struct cs_sym *s;
	uint64_t start, pgoff, vaddr;

	(void)state;
	assert_int_equal(cs_elf_info_read("/proc/self/exe", &info), 0);
	assert_true(info.is_elf);
	assert_true(info.build_id_size == 20);
	assert_true(info.has_symtab);
	assert_true(info.nr_segs >= 1);
	assert_int_equal(self_mapping(addr, &start, &pgoff), 0);
	/* as perf: map-relative -> file offset -> the segment's vaddr */
	vaddr = cs_elf_offset_to_vaddr(&info, addr - start + pgoff);
	assert_int_equal(cs_symtab_new(&t), 0);
	assert_true(cs_elf_load_symbols("/proc/self/exe", t) > 10);
	assert_int_equal(cs_symtab_finish(t), 0);
	s = cs_symtab_find(t, vaddr);
	assert_non_null(s);
	assert_string_equal(s->name, "marker_function_for_symbols");
	assert_int_equal(vaddr - s->start, 5);
	cs_symtab_free(t);
}

/* A binary without .symtab: its .gnu_debuglink (the name and the CRC
 * cs_elf_debuglink() reads) comes with its facts, that the debug file's
 * lookup does not open it again; none: "" - and a binary with symbols is
 * not asked for it. */
static void stripped_binaries_carry_their_debuglink(void **state)
{
	char dir[] = "/tmp/cs-test-link.XXXXXX", cmd[9000], self[4096];
	char bin[64], bare[64], name[256];
	struct cs_elf_info info;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	uint32_t crc;

	(void)state;
	assert_true(n > 0);
	self[n] = '\0';
	assert_non_null(mkdtemp(dir));
	snprintf(bin, sizeof(bin), "%s/prog", dir);
	snprintf(bare, sizeof(bare), "%s/bare", dir);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && cp '%s' prog.debug && "
		 "objcopy --strip-all --add-gnu-debuglink=prog.debug prog.debug prog && "
		 "objcopy --strip-all prog.debug bare", dir, self);
	if (system(cmd)) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		assert_int_equal(system(cmd), 0);
		skip();			/* no objcopy */
	}
	assert_int_equal(cs_elf_info_read(bin, &info), 0);
	assert_false(info.has_symtab);
	assert_true(info.debuglink_read);
	assert_int_equal(cs_elf_debuglink(bin, name, sizeof(name), &crc), 0);
	assert_string_equal(info.debuglink, "prog.debug");
	assert_string_equal(info.debuglink, name);
	assert_int_equal(info.debuglink_crc, crc);
	assert_int_equal(cs_elf_info_read(bare, &info), 0);
	assert_true(info.debuglink_read);
	assert_string_equal(info.debuglink, "");
	assert_int_equal(cs_elf_info_read("/proc/self/exe", &info), 0);
	assert_true(info.has_symtab);
	assert_false(info.debuglink_read);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* The PLT entry named for a function jumps through the GOT slot that the
 * dynamic linker filled with that very function. */
static void plt_entries_are_named_for_their_targets(void **state)
{
	uint64_t here = (uint64_t)(uintptr_t)&marker_function_for_symbols;
	uint64_t start, pgoff, bias;
	struct cs_elf_info info;
	const struct cs_sym *s = NULL;
	struct cs_symtab *t;
	const uint8_t *code;
	int32_t disp;
	void *target;
	size_t i;

	(void)state;
	assert_int_equal(cs_elf_info_read("/proc/self/exe", &info), 0);
	assert_int_equal(self_mapping(here, &start, &pgoff), 0);
	/* load bias: runtime address minus symbol address */
	bias = here - cs_elf_offset_to_vaddr(&info, here - start + pgoff);
	assert_int_equal(cs_symtab_new(&t), 0);
	assert_true(cs_elf_load_plt("/proc/self/exe", NULL, t) > 0);
	assert_int_equal(cs_symtab_finish(t), 0);
	for (i = 0; (s = cs_symtab_at(t, i)); i++)
		if (!strcmp(s->name, "elf_version@plt"))
			break;
	assert_non_null(s);
	code = (const uint8_t *)(uintptr_t)(s->start + bias);
	for (i = 0; i + 6 <= 16 && !(code[i] == 0xff && code[i + 1] == 0x25); i++)
		;
	assert_true(i + 6 <= 16);
	memcpy(&disp, code + i + 2, 4);
	memcpy(&target, (const void *)(uintptr_t)(s->start + bias + i + 6 +
						  (int64_t)disp), sizeof(target));
	/* taking elf_version's address here would route calls around the
	 * PLT: ask the dynamic linker instead */
	assert_ptr_equal(target, dlsym(RTLD_DEFAULT, "elf_version"));
	cs_symtab_free(t);
}

/* perf shows a C++ target's PLT entry demangled ("operator delete@plt");
 * libstdc++ calls plenty of C++ functions through its PLT */
static void plt_entries_of_cpp_targets_are_demangled(void **state)
{
	const char *lib = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
	const struct cs_sym *s;
	struct cs_symtab *t;
	size_t cpp = 0;

	(void)state;
	if (access(lib, R_OK))
		skip();
	assert_int_equal(cs_symtab_new(&t), 0);
	assert_true(cs_elf_load_plt(lib, NULL, t) > 0);
	assert_int_equal(cs_symtab_finish(t), 0);
	for (size_t i = 0; (s = cs_symtab_at(t, i)); i++) {
		assert_false(!strncmp(s->name, "_Z", 2));
		cpp += strstr(s->name, "::") || strstr(s->name, "operator ");
	}
	assert_true(cpp > 0);
	cs_symtab_free(t);
}

static void mangled_names_are_demangled_when_found(void **state)
{
	struct cs_symtab *t;

	(void)state;
	assert_int_equal(cs_symtab_new(&t), 0);
	assert_int_equal(cs_symtab_add_mangled(t, 0x1000, 16, CS_SYM_GLOBAL,
					       "_ZN3foo3barEv", 13), 0);
	/* an alias: chosen by its demangled name, which is longer */
	assert_int_equal(cs_symtab_add_mangled(t, 0x2000, 16, CS_SYM_GLOBAL,
					       "_ZN1a1bEv", 9), 0);
	assert_int_equal(cs_symtab_add_mangled(t, 0x2000, 16, CS_SYM_GLOBAL,
					       "_ZN5alias4longEv", 16), 0);
	assert_int_equal(cs_symtab_add_mangled(t, 0x3000, 16, CS_SYM_GLOBAL,
					       "_Zq", 3), 0);
	assert_int_equal(cs_symtab_finish(t), 0);
	assert_string_equal(cs_symtab_find(t, 0x1004)->name, "foo::bar");
	assert_string_equal(cs_symtab_find(t, 0x1008)->name, "foo::bar");
	assert_string_equal(cs_symtab_find(t, 0x2000)->name, "alias::long");
	assert_string_equal(cs_symtab_find(t, 0x3000)->name, "_Zq");
	cs_symtab_free(t);
}

/* cs_symtab_lookup() copies what cs_symtab_find() returns - names
 * demangled or not as find shows them, modules, ends - asked first or
 * after find, in a table as made and as saved and mapped again */
static void lookups_copy_what_find_returns(void **state)
{
	char path[] = "/tmp/cs-test-symtab.XXXXXX";
	const char *text = "ffffffff81000000 T _text\n"
			   "ffffffff81000100 t _Zhelper\n"
			   "ffffffffc0000000 t mod_fn\t[mod]\n";
	struct cs_symtab *tabs[2];
	struct cs_sym s;
	size_t bad = 0;
	int fd;

	(void)state;
	assert_int_equal(cs_symtab_new(&tabs[0]), 0);
	assert_int_equal(cs_kallsyms_parse(tabs[0], text, strlen(text), &bad), 3);
	assert_int_equal(cs_symtab_add_mangled(tabs[0], 0xffffffffd0000000, 16,
					       CS_SYM_GLOBAL, "_ZN3foo3barEv", 13), 0);
	assert_int_equal(cs_symtab_add_mangled(tabs[0], 0xffffffffd0000100, 16,
					       CS_SYM_GLOBAL, "_Zq", 3), 0);
	assert_int_equal(cs_symtab_finish(tabs[0]), 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(cs_symtab_save(tabs[0], fd, "key"), 0);
	close(fd);
	assert_int_equal(cs_symtab_open_saved(path, "key", &tabs[1]), 0);
	unlink(path);
	for (int round = 0; round < 2; round++) {
		for (size_t k = 0; k < 2; k++) {
			static const uint64_t at[] = {
				0xffffffff80ffffff, 0xffffffff81000000,
				0xffffffff81000104, 0xffffffffc0000008,
				0xffffffffd0000004, 0xffffffffd0000010,
				0xffffffffd0000104,
			};

			for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
				struct cs_sym got;
				bool found = cs_symtab_lookup(tabs[k], at[i], &got);
				const struct cs_sym *want = cs_symtab_find(tabs[k], at[i]);

				assert_int_equal(found, want != NULL);
				if (!want)
					continue;
				assert_int_equal(got.start, want->start);
				assert_int_equal(got.end, want->end);
				assert_string_equal(got.name, want->name);
				assert_int_equal(got.name_len, strlen(got.name));
				assert_int_equal(want->name_len, strlen(want->name));
				assert_int_equal(!got.module, !want->module);
				if (got.module)
					assert_string_equal(got.module, want->module);
			}
		}
	}
	assert_true(cs_symtab_lookup(tabs[1], 0xffffffffd0000008, &s));
	assert_string_equal(s.name, "foo::bar");
	assert_true(cs_symtab_lookup(tabs[0], 0xffffffff81000108, &s));
	assert_string_equal(s.name, "_Zhelper");
	assert_true(cs_symtab_lookup(tabs[1], 0xffffffffc0000004, &s));
	assert_string_equal(s.module, "[mod]");
	cs_symtab_free(tabs[1]);
	cs_symtab_free(tabs[0]);
}

/* a finished table saved and mapped again answers as the original */
static void saved_tables_answer_as_the_original(void **state)
{
	char path[] = "/tmp/cs-test-symtab.XXXXXX";
	struct cs_symtab *t, *u;
	const char *text = "ffffffff81000000 T _text\n"
			   "ffffffff81000100 t helper\n"
			   "ffffffffc0000000 t mod_fn\t[mod]\n";
	size_t bad = 0;
	int fd;

	(void)state;
	assert_int_equal(cs_symtab_new(&t), 0);
	assert_int_equal(cs_kallsyms_parse(t, text, strlen(text), &bad), 3);
	assert_int_equal(cs_symtab_add_mangled(t, 0xffffffffd0000000, 16,
					       CS_SYM_GLOBAL, "_ZN3foo3barEv", 13), 0);
	assert_int_equal(cs_symtab_finish(t), 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(cs_symtab_save(t, fd, "key one"), 0);
	close(fd);
	assert_int_equal(cs_symtab_open_saved(path, "key two", &u), -ESTALE);
	assert_int_equal(cs_symtab_open_saved(path, "key one", &u), 0);
	assert_int_equal(cs_symtab_count(u), cs_symtab_count(t));
	for (uint64_t a = 0xffffffff80ffffff; a < 0xffffffff81000300; a += 0x40) {
		const struct cs_sym *x = cs_symtab_find(t, a), *y = cs_symtab_find(u, a);

		assert_int_equal(!x, !y);
		if (x) {
			assert_string_equal(x->name, y->name);
			assert_int_equal(x->end, y->end);
		}
	}
	assert_string_equal(cs_symtab_find(u, 0xffffffffc0000004)->module, "[mod]");
	assert_string_equal(cs_symtab_find(u, 0xffffffffd0000004)->name, "foo::bar");
	cs_symtab_free(u);
	/* cut short: refused, never read past the end */
	assert_int_equal(truncate(path, 40), 0);
	assert_int_equal(cs_symtab_open_saved(path, "key one", &u), -EBADMSG);
	unlink(path);
	cs_symtab_free(t);
}

/* A name's length comes with it, as the table keeps it: a name as
 * added, demangled, too long to keep a length for (measured), and in a
 * saved table whose kept length would run past its names (measured: a
 * length read from a file is never trusted past the file's end). */
static void names_come_with_their_lengths(void **state)
{
	char path[] = "/tmp/cs-test-symtab.XXXXXX";
	size_t long_len = 70000;
	char *long_name = malloc(long_len + 1), *file;
	struct cs_symtab *t, *u;
	struct cs_sym s;
	FILE *f;
	long size;
	int fd;

	(void)state;
	assert_non_null(long_name);
	memset(long_name, 'x', long_len);
	long_name[long_len] = '\0';
	assert_int_equal(cs_symtab_new(&t), 0);
	assert_int_equal(cs_symtab_add(t, 0x1000, 16, CS_SYM_GLOBAL, "helper", 6,
				       NULL), 0);
	assert_int_equal(cs_symtab_add_mangled(t, 0x2000, 16, CS_SYM_GLOBAL,
					       "_ZN3foo3barEv", 13), 0);
	assert_int_equal(cs_symtab_add(t, 0x3000, 16, CS_SYM_GLOBAL, long_name,
				       long_len, NULL), 0);
	assert_int_equal(cs_symtab_add(t, 0x4000, 16, CS_SYM_GLOBAL, "zz_last",
				       7, NULL), 0);
	assert_int_equal(cs_symtab_finish(t), 0);
	for (int round = 0; round < 2; round++) {	/* the second: recent */
		assert_true(cs_symtab_lookup(t, 0x1004, &s));
		assert_int_equal(s.name_len, 6);
		assert_true(cs_symtab_lookup(t, 0x2004, &s));
		assert_string_equal(s.name, "foo::bar");
		assert_int_equal(s.name_len, 8);
		assert_true(cs_symtab_lookup(t, 0x3004, &s));
		assert_int_equal(s.name_len, long_len);
		assert_int_equal(cs_symtab_find(t, 0x3008)->name_len, long_len);
	}
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(cs_symtab_save(t, fd, "key"), 0);
	close(fd);
	/* "zz_last" is the pool's last name: its length made to claim
	 * more bytes than are left */
	f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	file = malloc((size_t)size);
	assert_non_null(file);
	rewind(f);
	assert_int_equal(fread(file, 1, (size_t)size, f), (size_t)size);
	assert_memory_equal(file + size - 8, "zz_last", 8);
	assert_int_equal(fseek(f, size - 10, SEEK_SET), 0);
	assert_int_equal(fwrite("\x40\x00", 1, 2, f), 2);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(cs_symtab_open_saved(path, "key", &u), 0);
	unlink(path);
	assert_true(cs_symtab_lookup(u, 0x4004, &s));
	assert_string_equal(s.name, "zz_last");
	assert_int_equal(s.name_len, 7);
	assert_true(cs_symtab_lookup(u, 0x1004, &s));
	assert_int_equal(s.name_len, 6);
	assert_true(cs_symtab_lookup(u, 0x2004, &s));
	assert_int_equal(s.name_len, 8);
	assert_true(cs_symtab_lookup(u, 0x3004, &s));
	assert_int_equal(s.name_len, long_len);
	cs_symtab_free(u);
	cs_symtab_free(t);
	free(file);
	free(long_name);
}

/* a binary without function symbols (stripped, .dynsym all undefined) is
 * cached too: else every run would parse it and write its file again */
static void empty_tables_are_saved_and_opened(void **state)
{
	char path[] = "/tmp/cs-test-symtab.XXXXXX";
	struct cs_symtab *t, *u;
	int fd;

	(void)state;
	assert_int_equal(cs_symtab_new(&t), 0);
	assert_int_equal(cs_symtab_finish(t), 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(cs_symtab_save(t, fd, "empty"), 0);
	close(fd);
	assert_int_equal(cs_symtab_open_saved(path, "empty", &u), 0);
	assert_int_equal(cs_symtab_count(u), 0);
	assert_null(cs_symtab_find(u, 0x1000));
	cs_symtab_free(u);
	unlink(path);
	cs_symtab_free(t);
}

/* a big table (its lookups start in a bucket of the address range, its
 * demangled names kept in a table of their own) answers as its symbols
 * say: at every symbol's edges, in the gaps, before the first and after
 * the last, where symbols crowd into one bucket and where buckets are
 * empty */
static void big_tables_answer_as_their_symbols_say(void **state)
{
	enum { N = 5000 };
	static uint64_t start[N], size[N];
	uint64_t a = 0x400000, seed = 1;
	struct cs_symtab *t;
	char name[16];

	(void)state;
	assert_int_equal(cs_symtab_new(&t), 0);
	for (size_t i = 0; i < N; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		start[i] = a;
		size[i] = 1 + (seed >> 33) % 300;
		snprintf(name, sizeof(name), "f%zu", i);
		if (i % 3) {
			assert_int_equal(cs_symtab_add(t, a, size[i], CS_SYM_GLOBAL,
						       name, strlen(name), NULL), 0);
		} else {
			/* a third mangled: shown as "f<i>" too, demangled */
			char mangled[32];

			snprintf(mangled, sizeof(mangled), "_Z%zu%sv", strlen(name), name);
			assert_int_equal(cs_symtab_add_mangled(t, a, size[i], CS_SYM_GLOBAL,
							       mangled, strlen(mangled)), 0);
		}
		/* mostly packed, some gaps, now and then a hole of a megabyte */
		a += size[i] + ((seed >> 20) % 4 == 0 ? (seed >> 40) % 64 : 0) +
		     ((seed >> 50) % 500 == 0 ? 1 << 20 : 0);
	}
	assert_int_equal(cs_symtab_finish(t), 0);
	for (size_t i = 0; i < N; i++) {
		uint64_t probe[] = { start[i] - 1, start[i], start[i] + size[i] / 2,
				     start[i] + size[i] - 1, start[i] + size[i] };

		for (size_t k = 0; k < sizeof(probe) / sizeof(probe[0]); k++) {
			const struct cs_sym *s = cs_symtab_find(t, probe[k]);
			size_t want = N;

			/* the symbols are apart: only a neighbour can hold it */
			for (size_t j = i ? i - 1 : 0; j <= i + 1 && j < N; j++)
				if (probe[k] - start[j] < size[j])
					want = j;
			if (want == N) {
				assert_null(s);
				continue;
			}
			snprintf(name, sizeof(name), "f%zu", want);
			assert_non_null(s);
			assert_string_equal(s->name, name);
		}
	}
	assert_null(cs_symtab_find(t, 0));
	assert_null(cs_symtab_find(t, 0x3fffff));
	assert_null(cs_symtab_find(t, a + 4096));
	assert_null(cs_symtab_find(t, UINT64_MAX));
	cs_symtab_free(t);
}

static void non_elf_files_are_refused(void **state)
{
	struct cs_elf_info info;

	(void)state;
	assert_int_equal(cs_elf_info_read("/proc/self/maps", &info), -ENOEXEC);
	assert_int_equal(cs_elf_info_read("/nonexistent/file", &info), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kallsyms_text_symbols_resolve_up_to_the_next),
		cmocka_unit_test(kallsyms_module_symbols_carry_their_module),
		cmocka_unit_test(kallsyms_aliases_the_last_in_file_order_wins),
		cmocka_unit_test(kallsyms_bad_line_is_reported_with_its_number),
		cmocka_unit_test(kallsyms_with_hidden_addresses_adds_nothing),
		cmocka_unit_test(aliases_at_one_address_follow_perfs_choice),
		cmocka_unit_test(unsorted_tables_are_sorted_stably),
		cmocka_unit_test(sized_symbols_end_at_their_size),
		cmocka_unit_test(cpp_and_rust_names_are_demangled),
		cmocka_unit_test(a_long_demangled_name_is_whole),
		cmocka_unit_test(elf_symbols_resolve_a_live_address),
		cmocka_unit_test(stripped_binaries_carry_their_debuglink),
		cmocka_unit_test(plt_entries_are_named_for_their_targets),
		cmocka_unit_test(plt_entries_of_cpp_targets_are_demangled),
		cmocka_unit_test(non_elf_files_are_refused),
		cmocka_unit_test(mangled_names_are_demangled_when_found),
		cmocka_unit_test(saved_tables_answer_as_the_original),
		cmocka_unit_test(empty_tables_are_saved_and_opened),
		cmocka_unit_test(big_tables_answer_as_their_symbols_say),
		cmocka_unit_test(lookups_copy_what_find_returns),
		cmocka_unit_test(names_come_with_their_lengths),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
