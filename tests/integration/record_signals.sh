#!/usr/bin/env bash
# record_signals.sh - a recording stopped by SIGINT, SIGTERM or SIGHUP is
# finalised: perf 6.1 and callstitch read every sample the recorder says it
# wrote, and the command it ran is ended. One killed by SIGKILL leaves a
# file callstitch still reads, with a warning that it was cut short.
source "$CS_ROOT/tests/lib.sh"
cd "$T"
W=$CS_WORKLOADS/deepstack
PERF=/usr/bin/perf
STACKS="python3 $CS_ROOT/tests/integration/record_stacks.py"

# the recorder's command, PID, runs no more (another suite on the machine
# may run the same workload with the same arguments)
gone() { [ -n "$1" ] && ! grep -qs deepstack "/proc/$1/cmdline"; }


# stop_with SIG NAME ARGS... : records for a second, then sends SIG; the
# command it ran, if any, is $kid
stop_with() {
	local sig=$1 name=$2 rec rc n
	shift 2
	$CS record -g -e cpu-clock -F 1000 -o "$name.data" "$@" >"$name.out" 2>"$name.err" &
	rec=$!
	# the second counts from the first samples: a signal during the
	# set-up (which a loaded machine can make last a second) rightly
	# ends the recording with none
	recording "$name.data"
	kid=$(pgrep -P $rec)
	sleep 1
	kill -"$sig" $rec
	wait $rec
	rc=$?
	check "$name: SIG$sig ends the recording cleanly" [ $rc -eq 0 ]
	n=$(samples_of "$name.err")
	check "$name: the recorder says what it wrote" [ "${n:-0}" -gt 0 ]
	$PERF script -i "$name.data" >"$name.perf" 2>"$name.perf.err"
	check "$name: perf 6.1 reads the file" [ $? -eq 0 ]
	check "$name: the header has its features (perf sees no cut)" \
		sh -c "! grep -q 'data size field is 0' $name.perf.err"
	check_eq "$name: perf sees every sample written" "$n" "$($STACKS count "$name.perf")"
	$CS script -q --no-inline -i "$name.data" >"$name.cs" 2>"$name.cs.err"
	check "$name: callstitch reads the file without a warning" \
		[ $? -eq 0 -a ! -s "$name.cs.err" ]
	check_eq "$name: callstitch sees every sample written" "$n" "$($STACKS count "$name.cs")"
}

stop_with INT int-command -- "$W" 30 2 31
check "int-command: the command does not outlive the recording" gone "$kid"
stop_with TERM term-command -- "$W" 30 2 32
check "term-command: the command does not outlive the recording" gone "$kid"

# runs until killed below, however long the checks take on a loaded machine
"$W" 300 2 30 &
bg=$!
stop_with TERM term-pid -p $bg
check "term-pid: a process recorded with -p keeps running" kill -0 $bg
stop_with HUP hup-wide -a
kill $bg 2>/dev/null
wait $bg 2>/dev/null

# SIGKILL: no chance to finalise. The recorder pushes what it has to the
# file with its first samples and then once a second, so 1.5 s after the
# first push the file holds over a second of samples: what is there must
# still read.
"$W" 30 2 30 &
bg=$!
$CS record -a -g -e cpu-clock -o kill.data >/dev/null 2>kill.err &
rec=$!
recording kill.data
sleep 1.5
kill -KILL $rec
wait $rec 2>/dev/null
kill $bg 2>/dev/null
wait $bg 2>/dev/null
check "kill: some data reached the file before SIGKILL" [ -s kill.data ]
$CS script -q -i kill.data >kill.cs 2>kill.cs.err
check "kill: callstitch reads the file" [ $? -eq 0 ]
check "kill: with a warning that the recording was cut short" grep -q "warning: .*cut short" kill.cs.err
n=$($STACKS count kill.cs)
# 2 CPUs at 4 kHz for over a second: thousands; 500 leaves room for a
# loaded machine but fails if only the header reached the file
check "kill: the samples of the first second are there ($n)" [ "$n" -gt 500 ]
