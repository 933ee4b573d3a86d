#!/usr/bin/env bash
# scripts/demo.sh - the main job, in two parts:
#  1. on this machine: record the bundled deep-stack workload with
#     callchains and show what callstitch makes of it;
#  2. the core feature on real data: stitch the bundled recording that a
#     Linux 7.3.4 kernel made with deferred user callchains
#     (tests/fixtures/linux-7.3.4), show its summary and one sample whose
#     user stack came *before* it, and say which part came from where.
# Part 2 runs whatever this machine's kernel can do: kernels before 6.19
# cannot record deferred callchains, and part 1 then records ordinary ones.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${DEMO_OUT:-demo.data}
cs=build/callstitch
fix=tests/fixtures/linux-7.3.4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

deferred_samples() {	# FILE: how many samples waited for a deferred user stack
	$cs report -i "$1" "${@:2}" 2>/dev/null |
		sed -n 's/^# samples *: .*of which \([0-9]*\) with a deferred.*/\1/p'
}

echo "==== 1. Recorded here: build/workloads/deepstack on Linux $(uname -r) ===="
# deferral is asked for; a kernel without it (before 6.19) says so once and
# records ordinary callchains
$cs record --call-graph fp,defer -o "$out" -- build/workloads/deepstack 2 4 30
local_deferred=$(deferred_samples "$out")
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
if [ "${local_deferred:-0}" -eq 0 ]; then
	echo "This kernel has no deferred user callchains, so every stack above was"
	echo "recorded whole at sample time (ordinary callchains). Part 2 shows the"
	echo "stitching on a recording from a kernel that has them."
else
	echo "This kernel deferred the user part of $local_deferred samples;"
	echo "callstitch stitched it back on."
fi

echo
echo "==== 2. Stitched here, recorded elsewhere: $fix/syswide-defer.data ===="
echo "Recorded by Linux 7.3.4 with 'perf record -a --call-graph fp,defer'. With"
echo "deferral the kernel writes only the kernel part of a stack with each"
echo "sample, plus a cookie; it unwinds the user part once, when the thread"
echo "returns to user space, into a separate CALLCHAIN_DEFERRED record for"
echo "that (thread, cookie). callstitch joins the two."
data=$fix/syswide-defer.data
xz -dc "$fix/kallsyms.xz" > "$tmp/kallsyms"	# that kernel's symbols
mkdir -p "$tmp/symfs/opt/fixt"			# and the recorded program
cp "$fix/bin/workload" "$tmp/symfs/opt/fixt/"
sym=(--kallsyms "$tmp/kallsyms" --symfs "$tmp/symfs")
echo
echo "== its summary (callstitch report's header) =="
$cs report -i "$data" "${sym[@]}" 2>/dev/null | grep -E '^# (event|samples|user stacks|deferred)'

# A late sample: taken while its thread was still in the kernel entry
# whose user stack had already been written. The raw view shows records
# in time order, so a sample whose (tid, cookie) record came before it is
# late; the first one of the workload's threads is shown.
$cs script -q -i "$data" "${sym[@]}" --no-merge-callchains > "$tmp/raw.txt"
awk -v RS= -v ORS='\n\n' -v dir="$tmp" '
/DEFERRED CALLCHAIN/ {
	match($0, /cookie: [0-9a-f]+/)
	rec[$2 " " substr($0, RSTART + 8, RLENGTH - 8)] = $0
	next
}
!done && /\(cookie\)/ && $1 != "perf" {
	n = split($0, line, "\n"); split(line[n], w, " ")
	if (!((k = $2 " " w[1]) in rec)) next
	print > (dir "/late.sample"); print rec[k] > (dir "/late.record")
	print $2, $4 > (dir "/late.key")
	done = 1
}' "$tmp/raw.txt"
if [ ! -s "$tmp/late.key" ]; then
	echo "(no late sample found in $data)"
	exit 0
fi
read -r tid time < "$tmp/late.key"
$cs script -q -i "$data" "${sym[@]}" |
	awk -v RS= -v tid="$tid" -v time="$time" '!shown && $2 == tid && $4 == time { print; shown = 1 }' \
	> "$tmp/late.stitched"
echo
echo "== one stitched late sample (thread $tid at ${time%:}) =="
echo "-- the sample record, as the kernel wrote it: kernel frames and a cookie"
sed '/^$/d' "$tmp/late.sample"
echo "-- the CALLCHAIN_DEFERRED record for that thread and cookie; it came"
echo "   BEFORE the sample (perf 7.3 leaves such samples with the bare cookie)"
sed '/^$/d' "$tmp/late.record"
echo "-- stitched by callstitch: the kernel part from the sample record, then"
echo "   the user part from the deferred record"
cat "$tmp/late.stitched"
