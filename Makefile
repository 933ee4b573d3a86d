# callstitch - build, test, bench.
#
#   make            release build: build/callstitch, build/libcallstitch.a,
#                   build/libcallstitch.so (only the public API exported)
#   make check      ASan+UBSan build of everything, then the whole test suite
#   make tsan       ThreadSanitizer build of the binary and the thread
#                   utilities' tests (make check builds it too)
#   make bench      speed, measured side by side with perf (bench/)
#   make install    PREFIX=/usr/local DESTDIR= : binary, library, header,
#                   callstitch.pc, man pages, bash completion
#   make fuzz       every libFuzzer harness of fuzz/ for FUZZ_SECONDS each
#                   (clang; see docs/reliability.md)
#
# Sources are found by wildcard: a new .c file in a module folder is built
# without touching this file.

CC      ?= cc
CFLAGS  ?= -O3 -g
# the release build is optimised across files at link time: script's
# per-frame path crosses the library's modules (machine, maps, symbols) a
# dozen times a frame. Fat objects keep libcallstitch.a usable by a link
# without LTO (another compiler, LTO=). docs/performance.md, "script: the
# build's flags and the end of the run"
LTO     ?= -flto=auto -ffat-lto-objects
WARN    := -Wall -Wextra -Werror
STD     := -std=gnu11
CPPFLAGS := -Iinclude -Isrc -D_GNU_SOURCE
LIBS    := -lelf -ldw -lzstd -lz -liberty -ltraceevent -lpthread
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

LIB_SRC  := $(sort $(wildcard src/lib/*/*.c))
APP_SRC  := $(sort $(wildcard src/outputs/*.c src/record/*.c))
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
TESTLIB_SRC := $(sort $(filter-out $(TEST_SRC),$(wildcard tests/unit/*.c)))
TOOL_SRC := $(sort $(wildcard tests/tools/*.c))
WORKLOAD_SRC := $(sort $(wildcard tests/workloads/*.c))

# $(call objs,BUILDDIR,SOURCES)
objs = $(patsubst %.c,$(1)/obj/%.o,$(2))

REL := build
ASN := build/asan

# the library's version is the program's; the SONAME changes with the ABI
VERSION := $(shell sed -n 's/^\#define CS_VERSION "\(.*\)"/\1/p' src/cli/cli.h)
SOMAJOR := 0
SONAME  := libcallstitch.so.$(SOMAJOR)
MAP     := src/callstitch.map

# where `make install` puts things (DESTDIR for staging, as packagers do)
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
MANDIR      ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions

# one man page per command, made from its --help and man/PAGE.extra
MAN_PAGES := $(patsubst man/%.extra,$(REL)/man/%.1,$(wildcard man/*.extra))

all: $(REL)/callstitch $(REL)/libcallstitch.a $(REL)/libcallstitch.so man tools workloads

# ---- release ----
$(REL)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(CFLAGS) $(LTO) $(PIC) $(WARN) $(CPPFLAGS) -MMD -MP -c $< -o $@

# library objects serve the archive and the shared library alike: position
# independent, and calls inside the library bound at link time
$(call objs,$(REL),$(LIB_SRC)): PIC := -fPIC -fno-semantic-interposition

$(REL)/libcallstitch.a: $(call objs,$(REL),$(LIB_SRC))
	@rm -f $@
	ar rcs $@ $^

# exports exactly what src/callstitch.map lists (the public header's calls)
$(REL)/libcallstitch.so.$(VERSION): $(call objs,$(REL),$(LIB_SRC)) $(MAP)
	$(CC) $(CFLAGS) $(LTO) -shared -Wl,-soname,$(SONAME) -Wl,--version-script,$(MAP) \
		-Wl,-z,defs -o $@ $(call objs,$(REL),$(LIB_SRC)) $(LIBS)
$(REL)/libcallstitch.so: $(REL)/libcallstitch.so.$(VERSION)
	ln -sf libcallstitch.so.$(VERSION) $(REL)/$(SONAME)
	ln -sf $(SONAME) $@

# outputs and recorder: part of the binary, not of the library; unit tests
# link them from this archive
$(REL)/libcsapp.a: $(call objs,$(REL),$(APP_SRC))
	@rm -f $@
	ar rcs $@ $^

$(REL)/callstitch: $(call objs,$(REL),$(CLI_SRC)) $(REL)/libcsapp.a $(REL)/libcallstitch.a
	$(CC) $(CFLAGS) $(LTO) -o $@ $(call objs,$(REL),$(CLI_SRC)) $(REL)/libcsapp.a $(REL)/libcallstitch.a $(LIBS)

# ---- sanitized: the binary, tools and unit tests the suite runs ----
$(ASN)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(STD) -O1 -g $(SAN) $(WARN) $(CPPFLAGS) -MMD -MP -c $< -o $@

$(ASN)/libcallstitch.a: $(call objs,$(ASN),$(LIB_SRC))
	@rm -f $@
	ar rcs $@ $^

$(ASN)/libcsapp.a: $(call objs,$(ASN),$(APP_SRC))
	@rm -f $@
	ar rcs $@ $^

$(ASN)/callstitch: $(call objs,$(ASN),$(CLI_SRC)) $(ASN)/libcsapp.a $(ASN)/libcallstitch.a
	$(CC) $(SAN) -o $@ $(call objs,$(ASN),$(CLI_SRC)) $(ASN)/libcsapp.a $(ASN)/libcallstitch.a $(LIBS)

ASN_TESTS := $(patsubst tests/unit/%.c,$(ASN)/tests/%,$(TEST_SRC))
$(ASN)/tests/%: $(ASN)/obj/tests/unit/%.o $(call objs,$(ASN),$(TESTLIB_SRC)) $(ASN)/libcsapp.a $(ASN)/libcallstitch.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $< $(call objs,$(ASN),$(TESTLIB_SRC)) $(ASN)/libcsapp.a $(ASN)/libcallstitch.a $(LIBS) -lcmocka

# ---- ThreadSanitizer: the binary and the thread utilities' unit tests,
# for the threaded paths (-j); tests/integration/jobs_tsan.sh runs them ----
TSN  := build/tsan
TSAN := -fsanitize=thread -fno-omit-frame-pointer
$(TSN)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(STD) -O1 -g $(TSAN) $(WARN) $(CPPFLAGS) -MMD -MP -c $< -o $@
$(TSN)/libcallstitch.a: $(call objs,$(TSN),$(LIB_SRC))
	@rm -f $@
	ar rcs $@ $^
$(TSN)/callstitch: $(call objs,$(TSN),$(CLI_SRC) $(APP_SRC)) $(TSN)/libcallstitch.a
	$(CC) $(TSAN) -o $@ $^ $(LIBS)
TSN_TESTS := $(patsubst %,$(TSN)/tests/test_%,big_alloc handoff jobs keysort tasks)
$(TSN)/tests/%: $(TSN)/obj/tests/unit/%.o $(TSN)/libcallstitch.a
	@mkdir -p $(dir $@)
	$(CC) $(TSAN) -o $@ $^ $(LIBS) -lcmocka
tsan: $(TSN)/callstitch $(TSN_TESTS)

# fuzz harnesses replayed without libFuzzer: the suite runs them on the
# seed corpus and on tests/fuzz-regressions/ (fuzz/replay.c)
FUZZ_SRC     := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_LIB_SRC := $(filter-out $(FUZZ_SRC) fuzz/replay.c,$(sort $(wildcard fuzz/*.c)))
FUZZ_DEFS    := -DCS_SOURCE_DIR='"$(CURDIR)"'
ASN_REPLAY   := $(patsubst fuzz/%.c,$(ASN)/fuzz/replay_%,$(FUZZ_SRC))
$(ASN)/obj/fuzz/%.o: fuzz/%.c
	@mkdir -p $(dir $@)
	$(CC) $(STD) -O1 -g $(SAN) $(WARN) $(CPPFLAGS) $(FUZZ_DEFS) -MMD -MP -c $< -o $@
$(ASN)/fuzz/replay_%: $(ASN)/obj/fuzz/%.o $(ASN)/obj/fuzz/replay.o $(call objs,$(ASN),$(FUZZ_LIB_SRC)) \
		$(ASN)/libcsapp.a $(ASN)/libcallstitch.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $(filter %.o,$^) $(ASN)/libcsapp.a $(ASN)/libcallstitch.a $(LIBS)

# ---- libFuzzer: everything built again with clang's coverage hooks ----
FUZZ_CC    ?= clang-14
FUZZ_SECONDS ?= 30
FZ         := build/fuzz
FUZZ_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=undefined
FUZZERS    := $(patsubst fuzz/%.c,$(FZ)/%,$(FUZZ_SRC))
# warnings, not errors: gcc's -Werror build keeps the code clean, and a
# warning that only clang knows must not stop the fuzzing
$(FZ)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(STD) $(FUZZ_CFLAGS) -Wall -Wextra $(CPPFLAGS) $(FUZZ_DEFS) -MMD -MP -c $< -o $@
$(FZ)/libcallstitch.a: $(call objs,$(FZ),$(LIB_SRC))
	@rm -f $@
	ar rcs $@ $^
$(FZ)/libcsapp.a: $(call objs,$(FZ),$(APP_SRC))
	@rm -f $@
	ar rcs $@ $^
$(FZ)/fuzz_%: $(FZ)/obj/fuzz/fuzz_%.o $(call objs,$(FZ),$(FUZZ_LIB_SRC)) $(FZ)/libcsapp.a $(FZ)/libcallstitch.a
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $(filter %.o,$^) \
		$(FZ)/libcsapp.a $(FZ)/libcallstitch.a $(LIBS)

fuzzers: $(FUZZERS)
fuzz:
	FUZZ_CC=$(FUZZ_CC) fuzz/run.sh $(FUZZ_SECONDS)

# test tools (synthetic profile generator, ...): built sanitized for the
# suite and release for benchmarks
TOOLS     := $(patsubst tests/tools/%.c,$(REL)/tools/%,$(TOOL_SRC))
ASN_TOOLS := $(patsubst tests/tools/%.c,$(ASN)/tools/%,$(TOOL_SRC))
$(REL)/tools/%: $(REL)/obj/tests/tools/%.o $(REL)/libcallstitch.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LTO) -o $@ $^ $(LIBS)
$(ASN)/tools/%: $(ASN)/obj/tests/tools/%.o $(ASN)/libcallstitch.a
	@mkdir -p $(dir $@)
	$(CC) $(SAN) -o $@ $^ $(LIBS)

# workloads to profile: plain programs with frame pointers, never sanitized
WORKLOADS := $(patsubst tests/workloads/%.c,$(REL)/workloads/%,$(WORKLOAD_SRC))
$(REL)/workloads/%: tests/workloads/%.c
	@mkdir -p $(dir $@)
	$(CC) $(STD) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-inline $(WARN) -o $@ $< -lpthread

# dwarfmix, a workload of C and C++ without frame pointers built from every
# source in tests/workloads/nofp/dwarfmix/ (see the single-file ones below)
DWARFMIX_SRC := $(sort $(wildcard tests/workloads/nofp/dwarfmix/*.c tests/workloads/nofp/dwarfmix/*.cc))
NOFP_FLAGS := -O2 -g -fomit-frame-pointer $(WARN)
$(REL)/obj/dwarfmix/%.o: tests/workloads/nofp/dwarfmix/%.c
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(NOFP_FLAGS) -MMD -MP -c $< -o $@
$(REL)/obj/dwarfmix/%.o: tests/workloads/nofp/dwarfmix/%.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=gnu++17 $(NOFP_FLAGS) -MMD -MP -c $< -o $@
$(REL)/workloads/nofp/dwarfmix: $(patsubst tests/workloads/nofp/dwarfmix/%,$(REL)/obj/dwarfmix/%.o,$(basename $(DWARFMIX_SRC)))
	@mkdir -p $(dir $@)
	$(CXX) -o $@ $^ -lpthread

# the flame graph page, kept readable as three files, becomes a C string
src/outputs/flame_template.inc: src/outputs/flame_template.html src/outputs/flame_template.css \
		src/outputs/flame_template.js src/outputs/flame_template.sh
	src/outputs/flame_template.sh $@

# workloads built as most of a Debian system is, without frame pointers:
# their stacks need DWARF unwinding (--call-graph dwarf)
NOFP_WORKLOADS := $(patsubst tests/workloads/nofp/%.c,$(REL)/workloads/nofp/%,$(sort $(wildcard tests/workloads/nofp/*.c)))
$(REL)/workloads/nofp/%: tests/workloads/nofp/%.c
	@mkdir -p $(dir $@)
	$(CC) $(STD) -O2 -g -fomit-frame-pointer $(WARN) -o $@ $< -lpthread

tools: $(TOOLS)
workloads: $(WORKLOADS) $(NOFP_WORKLOADS) $(REL)/workloads/nofp/dwarfmix

man: $(MAN_PAGES)
$(REL)/man/callstitch.1: man/callstitch.extra man/gen.sh $(REL)/callstitch
	@mkdir -p $(dir $@)
	man/gen.sh $(REL)/callstitch > $@.tmp && mv $@.tmp $@
$(REL)/man/callstitch-%.1: man/callstitch-%.extra man/gen.sh $(REL)/callstitch
	@mkdir -p $(dir $@)
	man/gen.sh $(REL)/callstitch $* > $@.tmp && mv $@.tmp $@

install: $(REL)/callstitch $(REL)/libcallstitch.a $(REL)/libcallstitch.so man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(INCLUDEDIR)/callstitch $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR)
	install -m 755 $(REL)/callstitch $(DESTDIR)$(BINDIR)/callstitch
	install -m 644 $(REL)/libcallstitch.a $(DESTDIR)$(LIBDIR)/libcallstitch.a
	install -m 755 $(REL)/libcallstitch.so.$(VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libcallstitch.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libcallstitch.so
	install -m 644 include/callstitch/callstitch.h $(DESTDIR)$(INCLUDEDIR)/callstitch/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		src/callstitch.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/callstitch.pc
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 completion/callstitch.bash $(DESTDIR)$(BASHCOMPDIR)/callstitch

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/callstitch $(DESTDIR)$(LIBDIR)/libcallstitch.a \
		$(DESTDIR)$(LIBDIR)/libcallstitch.so* $(DESTDIR)$(PKGCONFIGDIR)/callstitch.pc \
		$(DESTDIR)$(BASHCOMPDIR)/callstitch \
		$(patsubst $(REL)/man/%,$(DESTDIR)$(MANDIR)/man1/%,$(MAN_PAGES))
	rm -rf $(DESTDIR)$(INCLUDEDIR)/callstitch

check: $(ASN)/callstitch $(ASN_TESTS) $(ASN_TOOLS) $(ASN_REPLAY) tsan all
	tests/run.sh

demo: all
	scripts/demo.sh

bench: all
	bench/run.sh
	bench/record.sh
	bench/offcpu.sh

clean:
	rm -rf build

.PHONY: all tools workloads man install uninstall check demo bench clean fuzz fuzzers tsan
.SECONDARY:

# only the compiler's dependency files, not any *.d a tool left in build/
-include $(shell find build -path '*/obj/*' -name '*.d' -type f 2>/dev/null)
