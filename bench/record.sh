#!/usr/bin/env bash
# bench/record.sh - what recording costs: `callstitch record` next to
# `perf record` on the same fixed-work workload.
#
# Two figures per recorder, as medians over several interleaved runs:
#   slowdown      the workload's wall time recorded / unrecorded
#   recorder CPU  the recorder's own CPU time (perf stat --no-inherit:
#                 the workload it runs is not counted), also per
#                 thousand samples written
#
#   bench/record.sh                 RUNS=5 WORK="1000 2 30" (fixedwork args)
#   RUNS=9 WORK="2000 2 60" bench/record.sh
#   RECORD_ARGS="-a -g" bench/record.sh      system-wide instead of per-task
set -euo pipefail
cd "$(dirname "$0")/.."
CS=${CS_REL:-build/callstitch}
PERF=${PERF:-/usr/bin/perf}
W=build/workloads/fixedwork
RUNS=${RUNS:-5}
read -r -a work <<<"${WORK:-1000 2 30}"
read -r -a rec <<<"${RECORD_ARGS:--g}"
for f in "$CS" "$PERF" "$W"; do
	[ -x "$f" ] || { echo "bench/record.sh: $f is missing (make first)" >&2; exit 1; }
done
tmp=$(mktemp -d /tmp/bench-record.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# run NAME CMD...: appends "wall recorder_cpu samples" to $tmp/NAME. The
# recorder's own CPU time comes from perf stat --no-inherit (task-clock of
# that one process, the workload it starts not included).
run() {
	local name=$1 wall cpu n
	shift
	"$PERF" stat --no-inherit -x, -e task-clock -o "$tmp/stat" -- "$@" \
		>"$tmp/out" 2>"$tmp/err"
	read -r _ wall _ _ <"$tmp/out"
	cpu=$(awk -F, '/task-clock/ { print $1 / 1000 }' "$tmp/stat")
	n=$(sed -n 's/.*(\([0-9]*\) samples.*/\1/p' "$tmp/err" | tail -1)
	echo "$wall $cpu ${n:-0}" >>"$tmp/$name"
}

median() {		# median of column $2 of file $1
	sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END {
		if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "workload: fixedwork ${work[*]}; recorders: -e cpu-clock -F 4000 ${rec[*]}; $RUNS runs each, interleaved"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$RUNS"); do
	"$W" "${work[@]}" >"$tmp/out"
	read -r _ wall _ _ <"$tmp/out"
	echo "$wall 0 0" >>"$tmp/base"
	run perf "$PERF" record -q -e cpu-clock -F 4000 "${rec[@]}" -o "$tmp/perf.data" -- "$W" "${work[@]}"
	# perf -q prints no sample count: count them
	sed -i "\$s/ 0\$/ $("$PERF" script -i "$tmp/perf.data" -F tid 2>/dev/null | wc -l)/" "$tmp/perf"
	run cs "$CS" record -e cpu-clock -F 4000 "${rec[@]}" -o "$tmp/cs.data" -- "$W" "${work[@]}"
done

base=$(median "$tmp/base" 1)
printf '\n%-20s %12s %10s %14s %16s %10s\n' "" "median wall" slowdown "recorder CPU" "CPU/1k samples" samples
printf '%-20s %10.3f s %9.3fx %14s %16s %10s\n' unprofiled "$base" 1 - - -
for r in perf cs; do
	wall=$(median "$tmp/$r" 1)
	cpu=$(median "$tmp/$r" 2)
	n=$(median "$tmp/$r" 3)
	per=$(awk -v c="$cpu" -v n="$n" 'BEGIN { print (n > 0 ? c * 1000000 / n : 0) }')
	printf '%-20s %10.3f s %9.3fx %12.3f s %13.1f ms %10.0f\n' \
		"$([ $r = perf ] && echo "perf record" || echo "callstitch record")" \
		"$wall" "$(awk -v w="$wall" -v b="$base" 'BEGIN { print w / b }')" "$cpu" "$per" "$n"
	eval "${r}_wall=$wall ${r}_cpu=$cpu ${r}_n=$n"
done
awk -v cw="$cs_wall" -v pw="$perf_wall" -v cc="$cs_cpu" -v pc="$perf_cpu" \
    -v cn="$cs_n" -v pn="$perf_n" 'BEGIN {
	printf "\ncallstitch / perf: slowdown %.2fx, recorder CPU %.2fx, CPU per sample %.2fx\n",
		cw / pw, (pc > 0 ? cc / pc : 0), (pc > 0 && cn > 0 ? (cc / cn) / (pc / pn) : 0) }'
