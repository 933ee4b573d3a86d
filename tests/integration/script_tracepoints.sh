#!/usr/bin/env bash
# script_tracepoints.sh - on tracepoint recordings made by perf 6.1
# (sched:sched_switch, sched:sched_wakeup, syscalls:* and raw_syscalls:*
# tracepoints; with and without callchains; a file and a pipe),
# `callstitch script` prints the same lines as `perf script`: each
# tracepoint's fields formatted by libtraceevent from the formats the file
# carries. And tracepoint recordings of our own read the same in both.
#
# Compared with script_vs_perf.awk: runs of blanks are one (perf 6.1 pads
# tids to 5 columns, 7.3 and we to 7), user addresses are not compared
# (6.1 prints them dso-relative), and a thread named after its exit is
# ":TID" in ours, as in perf 7.3.
source "$CS_ROOT/tests/lib.sh"
cd "$T"
PERF=/usr/bin/perf
W=$CS_WORKLOADS/deepstack
CMP=$CS_ROOT/tests/integration/script_vs_perf.awk

if [ "$(id -u)" -ne 0 ]; then
	skip "tracepoint recordings" "tracefs needs root"
	exit 0
fi

# same NAME PERF_TEXT OURS_TEXT: lockstep comparison, no line may differ
same() {
	local sum
	sum=$(awk -v ours="$3" -v unresolved_ok=0 -f "$CMP" "$2" 2>"$1.diff")
	set -- "$1" $sum
	if [ $# = 13 ] && [ "${13}" = 0 ] && [ "$3" -gt 0 ]; then
		ok "$1: script prints what perf script prints ($sum)"
	else
		notok "$1: ${*:2}"
		cat "$1.diff"
	fi
}

# rec NAME EXPECT perf-record-args...: records, compares, and checks that
# a line of the fields EXPECT names is there
rec() {
	local name=$1 expect=$2; shift 2
	if ! "$PERF" record -q -o "$name.data" "$@" >"$name.rec" 2>&1; then
		rm -f "$name.data"	# what a crashed perf left
		skip "$name: script equals perf script" \
			"perf record failed: $(grep -v '^$' "$name.rec" | tail -1)"
		return 1
	fi
	"$PERF" script -i "$name.data" >"$name.perf" 2>/dev/null
	$CS script -q --no-inline -i "$name.data" >"$name.ours" 2>"$name.err"
	check "$name: callstitch script reads it" [ $? -eq 0 -a ! -s "$name.err" ]
	same "$name" "$name.perf" "$name.ours"
	check "$name: the fields are printed ($expect)" grep -q "$expect" "$name.ours"
}

rec sched "sched:sched_switch: prev_comm=deepstack prev_pid=[0-9]* prev_prio=[0-9]* prev_state=" \
	-a -e sched:sched_switch -e sched:sched_wakeup -- "$W" 0.3 2 5 &&
	check "sched: sched_wakeup's fields too" grep -q "sched:sched_wakeup: comm=.* pid=[0-9]* prio=[0-9]* target_cpu=[0-9]*" sched.ours

rec sched_g "sched:sched_switch: prev_comm=deepstack" \
	-g -e sched:sched_switch -e sched:sched_wakeup -- "$W" 0.3 2 5 &&
	check "sched_g: the switch-out stack is in the scheduler" grep -q "__schedule+" sched_g.ours

rec syscalls "syscalls:sys_enter_read: fd: 0x0*[0-9a-f]*, buf: 0x[0-9a-f]*, count: 0x0*10000" \
	-g -c 20 -e syscalls:sys_enter_read -e syscalls:sys_exit_read -e syscalls:sys_enter_openat -- "$W" 0.2 1 5 &&
	check "syscalls: the exit's return value" grep -q "syscalls:sys_exit_read: 0x10000" syscalls.ours

# raw_syscalls: the args array and the return value (every 50th, without
# stacks: one of them per system call of every kind)
rec raw "raw_syscalls:sys_enter: NR [0-9]* ([0-9a-f]*, [0-9a-f]*, [0-9a-f]*, [0-9a-f]*, [0-9a-f]*, [0-9a-f]*)" \
	-c 50 -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit -- "$W" 0.1 1 5 &&
	check "raw: the exit's number and return value" grep -q "raw_syscalls:sys_exit: NR [0-9]* = -\?[0-9]" raw.ours

# -F with and without trace, as perf script -F
if [ -f sched.data ]; then
	for f in comm,tid,event,trace comm,tid,time,event; do
		"$PERF" script -F "$f" -i sched.data >f.perf 2>/dev/null
		$CS script -q -F "$f" -i sched.data >f.ours
		same "-F $f" f.perf f.ours
	done
fi

# a pipe: the formats come in a HEADER_TRACING_DATA record
if "$PERF" record -q -e sched:sched_switch -o - -- "$W" 0.2 1 5 >pipe.data 2>/dev/null; then
	$CS script -q -i - <pipe.data >pipe.ours 2>pipe.err
	# (perf 6.1 itself sometimes aborts here - "stack smashing detected"
	# - on what other processes of a busy machine left in the trace)
	if (exec "$PERF" script -i - <pipe.data >pipe.perf 2>pipe.perf.err); then
		same "pipe" pipe.perf pipe.ours
	else
		skip "pipe: script equals perf script" \
			"perf script failed: $(grep -m1 . pipe.perf.err)"
	fi
	check "pipe: the fields are printed" grep -q "sched:sched_switch: prev_comm=" pipe.ours
else
	skip "pipe: script equals perf script" "perf record -o - failed"
fi

# our own recordings of the three kinds, read by both: perf 6.1 finds the
# formats in the tracing data we wrote (the reads are many: a sample of
# every 50th)
$CS record -g -e sched:sched_switch -e sched:sched_wakeup -o ours.data -- "$W" 0.3 2 5 >/dev/null 2>&1 &&
	$CS record -g -c 50 -e syscalls:sys_enter_read -e syscalls:sys_exit_read \
		-o oursys.data -- "$W" 0.1 2 5 >/dev/null 2>&1
check "callstitch records sched and syscalls tracepoints" [ $? -eq 0 ]
# (on a loaded machine the recorder may lose events: perf then warns that
# it "lost N chunks" and reads the rest right)
for f in ours oursys; do
	"$PERF" script -i $f.data >$f.perf 2>$f.perf.err
	check_eq "perf 6.1 reads callstitch's tracepoint recording $f.data" \
		"0 0" "$? $(grep -v '^Warning:$\|lost [0-9]* chunks\|Check IO/CPU overload\|^$' $f.perf.err |
			grep -ci 'error\|fail\|warn')"
	$CS script -q --no-inline -i $f.data >$f.ours 2>/dev/null
	same "callstitch record, $f.data" $f.perf $f.ours
done
check "... perf formats sched_switch's fields" grep -q " sched:sched_switch: prev_comm=deepstack prev_pid=" ours.perf
check "... sched_wakeup's" grep -q " sched:sched_wakeup: comm=.* pid=[0-9]* prio=[0-9]* target_cpu=" ours.perf
check "... and the syscall's" grep -q " syscalls:sys_enter_read: fd: 0x0*[0-9a-f]*, buf: 0x[0-9a-f]*, count: 0x0*10000" oursys.perf
$CS record -e sched:sched_switch -o - -- "$W" 0.2 1 5 2>/dev/null >ourpipe.data
"$PERF" script -i - <ourpipe.data >ourpipe.perf 2>/dev/null
$CS script -q -i - <ourpipe.data >ourpipe.ours 2>/dev/null
same "callstitch record -e sched:sched_switch -o -" ourpipe.perf ourpipe.ours
exit 0
