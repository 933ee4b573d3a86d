#!/usr/bin/env bash
# unwind_dwarf.sh - --call-graph dwarf profiles. On perf 6.1's recording of
# dwarfmix (C and C++ without frame pointers: threads, qsort and std::sort
# callbacks, deep recursion, a signal handler):
#   - callstitch's stacks equal perf script's on >= 99% of samples, with
#     every allowed difference named (unwind_compare.py says which and why);
#   - inject writes them as ordinary callchains, without the stack copies,
#     into a smaller file that perf 6.1 reads with the same stacks, from a
#     file and from a pipe;
#   - report and --stats say how many stacks reached a root, and a
#     frame-pointer recording of the same program says where it breaks;
#   - damaged register and stack copies give a clear error or warning.
source "$CS_ROOT/tests/lib.sh"

PERF=${PERF:-/usr/bin/perf}
W=$CS_WORKLOADS/nofp/dwarfmix
compare() { python3 "$CS_ROOT/tests/integration/unwind_compare.py" "$@"; }
corrupt() { python3 "$CS_ROOT/tests/integration/dwarf_corrupt.py" "$@"; }

if [ ! -x "$PERF" ] || ! "$PERF" version >/dev/null 2>&1; then
	skip "dwarf unwinding" "no perf"; exit 0
fi
if [ ! -x "$W" ]; then skip "dwarf unwinding" "no $W (make workloads)"; exit 0; fi
if ! command -v python3 >/dev/null; then skip "dwarf unwinding" "no python3"; exit 0; fi

# perf's default copy, 8 KiB; 2 seconds of four threads on what CPU there is
if ! "$PERF" record -q -e cpu-clock -F 1000 --call-graph dwarf -o "$T/dwarf.data" \
	-- "$W" 2 >"$T/rec.log" 2>&1; then
	skip "dwarf unwinding" "perf record --call-graph dwarf failed: $(tail -1 "$T/rec.log")"
	exit 0
fi

# ---- the stacks, against perf 6.1's own unwinding ----

"$PERF" script --no-inline -i "$T/dwarf.data" >"$T/perf.txt" 2>/dev/null
if "$CS" script -q --no-inline -i "$T/dwarf.data" >"$T/ours.txt" 2>"$T/ours.err"; then
	ok "script reads the dwarf recording"
else
	notok "script reads the dwarf recording: $(tail -1 "$T/ours.err")"
fi
sum=$(compare "$T/perf.txt" "$T/ours.txt")
echo "$sum" | sed -n '2,$p'
set -- $(echo "$sum" | head -1)
# samples N equal E allowed A (trampoline T plt P) differ D match R%
if [ "$2" -gt 100 ] && awk -v r="${14%\%}" 'BEGIN { exit !(r >= 99) }'; then
	ok "stacks equal perf 6.1's on >= 99% of samples ($(echo "$sum" | head -1))"
else
	notok "stacks equal perf 6.1's on >= 99% of samples ($(echo "$sum" | head -1))"
fi

# every kind of stack the workload makes is there, whole: from the sampled
# function to clone3, where a thread's stack begins
shape() {
	local what=$1; shift
	local n
	n=$(awk -v pats="$*" 'BEGIN { RS = ""; n = split(pats, p, " ") }
		{ pos = 1; for (i = 1; i <= n; i++) {
			  k = index(substr($0, pos), p[i]); if (!k) next; pos += k }
		  if ($0 ~ /clone3\+0x[0-9a-f]+ \([^)]*libc\.so\.6\)$/) c++ }
		END { print c + 0 }' "$T/ours.txt")
	if [ "$n" -gt 0 ]; then ok "$what ($n samples)"; else notok "$what: no sample"; fi
}
shape "a qsort comparator, through libc, to clone3" \
	dm_compare msort_with_tmp qsort dm_qsort_loop start_thread
shape "a std::sort comparator, through the sort templates, to clone3" \
	by_low_bits __introsort_loop sort_loop start_thread
shape "a signal handler, through the trampoline, to the interrupted code" \
	dm_on_signal __restore_rt dm_interrupted dm_signal_loop start_thread
deep=$(awk 'BEGIN { RS = "" } { n = gsub(/dm_recurse\+/, "&"); if (n > m) m = n } END { print m + 0 }' \
	"$T/ours.txt")
if [ "$deep" -ge 40 ]; then ok "deep recursion unwinds ($deep frames)"
else notok "deep recursion unwinds (deepest: $deep frames)"; fi

# every output gets the unwound stacks, with no code of its own
"$CS" folded -q -i "$T/dwarf.data" >"$T/folded.txt" 2>/dev/null
if grep -q '^clone3;start_thread;.*dm_qsort_loop;.*dm_compare' "$T/folded.txt"; then
	ok "folded shows whole stacks"
else
	notok "folded shows whole stacks"; head -3 "$T/folded.txt" | sed 's/^/#   /'
fi

# ---- inject: ordinary callchains perf 6.1 reads without unwinding ----

if "$CS" inject -q -i "$T/dwarf.data" -o "$T/inj.data" 2>"$T/inj.err"; then
	ok "inject writes the unwound stacks"
	"$PERF" script --no-inline -i "$T/inj.data" >"$T/inj.txt" 2>/dev/null
	set -- $(compare "$T/inj.txt" "$T/ours.txt" | head -1)
	check_eq "perf 6.1 shows callstitch's stacks in the injected file (differ)" 0 "${12}"
	check_eq "... for every sample" "$(grep -c '^[^[:space:]]' "$T/ours.txt")" "$2"
	"$CS" dump -i "$T/inj.data" >"$T/inj.dump" 2>/dev/null
	check_eq "no register or stack copies are left" 0 \
		"$(grep -cE 'REGS_USER|STACK_USER|exclude_callchain_user|user stack:|user regs:' "$T/inj.dump")"
	a=$(stat -c %s "$T/dwarf.data") b=$(stat -c %s "$T/inj.data")
	if [ $((a / b)) -ge 5 ]; then ok "the file is $((a / b))x smaller ($a -> $b bytes)"
	else notok "the file is smaller ($a -> $b bytes)"; fi
else
	notok "inject writes the unwound stacks: $(tail -1 "$T/inj.err")"
fi

# a stream in, a stream out, perf 6.1 at the end. The stream is the
# recording's records as a pipe carries them (inject --passthrough -o -):
# perf 6.1's own dwarf-mode streams are unreadable to it on this kernel
# (MMAP2 records flagged as carrying a build id that carry none), so they
# are checked against callstitch's own reading instead, below.
"$CS" inject -q --passthrough -i "$T/dwarf.data" -o - >"$T/pipe.data" 2>/dev/null
"$CS" inject -q -i - -o - <"$T/pipe.data" 2>"$T/pipe.err" |
	"$PERF" script --no-inline -i - >"$T/pipe.perf" 2>/dev/null
set -- $(compare "$T/pipe.perf" "$T/ours.txt" | head -1)
if [ "$2" -gt 0 ] && [ "${12}" = 0 ]; then
	ok "inject from a pipe into a pipe: perf 6.1 shows the same stacks ($2 samples)"
else
	notok "inject from a pipe into a pipe ($*)"; sed 's/^/#   /' "$T/pipe.err" | head -3
fi
if "$PERF" record -q -e cpu-clock -F 1000 --call-graph dwarf -o - -- "$W" 0.5 \
	>"$T/stream.data" 2>/dev/null; then
	"$CS" script -q --no-inline -i - <"$T/stream.data" >"$T/stream.ours" 2>/dev/null
	"$CS" inject -q -i - -o "$T/stream.inj" <"$T/stream.data" 2>"$T/stream.err"
	"$CS" script -q --no-inline -i "$T/stream.inj" >"$T/stream.inj.txt" 2>/dev/null
	set -- $(compare "$T/stream.inj.txt" "$T/stream.ours" | head -1)
	if [ "$2" -gt 0 ] && [ "$4" = "$2" ]; then
		ok "inject of perf's own dwarf stream keeps its stacks ($2 samples)"
	else
		notok "inject of perf's own dwarf stream keeps its stacks ($*)"
		sed 's/^/#   /' "$T/stream.err" | head -3
	fi
else
	skip "inject of a dwarf stream" "perf record -o - failed"
fi

# ---- how whole the stacks are ----

"$CS" report -i "$T/dwarf.data" --stdio >"$T/report.txt" 2>/dev/null
line=$(grep '^# completeness' "$T/report.txt")
echo "$line"
pct=$(echo "$line" | sed -n 's/.*reached a root (\([0-9.]*\)%).*/\1/p')
if echo "$line" | grep -q 'dwarf)' && awk -v p="${pct:-0}" 'BEGIN { exit !(p >= 90) }'; then
	ok "dwarf: report says ${pct}% of user stacks reached a root"
else
	notok "dwarf: report says how many user stacks reached a root ($line)"
fi
"$CS" script -q --stats -i "$T/dwarf.data" >/dev/null 2>"$T/stats.txt"
if grep -q 'completeness: .* reached a root' "$T/stats.txt"; then
	ok "--stats says it too"
else
	notok "--stats says it too"
fi

if "$PERF" record -q -e cpu-clock -F 1000 -g -o "$T/fp.data" -- "$W" 1 >/dev/null 2>&1; then
	"$CS" report -i "$T/fp.data" --stdio >"$T/fp.report" 2>/dev/null
	grep -A4 '^# completeness' "$T/fp.report" | grep -v '^# =' 
	if grep -q '^# completeness.*frame pointers)' "$T/fp.report" &&
	   grep -qE '^#  +[0-9.]+% of user stacks \([0-9]+\) stop in (dwarfmix|libc\.so\.6|libstdc\+\+\.so\.6[.0-9]*), which has no frame pointers: try --call-graph dwarf' \
		"$T/fp.report"; then
		ok "fp: report names the binary where frame-pointer stacks break"
	else
		notok "fp: report names the binary where frame-pointer stacks break"
	fi
else
	skip "fp completeness" "perf record -g failed"
fi

# ---- damaged copies: a clear message, never a read outside the copy ----

n=$(grep -c '^[^[:space:]]' "$T/ours.txt")
off=$(corrupt big-stack "$T/dwarf.data" "$T/big.data")
if "$CS" script -q -i "$T/big.data" >/dev/null 2>"$T/big.err"; then
	notok "a stack size beyond its record is an error"
else
	check_eq "a stack size beyond its record is an error naming file and offset" \
		"callstitch: $T/big.data: SAMPLE record at offset $(printf '%#x' "$off"): user stack size exceeds the record" \
		"$(cat "$T/big.err")"
fi
bad() {
	local mode=$1 what=$2 expect=$3 off
	off=$(corrupt "$mode" "$T/dwarf.data" "$T/$mode.data")
	if "$CS" script -q -i "$T/$mode.data" >"$T/$mode.out" 2>"$T/$mode.err"; then
		check_eq "$what: every sample still comes out" "$n" \
			"$(grep -c '^[^[:space:]]' "$T/$mode.out")"
		if [ -z "$expect" ]; then
			ok "$what: no warning needed"
		elif grep -q "^callstitch: warning: $T/$mode.data: .*$expect" "$T/$mode.err"; then
			ok "$what: a warning says which and why"
			sed 's/^/#   /' "$T/$mode.err"
		else
			notok "$what: a warning says which and why"
			sed 's/^/#   /' "$T/$mode.err"
		fi
	else
		notok "$what: script fails: $(tail -1 "$T/$mode.err")"
	fi
}
bad dyn "dyn_size beyond the copy's size" \
	"3 samples were not unwound, the first at offset 0x[0-9a-f]*: the stack copy's dyn_size exceeds its size"
bad mask-noip "a register mask without the pc" \
	"samples were not unwound, .*: the register mask lacks the pc or the stack pointer"
bad mask-foreign "a register mask of another architecture" \
	"samples were not unwound, .*: the register mask names registers this architecture does not have"
bad abi0 "ABI 0 (no user registers)" ""
