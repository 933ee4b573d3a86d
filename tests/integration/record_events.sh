#!/usr/bin/env bash
# record_events.sh - `callstitch record -e` as perf takes it: several
# events, tracepoints (globs too) with the tracing data perf 6.1 needs to
# read them, PMU terms, -C and --switch-events; perf 6.1 reads every file.
source "$CS_ROOT/tests/lib.sh"
cd "$T"
W=$CS_WORKLOADS/deepstack
PERF=/usr/bin/perf
STACKS="python3 $CS_ROOT/tests/integration/record_stacks.py"

count_of() { grep -c "$1" "$2"; }

# mistakes: one line, status 129, no file
$CS record -e nosuch -o bad.data -- true 2>bad.err
check_eq "an unknown event is refused with status 129" 129 $?
check "... in one line naming it" grep -q "^callstitch: record: unknown event 'nosuch'" bad.err
check "... leaving no file" [ ! -e bad.data ]
$CS record -e cycles:x -o bad.data -- true 2>bad.err
check "a bad modifier is named" grep -q "unknown modifier 'x'" bad.err
$CS record -e nopmu/event=1/ -o bad.data -- true 2>bad.err
check "a PMU that is not there is named" grep -q "no PMU named 'nopmu'" bad.err
$CS record -C 9999 -o bad.data -- true 2>bad.err
check "-C with a CPU that is not online is refused" grep -q "cpu 9999 is not online" bad.err
$CS record -C 1-0 -o bad.data -- true 2>bad.err
check_eq "-C with a reversed range is refused with status 129" 129 $?

# PMU terms from sysfs: the software PMU's config term is task-clock
$CS record -e software/config=1/ -o pmu.data -- "$W" 0.2 1 5 2>pmu.err
check "record -e software/config=1/ exits 0" [ $? -eq 0 ]
$STACKS attrs pmu.data >attrs.txt
check_eq "... samples task-clock (type 1, config 1)" "1 1" "$(head -1 attrs.txt | cut -d' ' -f1-2)"
check "... named as given" grep -q "name = software/config=1/," <($PERF report -i pmu.data --header-only 2>&1)
# a raw event and a CPU PMU event: recorded where the CPU has them
if [ -d /sys/bus/event_source/devices/cpu ]; then
	$CS record -e r01c2 -e cpu/event=0x3c,umask=0/ -o raw.data -- true 2>raw.err
	check "raw and cpu/.../ events open on a CPU with a PMU" [ $? -eq 0 ]
else
	$CS record -e r01c2 -o raw.data -- true 2>raw.err
	check "a raw event without a CPU PMU says it is not supported" \
		grep -q "the r01c2 event is not supported here" raw.err
	$CS record -e cpu/event=0x3c,umask=0/ -o raw.data -- true 2>raw.err
	check "cpu/event=0x3c,umask=0/ without a CPU PMU names the PMU" \
		grep -q "no PMU named 'cpu'" raw.err
fi

if [ "$(id -u)" -ne 0 ]; then
	skip "tracepoints" "tracefs needs root"
	exit 0
fi

# a tracepoint and a sampling event together, with callchains
$CS record -g -e sched:sched_switch -e cpu-clock -o tp.data -- "$W" 0.5 2 10 >/dev/null 2>tp.err
check "record -e sched:sched_switch -e cpu-clock exits 0" [ $? -eq 0 ]
n=$(samples_of tp.err)
$STACKS attrs tp.data >attrs.txt
check_eq "three events: the tracepoint, cpu-clock, the dummy" 3 "$(wc -l <attrs.txt)"
# type 2, IP|TID|TIME|CALLCHAIN|CPU|PERIOD|RAW|IDENTIFIER
check_eq "the tracepoint carries its raw data" "2 105a7" "$(head -1 attrs.txt | cut -d' ' -f1,3)"
$PERF report -i tp.data --header-only >header.txt 2>&1
check "the tracepoint samples every hit (period 1)" \
	grep -q "name = sched:sched_switch, .*sample_period, sample_freq } = 1," header.txt
$PERF script -i tp.data >perf.txt 2>perf.err
check "perf 6.1 script reads it" [ $? -eq 0 -a ! -s perf.err ]
check_eq "perf sees every sample the recorder wrote" "$n" "$($STACKS count perf.txt)"
sw=$(count_of ' sched:sched_switch: prev_comm=' perf.txt)
check "perf prints the tracepoint's fields from our tracing data ($sw switches)" [ "$sw" -gt 0 ]
check "... for the workload's threads" grep -q ' sched:sched_switch: prev_comm=deepstack prev_pid=' perf.txt
check "... with the scheduler on the stack" grep -q '__schedule' perf.txt

# pipe mode: the tracing data comes as a record of its own
$CS record -e sched:sched_switch -o - -- "$W" 0.2 1 5 2>pipe.err >pipe.data
check "record -e TRACEPOINT -o - exits 0" [ $? -eq 0 ]
$PERF script -i - <pipe.data >pipe.txt 2>pipe.perr
check "perf 6.1 reads the tracepoint fields from a pipe" \
	grep -q ' sched:sched_switch: prev_comm=deepstack' pipe.txt

# a glob: every syscall entry, system-wide on one CPU
$CS record -a -C 0 -e 'syscalls:sys_enter_*' -o glob.data -- "$W" 0.3 2 5 >/dev/null 2>glob.err
check "record -a -C 0 -e 'syscalls:sys_enter_*' exits 0" [ $? -eq 0 ]
want=$(ls -d /sys/kernel/tracing/events/syscalls/sys_enter_* 2>/dev/null | wc -l)
$PERF report -i glob.data --header-only >gheader.txt 2>&1
check_eq "the glob stands for every sys_enter tracepoint" "$want" \
	"$(grep -c '^# event : name = syscalls:sys_enter_' gheader.txt)"
$PERF script -i glob.data -F cpu,event,trace >glob.txt 2>glob.perr
check "perf 6.1 reads them" [ -s glob.txt ]
check_eq "-C 0: every sample is from CPU 0" "" "$(grep -v '^\[000\]' glob.txt | head -3)"
check "... the syscalls' arguments are printed" grep -q 'syscalls:sys_enter_[a-z0-9_]*: ' glob.txt

# context switches: PERF_RECORD_SWITCH per task, SWITCH_CPU_WIDE with -a
$CS record --switch-events -e cpu-clock -o switch.data -- "$W" 0.3 2 5 >/dev/null 2>switch.err
check "record --switch-events exits 0" [ $? -eq 0 ]
$PERF script -i switch.data --show-switch-events >switch.txt 2>&1
check "the task's switches are recorded (PERF_RECORD_SWITCH)" \
	grep -q 'deepstack.*PERF_RECORD_SWITCH OUT' switch.txt
check "... in and out" grep -q 'deepstack.*PERF_RECORD_SWITCH IN' switch.txt
$CS record -a --switch-events -e cpu-clock -o switchw.data -- sleep 0.2 2>/dev/null
$PERF script -i switchw.data --show-switch-events >switchw.txt 2>&1
check "-a --switch-events records SWITCH_CPU_WIDE" \
	grep -q 'PERF_RECORD_SWITCH_CPU_WIDE OUT.*next pid/tid' switchw.txt
exit 0
