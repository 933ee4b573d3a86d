#!/usr/bin/env bash
# scripts/demo.sh - the main job on a real program: record the bundled
# deep-stack workload with callchains, then show what callstitch makes of it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${DEMO_OUT:-demo.data}
cs=build/callstitch

# deferral is asked for; a kernel without it (before 6.19) says so once and
# records ordinary callchains
$cs record --call-graph fp,defer -o "$out" -- build/workloads/deepstack 2 4 30
echo
echo "== callstitch report: where the time went =="
$cs report -q -i "$out" --no-children --percent-limit 2 -g none | grep -v '^#' | grep .
echo
echo "== callstitch script: one sample in a system call, its whole stack =="
# the first sample taken in read(2) with the whole user stack beneath it
# (awk reads to the end: leaving early would kill script with SIGPIPE)
$cs script -q -i "$out" | awk -v RS= '!shown && /read_zero/ && /deep_a/ { print; shown = 1 }'
echo
$cs flame -q -i "$out" -o "${out%.data}.html"
$cs folded -q -i "$out" > "${out%.data}.folded"
$cs script -i "$out" > /dev/null	# prints the stitching summary
echo "wrote $out, ${out%.data}.html (flame graph: open it in a browser)," \
     "${out%.data}.folded (folded stacks)"
