#!/usr/bin/env bash
# bench/run.sh - callstitch's speed, measured side by side with perf and cat
# in one run on this machine, printed as ratios.
#
#   bench/run.sh [SAMPLES]        default 500000 samples per synthetic profile
#
# What it measures (wall time, best of 3, file in the page cache):
#   read    cat FILE > /dev/null           vs  the library's read+order+stitch
#                                              pipeline (build/tools/stitch_only)
#   script  perf script (/usr/bin/perf)    vs  callstitch script, output to /dev/null
# on a synthetic profile with ordinary callchains (which perf 6.1 reads), on
# one with deferred callchains (perf 6.1 cannot read those: compared against
# perf on the ordinary one of the same size), and on the real recording
# tests/fixtures/linux-7.3.4/task-nodefer.data with real kernel symbols.
# Goals (DEVELOPERS guide): script >= 10x perf; pipeline >= 1/3 of cat.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-500000}
make -s -j"$(nproc)" all build/tools/stitch_only >/dev/null
B=$(mktemp -d /tmp/callstitch-bench.XXXXXX)
trap 'rm -rf "$B"' EXIT
cs=build/callstitch
perf=/usr/bin/perf

# best wall time of 3 runs, in seconds, of "$@" with stdout to /dev/null
best() {
	local best=999999999999 t0 t1 t
	for _ in 1 2 3; do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1
		t1=$(date +%s%N)
		t=$(( (t1 - t0) / 1000 ))
		[ "$t" -lt "$best" ] && best=$t
	done
	awk -v us="$best" 'BEGIN { printf "%.4f", us / 1e6 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
rate()  { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", a / b }'; }

echo "generating profiles ($n samples each)..."
build/tools/gen_synth --no-defer -n "$n" -o "$B/plain.data" >/dev/null
build/tools/gen_synth -n "$n" -o "$B/defer.data" >/dev/null
xz -dc tests/fixtures/linux-7.3.4/kallsyms.xz >"$B/kallsyms"
real=tests/fixtures/linux-7.3.4/task-nodefer.data
cat "$B/plain.data" "$B/defer.data" "$real" >/dev/null	# into the page cache

samples() { "$cs" script -i "$1" "${@:2}" 2>/dev/null | grep -c '^[^[:space:]]'; }
n_plain=$(samples "$B/plain.data")
n_defer=$(samples "$B/defer.data")
n_real=$(samples "$real" --kallsyms "$B/kallsyms")

printf '\n%-44s %12s %14s %8s\n' "measurement" "seconds" "rate" "ratio"
line() { printf '%-44s %12s %14s %8s\n' "$@"; }

sz=$(stat -c %s "$B/plain.data")
t_cat=$(best cat "$B/plain.data")
t_lib=$(best build/tools/stitch_only "$B/plain.data")
line "cat, ordinary profile ($((sz >> 20)) MB)" "$t_cat" "$(rate "$sz" "$t_cat" | awk '{printf "%.0f MB/s", $1/1048576}')" ""
line "pipeline (read+order+stitch), ordinary" "$t_lib" "$(rate "$sz" "$t_lib" | awk '{printf "%.0f MB/s", $1/1048576}')" "$(ratio "$t_cat" "$t_lib")x cat"
szd=$(stat -c %s "$B/defer.data")
t_catd=$(best cat "$B/defer.data")
t_libd=$(best build/tools/stitch_only "$B/defer.data")
line "pipeline (read+order+stitch), deferred" "$t_libd" "$(rate "$szd" "$t_libd" | awk '{printf "%.0f MB/s", $1/1048576}')" "$(ratio "$t_catd" "$t_libd")x cat"

t_perf=$(best "$perf" script -i "$B/plain.data")
t_cs=$(best "$cs" script -i "$B/plain.data")
t_csd=$(best "$cs" script -i "$B/defer.data")
line "perf script, ordinary" "$t_perf" "$(rate "$n_plain" "$t_perf") smp/s" ""
line "callstitch script, ordinary" "$t_cs" "$(rate "$n_plain" "$t_cs") smp/s" "$(ratio "$t_perf" "$t_cs")x perf"
line "callstitch script, deferred (stitched)" "$t_csd" "$(rate "$n_defer" "$t_csd") smp/s" \
	"$(awk -v a="$n_defer" -v b="$t_csd" -v c="$n_plain" -v d="$t_perf" 'BEGIN { printf "%.2f", (a / b) / (c / d) }')x perf"

# the real recording is small: repeat it so the timing means something
reps=20
rep() { for _ in $(seq $reps); do "$@"; done; }
t_perfr=$(best rep "$perf" script -i "$real" --kallsyms "$B/kallsyms")
t_csr=$(best rep "$cs" script -q -i "$real" --kallsyms "$B/kallsyms")
line "perf script, real recording x$reps" "$t_perfr" "$(rate $((n_real * reps)) "$t_perfr") smp/s" ""
line "callstitch script, real recording x$reps" "$t_csr" "$(rate $((n_real * reps)) "$t_csr") smp/s" "$(ratio "$t_perfr" "$t_csr")x perf"
