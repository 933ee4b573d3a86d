#!/usr/bin/env bash
# record_dwarf.sh - `callstitch record --call-graph dwarf[,SIZE]`: the attrs
# perf writes for it, perf's size limits, and recordings of a program built
# without frame pointers (per task, -a, -p, -o - into a pipe, -z) that perf 6.1
# unwinds by itself into whole stacks through libc's qsort.
source "$CS_ROOT/tests/lib.sh"
cd "$T"
W=$CS_WORKLOADS/nofp/qsortcb
PERF=/usr/bin/perf
STACKS="python3 $CS_ROOT/tests/integration/record_stacks.py"

if [ ! -x "$PERF" ] || ! "$PERF" version >/dev/null 2>&1; then
	skip "record --call-graph dwarf" "no working $PERF"
	exit 0
fi

# ---- the attrs ----
$CS record -q -e cpu-clock --call-graph dwarf -o task.data -- "$W" 1 2 2>task.err
check "record --call-graph dwarf of a command exits 0" [ $? -eq 0 ]
check "and says nothing with -q" [ ! -s task.err ]
$PERF evlist -v -i task.data >evlist.txt 2>&1
sampling=$(grep '^cpu-clock:' evlist.txt)
dummy=$(grep '^dummy:u:' evlist.txt)
check "the samples carry REGS_USER, STACK_USER and the callchain" \
	grep -q 'sample_type: IP|TID|TIME|CALLCHAIN|CPU|PERIOD|REGS_USER|STACK_USER|IDENTIFIER,' <<<"$sampling"
check "the callchain holds the kernel part only (exclude_callchain_user)" \
	grep -q 'exclude_callchain_user: 1' <<<"$sampling"
if [ "$(uname -m)" = x86_64 ]; then
	check "perf's x86_64 user registers, 8192 bytes of stack by default" \
		grep -q 'sample_regs_user: 0xff0fff, sample_stack_user: 8192$' <<<"$sampling"
else
	skip "perf's x86_64 user registers" "not x86_64"
fi
check "the dummy has the same layout, as perf's" \
	grep -q 'REGS_USER|STACK_USER|IDENTIFIER, .*sample_stack_user: 8192$' <<<"$dummy"
check "the dummy reports data maps too (perf 6.1 reads .eh_frame_hdr there)" \
	grep -q 'mmap_data: 1' <<<"$dummy"
"$CS" dump --header-only -i task.data >header.txt
check "callstitch dump shows the register mask and stack size" \
	grep -q 'sample_regs_user 0x[0-9a-f]*, sample_stack_user 8192' header.txt

size_of() { $PERF evlist -v -i "$1" 2>/dev/null | sed -n 's/^cpu-clock:.*sample_stack_user: \([0-9]*\).*/\1/p'; }
$CS record -q -e cpu-clock --call-graph dwarf,1001 -o s1.data -- "$W" 0.1 1
check_eq "dwarf,1001 is rounded up to a multiple of 8, as perf does" 1008 "$(size_of s1.data)"
$CS record -q -e cpu-clock --call-graph dwarf,0x1000 -o s2.data -- "$W" 0.1 1
check_eq "dwarf,SIZE takes hex, as perf does" 4096 "$(size_of s2.data)"
$CS record -q -e cpu-clock --call-graph dwarf,65528 -o s3.data -- "$W" 0.1 1
check_eq "dwarf,65528 is the largest" 65528 "$(size_of s3.data)"
for bad in 0 65529 65536 -8 12k ""; do
	$CS record -e cpu-clock --call-graph "dwarf,$bad" -o bad.data -- "$W" 0.1 1 2>bad.err
	rc=$?
	if [ $rc -eq 129 ] && grep -q "stack dump size must be 1 to 65528 bytes" bad.err &&
	   [ ! -e bad.data ]; then
		ok "dwarf,$bad is refused with a clear error"
	else
		notok "dwarf,$bad is refused with a clear error (rc $rc: $(cat bad.err))"
	fi
done
$CS record --call-graph lbr -o bad.data -- "$W" 0.1 1 2>bad.err
check "lbr is refused, naming the modes" grep -q "fp, fp,defer, dwarf or dwarf,SIZE.*lbr is not supported" bad.err
$CS record -q -e cpu-clock --call-graph dwarf -G -o g.data -- "$W" 0.1 1
check "a later -G replaces dwarf" sh -c "! $PERF evlist -v -i g.data | grep -q STACK_USER"
# -g asks for callchains in the mode given so far (frame pointers if
# none), whichever side of --call-graph it stands: what perf 6.1 records
# for the same options is what we record
mode_of() {
	$PERF evlist -v -i "$1" 2>/dev/null | sed -n '/^cpu-clock:/{
		s/.*sample_stack_user: \([0-9]*\).*/dwarf,\1/p; t
		s/.*sample_type: [A-Z_|]*CALLCHAIN.*/fp/p; t
		s/.*/none/p
	}'
}
for opts in "--call-graph dwarf -g" "-g --call-graph dwarf" "--call-graph dwarf,4096 -g" \
	    "-g" "--call-graph fp -g"; do
	if ! $PERF record -q -e cpu-clock $opts -o perf_g.data -- true >/dev/null 2>&1; then
		skip "$opts: the mode perf 6.1 records" "perf record fails here"
		continue
	fi
	$CS record -q -e cpu-clock $opts -o cs_g.data -- true
	check_eq "$opts: the mode perf 6.1 records" "$(mode_of perf_g.data)" "$(mode_of cs_g.data)"
done
$CS record --help >help.txt
check "--help explains dwarf,SIZE" grep -q "dwarf\[,SIZE\] for DWARF unwinding" help.txt
check "--help says what -g does after --call-graph" grep -q "call-graph dwarf -g records dwarf" help.txt

# ---- perf 6.1 unwinds what we recorded ----
# every sample of the workload with user frames ends in a root (_start,
# clone3), and every one under sort_round reads sort_round <- sort_for <-
# main <- __libc_start_call_main or <- start_thread <- clone3; the
# workload has no frame pointers, so only DWARF unwinding gets there. A
# sample in the vDSO may stop early (perf 6.1 has no copy of it): at most
# 1% of them.
check_whole() {
	local what=$1 txt=$2 res w t r c
	res=$($STACKS whole "$txt" qsortcb)
	read -r _ w _ r <<<"$res"
	t=${w#*/} w=${w%/*} c=${r#*/} r=${r%/*}
	check "$what: perf 6.1 unwinds hundreds of samples ($res)" [ "${t:-0}" -gt 100 ]
	check "$what: their stacks reach _start or clone3 ($w of $t)" \
		[ $((w * 100)) -ge $((t * 99)) ]
	check "$what: qsort's callbacks unwind through libc to main or the thread start ($r of $c)" \
		[ "${c:-0}" -gt 50 -a "$r" = "$c" ]
}

$PERF script --no-inline -i task.data >task.txt 2>task.perf.err
check "per task: perf 6.1 script reads it" [ $? -eq 0 ]
check_whole "per task" task.txt
$CS script -q -i task.data >task.cs.txt 2>task.cs.err
check "per task: callstitch script reads it" [ $? -eq 0 ]
check_eq "per task: both see the same samples" "$($STACKS count task.txt)" "$($STACKS count task.cs.txt)"
want=$(readelf -n "$W" | sed -n 's/.*Build ID: //p')
$PERF buildid-list -i task.data >bids.txt 2>&1
check "the workload's build id is in the header" grep -q "^$want $W\$" bids.txt
check "libc's build id is in the header (found in the stack copies)" grep -q " /.*libc.so.6\$" bids.txt

$CS record -q -e cpu-clock --call-graph dwarf -a -o sys.data -- "$W" 1 2 2>sys.err
check "-a: record exits 0" [ $? -eq 0 ]
$PERF script --no-inline -i sys.data >sys.txt 2>sys.perf.err
check "-a: perf 6.1 script reads it" [ $? -eq 0 ]
check_whole "-a" sys.txt

# -p: the process was mapped before the recording began, so perf 6.1
# unwinds through the maps synthesised from /proc, data maps included. It
# ends a second after the recording's first samples, however long the
# recorder took to attach on a loaded machine.
"$W" 60 2 &
pid=$!
sleep 0.3
timeout 20 $CS record -q -e cpu-clock --call-graph dwarf -p $pid -o pid.data 2>pid.err &
rec=$!
recording pid.data
sleep 1
kill $pid
wait $rec
check "-p: record exits 0 when the process does" [ $? -eq 0 ]
wait $pid
$PERF script --no-inline -i pid.data >pid.txt 2>pid.perf.err
check "-p: perf 6.1 script reads it" [ $? -eq 0 ]
check_whole "-p" pid.txt

$CS record -q -e cpu-clock --call-graph dwarf -o - -- "$W" 1 2 2>pipe.err |
	$PERF script --no-inline -i - >pipe.txt 2>pipe.perf.err
check "-o -: perf 6.1 script reads the stream from a pipe" [ -s pipe.txt ]
check_whole "-o -" pipe.txt

$CS record -q -e cpu-clock --call-graph dwarf -z -o z.data -- "$W" 1 2 2>z.err
$PERF script --no-inline -i z.data >z.txt 2>z.perf.err
check "-z: perf 6.1 script reads the compressed file" [ $? -eq 0 ]
check_whole "-z" z.txt
# bytes per sample: the two recordings did not get the same number
zs=$(( $(stat -c %s z.data) / $($STACKS count z.txt) ))
ts=$(( $(stat -c %s task.data) / $($STACKS count task.txt) ))
check "-z: stack copies compress ($zs bytes a sample, $ts plain)" [ $((zs * 2)) -lt "$ts" ]

# ---- LOST accounting: a ring smaller than one sample keeps none ----
$CS record -e cpu-clock -m 1 --call-graph dwarf -o lost.data -- "$W" 0.2 1 2>lost.err
check "a 4 KiB ring loses every 8 KiB sample, and says so" \
	grep -q "samples lost, 100.0% (the ring buffer of 4 KiB per CPU was full: .*smaller dwarf,SIZE)" lost.err
said=$(sed -n 's/.*warning: \([0-9]*\) samples lost.*/\1/p' lost.err)
counted=$($CS script -i lost.data --stats 2>&1 >/dev/null | awk '/lost events/ { print $3 }')
check_eq "the file's LOST records count what the summary said" "$said" "$counted"

# ---- perf 6.1 and callstitch read our recordings with the same stacks ----
# unwind_dwarf.sh compares the two on perf 6.1's own recording of dwarfmix
# (C and C++ without frame pointers: threads, qsort and std::sort
# callbacks, deep recursion, a signal handler); here on callstitch record's,
# per task and system-wide, with the same comparison and the differences it
# names (unwind_compare.py). System-wide, only dwarfmix's samples count:
# other programs on the machine may be ones perf 6.1 cannot unwind.
MIX=$CS_WORKLOADS/nofp/dwarfmix
same_stacks() {
	local what=$1 data=$2 comm=${3:-} sum
	$PERF script --no-inline -i "$data" >"$data.perf" 2>/dev/null
	$CS script -q --no-inline -i "$data" >"$data.cs" 2>/dev/null
	if [ -n "$comm" ]; then
		for f in "$data.perf" "$data.cs"; do
			awk -v c="$comm" 'BEGIN { RS = ""; ORS = "\n\n" } $1 == c' "$f" >"$f.only"
			mv "$f.only" "$f"
		done
	fi
	sum=$(python3 "$CS_ROOT/tests/integration/unwind_compare.py" "$data.perf" "$data.cs")
	echo "$sum" | sed -n '2,$p' | head -20
	set -- $(echo "$sum" | head -1)
	# samples N equal E allowed A (trampoline T plt P) differ D match R%
	if [ "${2:-0}" -gt 100 ] && awk -v r="${14%\%}" 'BEGIN { exit !(r >= 99) }'; then
		ok "$what: perf 6.1 and callstitch script show the same stacks ($(echo "$sum" | head -1))"
	else
		notok "$what: perf 6.1 and callstitch script show the same stacks ($(echo "$sum" | head -1))"
	fi
}
if [ -x "$MIX" ]; then
	$CS record -q -e cpu-clock -F 1000 --call-graph dwarf -o mix.data -- "$MIX" 2
	same_stacks "dwarfmix per task" mix.data
	$CS record -q -e cpu-clock -F 1000 --call-graph dwarf -a -o mixa.data -- "$MIX" 1
	same_stacks "dwarfmix with -a" mixa.data dwarfmix
else
	skip "perf 6.1 and callstitch show the same stacks" "no $MIX (make workloads)"
fi
