#!/usr/bin/env bash
# script_jobs_waits.sh - script -j 2 gives its formatting thread up once
# the reading thread has waited for it 1024 times (WAITS_MAX in
# src/outputs/script_fmt.c) to count a stack's lines against
# --max-stack, and names that reason (CALLSTITCH_SCRIPT_VERBOSE=1: --stats
# names addresses on the reading thread, which then never waits); the
# bytes are those of -j 1 all the same. On the CPUs there are, busy or
# not, or pinned to one: a look at the CPUs whose time holds a wait
# counts neither way, so the waits' reason is the one named.
#
# With inlined lines shown the reading thread counts an address named on
# the formatting thread as one line of up to 33 (docs/script.md). A stack
# waits when its first frame is such an address, new, and the next is in
# a binary not loaded yet, which -j 1 loads only for a line it shows:
# with --max-stack 2 the address's own lines fill the stack, the binary
# stays unloaded, and the next stack with a new address waits again. So
# each stack here (samples_at --stacks) is an address of the release
# binary inside an inlined call, then deepstack's recurse. One address of
# a single line would show deepstack, load it and end the waits: the
# addresses are those that -j 1 shows with an inlined call.
source "$CS_ROOT/tests/lib.sh"
cd "$T"
B=$CS_REL
D=$CS_WORKLOADS/deepstack
WAITS_MAX=1024
if [ ! -x "$B" ] || [ ! -x "$D" ]; then
	skip "script's waits for the formatting thread" "no $B or $D (make all)"
	exit 0
fi
fn=$(nm "$D" | awk '$3 == "recurse" { print $1 }')

# addresses inside inlined calls, by the binary's DWARF (each one's
# first and middle byte; one made of ranges is left out)...
readelf --debug-dump=info "$B" 2>/dev/null |
	awk '/DW_TAG_inlined_subroutine/ { f = 1; lo = ""; next }
	     /DW_TAG/ { f = 0 }
	     f && /DW_AT_low_pc/ { lo = $NF }
	     f && /DW_AT_high_pc/ && lo != "" { print lo, $NF; f = 0 }' |
	while read -r lo len; do
		printf '%s %x\n' "$B" $((lo))
		[ $((len)) -gt 1 ] && printf '%s %x\n' "$B" $((lo + len / 2))
	done >cand.txt
[ -s cand.txt ] && "$CS_TOOLS/samples_at" --stacks cand.data cand.txt
# ... those whose first line -j 1 shows as an inlined call's (a sample a
# candidate, in order), each once
paste -d' ' cand.txt <("$CS" script -q -j 1 --max-stack 1 -F ip,dso -i cand.data |
		       awk '/^\t/ { print $2 }') |
	awk '$3 == "(inlined)" && !seen[$2]++ { print $1, $2 }' >inlined.txt
n=$(wc -l <inlined.txt)
if [ "$n" -lt "$WAITS_MAX" ]; then
	skip "script's waits for the formatting thread" \
		"$n addresses of $B in inlined calls (built without -g?)"
	exit 0
fi

# the first $1 of them, each with deepstack's frame after it
stacks() { head -n "$1" inlined.txt | sed "s|\$| $D $fn|"; }
# every stack waits; then 32 of them again (their lines made on that
# thread, and this one's after), and deepstack named at last
{ stacks $WAITS_MAX; stacks 32; echo "$D $fn"; } >waits.txt
# one wait short of giving up
{ stacks $((WAITS_MAX - 1)); echo "$D $fn"; } >short.txt
"$CS_TOOLS/samples_at" --stacks waits.data waits.txt
"$CS_TOOLS/samples_at" --stacks short.data short.txt

why="formatting thread given up after [0-9]* batches: the reading thread waited $WAITS_MAX times for it to count a stack's lines against --max-stack; the rest made on the reading thread"
"$CS" script -q -j 1 --max-stack 2 -i waits.data >one
check "-j 1: only the last stack shows deepstack" \
	test "$(grep -c recurse one)" -eq 1
runs=("-j 2" "-j 3")
command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null &&
	runs+=("taskset -c 0 -j 2")
for run in "${runs[@]}"; do
	pin=() j=${run##* }
	[[ $run == taskset* ]] && pin=(taskset -c 0)
	CALLSTITCH_SCRIPT_VERBOSE=1 "${pin[@]}" "$CS" script -q -j "$j" \
		--max-stack 2 -i waits.data >two 2>err
	check "$run: given up after $WAITS_MAX waits, and says why" \
		grep -qx "callstitch: script: $why" err
	check_eq "$run: nothing else said" 1 "$(grep -c . err)"
	same_file "$run: prints what -j 1 prints" one two
done
# with --stats the session resolves each stack on the reading thread,
# which then names every address itself: nothing to wait for
"$CS" script -q --stats -j 2 --max-stack 2 -i waits.data >two 2>err
check "--stats: not given up for waits" \
	test "$(grep -c 'waited [0-9]* times' err)" -eq 0
same_file "--stats -j 2: prints what -j 1 prints" one two

# one wait fewer: the thread is kept (or given up for the CPU, on a busy
# machine), and the bytes are the same
"$CS" script -q -j 1 --max-stack 2 -i short.data >one
CALLSTITCH_SCRIPT_VERBOSE=1 "$CS" script -q -j 2 --max-stack 2 -i short.data >two 2>err
check "$((WAITS_MAX - 1)) waits: not given up for them" \
	test "$(grep -c 'waited [0-9]* times' err)" -eq 0
same_file "$((WAITS_MAX - 1)) waits: -j 2 prints what -j 1 prints" one two

# said only when asked: with -q and without CALLSTITCH_SCRIPT_VERBOSE, nothing
"$CS" script -q -j 2 --max-stack 2 -i waits.data >two 2>err
check_eq "unasked: nothing on stderr" "" "$(cat err)"
CALLSTITCH_SCRIPT_VERBOSE=0 "$CS" script -q -j 2 --max-stack 2 -i waits.data >two 2>err
check_eq "CALLSTITCH_SCRIPT_VERBOSE=0: nothing on stderr" "" "$(cat err)"
