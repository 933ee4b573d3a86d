#!/usr/bin/env bash
# unwind_debug_frame.sh - CFI that only a separate debug file holds. A
# program built without unwind tables keeps its CFI in .debug_frame; strip
# it into a debug file named by .gnu_debuglink (and no build id, so the
# link's CRC is all that ties them) and the unwinder must find that file
# to walk its stacks: next to the binary, or in its .debug/ directory. A
# debug file whose CRC does not match is refused, and the stacks stop in
# the binary, which report names as having no CFI.
source "$CS_ROOT/tests/lib.sh"

PERF=${PERF:-/usr/bin/perf}
if [ ! -x "$PERF" ] || ! "$PERF" version >/dev/null 2>&1; then
	skip "debug_frame unwinding" "no perf"; exit 0
fi
for t in cc objcopy readelf; do
	command -v $t >/dev/null || { skip "debug_frame unwinding" "no $t"; exit 0; }
done

mkdir -p "$T/bin"
cat >"$T/prog.c" <<'EOF'
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
__attribute__((noinline)) static void leaf_work(void)
{
	for (int i = 0; i < 100000; i++)
		sink = sink * 6364136223846793005UL + 1;
}
__attribute__((noinline)) static void middle_work(int n)
{
	for (int i = 0; i < n; i++)
		leaf_work();
	sink++;
}
int main(int argc, char **argv)
{
	double until = now() + (argc > 1 ? atof(argv[1]) : 0.5);
	while (now() < until)
		middle_work(4);
	return 0;
}
EOF
if ! cc -O2 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables \
	-Wl,--build-id=none -o "$T/bin/prog" "$T/prog.c" 2>"$T/cc.err"; then
	skip "debug_frame unwinding" "cc failed: $(tail -1 "$T/cc.err")"; exit 0
fi
objcopy --only-keep-debug "$T/bin/prog" "$T/bin/prog.debug"
objcopy --strip-all --add-gnu-debuglink="$T/bin/prog.debug" "$T/bin/prog"
# (only the C runtime's start files bring .eh_frame entries)
check_eq "the binary keeps neither .debug_frame nor symbols" 0 \
	"$(readelf -S "$T/bin/prog" 2>/dev/null | grep -cE '\.(debug_frame|symtab)')"
check_eq "its debug file has the CFI" 1 "$(readelf -S "$T/bin/prog.debug" 2>/dev/null | grep -c '\.debug_frame')"

if ! "$PERF" record -q -e cpu-clock -F 2000 --call-graph dwarf -o "$T/p.data" \
	-- "$T/bin/prog" 0.5 >/dev/null 2>&1; then
	skip "debug_frame unwinding" "perf record --call-graph dwarf failed"; exit 0
fi

# samples in leaf_work whose stack goes on through middle_work and main
whole() {
	awk 'BEGIN { RS = "" } /leaf_work\+/ { n++; if (/middle_work[^ ]*\+.*main\+/) w++ }
	     END { printf "%d %d", n, w }' "$1"
}
run() {
	"$CS" script -q --no-inline -i "$T/p.data" >"$T/out.txt" 2>"$T/err.txt"
	"$CS" report -i "$T/p.data" --stdio >"$T/report.txt" 2>/dev/null
	whole "$T/out.txt"
}

set -- $(run)
if [ "$1" -gt 10 ] && [ "$2" -ge $(($1 * 9 / 10)) ]; then
	ok "next to the binary: its .debug_frame unwinds ($2 of $1 stacks through main)"
else
	notok "next to the binary: its .debug_frame unwinds ($2 of $1 stacks through main)"
	grep -m1 -A4 leaf_work "$T/out.txt" | sed 's/^/#   /'
fi

mkdir -p "$T/bin/.debug"
mv "$T/bin/prog.debug" "$T/bin/.debug/prog.debug"
set -- $(run)
if [ "$1" -gt 10 ] && [ "$2" -ge $(($1 * 9 / 10)) ]; then
	ok "in .debug/: found too ($2 of $1)"
else
	notok "in .debug/: found too ($2 of $1)"
fi

# the same name, other contents: the CRC says it is not the one
printf 'x' | dd of="$T/bin/.debug/prog.debug" bs=1 seek=200 conv=notrunc 2>/dev/null
# (without its CFI the walk tries prog's frame pointer, as libdw and so
# perf do, but prog keeps none: what that finds is not its callers)
set -- $(run)
check_eq "a debug file with another CRC is not used: no stack gets through middle_work to main" \
	0 "$2"
if grep -q '^#  .* stop in prog, which has no CFI for the pc' "$T/report.txt"; then
	ok "report names the binary without CFI"
else
	notok "report names the binary without CFI"
	grep -A3 '^# completeness' "$T/report.txt" | sed 's/^/#   /'
fi
