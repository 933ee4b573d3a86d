#!/usr/bin/env bash
# report on the real-kernel recordings: totals add up, and the overheads are
# the ones perf 7.3 printed for the same files (X.report-stdio.txt).
source "$CS_ROOT/tests/lib.sh"

D=linux-7.3.4
KALLSYMS=$(fixture $D/kallsyms)
# the recorded program lived at /opt/fixt/workload
SYMFS=$T/symfs
mkdir -p "$SYMFS/opt/fixt" && cp "$FIXTURES/$D/bin/workload" "$SYMFS/opt/fixt/"

# libc and ld.so frames resolve against this host's files: the same Debian
# 12 builds as on the recording machine, named from their debug files
# (libc6-dbg) as perf named them. Without those only kernel and workload
# names can match perf's.
host_libs=yes
for id in 93/ac61ec5a8eb1396f9fbd350e3169a558528a40 \
	  7e/bc65e52f2bbea498b4040fa92f7238377aaba9; do
	[ -f "/usr/lib/debug/.build-id/$id.debug" ] || host_libs=no
done
NO_DBG="libc6-dbg for Debian 12's libc 2.36-9+deb12u14 not installed"

rep() {
	local f=$1; shift
	"$CS" report -q -i "$FIXTURES/$D/$f.data" --kallsyms "$KALLSYMS" \
		--symfs "$SYMFS" "$@"
}

# "comm|dso|sym pct" for every entry line of a perf-style report; with
# -n, the Samples column comes second
entries() {
	awk -v n="${2:-0}" '/^ +[0-9.]+%/ { print $(2+n) "|" $(3+n) "|" $(5+n), $1 }' "$1" | sort
}

for f in task-defer syswide-defer task-nodefer; do
	if ! rep $f --no-children -n -g none >"$T/$f.self" 2>"$T/$f.err"; then
		notok "$f: report exits 0"; sed 's/^/#   /' "$T/$f.err"; continue
	fi
	samples=$(sed -n 's/^# samples *: \([0-9]*\),.*/\1/p' "$T/$f.self")
	sum=$(awk '/^ +[0-9.]+%/ { s += $2 } END { print s + 0 }' "$T/$f.self")
	check_eq "$f: Self sample counts sum to the samples" "$samples" "$sum"
	pct=$(awk '/^ +[0-9.]+%/ { s += $1; n++ } END { d = s - 100; if (d < 0) d = -d;
		print (d <= 0.005 * n + 0.01) ? "yes" : "no (" s "% over " n " entries)" }' "$T/$f.self")
	check_eq "$f: Self percentages sum to 100%" yes "$pct"

	entries "$FIXTURES/$D/$f.report-stdio.txt" >"$T/$f.perf.k"
	entries "$T/$f.self" 1 >"$T/$f.ours.k"
	differ=$(join "$T/$f.perf.k" "$T/$f.ours.k" | awk '$2 != $3' | wc -l)
	joined=$(join "$T/$f.perf.k" "$T/$f.ours.k" | wc -l)
	check_eq "$f: the $joined entries both show have perf's overhead" 0 "$differ"
	join "$T/$f.perf.k" "$T/$f.ours.k" | awk '$2 != $3' | head -5 | sed 's/^/#   /'
	# perf resolves [vdso] and its own binary from its build-id cache,
	# which did not travel with the fixtures: those few entries differ
	missing=$(join -v1 "$T/$f.perf.k" "$T/$f.ours.k" |
		awk '{ s += $2 } END { printf "%.2f", s }')
	if [ $host_libs = yes ]; then
		check "$f: perf's entries we name differently weigh $missing% (<= 0.2%)" \
			awk "BEGIN { exit !($missing <= 0.2) }"
	else
		skip "$f: perf's entries we name differently are few" "$NO_DBG"
	fi

	rep $f -n -g none >"$T/$f.children" 2>/dev/null
	over=$(awk -v n="$samples" '/^ +[0-9.]+%/ && ($3 > n || $1 + 0 < $2 + 0 - 0.001) { c++ }
		END { print c + 0 }' "$T/$f.children")
	check_eq "$f: no entry has more Children than samples, or less Children than Self" 0 "$over"
done

# what only we can say: how the user stacks came back
check "task-defer: header counts the 69 late samples we stitch" \
	grep -q '^# user stacks *: 14046 stitched, 69 stitched late, 0 kernel-only, 2 as recorded$' "$T/task-defer.self"
check "syswide-defer: header counts the 148 late samples" \
	grep -q '^# user stacks *: .* 148 stitched late,' "$T/syswide-defer.self"
check "header names the host, kernel and command line" \
	grep -q '^# os release *: 7.3.4$' "$T/task-defer.self"

# perf's layout: --no-children -g is perf's report line for line, but for
# the one entry where the late samples show (below) and the [vdso] symbol
# (perf read it from its build-id cache, which did not travel)
rep task-defer --no-children -g >"$T/graph" 2>/dev/null
body() { sed -n '/^# Overhead/,$p' "$1" | grep -v -e '  \[vdso\]  ' -e '^# (' -e '^#$'; }
body "$FIXTURES/$D/task-defer.report-stdio.txt" >"$T/perf.body"
body "$T/graph" >"$T/ours.body"
hunks=$(diff "$T/perf.body" "$T/ours.body" | grep -E '^[0-9]' | tr '\n' ' ')
if [ $host_libs = yes ]; then
	check_eq "task-defer: the whole report is perf's but for the late-sample entry" \
		"431,456c431,456 " "$hunks"
else
	skip "task-defer: the whole report is perf's" "$NO_DBG"
fi
block() { awk '/^ +[0-9.]+%/ { n++ } n == 1' "$1"; }
block "$FIXTURES/$D/task-defer.report-stdio.txt" >"$T/perf.block"
block "$T/graph" >"$T/ours.block"
same_file "task-defer: first entry and its call graph drawn as perf draws them" \
	"$T/perf.block" "$T/ours.block"

check "column header padded like perf's" \
	grep -qx '# Overhead  Command   Shared Object         Symbol                                   ' "$T/graph"

# perf leaves its 69 late samples with a cookie for a root; we stitch them,
# so the one entry perf splits shows whole here (0.81% + late -> 0.82%)
whole=$(grep -A2 -E '^ +0.82% +pipe-wr +\[kernel.kallsyms\] +\[k\] finish_task_switch.isra.0$' \
	"$T/graph" | tail -1)
check_eq "a late-sample entry is drawn whole (perf splits it)" \
	"            ---start_thread" "$whole"

# kernel-only samples (their record never came): counted by reason in the
# header, and their missing user part is a frame of its own
if "$CS_TOOLS/flame_synth" "$T/synth.data" "$T/synth.kallsyms" \
	"$CS_WORKLOADS/deepstack" >/dev/null 2>&1; then
	"$CS" report -q -i "$T/synth.data" --kallsyms "$T/synth.kallsyms" \
		-n -g none >"$T/synth" 2>&1
	check "synthetic: header says 10 samples are kernel-only because the recording ended" \
		grep -qx '# kernel-only    : 10 end' "$T/synth"
	check "synthetic: header counts stitched, late and as-recorded samples" \
		grep -qx '# user stacks    : 74 stitched, 1 stitched late, 10 kernel-only, 15 as recorded' "$T/synth"
	check "synthetic: the missing user part is an entry with its 10 samples" \
		grep -qE '^ +10.00% +0.00% +10  synth +\[unknown\] +\[\.\] \[user stack missing: end\]$' "$T/synth"
else
	notok "flame_synth makes the synthetic profile"
fi
