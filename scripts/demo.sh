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
echo "== callstitch report (top of the profile) =="
$cs report -i "$out" --no-children --percent-limit 2 -g none | head -40
echo
echo "== callstitch script (first sample) =="
$cs script -i "$out" -q | awk 'NF == 0 { exit } { print }'
$cs flame -i "$out" -o demo.html -q
$cs folded -i "$out" -q > demo.folded
echo
echo "wrote $out, demo.html (flame graph: open it in a browser), demo.folded"
