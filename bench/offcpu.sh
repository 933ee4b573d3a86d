#!/usr/bin/env bash
# bench/offcpu.sh - what recording off-CPU time costs on a workload that
# switches about 100k times a second (tests/workloads/pingpong: two threads
# on one CPU handing a token over pipes, with a little work in between;
# SPIN sets how little), next to perf.
#
# perf 6.1's own --off-cpu needs BPF skeletons Debian's build lacks (it says
# "option `off-cpu' is being ignored"), so perf is measured the way its users
# record switch-outs without it: `perf record -e sched:sched_switch -g`, the
# same events recorded by callstitch, and what callstitch --off-cpu records
# (sched_switch with stacks, cpu-clock, --switch-events to know when each
# wait ends) recorded by both.
#
# Per recorder, medians over interleaved runs:
#   slowdown      the workload's wall time recorded / unrecorded
#   recorder CPU  the recorder's own CPU time (perf stat --no-inherit)
#   bytes/switch  the file's size per switch of the workload
#
#   bench/offcpu.sh                 RUNS=5 ROUNDS=100000 SPIN=7000
#   RUNS=9 SPIN=0 bench/offcpu.sh   as fast as the kernel switches
set -euo pipefail
cd "$(dirname "$0")/.."
CS=${CS_REL:-build/callstitch}
PERF=${PERF:-/usr/bin/perf}
W=build/workloads/pingpong
RUNS=${RUNS:-5}
ROUNDS=${ROUNDS:-100000}
SPIN=${SPIN:-7000}
for f in "$CS" "$PERF" "$W"; do
	[ -x "$f" ] || { echo "bench/offcpu.sh: $f is missing (make first)" >&2; exit 1; }
done
if [ "$(id -u)" -ne 0 ]; then
	echo "bench/offcpu.sh: sched:sched_switch needs root (tracefs)" >&2
	exit 1
fi
tmp=$(mktemp -d /tmp/bench-offcpu.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# run NAME DATA CMD...: appends "workload_wall recorder_cpu bytes switches"
# to $tmp/NAME
run() {
	local name=$1 data=$2 wall sw cpu bytes
	shift 2
	"$PERF" stat --no-inherit -x, -e task-clock -o "$tmp/stat" -- "$@" \
		>"$tmp/out" 2>"$tmp/err"
	read -r _ wall _ sw _ _ <"$tmp/out"
	cpu=$(awk -F, '/task-clock/ { print $1 / 1000 }' "$tmp/stat")
	bytes=$(stat -c %s "$data")
	echo "$wall $cpu $bytes $sw" >>"$tmp/$name"
}

median() {		# median of column $2 of file $1
	sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END {
		if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

names=(perf_sw cs_sw perf_offcpu cs_offcpu)
declare -A label=(
	[perf_sw]="perf -e sched:sched_switch -g"
	[cs_sw]="callstitch, the same"
	[perf_offcpu]="perf, what --off-cpu records"
	[cs_offcpu]="callstitch --off-cpu"
)
"$PERF" record --off-cpu -q -o "$tmp/probe.data" -- true >"$tmp/probe" 2>&1 || true
echo "workload: pingpong $ROUNDS $SPIN ($((2 * ROUNDS)) switches); $RUNS runs each, interleaved"
echo "perf --off-cpu here: $(grep -o "option .off-cpu. is being ignored[^[]*" "$tmp/probe" || echo available)"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$RUNS"); do
	"$W" "$ROUNDS" "$SPIN" >"$tmp/out"
	read -r _ wall _ sw _ _ <"$tmp/out"
	echo "$wall 0 0 $sw" >>"$tmp/base"
	run perf_sw "$tmp/p1.data" "$PERF" record -q -e sched:sched_switch -g \
		-o "$tmp/p1.data" -- "$W" "$ROUNDS" "$SPIN"
	run cs_sw "$tmp/c1.data" "$CS" record -q -e sched:sched_switch -g \
		-o "$tmp/c1.data" -- "$W" "$ROUNDS" "$SPIN"
	run perf_offcpu "$tmp/p2.data" "$PERF" record -q -e sched:sched_switch \
		-e cpu-clock -g --switch-events -o "$tmp/p2.data" \
		-- "$W" "$ROUNDS" "$SPIN"
	run cs_offcpu "$tmp/c2.data" "$CS" record -q --off-cpu -e cpu-clock \
		-o "$tmp/c2.data" -- "$W" "$ROUNDS" "$SPIN"
done

base=$(median "$tmp/base" 1)
rate=$(awk -v s="$(median "$tmp/base" 4)" -v w="$base" 'BEGIN { printf "%.0f", s / w }')
echo "unrecorded: $rate switches per second"
printf '\n%-32s %12s %10s %14s %14s\n' "" "median wall" slowdown "recorder CPU" "bytes/switch"
printf '%-32s %10.3f s %9.2fx %14s %14s\n' unrecorded "$base" 1 - -
for r in "${names[@]}"; do
	wall=$(median "$tmp/$r" 1)
	cpu=$(median "$tmp/$r" 2)
	bytes=$(median "$tmp/$r" 3)
	sw=$(median "$tmp/$r" 4)
	printf '%-32s %10.3f s %9.2fx %12.3f s %14.0f\n' "${label[$r]}" "$wall" \
		"$(awk -v w="$wall" -v b="$base" 'BEGIN { print w / b }')" "$cpu" \
		"$(awk -v b="$bytes" -v s="$sw" 'BEGIN { print (s > 0 ? b / s : 0) }')"
	eval "${r}_wall=$wall ${r}_cpu=$cpu"
done
awk -v a="$cs_sw_wall" -v b="$perf_sw_wall" -v c="$cs_offcpu_wall" \
    -v d="$perf_offcpu_wall" -v ca="$cs_sw_cpu" -v cb="$perf_sw_cpu" \
    -v cc="$cs_offcpu_cpu" -v cd="$perf_offcpu_cpu" 'BEGIN {
	printf "\ncallstitch / perf, sched:sched_switch -g: slowdown %.2fx, recorder CPU %.2fx\n",
		a / b, (cb > 0 ? ca / cb : 0)
	printf "callstitch --off-cpu / perf recording the same: slowdown %.2fx, recorder CPU %.2fx\n",
		c / d, (cd > 0 ? cc / cd : 0) }'
