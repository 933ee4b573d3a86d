#!/usr/bin/env bash
# record_targets.sh - -p and -t record running tasks and stop when they
# end; the command line says what is wrong in one line; a terminal gets a
# live status line, a pipe does not.
source "$CS_ROOT/tests/lib.sh"
cd "$T"
W=$CS_WORKLOADS/deepstack
PERF=/usr/bin/perf
STACKS="python3 $CS_ROOT/tests/integration/record_stacks.py"

# started PID: waits until the workload PID has its main thread and its
# two workers, so that a recording sees them all from /proc
started() {
	for _ in $(seq 100); do
		[ "$(ls /proc/$1/task 2>/dev/null | wc -l)" -ge 3 ] && return
		sleep 0.1
	done
}

# -p: every thread of a running process, until it exits: here a second
# after the recording's first samples, however long the recorder took to
# attach on a loaded machine
"$W" 60 2 20 &
pid=$!
started $pid
timeout 20 $CS record -g -e cpu-clock -p $pid -o p.data 2>p.err &
rec=$!
recording p.data
sleep 1
kill $pid
wait $rec
check "-p stops by itself when the process exits" [ $? -eq 0 ]
wait $pid
$PERF script -i p.data -F pid >p.pids 2>/dev/null
check_eq "-p records only that process" "$pid" "$(sort -u p.pids | tr -d ' ')"
$CS script -q --no-inline -i p.data >p.txt 2>/dev/null
ord=$($STACKS order p.txt deepstack)
check "-p: the process was named and mapped from /proc ($ord)" \
	[ "${ord#*/}" -gt 50 -a "${ord%/*}" -eq "${ord#*/}" ]
check "-p follows every thread (both workers)" \
	[ "$($PERF script -i p.data -F tid 2>/dev/null | sort -u | wc -l)" -ge 2 ]
# the FORKs made from /proc carry FORK_EXEC (misc 0x2000), as perf's do: a
# reader gives the process the maps that follow, not its parent's
forks=$($PERF report -D -i p.data 2>/dev/null | grep -A3 ': event: 7$' |
	awk '$2 == "0000:" { print $7 $8 }' | sort | uniq -c | tr -s ' ')
check_eq "-p: the FORK records made from /proc are marked so" " 3 0020" "$forks"

# -p goes on while any thread lives, even after the main thread left: the
# worker runs until 2.3 s after it started, itself after $start
start=$(date +%s%N)
"$CS_WORKLOADS/mainexit" 2 &
pid=$!
sleep 0.1
timeout 20 $CS record -e cpu-clock -p $pid -o mainexit.data 2>mainexit.err
ms=$(( ($(date +%s%N) - start) / 1000000 ))
wait $pid
check "-p stays while a thread outlives the main thread (${ms} ms)" [ "$ms" -ge 2300 ]
check "and records that thread" [ "$($PERF script -i mainexit.data 2>/dev/null | grep -c outlive_main)" -gt 0 ]

# -p after the main thread left: it is a zombie that takes no event and
# shows no maps until the last thread ends; the others are recorded, with
# the maps they see
"$CS_WORKLOADS/mainexit" 2 &
pid=$!
for _ in $(seq 100); do
	[ "$(sed -n 's/^State:\s*\(.\).*/\1/p' /proc/$pid/status)" = Z ] && break
	sleep 0.1
done
state=$(sed -n 's/^State:\s*\(.\).*/\1/p' /proc/$pid/status)
timeout 20 $CS record -e cpu-clock -p $pid -o zombie.data 2>zombie.err
check "-p of a process whose main thread left (state $state) records" [ $? -eq 0 ]
wait $pid
check "its other thread, named from the maps it sees" \
	[ "$($PERF script -i zombie.data 2>/dev/null | grep -c outlive_main)" -gt 0 ]

# -t: one thread of it
"$W" 60 2 20 &
pid=$!
started $pid
tid=$(ls /proc/$pid/task | sort -n | tail -1)
timeout 20 $CS record -g -e cpu-clock -t $tid -o t.data 2>t.err &
rec=$!
recording t.data
sleep 1
kill $pid
wait $rec
check "-t stops by itself when the thread exits" [ $? -eq 0 ]
wait $pid
check_eq "-t records only that thread" "$tid" \
	"$($PERF script -i t.data -F tid 2>/dev/null | sort -u | tr -d ' ')"

# the command line
$CS record --help >help.txt
check "--help exits 0" [ $? -eq 0 ]
check "--help names --call-graph fp,defer" grep -q -- "--call-graph" help.txt
check "--help names --drain-ms" grep -q -- "--drain-ms" help.txt

err() {			# err "what" ARGS: exit 129 and one line naming it
	local what=$1; shift
	$CS record "$@" >/dev/null 2>e.err
	local rc=$?
	check "$what: exits 129 ($rc)" [ $rc -eq 129 ]
	check "$what: says so" grep -q "^callstitch: " e.err
}
err "no target" -g
err "an unknown event" -e bogus -- true
err "an unknown call graph mode" --call-graph lbr -- true
err "-F 0" -F 0 -- true
err "-m not a power of two" -m 3 -- true
err "--drain-ms not a number" --drain-ms soon -- true

$CS record -o nothere.data -- /nonexistent/program 2>ne.err
check "a command that cannot run fails" [ $? -eq 1 ]
check "and says why in one line" grep -q "^callstitch: record: cannot run '/nonexistent/program': No such file or directory$" ne.err
check "and leaves no file behind" [ ! -e nothere.data ]

$CS record -p 999999999 -o nopid.data 2>np.err
check "-p of no process fails" [ $? -ne 0 ]
check "and names the pid" grep -q "no such process: 999999999" np.err
$CS record -a -p 1 -o x.data 2>ap.err
check "-a with -p is refused" [ $? -ne 0 ]
check "and says to pick one" grep -q "choose one of -a, -p and -t" ap.err

$CS record -o /nonexistent/dir/x.data -- "$W" 0.1 1 5 2>nd.err
check "an output that cannot be created fails" [ $? -eq 1 ]
check_eq "before anything else is said" "callstitch: record: /nonexistent/dir/x.data: cannot create: No such file or directory" "$(cat nd.err)"
if $PERF stat -e instructions -x, true 2>&1 | grep -q "not supported"; then
	$CS record -e instructions -o noins.data -- "$W" 0.1 1 5 2>ni.err
	check "a missing hardware event other than cycles fails" [ $? -eq 1 ]
	check "and says which" grep -q "the instructions event is not supported here" ni.err
	check "and leaves no file" [ ! -e noins.data ]
else
	skip "a missing hardware event other than cycles fails" "this machine counts instructions"
fi

# an unprivileged user under perf_event_paranoid >= 2 gets user space only
level=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && [ "$level" -ge 2 ] && [ "$level" -le 2 ]; then
	# the test's own directory is root's alone
	nobody=$(mktemp -d /tmp/callstitch-nobody.XXXXXX)
	chmod 777 "$nobody"
	# the checkout may sit in a directory only root can enter (a mktemp
	# -d clone): give nobody its own copy of the workload
	cp "$W" "$nobody/deepstack"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		$CS record -g -e cpu-clock -o "$nobody/u.data" -- "$nobody/deepstack" 0.3 1 5 2>u.err
	check "an unprivileged user records their command" [ $? -eq 0 ]
	check "and is told kernel samples are not allowed" \
		grep -q "kernel samples are not allowed here (perf_event_paranoid is $level): recording user space only" u.err
	$PERF evlist -f -v -i "$nobody/u.data" >u.evlist 2>&1
	check "the event is cpu-clock:u, excluding the kernel" grep -q "^cpu-clock:u: .*exclude_kernel: 1" u.evlist
	check "its samples have user stacks" [ "$($PERF script -f -i "$nobody/u.data" 2>/dev/null | grep -c burn_cpu)" -gt 0 ]
	rm -rf "$nobody"
else
	skip "an unprivileged user records their command" "needs root to become nobody, setpriv, and perf_event_paranoid 2 (it is $level)"
fi

max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
$CS record -F $((max + 1000)) -e cpu-clock -o fast.data -- "$W" 0.1 1 5 2>fast.err
check "-F above the kernel's limit fails" [ $? -eq 1 ]
check "and names the limit" grep -q "above the kernel's limit of $max samples per second" fast.err

# an existing perf.data is kept as perf.data.old, as perf does
$CS record -q -e cpu-clock -- "$W" 0.1 1 5 2>/dev/null
$CS record -q -e cpu-clock -- "$W" 0.1 1 5 2>/dev/null
check "the previous perf.data becomes perf.data.old" [ -s perf.data -a -s perf.data.old ]

# progress: a status line on a terminal, nothing on a pipe
script -qec "$CS record -e cpu-clock -o tty.data -- $W 1 1 5" /dev/null >tty.out
check "a terminal gets a live status line" grep -q $'\r\\[ callstitch record: [0-9]* samples, [0-9.]* MB written, [0-9]* lost \\]' tty.out
$CS record -e cpu-clock -o notty.data -- "$W" 1 1 5 2>notty.err
check "a pipe gets no status line" sh -c "! grep -q \$'\r' notty.err"
$CS record -q -G -o quiet.data -- "$W" 0.1 1 5 2>quiet.err
check_eq "-q says nothing, not even a fallback" "" "$(cat quiet.err)"

# a ring too small for the rate: the kernel drops records, we count them
$CS record -m 1 -F 20000 -g -e cpu-clock -o lost.data -- "$W" 0.5 2 200 2>lost.err
nl=$(sed -n 's/.*warning: \([0-9]*\) samples lost.*/\1/p' lost.err)
check "a one-page ring loses samples and says how many ($nl)" [ "${nl:-0}" -gt 0 ]
$CS script -q --stats -i lost.data >/dev/null 2>lost.stats
got=$(awk '/^ +lost events/ { e = $NF } /^ +lost samples/ { s = $NF } END { print e + s }' lost.stats)
check_eq "the file's LOST records add up to the same number" "$nl" "$got"
$PERF script -i lost.data >/dev/null 2>&1
check "perf 6.1 reads a file with LOST records" [ $? -eq 0 ]

# as perf record: the command's own exit status
$CS record -q -e cpu-clock -o st.data -- sh -c 'exit 3'
check_eq "the command's exit status is ours" 3 $?
$CS record -q -e cpu-clock -o sig.data -- sh -c 'kill -KILL $$'
check_eq "a command killed by a signal gives 128 + the signal" 137 $?
perf_reads() { $PERF script -i "$1" -F tid >/dev/null 2>&1; }
check "and its file is still whole" perf_reads sig.data
