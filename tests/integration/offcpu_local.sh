#!/usr/bin/env bash
# offcpu_local.sh - `callstitch record --off-cpu` on this machine (ordinary
# callchains: its kernel refuses deferral; tests/kernel does the deferred
# run): tests/workloads/offcpu waits for known times, each wait in its own
# function, measuring them itself, and every reader says how long each
# function was off the CPU, within 5% of what it measured, with whole
# stacks: the user part down to the thread's start, the kernel part in the
# scheduler. perf's own recordings of
# sched:sched_switch with --switch-events read the same.
source "$CS_ROOT/tests/lib.sh"
cd "$T"
W=$CS_WORKLOADS/offcpu
PERF=/usr/bin/perf

if [ "$(id -u)" -ne 0 ]; then
	skip "off-CPU recordings" "sched:sched_switch needs root (tracefs)"
	exit 0
fi

# seconds NAME FILE: the Seconds column of NAME's entry in a report
seconds() { awk -v s="$1" '$NF == s && $(NF-1) == "[.]" { print $3; exit }' "$2"; }
# near GOT WANT PERCENT
near() { awk -v g="${1:-0}" -v w="${2:-0}" -v p="$3" \
	'BEGIN { exit !(w > 0 && g >= w * (1 - p / 100) && g <= w * (1 + p / 100)) }'; }
# times FILE.data LABEL WORKLOAD_OUT SLEEPS READS WAKES: each function's
# time off the CPU, within 5% of the time the workload measured itself in
# its waiting system calls (a sleep overruns its 50 ms a little, more on a
# busy machine); that time is the nominal one within 15%. Only the
# workload's process counts: a system-wide profile may hold another run
# of it (another test's, beside this one).
times() {
	local data=$1 label=$2 out=$3 f nominal waited got pid
	pid=$(awk '$1 == "pid" { print $2 }' "$out")
	check "$label: the workload said its pid (${pid:-none})" [ -n "$pid" ]
	$CS report -q -i "$data" --off-cpu -g none --sort sym ${pid:+--pid "$pid"} \
		>"$label.report" 2>"$label.err"
	check "$label: report --off-cpu reads it" [ $? -eq 0 ]
	for f in sleep_in_nanosleep:$(( $4 * 50 )) read_from_pipe:$(( $5 * 20 )) \
		 wait_on_futex:$(( $6 * 100 )); do
		nominal=$(awk -v ms="${f#*:}" 'BEGIN { printf "%.3f", ms / 1000 }')
		waited=$(awk -v s="${f%:*}" '$1 == "waited" && $2 == s { print $3 }' "$out")
		got=$(seconds "${f%:*}" "$label.report")
		check "$label: ${f%:*} off the CPU ${got:-?} s, known ${waited:-?} s (5%)" \
			near "$got" "$waited" 5
		check "$label: ... and ${f%:*} waited its nominal ${nominal} s (15%)" \
			near "$waited" "$nominal" 15
	done
}

$CS record --off-cpu -o off.data -- "$W" 200 100 10 >rec.out 2>rec.err
check "record --off-cpu -- offcpu exits 0" [ $? -eq 0 ]
check "... saying the kernel records ordinary callchains" \
	grep -q "does not support deferred callchains" rec.err
times off.data task rec.out 200 100 10

# whole stacks: thread start -> measured function -> ... -> scheduler (a
# thread may also be preempted now and then, outside its system call)
$CS folded -q -i off.data --off-cpu --no-inline >off.folded 2>/dev/null
check "folded --off-cpu reads it" [ -s off.folded ]
for f in sleeper\;sleep_in_nanosleep reader\;read_from_pipe waiter\;wait_on_futex; do
	n=$(grep -c "$f;" off.folded)
	whole=$(grep "$f;" off.folded |
		grep -c "^start_thread;$f;.*;__schedule;\[off-cpu: [A-Za-z /]*\] [0-9]*$")
	check "every stack of ${f#*;} is whole: start_thread ... __schedule ($whole of $n)" \
		[ "$n" -gt 0 -a "$whole" -eq "$n" ]
	check "${f#*;}'s system call sleeps" \
		grep -q "^start_thread;$f;entry_SYSCALL_64.*;__schedule;\[off-cpu: sleeping\] [0-9]*$" off.folded
done
# folded's microseconds (rounded per stack) and report's seconds agree
us=$(awk '/;sleep_in_nanosleep;/ { s += $NF } END { print s }' off.folded)
check "folded and report agree on sleep_in_nanosleep" awk -v u="$us" \
	-v s="$(seconds sleep_in_nanosleep task.report)" \
	'BEGIN { d = u - s * 1e6; exit !(d > -10 && d < 10) }'

# the report shows both kinds, each in its own section, and says which
$CS report -q -i off.data -g none >both.txt 2>/dev/null
check "report shows the off-CPU section as time" \
	grep -q "^# Samples: [0-9]* of event 'sched:sched_switch': off-CPU time" both.txt
check "... in seconds" grep -q "^# Event count (approx.): [0-9]* ns, [0-9.]* s off the CPU" both.txt
check "... with the on-CPU samples' own section" grep -q "^# Samples: [0-9]* of event 'cpu-clock'$" both.txt
$CS report -q -i off.data -g none --sort state,sym --off-cpu >state.txt 2>/dev/null
check "--sort state tells why each waited" grep -q "  sleeping  *\[.\] sleep_in_nanosleep$" state.txt
$CS report -q -i off.data -g none --no-off-cpu >perfview.txt 2>/dev/null
check "--no-off-cpu counts switch-outs as perf does" \
	grep -q "^# Samples: [0-9]* of event 'sched:sched_switch'$" perfview.txt

# the other outputs
$CS flame -q -i off.data --off-cpu -o off.html 2>/dev/null
check "flame --off-cpu draws time (meta unit ns)" grep -q '"unit":"ns"' off.html
check "... with the states as leaves" grep -q '\[off-cpu: sleeping\]' off.html
$CS pprof -q -i off.data -o off.pb.gz 2>/dev/null
check "pprof writes it" [ -s off.pb.gz ]
if command -v go >/dev/null; then
	go tool pprof -raw off.pb.gz >off.raw 2>&1
	check "pprof: off_cpu/nanoseconds beside the on-CPU values" \
		grep -q "samples/count cpu/nanoseconds.* off_cpu/nanoseconds" off.raw
	check "pprof: a state label" grep -q "state:\[sleeping\]" off.raw
else
	skip "pprof: off_cpu/nanoseconds beside the on-CPU values" "no go"
fi
$PERF script -i off.data >perf.txt 2>perf.err
check "perf 6.1 reads the --off-cpu recording" \
	grep -q "sched:sched_switch: prev_comm=offcpu" perf.txt

# system-wide: SWITCH_CPU_WIDE records end the waits
$CS record -a --off-cpu -o wide.data -- "$W" 20 20 3 >wide.out 2>&1
check "record -a --off-cpu exits 0" [ $? -eq 0 ]
times wide.data wide wide.out 20 20 3

# perf's own recordings: with --switch-events, the waits end as in ours
if "$PERF" record -q -a -g -e sched:sched_switch --switch-events -o pswitch.data \
	-- "$W" 20 20 3 >pswitch.out 2>&1; then
	times pswitch.data "perf --switch-events" pswitch.out 20 20 3
else
	skip "perf --switch-events recording" "perf record failed"
fi
# without them nothing says when a task ran again (system-wide, only a
# switch to it from a task other than the idle one, whose switches this
# kernel does not report): such waits count 0 s, and the report says so
if "$PERF" record -q -g -e sched:sched_switch -o pplain.data \
	-- "$W" 5 5 1 >/dev/null 2>&1; then
	$CS report -q -i pplain.data --off-cpu -g none >pplain.txt 2>/dev/null
	check "perf without --switch-events: the report says the waits' ends are unknown" \
		grep -q "^# off-CPU unknown: [0-9]* switch-outs without a switch-in on record" pplain.txt
else
	skip "perf recording without --switch-events" "perf record failed"
fi
exit 0
