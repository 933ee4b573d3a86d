#!/usr/bin/env bash
# bench/offcpu.sh - what recording off-CPU time costs on a workload that
# switches about 100k times a CPU second (tests/workloads/pingpong: two
# threads on one CPU handing a token over pipes, with a little work in
# between; SPIN sets how little), next to perf.
#
# perf's own --off-cpu is measured when this perf has it; Debian's perf 6.1
# lacks the BPF skeletons it needs (it says "option `off-cpu' is being
# ignored"), so perf is measured the way its users record switch-outs
# without it: `perf record -e sched:sched_switch -g`, and what callstitch
# --off-cpu records (sched_switch with stacks, cpu-clock, --switch-events
# to know when each wait ends). callstitch records both the same ways.
#
# CPU time (user + system), the best of RUNS interleaved runs, as
# bench/run.sh measures: on a shared machine the wall clock mostly
# measures the neighbours.
#   workload      the workload's own CPU time (it reports its getrusage):
#                 the kernel's work at each switch, walking the stacks and
#                 writing the records, is charged here
#   recorder      the recorder's CPU time: recorder and workload together
#                 (perf stat, children included) less the workload's
#   overhead      (workload + recorder) / the unrecorded workload's
#   bytes/switch  the file's size per switch-out of the workload
#   samples       the samples in the file (as callstitch reads them; a
#                 switch-out is one, cpu-clock adds its own), the most
#                 of any run
#   lost          the events the recorder lost, the most of any run
# and then callstitch / perf, each figure's ratio, recording the same.
# Where perf cannot record sched:sched_switch (no tracefs, a kernel
# without the tracepoint), the bench says so and measures callstitch alone.
#
#   bench/offcpu.sh                 RUNS=5 ROUNDS=100000 SPIN=6500
#   RUNS=9 SPIN=0 bench/offcpu.sh   as fast as the kernel switches
set -euo pipefail
cd "$(dirname "$0")/.."
CS=${CS_REL:-build/callstitch}
PERF=${PERF:-/usr/bin/perf}
W=build/workloads/pingpong
RUNS=${RUNS:-5}
ROUNDS=${ROUNDS:-100000}
SPIN=${SPIN:-6500}
source bench/offcpu_lib.sh
offcpu_setup offcpu.sh "$CS" "$PERF" "$W"

# run NAME DATA CMD...: appends "workload_cpu recorder_cpu total_cpu
# bytes switches" to $tmp/NAME. CMD runs the workload, whose line
# ("wall S cpu S switches N ...") is its stdout.
run() {
	local name=$1 data=$2 cpu sw total
	shift 2
	"$PERF" stat -x, -e task-clock -o "$tmp/stat" -- "$@" >"$tmp/out" 2>"$tmp/err" || {
		echo "bench/offcpu.sh: failed: $*" >&2; cat "$tmp/err" >&2; exit 1; }
	read -r _ _ _ cpu _ sw _ _ <"$tmp/out"
	total=$(awk -F, '/task-clock/ { print $1 / 1000 }' "$tmp/stat")
	echo "$cpu $(awk -v t="$total" -v c="$cpu" 'BEGIN { print t - c }') $total" \
		"$( [ -n "$data" ] && stat -c %s "$data" || echo 0) $sw $(samples "$data")" >>"$tmp/$name"
}

# samples FILE: "SAMPLES LOST", how many samples FILE holds and how many
# events its recorder lost (0 0 for no file)
samples() {
	[ -n "$1" ] || { echo 0 0; return; }
	"$CS" report -q --stats -i "$1" 2>&1 >/dev/null | awk '
		$1 == "samples" { n = $2 } $1 == "lost" && NF == 3 { l += $3 }
		END { print n + 0, l + 0 }'
}

most() {		# the most of column $2 of file $1
	sort -g -r -k"$2" "$1" | awk -v c="$2" 'NR == 1 { print $c }'
}

# can PROBE CMD...: whether CMD records; if not, its last words in $why
can() {
	local name=$1; shift
	if "$@" >"$tmp/$name.probe" 2>&1; then
		return 0
	fi
	why=$(grep -v '^ *$' "$tmp/$name.probe" | tail -2 | tr '\n' ' ')
	return 1
}

best() {		# the least of column $2 of file $1
	sort -g -k"$2" "$1" | awk -v c="$2" 'NR == 1 { print $c }'
}

names=()
declare -A label
add() { names+=("$1"); label[$1]=$2; }
"$PERF" record --off-cpu -q -o "$tmp/probe.data" -- true >"$tmp/probe" 2>&1 || true
perf_bpf=$(grep -o "option .off-cpu. is being ignored[^[]*" "$tmp/probe" || true)
[ -z "$perf_bpf" ] && add perf_bpf "perf record --off-cpu -g"
perf_tp=yes why=
if ! can perf_tp "$PERF" record -q -e sched:sched_switch -g -o "$tmp/probe.data" -- true; then
	perf_tp=
	echo "PERF CANNOT RECORD sched:sched_switch HERE, so there is nothing to compare with: $why"
	echo "(callstitch is measured alone)"
fi
if ! can cs_tp "$CS" record -q -e sched:sched_switch -g -o "$tmp/probe.data" -- true; then
	echo "bench/offcpu.sh: callstitch cannot record sched:sched_switch here: $why" >&2
	exit 1
fi
[ -n "$perf_tp" ] && add perf_sw "perf -e sched:sched_switch -g"
add cs_sw "callstitch -e sched:sched_switch -g"
[ -n "$perf_tp" ] && add perf_offcpu "perf, what --off-cpu records"
add cs_offcpu "callstitch --off-cpu"

echo "workload: pingpong $ROUNDS $SPIN ($((2 * ROUNDS)) switch-outs); best CPU time of $RUNS runs each, interleaved"
echo "perf --off-cpu here: ${perf_bpf:-available}"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$RUNS"); do
	run base "" "$W" "$ROUNDS" "$SPIN"
	[ -z "$perf_bpf" ] && run perf_bpf "$tmp/p0.data" "$PERF" record -q --off-cpu -g \
		-o "$tmp/p0.data" -- "$W" "$ROUNDS" "$SPIN"
	[ -n "$perf_tp" ] && run perf_sw "$tmp/p1.data" "$PERF" record -q -e sched:sched_switch -g \
		-o "$tmp/p1.data" -- "$W" "$ROUNDS" "$SPIN"
	run cs_sw "$tmp/c1.data" "$CS" record -q -e sched:sched_switch -g \
		-o "$tmp/c1.data" -- "$W" "$ROUNDS" "$SPIN"
	[ -n "$perf_tp" ] && run perf_offcpu "$tmp/p2.data" "$PERF" record -q -e sched:sched_switch \
		-e cpu-clock -g --switch-events -o "$tmp/p2.data" \
		-- "$W" "$ROUNDS" "$SPIN"
	run cs_offcpu "$tmp/c2.data" "$CS" record -q --off-cpu -e cpu-clock \
		-o "$tmp/c2.data" -- "$W" "$ROUNDS" "$SPIN"
done

base=$(best "$tmp/base" 1)
echo "unrecorded: $(awk -v s="$((2 * ROUNDS))" -v c="$base" 'BEGIN { printf "%.0f", s / c }') switches per CPU second"
printf '\n%-36s %12s %12s %12s %9s %13s %8s %6s\n' "" workload recorder total overhead bytes/switch samples lost
printf '%-36s %10.3f s %12s %10.3f s %8.2fx %13s %8s %6s\n' unrecorded "$base" - "$base" 1 - - -
for r in "${names[@]}"; do
	w=$(best "$tmp/$r" 1) c=$(best "$tmp/$r" 2) t=$(best "$tmp/$r" 3)
	b=$(best "$tmp/$r" 4) n=$(most "$tmp/$r" 6) l=$(most "$tmp/$r" 7)
	printf '%-36s %10.3f s %10.3f s %10.3f s %8.2fx %13.0f %8d %6d\n' "${label[$r]}" "$w" "$c" "$t" \
		"$(awk -v t="$t" -v b="$base" 'BEGIN { print t / b }')" \
		"$(awk -v b="$b" -v s="$((2 * ROUNDS))" 'BEGIN { print b / s }')" "$n" "$l"
	eval "${r}_w=$w ${r}_c=$c ${r}_t=$t ${r}_b=$b ${r}_n=$n"
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }'; }
# ratios OURS THEIRS LABEL: callstitch's figures over perf's
ratios() {
	local a=$1 b=$2 x y
	x=${a}_w y=${b}_w; printf '  %-28s workload %s' "$3:" "$(ratio "${!x}" "${!y}")"
	x=${a}_c y=${b}_c; printf ', recorder %s' "$(ratio "${!x}" "${!y}")"
	x=${a}_t y=${b}_t; printf ', total %s' "$(ratio "${!x}" "${!y}")"
	x=${a}_b y=${b}_b; printf ', file size %s' "$(ratio "${!x}" "${!y}")"
	x=${a}_n y=${b}_n; printf ', samples %s\n' "$(ratio "${!x}" "${!y}")"
}
echo
if [ -z "$perf_tp" ]; then
	echo "no ratios: perf could not record sched:sched_switch here (see above)"
	exit 0
fi
echo "callstitch / perf, each figure:"
ratios cs_sw perf_sw "sched:sched_switch -g"
ratios cs_offcpu perf_offcpu "--off-cpu, perf the same"
[ -z "$perf_bpf" ] && ratios cs_offcpu perf_bpf "--off-cpu, perf --off-cpu"
exit 0
