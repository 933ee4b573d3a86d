#!/usr/bin/env bash
# script_jobs_one_cpu.sh - script -j 2 on a machine that does not run its
# two threads at once: pinned to one CPU (taskset), the threads take
# turns, and the formatting thread is given up, the reading thread going
# on alone with the line cache that thread made (--stats says so, and
# that the CPU was why: with --stats the reading thread names the
# addresses, and never waits for that one to count a stack). The
# bytes are those of -j 1, whatever the point it is given up at: with
# and without inlined lines, --max-stack, --no-merge-callchains, on
# ordinary and deferred profiles.
source "$CS_ROOT/tests/lib.sh"
cd "$T"

if ! command -v taskset >/dev/null || ! taskset -c 0 true 2>/dev/null; then
	skip "script -j 2 on one CPU" "no taskset"
	exit 0
fi
"$CS_TOOLS/gen_synth" -n 100000 -s 21 -o defer.data >/dev/null
"$CS_TOOLS/gen_synth" --no-defer -n 100000 -s 22 -o plain.data >/dev/null

given_up=0
why="formatting thread given up after [0-9]* batches: the threads took turns on one CPU (the others busy); the rest made on the reading thread"
for p in defer plain; do
	for v in "" "--no-inline" "--max-stack 3" "--no-merge-callchains --no-inline"; do
		# shellcheck disable=SC2086
		"$CS" script -q -j 1 $v -i "$p.data" >one 2>/dev/null
		# shellcheck disable=SC2086
		taskset -c 0 "$CS" script --stats -j 2 $v -i "$p.data" >two 2>err
		grep -qx "  $why" err && given_up=$((given_up + 1))
		check "$p $v: no other reason given" \
			test "$(grep -c 'given up' err)" -eq "$(grep -cx "  $why" err)"
		same_file "$p $v: -j 2 on one CPU prints what -j 1 prints" one two
	done
done
# the scheduler decides when: most runs, not necessarily all
check "on one CPU the formatting thread is given up ($given_up of 8 runs)" \
	[ "$given_up" -ge 4 ]

# on the CPUs there are (an idle machine's two or more), it is not given
# up for nothing: not asserted, since CI's machine may be busy too; the
# bytes are the same either way
"$CS" script -q -j 2 -i defer.data >two 2>/dev/null
"$CS" script -q -j 1 -i defer.data >one 2>/dev/null
same_file "defer: -j 2 prints what -j 1 prints" one two

# a failed write, made on whichever thread, while the threads take
# turns or not: the command's error, once, with the write's reason
for run in "-j 1" "-j 2" "-j 3" "taskset -c 0 -j 2"; do
	pin=() j=${run##* }
	[[ $run == taskset* ]] && pin=(taskset -c 0)
	rc=0
	"${pin[@]}" "$CS" script -q -j "$j" -i defer.data >/dev/full 2>err || rc=$?
	check_eq "$run, to a full device: exit 1" 1 "$rc"
	check_eq "$run, to a full device: one line" 1 "$(grep -c . err)"
	check "$run, to a full device: why" \
		grep -q 'standard output: cannot write: No space left on device' err
done
