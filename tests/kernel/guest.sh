# tests/kernel/guest.sh - what the kernel test records inside the guest
# (run by /init with busybox sh; the files it leaves in the current
# directory, /out, come back to the host).
#
#   task-defer.data     per task:    record --call-graph fp,defer -- deepstack
#   syswide-defer.data  system-wide: record -a --call-graph fp,defer -- deepstack
#   offcpu-defer.data   per task:    record --off-cpu -- offcpu (waits of
#                       known length; the switch-outs' user stacks deferred)
#   drain-off-N.data    system-wide, stopped while longsys's threads sit in
#   drain-on-N.data     long system calls: --drain-ms 0, then the default;
#                       two pairs, as how many samples wait at a stop varies
#
# Each recording runs under a timeout so that one hang costs its own file
# only. "CS-RESULT: name rc" lines tell the host how each one ended.
FREQ=${FREQ:-1000}
# the drain pair samples faster: more samples wait inside each long call,
# so the difference the drain makes stands well clear of chance
DRAIN_FREQ=${DRAIN_FREQ:-4000}

echo "uname -r: $(uname -r)"
echo "uname -a: $(uname -a)"
echo "cpus: $(grep -c ^processor /proc/cpuinfo)"
echo "perf_event_paranoid: $(cat /proc/sys/kernel/perf_event_paranoid)"
echo "perf_event_max_sample_rate: $(cat /proc/sys/kernel/perf_event_max_sample_rate)"

run() {
	name=$1
	shift
	echo "CS-RUN: $name: $*"
	timeout -s KILL 60 "$@" >"$name.out" 2>&1
	rc=$?
	sed "s/^/  $name: /" "$name.out"
	echo "CS-RESULT: $name $rc"
}

run task-defer callstitch record -e cpu-clock -F "$FREQ" --call-graph fp,defer \
	-o task-defer.data -- /cs/deepstack 2 2 40
run syswide-defer callstitch record -a -e cpu-clock -F "$FREQ" --call-graph fp,defer \
	-o syswide-defer.data -- /cs/deepstack 2 2 40
# 200 x 50 ms of nanosleep, 100 pipe reads fed every 20 ms, 10 futex
# waits of 100 ms, in three threads at once: about 10 s
run offcpu-defer callstitch record --off-cpu -e cpu-clock -F "$FREQ" \
	-o offcpu-defer.data -- /cs/offcpu 200 100 10

# longsys keeps running across all four recordings, so each one stops
# while its threads are in the middle of long reads and a blocked write.
/cs/longsys 60 2 30 &
ls_pid=$!
sleep 1
for n in 1 2; do
	run drain-off-$n callstitch record -a -e cpu-clock -F "$DRAIN_FREQ" \
		--call-graph fp,defer --drain-ms 0 -o drain-off-$n.data -- sleep 1.5
	run drain-on-$n callstitch record -a -e cpu-clock -F "$DRAIN_FREQ" \
		--call-graph fp,defer -o drain-on-$n.data -- sleep 1.5
done
kill -TERM $ls_pid
wait $ls_pid
echo "longsys exit: $?"
ls -l /out
