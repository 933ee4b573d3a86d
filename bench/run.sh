#!/usr/bin/env bash
# bench/run.sh - callstitch's speed, measured side by side with perf and cat
# in one run on this machine, printed as ratios.
#
#   bench/run.sh [SAMPLES]        default 500000 samples per synthetic profile
#
# What it measures (CPU time, best of 5, file in the page cache):
#   read    cat FILE > /dev/null           vs  the library's read+order+stitch
#                                              pipeline (build/tools/stitch_only)
#   script  perf script (/usr/bin/perf)    vs  callstitch script, output to /dev/null
# on a synthetic profile with ordinary callchains (which perf 6.1 reads), on
# one with deferred callchains (perf 6.1 cannot read those: compared against
# perf on the ordinary one of the same size), and on a real recording made
# here with perf record -g (the workload's, libc's and the kernel's symbols).
# Goals (DEVELOPERS guide): script >= 10x perf; pipeline >= 1/3 of cat.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-500000}
make -s -j"$(nproc)" all build/tools/stitch_only >/dev/null
B=$(mktemp -d /tmp/callstitch-bench.XXXXXX)
trap 'rm -rf "$B"' EXIT
cs=build/callstitch
perf=/usr/bin/perf

# best CPU time (user + system, children included) of 5 runs, in seconds,
# of "$@" with stdout to /dev/null. CPU time rather than wall time: on a
# shared machine the wall clock mostly measures the neighbours.
best() {
	local best= t
	for _ in 1 2 3 4 5; do
		perf stat -x, -e task-clock -o "$B/stat" -- "$@" >/dev/null 2>"$B/err" || {
			echo "bench: failed: $*" >&2; cat "$B/err" >&2; exit 1; }
		t=$(awk -F, '/task-clock/ { printf "%.6f", $1 / 1000 }' "$B/stat")
		if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$t
		fi
	done
	printf '%.4f' "$best"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
rate()  { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", a / b }'; }

echo "generating profiles ($n samples each)..."
build/tools/gen_synth --no-defer -n "$n" -o "$B/plain.data" >/dev/null
build/tools/gen_synth -n "$n" -o "$B/defer.data" >/dev/null
real=$B/real.data
"$perf" record -q -g -e cpu-clock -o "$real" -- build/workloads/deepstack 2 2 30 >/dev/null 2>&1
cat "$B/plain.data" "$B/defer.data" "$real" >/dev/null	# into the page cache

samples() { "$cs" script -i "$1" "${@:2}" 2>/dev/null | grep -c '^[^[:space:]]'; }
n_plain=$(samples "$B/plain.data")
n_defer=$(samples "$B/defer.data")
n_real=$(samples "$real")

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
reps=5
rep() { best bash -c 'n=$1; shift; for _ in $(seq "$n"); do "$@" >/dev/null 2>&1; done' _ "$reps" "$@"; }
t_perfr=$(rep "$perf" script -i "$real")
t_csr=$(rep "$cs" script -q -i "$real")
line "perf script, real recording x$reps" "$t_perfr" "$(rate $((n_real * reps)) "$t_perfr") smp/s" ""
line "callstitch script, real recording x$reps" "$t_csr" "$(rate $((n_real * reps)) "$t_csr") smp/s" "$(ratio "$t_perfr" "$t_csr")x perf"

# --call-graph dwarf: perf 6.1 and callstitch both unwind every sample's
# stack copy, side by side on one recording of dwarfmix (C and C++ without
# frame pointers, perf's default 8 KiB copies)
dwarf=$B/dwarf.data
if "$perf" record -q -e cpu-clock -F 4000 --call-graph dwarf -o "$dwarf" \
	-- build/workloads/nofp/dwarfmix 3 >/dev/null 2>&1; then
	cat "$dwarf" >/dev/null
	n_dwarf=$(samples "$dwarf")
	t_perfd=$(best "$perf" script -i "$dwarf")
	t_csd=$(best "$cs" script -q -i "$dwarf")
	line "perf script, dwarf recording ($(( $(stat -c %s "$dwarf") >> 20 )) MB)" "$t_perfd" \
		"$(rate "$n_dwarf" "$t_perfd") smp/s" ""
	line "callstitch script, dwarf recording" "$t_csd" "$(rate "$n_dwarf" "$t_csd") smp/s" \
		"$(ratio "$t_perfd" "$t_csd")x perf"
else
	echo "bench: perf record --call-graph dwarf failed: no dwarf-mode row" >&2
fi
