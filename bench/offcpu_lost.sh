#!/usr/bin/env bash
# bench/offcpu_lost.sh - events lost while recording off-CPU time at the
# highest switch rate (tests/workloads/pingpong with no work between the
# hand-overs: about 200k switch-outs a CPU second), run after run, next
# to perf recording the same (sched:sched_switch with stacks, cpu-clock,
# --switch-events). Both recorders use their default rings. Losses come
# when a recorder is not scheduled in time to drain its rings, so they
# vary from run to run and grow with the machine's load: the runs are
# interleaved, and the load average is printed with each.
#
#   bench/offcpu_lost.sh            RUNS=5 ROUNDS=200000 SPIN=0
#   CS_BEFORE=old/callstitch bench/offcpu_lost.sh   another build beside
#
# Prints one line a run: the load average and, for each recorder, the
# events it lost (LOST records) and the samples it wrote; then the total
# lost of each over all runs.
set -euo pipefail
cd "$(dirname "$0")/.."
CS=${CS_REL:-build/callstitch}
PERF=${PERF:-/usr/bin/perf}
W=build/workloads/pingpong
RUNS=${RUNS:-5}
ROUNDS=${ROUNDS:-200000}
SPIN=${SPIN:-0}
source bench/offcpu_lib.sh
offcpu_setup offcpu_lost.sh "$CS" "$PERF" "$W" ${CS_BEFORE:+"$CS_BEFORE"}

# lost FILE: "LOST SAMPLES" as callstitch reads FILE
lost() {
	"$CS" report -q --stats -i "$1" 2>&1 >/dev/null | awk '
		$1 == "samples" { n = $2 } $1 == "lost" && NF == 3 { l += $3 }
		END { print l + 0, n + 0 }'
}

names=(perf cs)
declare -A cmd total
cmd[perf]="$PERF record -q -e sched:sched_switch -e cpu-clock -g --switch-events -o"
cmd[cs]="$CS record -q --off-cpu -e cpu-clock -o"
if [ -n "${CS_BEFORE:-}" ]; then
	names=(perf before cs)
	cmd[before]="$CS_BEFORE record -q --off-cpu -e cpu-clock -o"
fi
echo "workload: pingpong $ROUNDS $SPIN ($((2 * ROUNDS)) switch-outs), $RUNS runs, interleaved"
printf '%-4s %-16s' run "load average"
for n in "${names[@]}"; do printf ' %18s' "$n lost/samples"; total[$n]=0; done
echo
for i in $(seq "$RUNS"); do
	printf '%-4s %-16s' "$i" "$(cut -d' ' -f1-3 /proc/loadavg)"
	for n in "${names[@]}"; do
		# shellcheck disable=SC2086
		${cmd[$n]} "$tmp/$n.data" -- "$W" "$ROUNDS" "$SPIN" >/dev/null 2>"$tmp/err" || {
			echo; echo "bench/offcpu_lost.sh: $n failed:" >&2; cat "$tmp/err" >&2; exit 1; }
		read -r l s < <(lost "$tmp/$n.data")
		printf ' %18s' "$l/$s"
		total[$n]=$((total[$n] + l))
		rm -f "$tmp/$n.data"
	done
	echo
done
printf '%-21s' "lost, all runs"
for n in "${names[@]}"; do printf ' %18s' "${total[$n]}"; done
echo
