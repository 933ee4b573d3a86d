#!/usr/bin/env bash
# offcpu_local.sh - `callstitch record --off-cpu` on this machine (ordinary
# callchains: its kernel refuses deferral; tests/kernel does the deferred
# run): tests/workloads/offcpu waits for known times, each wait in its own
# function, and every reader says how long each function was off the CPU,
# within 5%, with whole stacks: the user part down to the thread's start,
# the kernel part in the scheduler. perf's own recordings of
# sched:sched_switch read the same.
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
# near GOT WANT: within 5%
near() { awk -v g="${1:-0}" -v w="$2" 'BEGIN { exit !(g >= w * 0.95 && g <= w * 1.05) }'; }
# times FILE.data LABEL SLEEPS READS WAKES: each function's time off the CPU
times() {
	local data=$1 label=$2 f want got
	$CS report -q -i "$data" --off-cpu -g none --sort sym >"$label.report" 2>"$label.err"
	check "$label: report --off-cpu reads it" [ $? -eq 0 ]
	for f in sleep_in_nanosleep:$(( $3 * 50 )) read_from_pipe:$(( $4 * 20 )) \
		 wait_on_futex:$(( $5 * 100 )); do
		want=$(awk -v ms="${f#*:}" 'BEGIN { printf "%.3f", ms / 1000 }')
		got=$(seconds "${f%:*}" "$label.report")
		check "$label: ${f%:*} off the CPU ${got:-?} s, known ${want} s (5%)" \
			near "$got" "$want"
	done
}

$CS record --off-cpu -o off.data -- "$W" 200 100 10 >rec.out 2>rec.err
check "record --off-cpu -- offcpu exits 0" [ $? -eq 0 ]
check "... saying the kernel records ordinary callchains" \
	grep -q "does not support deferred callchains" rec.err
times off.data task 200 100 10

# whole stacks: thread start -> measured function -> ... -> scheduler (a
# thread may also be preempted now and then, outside its system call)
$CS folded -q -i off.data --off-cpu >off.folded 2>/dev/null
check "folded --off-cpu reads it" [ -s off.folded ]
for f in sleeper\;sleep_in_nanosleep reader\;read_from_pipe waiter\;wait_on_futex; do
	n=$(grep -c "$f;" off.folded)
	whole=$(grep "$f;" off.folded |
		grep -c "^start_thread;$f;.*;__schedule;\[off-cpu: [a-z /]*\] [0-9]*$")
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
$CS record -a --off-cpu -o wide.data -- "$W" 20 20 3 >/dev/null 2>&1
check "record -a --off-cpu exits 0" [ $? -eq 0 ]
times wide.data wide 20 20 3

# perf's own recordings: with --switch-events, and system-wide without
# them, where sched_switch's next_pid says who came in
if "$PERF" record -q -a -g -e sched:sched_switch --switch-events -o pswitch.data \
	-- "$W" 20 20 3 >/dev/null 2>&1; then
	times pswitch.data "perf --switch-events" 20 20 3
else
	skip "perf --switch-events recording" "perf record failed"
fi
if "$PERF" record -q -a -g -e sched:sched_switch -o pnext.data \
	-- "$W" 20 20 3 >/dev/null 2>&1; then
	times pnext.data "perf -a, next_pid" 20 20 3
else
	skip "perf -a recording" "perf record failed"
fi
exit 0
