#!/usr/bin/env bash
# record_stress.sh - the recorder under stress: 60 s at 10 kHz on every
# CPU with a fork- and thread-heavy workload (tests/workloads/forkstorm.c)
# and small ring buffers, so that LOST records happen; a full disk (a
# small tmpfs); SIGKILL in the middle. The file is complete, every loss is
# counted and reported, the workload's stacks are there; a full disk is a
# clear error and the file reads up to its last whole record; a killed
# recording reads with a warning.
#
# The long run takes 60 s in CI (CI=true); elsewhere CS_STRESS_SECONDS
# (default 10; 0 skips it).
source "$CS_ROOT/tests/lib.sh"
cd "$T"
W=$CS_WORKLOADS/forkstorm
PERF=/usr/bin/perf

secs=${CS_STRESS_SECONDS:-10}
[ "${CI:-}" = true ] && [ -z "${CS_STRESS_SECONDS:-}" ] && secs=60

if ! "$CS_REL" record -e cpu-clock -F 100 -o probe.data -- true >/dev/null 2>probe.err; then
	skip "recorder stress" "perf_event_open refused here: $(head -1 probe.err)"
	exit 0
fi

stat() { awk -v k="$1" '{ v = $NF; $NF = ""; sub(/^ +/, ""); sub(/ +$/, "") } $0 == k { print v; exit }' "$2"; }

# ---- 60 s, 10 kHz, forks and threads, 32 KiB rings ----
if [ "$secs" -gt 0 ]; then
	start=$SECONDS
	$CS record -g -e cpu-clock -F 10000 -m 8 -o stress.data -- "$W" "$secs" 4 4 \
		>stress.out 2>stress.err
	rc=$?
	check_eq "stress ${secs} s: the recorder exits 0" 0 "$rc"
	n=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' stress.err | tail -1)
	lost=$(sed -n 's/.*warning: \([0-9]*\) samples lost.*/\1/p' stress.err | tail -1)
	echo "# $(cat stress.out); recorder: ${n:-?} samples, ${lost:-0} lost in $((SECONDS - start)) s"
	check "stress: thousands of samples (${n:-0})" [ "${n:-0}" -gt $((secs * 500)) ]
	$CS script -q --no-inline --stats -i stress.data >stress.txt 2>stress.stats
	check_eq "stress: the file reads without a word (complete)" 0 \
		"$(grep -vc '^callstitch statistics\|^  ' stress.stats)"
	check_eq "stress: every sample the recorder wrote is read" "$n" "$(stat samples stress.stats)"
	check_eq "stress: the losses it reported are the LOST records' count" \
		"${lost:-0}" "$(stat "lost events" stress.stats)"
	full=$(awk '/storm_recurse/ && /\(/ { r = 1 } /storm_b/ { b = 1 } /storm_a/ { a = 1 }
		    /storm_thread/ && r && b && a { n++ } /^$/ { r = b = a = 0 }
		    END { print n + 0 }' stress.txt)
	check "stress: the workload's whole stacks are there ($full samples through storm_thread..storm_recurse)" \
		[ "$full" -gt $((n / 4)) ]
	forks=$($CS dump -i stress.data | awk '$1 == "FORK" && $2 == "events:" { print $3 }')
	check "stress: its forks and threads are in the side band (${forks:-0} FORK records)" \
		[ "${forks:-0}" -gt 100 ]
	if $PERF script -i stress.data >/dev/null 2>stress.perf.err; then
		ok "stress: perf 6.1 reads the file"
	else
		notok "stress: perf 6.1 reads the file"; head -3 stress.perf.err | sed 's/^/#   /'
	fi
	rm -f stress.data stress.txt
else
	skip "recorder stress run" "CS_STRESS_SECONDS=0"
fi

# ---- a full disk ----
mkdir -p small
if mount -t tmpfs -o size=512k tmpfs small 2>/dev/null; then
	$CS record -g -e cpu-clock -F 10000 -o small/full.data -- "$W" 20 4 4 \
		>full.out 2>full.err
	rc=$?
	check_eq "full disk: the recorder fails" 1 "$rc"
	check "full disk: one clear error naming the file" \
		grep -q "^callstitch: record: small/full.data: write: No space left on device" full.err
	check_eq "full disk: no other error line" 1 "$(grep -vc 'warning\|^\[' full.err)"
	check "full disk: the workload does not outlive the recording" \
		sh -c "! pgrep -f '$W 20 4 4\$' >/dev/null"
	$CS script -q --no-inline -i small/full.data >full.txt 2>full.cs.err
	check "full disk: the file reads" [ $? -eq 0 ]
	check "full disk: with a warning that it was cut short" grep -q 'warning: .*cut short' full.cs.err
	check "full disk: up to its last whole record ($(grep -c cpu-clock: full.txt) samples)" \
		[ "$(grep -c cpu-clock: full.txt)" -gt 100 ]
	umount small
else
	skip "full disk" "cannot mount a tmpfs here (not root, or no mount namespace rights)"
fi

# ---- SIGKILL in the middle of the storm ----
$CS record -g -e cpu-clock -F 10000 -o kill.data -- "$W" 30 4 4 >/dev/null 2>kill.err &
rec=$!
sleep 3
kids=$(pgrep -P $rec)		# the workload: it outlives a killed recorder
kill -KILL $rec
wait $rec 2>/dev/null
[ -n "$kids" ] && kill $kids 2>/dev/null
$CS script -q --no-inline -i kill.data >kill.txt 2>kill.cs.err
check "SIGKILL: the file reads" [ $? -eq 0 ]
check "SIGKILL: with a warning that it was cut short" grep -q 'warning: .*cut short' kill.cs.err
check "SIGKILL: the samples before it are there ($(grep -c cpu-clock: kill.txt))" \
	[ "$(grep -c cpu-clock: kill.txt)" -gt 100 ]
