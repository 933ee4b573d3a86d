#!/usr/bin/env bash
# report past its memory budget (spill mode): the stacks go to a temporary
# file and the report is made from there (report_spill.c,
# report_external.c). Its output is byte for byte the in-memory report's,
# for every option set, on synthetic and real profiles, whether every stack
# was spilled (a budget of 1 byte) or some thousands were counted in
# memory first (a budget of 2 MB); it leaves no file behind, says which
# temporary file failed, and holds far less memory than the tables.
source "$CS_ROOT/tests/lib.sh"

D=linux-7.3.4
KALLSYMS=$(fixture $D/kallsyms)
SYMFS=$T/symfs
fixture_symfs "$SYMFS"
G=$CS_TOOLS/gen_synth
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"

"$G" -n 20000 -o "$T/defer.data" >/dev/null
"$G" --no-defer -n 20000 -s 7 -o "$T/plain.data" >/dev/null
"$G" --paths 300 -n 30000 -s 5 --kallsyms "$T/paths.kallsyms" -o "$T/paths.data" >/dev/null
# off-CPU time beside the on-CPU samples, in a recording of three events
profiles=("$T/defer.data" "$T/plain.data" "$T/paths.data"
	  "$FIXTURES/$D/task-defer.data" "$FIXTURES/$D/syswide-defer.data"
	  "$FIXTURES/offcpu/offcpu.data")
# and recorded here where the kernel lets us: off-CPU time, two events
if "$CS" record -q --off-cpu -o "$T/off.data" -- "$CS_WORKLOADS/offcpu" 200 100 10 \
	>/dev/null 2>&1; then
	profiles+=("$T/off.data")
else
	skip "spill mode on an off-CPU profile recorded here" "callstitch record --off-cpu failed"
fi
if "$CS" record -q -e task-clock,page-faults -F 2000 -o "$T/two.data" -- \
	"$CS_WORKLOADS/fixedwork" >/dev/null 2>&1; then
	profiles+=("$T/two.data")
else
	skip "spill mode on a profile of two events" "callstitch record -e failed"
fi

opts=("" "--no-children" "-g caller,0.01" "-g callee,0" "-g none"
      "--sort dso,sym -n" "--sort pid,tid,comm" "--percent-limit 0.1"
      "--no-inline" "--sort sym" "--sort dso" "--sort comm,sym -g caller,0"
      "--no-children --sort tid,dso,sym -n" "-g callee --no-children"
      "--sort state,sym" "-g caller,2 --sort comm,dso -n --percent-limit 1")

rep() {
	local p=$1; shift
	"$CS" report -q -i "$p" --kallsyms "$KALLSYMS" --symfs "$SYMFS" "$@"
}
# the in-memory reference: the release build where there is one (the
# sanitizers are for the spill mode's code)
REF=$CS
[ -x "$CS_REL" ] && REF=$CS_REL
ref() {
	local p=$1; shift
	"$REF" report -q -i "$p" --kallsyms "$KALLSYMS" --symfs "$SYMFS" "$@"
}

for p in "${profiles[@]}"; do
	name=$(basename "$p" .data)
	bad=0 runs=0
	for i in "${!opts[@]}"; do
		o=${opts[$i]}
		# shellcheck disable=SC2086
		ref "$p" -j 1 $o >"$T/mem" 2>"$T/mem.err"
		rc_mem=$?
		# every stack spilled; the counting thread's (-j 2) and this
		# one's in turn
		# shellcheck disable=SC2086
		CALLSTITCH_REPORT_MEMORY=1 rep "$p" -j $((i % 2 + 1)) $o >"$T/ext" 2>"$T/ext.err"
		rc_ext=$?
		runs=$((runs + 1))
		if [ $rc_mem != 0 ] || ! grep -q '^ *[0-9.]*%' "$T/mem"; then
			bad=$((bad + 1))
			echo "# $name [$o]: the in-memory report failed or shows no entry"
			sed 's/^/#   /' "$T/mem.err" | head -5
		elif [ $rc_mem != $rc_ext ] || ! cmp -s "$T/mem" "$T/ext" ||
		   ! cmp -s "$T/mem.err" "$T/ext.err"; then
			bad=$((bad + 1))
			echo "# $name [$o]: budget of 1 byte differs (exit $rc_mem, $rc_ext)"
			diff "$T/mem" "$T/ext" | head -6 | sed 's/^/#   /'
		fi
		# thousands of stacks counted first, then the switch
		if [ $((i % 4)) = 0 ]; then
			# shellcheck disable=SC2086
			rep "$p" --memory 2M $o >"$T/ext" 2>"$T/ext.err"
			runs=$((runs + 1))
			if ! cmp -s "$T/mem" "$T/ext"; then
				bad=$((bad + 1))
				echo "# $name [$o]: --memory 2M differs"
				diff "$T/mem" "$T/ext" | head -6 | sed 's/^/#   /'
			fi
		fi
	done
	check_eq "$name: spill mode prints what the tables print ($runs runs, ${#opts[@]} option sets)" 0 "$bad"
done

left=$(find "$TMPDIR" -mindepth 1 | wc -l)
check_eq "spill mode leaves no temporary file behind" 0 "$left"

# a temporary file that cannot be made, or written: one line naming it
TMPDIR=$T/none CALLSTITCH_REPORT_MEMORY=1 rep "$T/plain.data" >/dev/null 2>"$T/err"
rc=$?
check_eq "a temporary file that cannot be made: exit 1" 1 "$rc"
check "... and the message names it: $(head -1 "$T/err")" \
	grep -q "^callstitch: report: temporary file $T/none/callstitch-report-.*: creating it: No such file or directory$" "$T/err"
# (which also says that the budgets above did send the stacks there)
TMPDIR=$T/none rep "$T/plain.data" --memory 2M >/dev/null 2>"$T/err"
check_eq "--memory 2M spills plain's stacks (it fails without a TMPDIR)" 1 "$?"
(
	trap '' XFSZ
	ulimit -f 2048
	CALLSTITCH_REPORT_MEMORY=1 rep "$T/plain.data" >/dev/null 2>"$T/err"
)
rc=$?
check_eq "a temporary file that cannot be written: exit 1" 1 "$rc"
check "... and the message names it: $(head -1 "$T/err")" \
	grep -q "^callstitch: report: temporary file $TMPDIR/callstitch-report-.*: writing: File too large$" "$T/err"
left=$(find "$TMPDIR" -mindepth 1 | wc -l)
check_eq "... and leaves no temporary file behind" 0 "$left"

# memory: a profile of distinct stacks (its tables pass 256 MiB), with
# the default budget, against the tables held whole (the release build: the sanitizers' memory would
# be measured too)
peak_anon() {
	local out=$1; shift
	"$@" >"$out" 2>"$T/peak.err" &
	local pid=$! a=0 x
	while [ -r "/proc/$pid/status" ]; do
		x=$(awk '/^RssAnon/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
		[ "${x:-0}" -gt "$a" ] && a=$x
		sleep 0.02
	done
	wait "$pid" || { echo failed; return; }
	echo $((a / 1024))
}
if [ -x "$CS_REL" ]; then
	"$G" -n 1000000 -s 3 -o "$T/big.data" >/dev/null
	# (the entries of 0.001% and more: all are counted, few written)
	mem=$(peak_anon "$T/mem" "$CS_REL" report -q -i "$T/big.data" --memory 64G \
		--percent-limit 0.001)
	ext=$(peak_anon "$T/ext" "$CS_REL" report -q -i "$T/big.data" --percent-limit 0.001)
	echo "# 1M distinct stacks: peak RssAnon $mem MiB in memory, $ext MiB spilled"
	verdict=no
	[ "$mem" != failed ] && [ "$ext" != failed ] && [ $((ext * 2)) -lt "$mem" ] &&
		[ "$ext" -le 288 ] && verdict=yes
	check_eq "a profile of distinct stacks: the default budget (256 MiB) holds less than half the tables' peak ($ext against $mem MiB)" \
		yes "$verdict"
	check "... and prints the same ($(grep -c '%' "$T/mem") lines with a percentage)" \
		cmp -s "$T/mem" "$T/ext"
	rm -f "$T/big.data" "$T/mem" "$T/ext"
else
	skip "memory of spill mode" "no release build at $CS_REL"
fi
