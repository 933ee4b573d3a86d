#!/usr/bin/env bash
# report on a recording made here with /usr/bin/perf record -g, compared
# with /usr/bin/perf report (6.1) on the same file; options and errors.
source "$CS_ROOT/tests/lib.sh"
source "$CS_ROOT/tests/plt_perf61.sh"

if [ ! -x /usr/bin/perf ]; then
	skip "report vs perf on a local recording" "/usr/bin/perf is not installed"
	exit 0
fi
DATA=$T/deep.data
if ! /usr/bin/perf record -q -e cpu-clock -F 2000 -g -o "$DATA" -- \
	"$CS_WORKLOADS/deepstack" 1 2 40 >"$T/record.log" 2>&1; then
	skip "report vs perf on a local recording" \
		"perf record fails here: $(head -1 "$T/record.log")"
	exit 0
fi

# the table and graphs without blank and comment lines, from the header on
body() { sed -n "/^# $1/,\$p" | grep -v -e '^#$' -e '^$' -e '^# (' ; }
# one line per entry with its graph, sorted: perf and we may order entries
# of equal weight differently. Entries in [vdso] and [unknown] are left
# out: perf 6.1 symbolizes the vdso from the copy it saved at record time
# (we have none), and files a user address that is in no map (garbage past
# the frames of code without frame pointers) under the kernel.
# Branches of equal weight in different dsos are put in one order
# (report_ties.py: perf's follows where its dso objects lie in its
# memory); those in one dso stay in perf's order, by symbol address.
# blocks CHILDREN_REPORT < REPORT
blocks() {
	awk '/^ +[0-9.]+%/ { if (b != "") print b; b = $0; next }
	     /^#/ { next } { b = b "\x01" $0 } END { if (b != "") print b }' |
		grep -v -e '  \[vdso\]  ' -e '  \[unknown\]  ' |
		python3 "$CS_ROOT/tests/integration/report_ties.py" "$1" | sort
}

rc=0
# perf 6.1 names libc's PLT entries in .rela.plt's order, not after their
# GOT slots (tests/plt_perf61.sh): ours are renamed to perf 6.1's names
# exactly where both readers name a sample at that entry so
LIBC=$(ldd "$CS_WORKLOADS/deepstack" | awk '$1 ~ /^libc\.so/ { print $3 }')
plt61_table /usr/bin/perf "$CS" "$CS_TOOLS/samples_at" "$T/probe.data" \
	"$CS_WORKLOADS/deepstack" $LIBC >"$T/plt"
# perf 6.1 here shows no inlined functions: compare without ours
"$CS" report -q -i "$DATA" --no-inline --children 2>/dev/null |
	plt61_rename "$T/plt" >"$T/ours.ch"
/usr/bin/perf report -i "$DATA" --stdio --children 2>/dev/null >"$T/perf.ch"
"$CS" report -q -i "$DATA" --no-inline --no-children -g caller >"$T/ours.self.raw" 2>"$T/err" || rc=$?
check_eq "report --no-children exits 0" 0 "$rc"
plt61_rename "$T/plt" <"$T/ours.self.raw" >"$T/ours.self"
/usr/bin/perf report -i "$DATA" --stdio --no-children -g caller 2>/dev/null >"$T/perf.self"
body Overhead <"$T/perf.self" | blocks "$T/perf.ch" >"$T/perf.self.b"
body Overhead <"$T/ours.self" | blocks "$T/ours.ch" >"$T/ours.self.b"
same_file "--no-children -g caller: every entry and call graph as perf 6.1 prints it" \
	"$T/perf.self.b" "$T/ours.self.b"
body Overhead <"$T/perf.self" | head -2 >"$T/perf.head"
body Overhead <"$T/ours.self" | head -2 >"$T/ours.head"
same_file "column headers as perf's" "$T/perf.head" "$T/ours.head"

body Children <"$T/perf.ch" | blocks "$T/perf.ch" >"$T/perf.ch.b"
body Children <"$T/ours.ch" | blocks "$T/ours.ch" >"$T/ours.ch.b"
same_file "--children: every entry and call graph as perf 6.1 prints it" \
	"$T/perf.ch.b" "$T/ours.ch.b"
check_eq "--children: a caller's graph starts at it, callees below" "---deep_h" \
	"$(grep -A2 -E '^ +[0-9.]+% +0.00%  deepstack +deepstack +\[\.\] deep_h$' "$T/ours.ch" |
		tail -1 | tr -d ' ')"

# totals
"$CS" report -q -i "$DATA" --no-children -n -g none >"$T/n" 2>/dev/null
samples=$(sed -n 's/^# samples *: \([0-9]*\),.*/\1/p' "$T/n")
check_eq "Self sample counts sum to the samples" "$samples" \
	"$(awk '/^ +[0-9.]+%/ { s += $2 } END { print s + 0 }' "$T/n")"
check "the recording has samples" test "${samples:-0}" -gt 0

# filters: a process's samples are its share of the whole
"$CS" report -q -i "$DATA" --no-children -n -g none --sort pid,tid >"$T/bytid" 2>/dev/null
pid=$(awk '/^ +[0-9.]+%/ { print $3; exit }' "$T/bytid")
tid=$(awk '/^ +[0-9.]+%/ { print $4; exit }' "$T/bytid")
want=$(awk -v t="$tid" '/^ +[0-9.]+%/ && $4 == t { s += $2 } END { print s + 0 }' "$T/bytid")
"$CS" report -q -i "$DATA" --no-children -n -g none --tid "$tid" >"$T/tid" 2>/dev/null
check_eq "--tid keeps that thread's samples" "$want" \
	"$(awk '/^ +[0-9.]+%/ { s += $2 } END { print s + 0 }' "$T/tid")"
check "--tid says how many samples it left out" grep -q '^# filtered *: [1-9]' "$T/tid"
want=$(awk -v p="$pid" '/^ +[0-9.]+%/ && $3 == p { s += $2 } END { print s + 0 }' "$T/bytid")
"$CS" report -q -i "$DATA" --no-children -n -g none --pid "$pid" >"$T/pid" 2>/dev/null
check_eq "--pid keeps that process's samples" "$want" \
	"$(awk '/^ +[0-9.]+%/ { s += $2 } END { print s + 0 }' "$T/pid")"
"$CS" report -q -i "$DATA" --no-children -n -g none --comm nosuchcomm >"$T/comm" 2>/dev/null
check_eq "--comm of a name never seen keeps nothing" 0 \
	"$(awk '/^ +[0-9.]+%/ { s += $2 } END { print s + 0 }' "$T/comm")"
"$CS" report -q -i "$DATA" --no-children -n -g none --comm deepstack >"$T/comm" 2>/dev/null
check_eq "--comm deepstack keeps the workload's samples" "$samples" \
	"$(awk '/^ +[0-9.]+%/ { s += $2 } END { print s + 0 }' "$T/comm")"

"$CS" report -q -i "$DATA" --no-children -g none --percent-limit 5 >"$T/lim" 2>/dev/null
check_eq "--percent-limit 5 hides the smaller entries" "" \
	"$(awk '/^ +[0-9.]+%/ && $1 + 0 < 5' "$T/lim")"
check "--percent-limit 5 keeps the larger" grep -q 'burn_cpu$' "$T/lim"

"$CS" report -q -i "$DATA" --no-children -g callee --percent-limit 20 >"$T/callee" 2>/dev/null
check_eq "-g callee starts the graph at the entry" "---burn_cpu" \
	"$(grep -A2 '\] burn_cpu$' "$T/callee" | tail -1 | tr -d ' ')"
"$CS" report -q -i "$DATA" --sort dso,sym --no-children -g none >"$T/sort" 2>/dev/null
check "--sort dso,sym drops the Command column" \
	grep -q '^# Overhead  Shared Object  *Symbol' "$T/sort"

# errors: one line naming what was wrong, non-zero exit
rc=0; "$CS" report -i "$DATA" --sort comm,bogus >/dev/null 2>"$T/err" || rc=$?
check "--sort bogus fails" test "$rc" -ne 0
check "--sort bogus names the key" grep -q "unknown or repeated key 'bogus'" "$T/err"
rc=0; "$CS" report -i "$DATA" --percent-limit lots >/dev/null 2>"$T/err" || rc=$?
check "--percent-limit lots fails with a message" \
	test "$rc" -ne 0 -a -s "$T/err"
rc=0; "$CS" report -i "$T/no-such.data" >/dev/null 2>"$T/err" || rc=$?
check "a missing file fails" test "$rc" -ne 0
check "a missing file is named" grep -q "no-such.data" "$T/err"
head -c 4000 "$DATA" >"$T/cut.data"
rc=0; "$CS" report -i "$T/cut.data" >/dev/null 2>"$T/err" || rc=$?
check "a truncated file fails with one line" test "$rc" -ne 0 -a "$(wc -l <"$T/err")" -ge 1
rc=0; "$CS" report --help >"$T/help" || rc=$?
check "--help exits 0 and lists --sort" test "$rc" -eq 0 -a -n "$(grep -- --sort "$T/help")"
rc=0; "$CS" report -q -i "$DATA" >/dev/full 2>"$T/err" || rc=$?
check "a full disk fails the report and says so" \
	test "$rc" -ne 0 -a -n "$(grep 'standard output: cannot write: No space left' "$T/err")"
