#!/usr/bin/env bash
# completeness_fixtures.sh - how whole the deferred user stacks of the
# real-kernel recordings are: report's header and --stats count the stacks
# that reached a root and name, with advice, the binaries where the others
# stopped (the kernel's deferred unwinder walks frame pointers, which ld.so
# and libc do not keep). The dwarf and frame-pointer cases are in
# unwind_dwarf.sh.
source "$CS_ROOT/tests/lib.sh"

D=linux-7.3.4
KALLSYMS=$(fixture $D/kallsyms)
SYMFS=$T/symfs
fixture_symfs "$SYMFS"
ln -s /usr "$SYMFS/usr"		# Debian 12's libc and ld.so, as recorded

"$CS" report -q -i "$FIXTURES/$D/task-defer.data" --kallsyms "$KALLSYMS" \
	--symfs "$SYMFS" >"$T/report.txt" 2>"$T/report.err"
line=$(grep '^# completeness' "$T/report.txt")
echo "$line"
# 14,117 samples, of which all but the 2 taken on the way out are deferred
if echo "$line" | grep -q '^# completeness   : 14117 user stacks (2 frame pointers, 14115 deferred (frame pointers)): '; then
	ok "every sample's user stack is counted, by kind"
else
	notok "every sample's user stack is counted, by kind"
fi
"$CS" script -q --stats -i "$FIXTURES/$D/task-defer.data" --kallsyms "$KALLSYMS" \
	--symfs "$SYMFS" >/dev/null 2>"$T/stats.txt"
check_eq "--stats gives the same figures" \
	"$(echo "$line" | sed 's/^# completeness   : //')" \
	"$(sed -n 's/^  completeness: //p' "$T/stats.txt")"

# the roots (start_thread, __libc_start_call_main) are named by libc's
# debug file
if [ ! -f /usr/lib/debug/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug ]; then
	skip "roots and breaks" "libc6-dbg for Debian 12's libc 2.36-9+deb12u14 not installed"
	exit 0
fi
pct=$(echo "$line" | sed -n 's/.*reached a root (\([0-9.]*\)%).*/\1/p')
if awk -v p="${pct:-0}" 'BEGIN { exit !(p >= 95 && p < 100) }'; then
	ok "most reached a root (${pct}%), not all"
else
	notok "most reached a root, not all (${pct:-none}%)"
fi
if grep -qE '^#  +[0-9.]+% of user stacks \([0-9]+\) stop in ld-linux-x86-64\.so\.2: the kernel.s deferred unwinder walks frame pointers, which ld-linux-x86-64\.so\.2 does not keep: try --call-graph dwarf$' \
	"$T/report.txt"; then
	ok "the binary where deferred stacks break is named, with advice"
else
	notok "the binary where deferred stacks break is named, with advice"
	grep -A5 '^# completeness' "$T/report.txt" | sed 's/^/#   /'
fi
