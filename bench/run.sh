#!/usr/bin/env bash
# bench/run.sh - callstitch's speed and memory, measured side by side with
# perf 6.1 and cat in one run on this machine, printed as ratios.
#
#   bench/run.sh [SAMPLES]    default 500000 samples per synthetic profile
#
# Environment: BENCH_BIG_MB (default 2048) the size of the profile whose
# peak memory is measured, 0 to skip it; BENCH_REAL=FILE a real profile to
# use instead of recording one; BENCH_RUNS (default 5) runs per timing;
# BENCH_CS=BINARY measures another callstitch build (a before/after);
# BENCH_PIPELINE_ONLY=1 prints the pipeline rows alone;
# BENCH_BEFORE=BINARY adds its real-profile report row, its dwarf-mode
# script row and its report memory rows beside BENCH_CS's;
# BENCH_STITCH_BEFORE=BINARY (another build's stitch_only) a pipeline
# row; BENCH_PIPE_PASSES (default 5) how many times the pipeline rows read
# each profile in one run; BENCH_REAL_ONLY=1 stops after the real
# profile's rows.
#
# Timings are CPU time (user + system, children included), the best of
# BENCH_RUNS runs, files in the page cache, output to /dev/null: on a
# shared machine the wall clock mostly measures the neighbours.
#
# What it measures (goals from issue 10, see docs/performance.md):
#   real       perf record -g -a -F 4000 during a build of this project,
#              >= 150k samples: perf script / perf report --stdio against
#              callstitch script / report with the same output (perf 6.1
#              shows no inlined functions: --no-inline), and whether the
#              text is the same                                 goal >= 10x
#   synthetic  the same on gen_synth profiles, ordinary (perf 6.1 reads
#              them) and deferred (compared with perf on the ordinary one
#              of the same size, per sample)                    goal >= 10x
#   pipeline   the library's read + order + stitch (stitch_only) against
#              cat, on the ordinary and the deferred profile    goal >= 0.3x;
#              also on a deferred one shaped like real recordings
#              (gen_synth --short-entries: kernel entries of a sample or
#              two, ~36% of the records deferred ones, against ~6%);
#              and a cache line's round trip between two CPUs
#              (core_trip), which reading ahead pays for each line;
#              before and after each group of rows, a load's latency in
#              tables of 1, 4 and 64 MiB (mem_latency), which the
#              ratios move with on a machine whose last-level cache is
#              shared
#   memory     peak resident memory, anonymous and file-backed, of script
#              and report on BENCH_BIG_MB deferred profiles: stacks from
#              20000 call paths (gen_synth --paths), and all at random
#                                 goal <= 256 MiB + what waiting samples need
#   distinct   report on gen_synth --no-defer -n 500000, stacks nearly all
#              distinct                             goal <= 512 MiB, <= 5 s
#   dwarf      a --call-graph dwarf recording of dwarfmix: both unwind;
#              also --no-inline, and callstitch's first run (empty
#              caches)                                          goal >= 10x
#   threads    -j 1 against -j 2 (when the binary has -j); also first
#              runs (empty symbol cache) of script and report on the
#              real and the dwarf-mode profiles, wall and CPU time
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-500000}
runs=${BENCH_RUNS:-5}
big_mb=${BENCH_BIG_MB:-2048}
make -s -j"$(nproc)" all build/tools/stitch_only build/tools/mem_latency >/dev/null
B=$(mktemp -d /tmp/callstitch-bench.XXXXXX)
loop_pid=
cleanup() {
	[ -n "$loop_pid" ] && kill "$loop_pid" 2>/dev/null
	[ -n "${bench_out:-}" ] && rm -f "$bench_out"
	rm -rf "$B"
}
trap cleanup EXIT
cs=${BENCH_CS:-$PWD/build/callstitch}
perf=/usr/bin/perf
# symbol tables are cached between runs, keyed by the callstitch build:
# a cache of our own, so that other builds run on a shared machine (a
# test suite) do not evict the tables between the runs measured here;
# the first run of each command fills it, the best of the runs is warm
export XDG_CACHE_HOME=$B/cache

# best CPU time of $runs runs, in seconds, of "$@" with stdout to /dev/null
# (best_wall: the best wall time instead; best_of EVENTS SCALES with two
# comma-separated events: the best of each, from the same runs, "A B")
best_of() {
	local events=$1 scales=$2 best= t
	shift 2
	for _ in $(seq "$runs"); do
		"$perf" stat -x, -e "$events" -o "$B/stat" -- "$@" >/dev/null 2>"$B/err" || {
			echo "bench: failed: $*" >&2; cat "$B/err" >&2; exit 1; }
		t=$(awk -F, -v e="$events" -v s="$scales" '
			BEGIN { n = split(e, ev, ","); split(s, sc, ",") }
			{ v[$3] = $1 }
			END { for (i = 1; i <= n; i++)
				printf "%s%.6f", (i > 1 ? " " : ""), v[ev[i]] / sc[i] }' "$B/stat")
		best=$(awk -v a="$t" -v b="$best" 'BEGIN {
			n = split(a, x, " "); split(b, y, " ")
			for (i = 1; i <= n; i++)
				printf "%s%.6f", (i > 1 ? " " : ""),
					(b == "" || x[i] < y[i]) ? x[i] : y[i] }')
	done
	# a whole line: `read` fails on one without its newline
	awk -v b="$best" 'BEGIN { n = split(b, x, " ")
		for (i = 1; i <= n; i++) printf "%s%.4f", (i > 1 ? " " : ""), x[i]
		printf "\n" }'
}
best() { best_of task-clock 1000 "$@"; }
# first_j ARGS...: "W1 C1 W2 C2", the best wall and CPU seconds of first
# runs (a new, empty symbol cache each: XDG_CACHE_HOME=$(mktemp -d)) of
# ARGS -j 1 and -j 2, run in turn in one loop so that a neighbour's burst
# weighs on both (the mktemp is counted too)
first_j() {
	local w1= c1= w2= c2= j w c
	for _ in $(seq "$runs"); do
		for j in 1 2; do
			"$perf" stat -x, -e task-clock,duration_time -o "$B/stat" -- \
				bash -c 'd=$(mktemp -d "$1/first.XXXXXX") &&
				XDG_CACHE_HOME=$d "${@:2}"; r=$?; rm -rf "$d"; exit $r' \
				_ "$B" "$@" -j "$j" >/dev/null 2>"$B/err" || {
				echo "bench: failed: $* -j $j" >&2; cat "$B/err" >&2; exit 1; }
			c=$(awk -F, '$3 == "task-clock" { printf "%.6f", $1 / 1000 }' "$B/stat")
			w=$(awk -F, '$3 == "duration_time" { printf "%.6f", $1 / 1e9 }' "$B/stat")
			if [ "$j" = 1 ]; then w1=$(min_of "$w1" "$w"); c1=$(min_of "$c1" "$c")
			else w2=$(min_of "$w2" "$w"); c2=$(min_of "$c2" "$c"); fi
		done
	done
	echo "$w1 $c1 $w2 $c2"
}
# first_rows LABEL ARGS...: first_j's figures as two rows, wall and CPU
first_rows() {
	local label=$1 w1 c1 w2 c2
	shift
	read -r w1 c1 w2 c2 < <(first_j "$@")
	printf '%-50s %10.4f %14.4f %12s\n' "$label, wall" "$w1" "$w2" "$(ratio "$w1" "$w2")x"
	printf '%-50s %10.4f %14.4f %12s\n' "  CPU (every thread)" "$c1" "$c2" ""
	first_w2=$w2 first_c1=$c1
}
# first_vs_perf PERF_CPU PERF_WALL: the last first_rows against perf,
# which has no cache and so pays as much on every run
first_vs_perf() {
	printf '%-50s %10s %14s\n' "  against perf (-j 1 CPU, -j 2 wall)" \
		"$(ratio "$1" "$first_c1")x" "$(ratio "$2" "$first_w2")x"
}
first_header() {
	printf '\n%-50s %10s %14s %12s\n' "$1 (seconds, best of $runs)" "-j 1" "-j 2" "gain"
}
best_wall() { best_of duration_time 1000000000 "$@"; }
min_of() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
# best_pair best|best_wall A... --vs B...: "TA TB", the best of $runs runs
# of each, A and B in turn: this VM's speed drifts by a third between
# minutes (its vCPUs move between host cores), and five runs of perf then
# five of ours put the two on either side of a drift; in turn, a slow
# minute weighs on both
best_pair() {
	local how=$1 a=() b=() ta= tb= x vs=
	shift
	for x in "$@"; do
		if [ -z "$vs" ] && [ "$x" = --vs ]; then vs=1; continue; fi
		if [ -z "$vs" ]; then a+=("$x"); else b+=("$x"); fi
	done
	for _ in $(seq "$runs"); do
		x=$(runs=1 "$how" "${a[@]}") && ta=$(min_of "$ta" "$x") || exit 1
		x=$(runs=1 "$how" "${b[@]}") && tb=$(min_of "$tb" "$x") || exit 1
	done
	echo "$ta $tb"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
rate()  { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", a / b }'; }
mbs()   { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f MB/s", a / b / 1048576 }'; }
line()  { printf '%-50s %10s %14s %12s\n' "$@"; }
# A load's latency in tables of 1, 4 and 64 MiB (mem_latency), printed
# before and after each group of rows: most of callstitch's time on a
# real profile waits for such loads, perf's much less, so the ratios
# move with it. On this VM the last-level cache is shared with busy
# neighbours: 4 MiB measured 20 ns in one minute and 140 ns in another.
mem_row() { printf '%-50s %s\n' "  a load in a table of (mem_latency)" "$(build/tools/mem_latency)"; }
header() { printf '\n%-50s %10s %14s %12s\n' "$1" "seconds" "rate" "ratio"; }

# peak resident memory of "$@" (stdout to /dev/null): "ANON FILE" in MiB,
# polled from /proc every 20 ms (VmHWM has no split by kind)
peak_rss() {
	"$@" >/dev/null 2>"$B/err" &
	local pid=$! a=0 f=0 x y
	while [ -r "/proc/$pid/status" ]; do
		read -r x y < <(awk '/^RssAnon/ { a = $2 } /^RssFile/ { f = $2 }
			END { print a + 0, f + 0 }' "/proc/$pid/status" 2>/dev/null || echo "0 0")
		[ "${x:-0}" -gt "$a" ] && a=$x
		[ "${y:-0}" -gt "$f" ] && f=$y
		sleep 0.02
	done
	if ! wait "$pid"; then
		echo "failed failed"
		return
	fi
	echo "$((a / 1024)) $((f / 1024))"
}
# a command prefix: an address-space cap of 4 GiB, so that a run that
# needs more fails instead of pushing a shared machine into swap (exec
# keeps the pid that peak_rss watches)
capped=(bash -c 'ulimit -v "$1"; shift; exec "$@"' _ $((4096 * 1024)))

samples() { "$cs" script -q -i "$1" 2>/dev/null | grep -c '^[^[:space:]]' || true; }

# ---- the real profile --------------------------------------------------

# Samples of perf's and our script text compared in lockstep, after the
# known differences of perf 6.1 are normalised (docs/script.md): user
# addresses relative to their dso, tid padding, and the name of a thread
# after its exit (":TID", as perf 7.3 prints it). Prints "SAMPLES DIFFER".
script_diff() {
	awk -v ours="$2" '
	function norm(b,    n, l, i, f, a, out) {
		n = split(b, l, "\n")
		for (i = 1; i <= n; i++) {
			if (l[i] ~ /^\t/) {
				split(l[i], f, " "); a = f[1]; sub(/^\t */, "", a)
				if (length(a) < 16 || substr(a, 1, 4) != "ffff")
					sub(/^\t *[0-9a-f]+ /, "\tU ", l[i])
			} else {
				gsub(/ +/, " ", l[i]); sub(/^[^ ]* /, "", l[i])
			}
			out = out l[i] "\n"
		}
		return out
	}
	BEGIN { RS = "" }
	{ if ((getline o < ours) <= 0) { d++; next }
	  n++; if (norm($0) != norm(o)) d++ }
	END { while ((getline o < ours) > 0) d++; print n + 0, d + 0 }' "$1"
}

# An entry line of a report after its numbers ("COMM  DSO  [L] SYM") split
# into e["comm"], e["dso"], e["lvl"], e["sym"]; 0 when it is not one. A
# command's name may hold double spaces, so the dso is the last column.
# perf's "[JIT] tid N" reads as our perf-N.map (docs/outputs.md).
entry_awk='
	function entry(rest, perf, e,    n, parts, i) {
		if (!match(rest, / \[[.kgGuH]\] /))
			return 0
		e["lvl"] = substr(rest, RSTART + 1, 3)
		e["sym"] = substr(rest, RSTART + 5)
		rest = substr(rest, 1, RSTART - 1)
		sub(/ +$/, "", rest)
		n = split(rest, parts, /  +/)
		e["dso"] = parts[n]
		e["comm"] = parts[1]
		for (i = 2; i < n; i++)
			e["comm"] = e["comm"] "  " parts[i]
		if (perf && e["dso"] ~ /^\[JIT\] tid [0-9]+$/)
			e["dso"] = "perf-" substr(e["dso"], 11) ".map"
		return 1
	}'

# Entry lines of perf's and our report compared as multisets, after the
# differences docs/outputs.md lists as perf 6.1's are normalised: an
# address in no map is [k] in perf (its level is not compared), a JIT map
# is "[JIT] tid N" (ours: perf-N.map), a PLT entry's name (docs/script.md)
# is compared as "@plt". What is left is sorted into the two documented
# kinds that cannot be matched line by line - an address without a symbol
# (perf names it by its file offset as a sample's ip and by its address
# in a callchain: two entries, ours one) and PLT entries perf files under
# a zero-size _init - and the rest, unexplained. Prints "PERF_LINES SAME
# ADDR_PERF ADDR_OURS PLT_PERF PLT_OURS UNEXPLAINED_PERF UNEXPLAINED_OURS".
report_diff() {
	awk "$entry_awk"'
	function canon(line, perf,    m, e) {
		if (!match(line, /^ +[0-9.]+% +[0-9.]+%  /))
			return ""
		split(substr(line, 1, RLENGTH), m, " ")
		if (!entry(substr(line, RLENGTH + 1), perf, e))
			return ""
		if (e["dso"] == "[unknown]")
			e["lvl"] = "[?]"
		if (e["sym"] ~ /@plt$/)
			e["sym"] = "@plt"
		return m[1] "|" m[2] "|" e["comm"] "|" e["dso"] "|" e["lvl"] "|" e["sym"]
	}
	function kind(c,    f) {
		split(c, f, "|")
		if (f[6] ~ /^0x[0-9a-f]+$/ && f[4] != "[unknown]")
			return "addr"
		if (f[6] == "@plt" || f[6] == "_init")
			return "plt"
		return "other"
	}
	FNR == NR { c = canon($0, 1); if (c != "") { perf[c]++; np++ } next }
	{ c = canon($0, 0); if (c == "") next
	  if (perf[c] > 0) { perf[c]--; same++ } else left[kind(c) ",ours"]++ }
	END {
		for (c in perf)
			left[kind(c) ",perf"] += perf[c]
		print np + 0, same + 0, left["addr,perf"] + 0, left["addr,ours"] + 0,
		      left["plt,perf"] + 0, left["plt,ours"] + 0,
		      left["other,perf"] + 0, left["other,ours"] + 0
	}' "$1" "$2"
}

# cat reads a 500k profile in ~8 ms, where a millisecond of a shared
# machine's noise is 10%: both read the file $passes times in one process
# (cat FILE FILE ..., stitch_only FILE PASSES), and their runs alternate,
# so that a neighbour's burst weighs on both
pipeline_rows() {
	local passes=${BENCH_PIPE_PASSES:-5} kind f sz cats t_cat t_lib t_old w_cat w_ahead
	header "pipeline: read + order + stitch ($passes passes a run)"
	mem_row
	for kind in plain defer short; do
		f=$B/$kind.data
		sz=$(stat -c %s "$f")
		cats=()
		for _ in $(seq "$passes"); do cats+=("$f"); done
		t_cat= t_lib= t_old= w_cat= w_ahead=
		for _ in $(seq "$runs"); do
			t_cat=$(runs=1 best cat "${cats[@]}" | awk -v b="$t_cat" '{ print (b == "" || $1 < b) ? $1 : b }')
			# the throughput with the records read ahead on a second
			# CPU: wall time against cat's
			w_cat=$(min_of "$w_cat" "$(runs=1 best_wall cat "${cats[@]}")")
			w_ahead=$(min_of "$w_ahead" \
				"$(runs=1 best_wall build/tools/stitch_only "$f" "$passes" ahead)")
			t_lib=$(runs=1 best build/tools/stitch_only "$f" "$passes" |
				awk -v b="$t_lib" '{ print (b == "" || $1 < b) ? $1 : b }')
			if [ -n "${BENCH_STITCH_BEFORE:-}" ]; then
				t_old=$(runs=1 best "$BENCH_STITCH_BEFORE" "$f" "$passes" |
					awk -v b="$t_old" '{ print (b == "" || $1 < b) ? $1 : b }')
			fi
		done
		line "cat, $kind ($((sz >> 20)) MB)" "$t_cat" "$(mbs $((sz * passes)) "$t_cat")" ""
		line "pipeline, $kind" "$t_lib" "$(mbs $((sz * passes)) "$t_lib")" "$(ratio "$t_cat" "$t_lib")x cat"
		line "  read ahead, wall seconds (cat: $w_cat)" "$w_ahead" \
			"$(mbs $((sz * passes)) "$w_ahead")" "$(ratio "$w_cat" "$w_ahead")x cat"
		if [ -n "$t_old" ]; then
			line "  the same, BENCH_STITCH_BEFORE build" "$t_old" \
				"$(mbs $((sz * passes)) "$t_old")" "$(ratio "$t_cat" "$t_old")x cat"
		fi
	done
	# reading ahead, the decoding thread reads each record's lines after
	# the reading thread's CPU did: what one line's trip there and back
	# costs on this machine bounds what the split can give
	line "  a cache line's round trip between two CPUs" "" \
		"$(build/tools/core_trip)" ""
	mem_row
}

# BENCH_PIPELINE_ONLY=1: the pipeline rows alone, on their own profiles
if [ -n "${BENCH_PIPELINE_ONLY:-}" ]; then
	build/tools/gen_synth --no-defer -n "$n" -o "$B/plain.data" >/dev/null
	build/tools/gen_synth -n "$n" -o "$B/defer.data" >/dev/null
	build/tools/gen_synth --short-entries -n "$n" -o "$B/short.data" >/dev/null
	cat "$B/plain.data" "$B/defer.data" "$B/short.data" >/dev/null
	pipeline_rows
	exit 0
fi

# The entries without a symbol that report_diff() cannot match line by
# line, checked another way: in "--no-children -n" reports, the samples of
# such entries summed per (comm, dso) must be the same in perf's and ours
# (perf files a sample under its file-offset name, we under the address).
# Prints "PAIRS DIFFERENT".
unnamed_diff() {
	awk "$entry_awk"'
	function add(line, perf,    f, e) {
		if (!match(line, /^ +[0-9.]+% +[0-9]+  /))
			return
		split(substr(line, 1, RLENGTH), f, " ")
		if (!entry(substr(line, RLENGTH + 1), perf, e))
			return
		if (e["sym"] ~ /^0x[0-9a-f]+$/ && e["dso"] != "[unknown]")
			total[e["comm"] "|" e["dso"]] += perf ? f[2] : -f[2]
	}
	FNR == NR { add($0, 1); next }
	{ add($0, 0) }
	END {
		for (k in total) {
			n++
			if (total[k])
				bad++
		}
		print n + 0, bad + 0
	}' "$1" "$2"
}

real=${BENCH_REAL:-}
if [ -z "$real" ]; then
	real=$B/real.data
	echo "recording a real profile: perf record -g -a -F 4000 while this project builds..."
	mkdir -p "$B/src"
	cp -r Makefile src include tests "$B/src/"
	rm -rf "$B/src/tests/fixtures" "$B/src/tests/browser"
	( cd "$B/src" && while :; do make -s clean; nice make -s -j"$(nproc)" all \
		>/dev/null 2>&1 || true; done ) >/dev/null 2>&1 &
	loop_pid=$!
	# cpu-clock ticks on every CPU, idle or not: 4000/s each
	secs=$(( 150000 * 12 / 10 / (4000 * $(nproc)) + 1 ))
	for _ in 1 2 3; do
		"$perf" record -q -g -a -F 4000 -e cpu-clock -o "$real" -- sleep "$secs" \
			>/dev/null 2>&1
		[ "$(samples "$real")" -ge 150000 ] && break
		secs=$((secs * 2))
	done
	kill "$loop_pid" 2>/dev/null; wait "$loop_pid" 2>/dev/null || true
	loop_pid=
fi
cat "$real" >/dev/null
n_real=$(samples "$real")

header "real profile ($n_real samples, $(($(stat -c %s "$real") >> 20)) MB)"
mem_row
"$perf" script -i "$real" >"$B/perf.txt" 2>/dev/null
"$cs" script -q --no-inline -i "$real" >"$B/ours.txt" 2>/dev/null
read -r lines differ < <(script_diff "$B/perf.txt" "$B/ours.txt")
# perf script is one thread: the ratio is CPU time at -j 1. At the
# default -j script makes and writes its text on a second thread; that
# run's CPU time (both threads) and its wall time against perf's are
# printed beside it, so that the thread's cost shows as well as its gain
j1=()
"$cs" script -h 2>&1 | grep -q -- '-j, --jobs' && j1=(-j 1)
r=$(best_pair best "$perf" script -i "$real" --vs \
	"$cs" script -q --no-inline "${j1[@]}" -i "$real")
read -r t_perf t_cs <<<"$r"
t_csj=$(best "$cs" script -q --no-inline -i "$real")
r=$(best_pair best_wall "$perf" script -i "$real" --vs \
	"$cs" script -q --no-inline -i "$real")
read -r w_perf w_csj <<<"$r"
line "perf script" "$t_perf" "$(rate "$n_real" "$t_perf") smp/s" ""
line "callstitch script --no-inline ${j1[*]}" "$t_cs" "$(rate "$n_real" "$t_cs") smp/s" "$(ratio "$t_perf" "$t_cs")x perf"
line "  default -j ($(nproc)), CPU of every thread" "$t_csj" "$(rate "$n_real" "$t_csj") smp/s" "$(ratio "$t_perf" "$t_csj")x perf"
line "  default -j, wall seconds (perf: $w_perf)" "$w_csj" "" "$(ratio "$w_perf" "$w_csj")x perf"
# /dev/null spares both the kernel's copy of the text (120 MB here), which
# a file or a pipe costs: the same two into a file in memory
bench_out=/dev/shm
[ -d "$bench_out" ] && [ -w "$bench_out" ] || bench_out=$B
bench_out=$(mktemp "$bench_out/callstitch-bench-out.XXXXXX")
into_out='o=$1; shift; "$@" >"$o" 2>/dev/null; r=$?; rm -f "$o"; exit $r'
r=$(best_pair best bash -c "$into_out" _ "$bench_out" "$perf" script -i "$real" --vs \
	bash -c "$into_out" _ "$bench_out" "$cs" script -q --no-inline "${j1[@]}" -i "$real")
read -r t_perff t_csf <<<"$r"
rm -f "$bench_out"
line "  perf script into a file ($(dirname "$bench_out"))" "$t_perff" "" ""
line "  callstitch script ${j1[*]} into that file" "$t_csf" "" "$(ratio "$t_perff" "$t_csf")x perf"
line "  samples that differ from perf's" "" "$differ of $lines" ""
t_csi=$(best "$cs" script -q -i "$real")
line "callstitch script (with inlined functions)" "$t_csi" "$(rate "$n_real" "$t_csi") smp/s" "$(ratio "$t_perf" "$t_csi")x perf"
# as script's: perf report is one thread, so the ratio is CPU time at
# -j 1; the default -j's (its counting thread too) is printed below it
rj1=()
"$cs" report -h 2>&1 | grep -q -- '-j, --jobs' && rj1=(-j 1)
r=$(best_pair best "$perf" report --stdio -i "$real" --vs \
	"$cs" report -q --stdio --no-inline "${rj1[@]}" -i "$real")
read -r t_perfr t_csr <<<"$r"
t_csrj=$(best "$cs" report -q --stdio --no-inline -i "$real")
"$perf" report --stdio -i "$real" >"$B/perf.rep" 2>/dev/null
"$cs" report -q --stdio --no-inline -i "$real" >"$B/ours.rep" 2>/dev/null
read -r rlines same addr_p addr_o plt_p plt_o other_p other_o < \
	<(report_diff "$B/perf.rep" "$B/ours.rep")
line "perf report --stdio" "$t_perfr" "" ""
line "callstitch report --stdio --no-inline ${rj1[*]}" "$t_csr" "" "$(ratio "$t_perfr" "$t_csr")x perf"
line "  default -j ($(nproc)), CPU of every thread" "$t_csrj" "" "$(ratio "$t_perfr" "$t_csrj")x perf"
line "  entry lines equal to perf's (docs/outputs.md)" "" "$same of $rlines" ""
line "  differ: addresses without symbols, perf/ours" "" "$addr_p / $addr_o" ""
"$perf" report --stdio --no-children -n -g none -i "$real" >"$B/perf.self" 2>/dev/null
"$cs" report -q --stdio --no-children -n -g none --no-inline -i "$real" \
	>"$B/ours.self" 2>/dev/null
read -r pairs unequal < <(unnamed_diff "$B/perf.self" "$B/ours.self")
line "    their samples per (comm, dso) equal perf's" "" "$((pairs - unequal)) of $pairs" ""
line "  differ: PLT names, perf/ours" "" "$plt_p / $plt_o" ""
line "  differ, unexplained, perf/ours (goal 0)" "" "$other_p / $other_o" ""
mem_row
if [ -n "${BENCH_BEFORE:-}" ]; then
	bj1=()
	"$BENCH_BEFORE" report -h 2>&1 | grep -q -- '-j, --jobs' && bj1=(-j 1)
	t=$(best "$BENCH_BEFORE" report -q --stdio --no-inline "${bj1[@]}" -i "$real")
	line "  report ${bj1[*]}, BENCH_BEFORE build" "$t" "" "$(ratio "$t_perfr" "$t")x perf"
fi
# a first run: no saved symbol tables yet (a new cache directory each
# run). With -j 2 the tables of the binaries the header lists, and the
# kernel's, load on worker threads ahead of their first use
if "$cs" script -h 2>&1 | grep -q -- '-j, --jobs'; then
	first_header "real profile, first run (empty cache)"
	first_rows "script --no-inline" "$cs" script -q --no-inline -i "$real"
	first_vs_perf "$t_perf" "$w_perf"
	first_rows "report --stdio --no-inline" "$cs" report -q --stdio --no-inline -i "$real"
	w_perfr=$(best_wall "$perf" report --stdio -i "$real")
	first_vs_perf "$t_perfr" "$w_perfr"
fi
[ -n "${BENCH_REAL_ONLY:-}" ] && exit 0

echo "generating synthetic profiles ($n samples each)..."
build/tools/gen_synth --no-defer -n "$n" -o "$B/plain.data" >/dev/null
build/tools/gen_synth -n "$n" -o "$B/defer.data" >/dev/null
build/tools/gen_synth --no-defer -n 500000 -o "$B/distinct.data" >/dev/null
build/tools/gen_synth --short-entries -n "$n" -o "$B/short.data" >/dev/null
cat "$B/plain.data" "$B/defer.data" "$B/distinct.data" "$B/short.data" >/dev/null
n_plain=$(samples "$B/plain.data")
n_defer=$(samples "$B/defer.data")

# --call-graph dwarf: perf 6.1 and callstitch both unwind every sample's
# stack copy, side by side on one recording of dwarfmix (C and C++ without
# frame pointers, perf's default 8 KiB copies)
dwarf=$B/dwarf.data
if "$perf" record -q -e cpu-clock -F 4000 --call-graph dwarf -o "$dwarf" \
	-- build/workloads/nofp/dwarfmix 3 >/dev/null 2>&1; then
	cat "$dwarf" >/dev/null
	n_dwarf=$(samples "$dwarf")
	header "dwarf-mode recording ($n_dwarf samples, $(( $(stat -c %s "$dwarf") >> 20 )) MB)"
	# perf is one thread: CPU time at -j 1, as the real profile's rows
	dj1=()
	"$cs" script -h 2>&1 | grep -q -- '-j, --jobs' && dj1=(-j 1)
	t_perfd=$(best "$perf" script -i "$dwarf")
	t_csd=$(best "$cs" script -q "${dj1[@]}" -i "$dwarf")
	# a first run: no saved symbol tables or debug images (a new cache
	# directory each run; its mktemp is counted too)
	t_csd_cold=$(best bash -c 'd=$(mktemp -d "$1/cold.XXXXXX") &&
		XDG_CACHE_HOME=$d exec "${@:2}"' _ "$B" "$cs" script -q "${dj1[@]}" -i "$dwarf")
	t_perfdn=$(best "$perf" script --no-inline -i "$dwarf")
	t_csdn=$(best "$cs" script -q --no-inline "${dj1[@]}" -i "$dwarf")
	line "perf script" "$t_perfd" "$(rate "$n_dwarf" "$t_perfd") smp/s" ""
	line "callstitch script ${dj1[*]}" "$t_csd" "$(rate "$n_dwarf" "$t_csd") smp/s" \
		"$(ratio "$t_perfd" "$t_csd")x perf"
	line "callstitch script, first run (empty caches)" "$t_csd_cold" \
		"$(rate "$n_dwarf" "$t_csd_cold") smp/s" "$(ratio "$t_perfd" "$t_csd_cold")x perf"
	if [ -n "${BENCH_BEFORE:-}" ]; then
		bdj1=()
		"$BENCH_BEFORE" script -h 2>&1 | grep -q -- '-j, --jobs' && bdj1=(-j 1)
		t_csd_before=$(best "$BENCH_BEFORE" script -q "${bdj1[@]}" -i "$dwarf")
		line "callstitch script, BENCH_BEFORE build" "$t_csd_before" \
			"$(rate "$n_dwarf" "$t_csd_before") smp/s" "$(ratio "$t_perfd" "$t_csd_before")x perf"
	fi
	line "perf script --no-inline" "$t_perfdn" "$(rate "$n_dwarf" "$t_perfdn") smp/s" ""
	line "callstitch script --no-inline" "$t_csdn" "$(rate "$n_dwarf" "$t_csdn") smp/s" \
		"$(ratio "$t_perfdn" "$t_csdn")x perf"
	if [ -n "${dj1[*]}" ]; then
		first_header "dwarf-mode recording, first run (empty cache)"
		first_rows "script" "$cs" script -q -i "$dwarf"
		first_rows "report --stdio" "$cs" report -q --stdio -i "$dwarf"
	fi
else
	echo "bench: perf record --call-graph dwarf failed: no dwarf-mode row" >&2
fi

header "synthetic profiles ($n samples)"
mem_row
# the same text as perf 6.1, which shows no inlined functions (as the
# real profile's rows): the stacks are random points in this host's libc,
# whose inlined calls callstitch adds by default where its debug info is
# installed (the last row); at -j 1, as the real profile's ratio
t_perf=$(best "$perf" script -i "$B/plain.data")
t_cs=$(best "$cs" script -q --no-inline "${j1[@]}" -i "$B/plain.data")
t_csd=$(best "$cs" script -q --no-inline "${j1[@]}" -i "$B/defer.data")
t_csoi=$(best "$cs" script -q "${j1[@]}" -i "$B/plain.data")
line "perf script, ordinary" "$t_perf" "$(rate "$n_plain" "$t_perf") smp/s" ""
line "callstitch script --no-inline, ordinary" "$t_cs" "$(rate "$n_plain" "$t_cs") smp/s" "$(ratio "$t_perf" "$t_cs")x perf"
line "callstitch script --no-inline, deferred (stitched)" "$t_csd" "$(rate "$n_defer" "$t_csd") smp/s" \
	"$(awk -v a="$n_defer" -v b="$t_csd" -v c="$n_plain" -v d="$t_perf" 'BEGIN { printf "%.2f", (a / b) / (c / d) }')x perf"
line "callstitch script, ordinary, with inlined functions" "$t_csoi" "$(rate "$n_plain" "$t_csoi") smp/s" "$(ratio "$t_perf" "$t_csoi")x perf"
# perf report keeps every sample's chain: on these all-distinct stacks it
# needs ~36 KB a sample (1.8 GB for 50k), so report is compared on a
# tenth of the samples, perf under the same 4 GiB cap
rn=$((n / 10))
header "synthetic profiles for report ($rn samples)"
build/tools/gen_synth --no-defer -n "$rn" -o "$B/plain_r.data" >/dev/null
build/tools/gen_synth -n "$rn" -o "$B/defer_r.data" >/dev/null
n_plain_r=$(samples "$B/plain_r.data")
n_defer_r=$(samples "$B/defer_r.data")
t_perfr=$(best "${capped[@]}" "$perf" report --stdio -i "$B/plain_r.data")
t_csr=$(best "$cs" report -q --stdio "${rj1[@]}" -i "$B/plain_r.data")
t_csrd=$(best "$cs" report -q --stdio "${rj1[@]}" -i "$B/defer_r.data")
t_csrj=$(best "$cs" report -q --stdio -i "$B/plain_r.data")
line "perf report --stdio, ordinary" "$t_perfr" "$(rate "$n_plain_r" "$t_perfr") smp/s" ""
line "callstitch report ${rj1[*]}, ordinary" "$t_csr" "$(rate "$n_plain_r" "$t_csr") smp/s" "$(ratio "$t_perfr" "$t_csr")x perf"
line "  default -j ($(nproc)), CPU of every thread" "$t_csrj" "$(rate "$n_plain_r" "$t_csrj") smp/s" "$(ratio "$t_perfr" "$t_csrj")x perf"
line "callstitch report ${rj1[*]}, deferred (stitched)" "$t_csrd" "$(rate "$n_defer_r" "$t_csrd") smp/s" \
	"$(awk -v a="$n_defer_r" -v b="$t_csrd" -v c="$n_plain_r" -v d="$t_perfr" 'BEGIN { printf "%.2f", (a / b) / (c / d) }')x perf"

pipeline_rows

# the issue's goals beside each row
mline() { printf '%-50s %10s %10s %10s   %s\n' "$@"; }
printf '\n%-50s %10s %10s %10s   %s\n' "memory (peak resident)" "CPU s" "anon MiB" "file MiB" "goal"
read -r a f < <(CALLSTITCH_REPORT_VERBOSE=1 peak_rss "$cs" report -q --stdio -i "$B/distinct.data")
label="report, 500k samples, stacks nearly all distinct"
grep -q 'report: from a temporary file' "$B/err" && label="$label (temporary file)"
# CPU, every thread's, and wall: the time goal is the user's wait
read -r t w < <(best_of task-clock,duration_time 1000,1000000000 "$cs" report -q \
	--stdio -i "$B/distinct.data")
mline "$label" "$t" "$a" "$f" "<= 512 MiB"
mline "  the same, wall seconds" "$w" "" "" "<= 5 s"
if "$cs" report -h 2>&1 | grep -q -- '-j, --jobs'; then
	read -r a f < <(peak_rss "$cs" report -q --stdio -j 1 -i "$B/distinct.data")
	t=$(best "$cs" report -q --stdio -j 1 -i "$B/distinct.data")
	mline "  the same with -j 1" "$t" "$a" "$f" ""
fi
if [ -n "${BENCH_BEFORE:-}" ]; then
	read -r a f < <(peak_rss "$BENCH_BEFORE" report -q --stdio -i "$B/distinct.data")
	t=$(best "$BENCH_BEFORE" report -q --stdio -i "$B/distinct.data")
	mline "  the same, BENCH_BEFORE build" "$t" "$a" "$f" ""
fi
if [ "$big_mb" -gt 0 ]; then
	# gen_synth writes ~7000 deferred samples per MB. Two shapes: stacks
	# drawn from 20000 call paths of a few programs, kernel frames on
	# symbols (a profile people record: memory follows the call paths);
	# and every address at random (memory follows the distinct entries,
	# nearly one per frame of every sample: report's tables would pass
	# its budget many times over, so it is made from a temporary file -
	# the row says which way, and its wall seconds)
	big=$B/big.data
	for shape in paths distinct; do
		# gen_synth writes the kernel's symbols, the commands read them
		ks=() gen=()
		[ "$shape" = paths ] && ks=(--kallsyms "$B/big.kallsyms") gen=(--paths 20000)
		build/tools/gen_synth "${gen[@]}" "${ks[@]}" -n $((big_mb * 7000)) \
			-o "$big" >/dev/null
		sz=$(($(stat -c %s "$big") >> 20))
		for run in script report ${BENCH_BEFORE:+before}; do
			bin=$cs cmd=$run label="$run, $sz MB, $shape stacks"
			[ "$run" = before ] && bin=$BENCH_BEFORE cmd=report \
				label="  report, BENCH_BEFORE build"
			t0=$(date +%s.%N)
			read -r a f < <(CALLSTITCH_REPORT_VERBOSE=1 peak_rss "${capped[@]}" \
					"$bin" "$cmd" -q "${ks[@]}" -i "$big")
			t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
			[ "$a" = failed ] && a="> 4 GiB" f=- t=
			grep -q 'report: in memory' "$B/err" && label="$label, in memory"
			grep -q 'report: from a temporary file' "$B/err" &&
				label="$label, temporary file"
			mline "$label" "$t" "$a" "$f" "<= 256 MiB + waiting samples, anon and file"
		done
		rm -f "$big"
	done
fi

# -j: CPU time is summed over threads, so the gain shows in wall time;
# on a shared machine that is noisy - best of $runs, -j 1 and -j 2 run in
# turn in one loop, so that a neighbour's burst weighs on both
# wall_j ARGS...: "W1 W2", the best wall seconds of ARGS -j 1 and -j 2
wall_j() {
	local w1= w2= j
	for _ in $(seq "$runs"); do
		for j in 1 2; do
			/usr/bin/time -f %e -o "$B/wall" "$@" -j "$j" >/dev/null 2>&1
			if [ "$j" = 1 ]; then w1=$(min_of "$w1" "$(tail -1 "$B/wall")")
			else w2=$(min_of "$w2" "$(tail -1 "$B/wall")"); fi
		done
	done
	echo "$w1 $w2"
}
printf '\n%-50s %10s %14s %12s\n' "threads (wall seconds, best of $runs)" "-j 1" "-j 2" "gain"
for c in report script folded flame pprof speedscope; do
	"$cs" "$c" -h 2>&1 | grep -q -- '-j, --jobs' || continue
	out=()
	case $c in flame|pprof|speedscope) out=(-o /dev/null) ;; esac
	read -r w1 w2 < <(wall_j "$cs" "$c" -q "${out[@]}" -i "$B/distinct.data")
	line "$c, 500k samples, stacks nearly all distinct" "$w1" "$w2" "$(ratio "$w1" "$w2")x"
done
# flame counts the samples on a second thread, as folded does
if "$cs" flame -h 2>&1 | grep -q -- '-j, --jobs'; then
	read -r w1 w2 < <(wall_j "$cs" flame -q -o /dev/null -i "$real")
	line "flame, real profile" "$w1" "$w2" "$(ratio "$w1" "$w2")x"
fi
# pprof and speedscope count the samples on a second thread too
for c in pprof speedscope; do
	"$cs" "$c" -h 2>&1 | grep -q -- '-j, --jobs' || continue
	read -r w1 w2 < <(wall_j "$cs" "$c" -q -o /dev/null -i "$real")
	line "$c, real profile" "$w1" "$w2" "$(ratio "$w1" "$w2")x"
done
# diff reads OLD and NEW at once, a thread each, and writes its table
# in parts
if "$cs" diff -h 2>&1 | grep -q -- '-j, --jobs'; then
	read -r w1 w2 < <(wall_j "$cs" diff -q "$B/distinct.data" "$B/defer.data")
	line "diff, 500k distinct against ${n} deferred" "$w1" "$w2" "$(ratio "$w1" "$w2")x"
	read -r w1 w2 < <(wall_j "$cs" diff -q "$real" "$real")
	line "diff, real profile against itself" "$w1" "$w2" "$(ratio "$w1" "$w2")x"
fi
# report counts the samples on a second thread while the first reads them
if "$cs" report -h 2>&1 | grep -q -- '-j, --jobs'; then
	read -r w1 w2 < <(wall_j "$cs" report -q --stdio --no-inline -i "$real")
	line "report --no-inline, real profile" "$w1" "$w2" "$(ratio "$w1" "$w2")x"
fi
# script makes and writes its text on a second thread from what the
# reading thread resolves: the profiles of its rows above
if "$cs" script -h 2>&1 | grep -q -- '-j, --jobs'; then
	for f in real plain defer; do
		p=$real
		[ "$f" = real ] || p=$B/$f.data
		read -r w1 w2 < <(wall_j "$cs" script -q --no-inline -i "$p")
		line "script --no-inline, $f profile" "$w1" "$w2" "$(ratio "$w1" "$w2")x"
	done
	c1=$(best "$cs" script -q --no-inline -j 1 -i "$B/plain.data")
	c2=$(best "$cs" script -q --no-inline -j 2 -i "$B/plain.data")
	line "  the same, plain, CPU seconds (both threads)" "$c1" "$c2" ""
	# the default, inlined calls shown: the second thread names user
	# addresses with them, and cuts stacks at --max-stack
	read -r w1 w2 < <(wall_j "$cs" script -q -i "$real")
	line "script (inlined functions), real profile" "$w1" "$w2" "$(ratio "$w1" "$w2")x"
	# pinned to one CPU, as on a machine whose others are busy: the two
	# threads only take turns, and -j 2 gives its second one up
	if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then
		read -r w1 w2 < <(wall_j taskset -c 0 "$cs" script -q -i "$B/defer.data")
		line "script, defer profile, on one CPU (taskset)" "$w1" "$w2" "$(ratio "$w1" "$w2")x"
	fi
fi
# the session reads the file and runs the order queue on a thread of its
# own when one is left after the output's: the pipeline alone
# (stitch_only ... ahead) and inject, whose work is mostly the pipeline
# pipe_ahead_row FILE WHAT: stitch_only's wall time on one thread and
# reading ahead
pipe_ahead_row() {
	local w1= w2=
	for _ in $(seq "$runs"); do
		/usr/bin/time -f %e -o "$B/wall" build/tools/stitch_only "$1" 5 >/dev/null
		w1=$(min_of "$w1" "$(tail -1 "$B/wall")")
		/usr/bin/time -f %e -o "$B/wall" build/tools/stitch_only "$1" 5 ahead >/dev/null
		w2=$(min_of "$w2" "$(tail -1 "$B/wall")")
	done
	line "pipeline (5 passes), $2, read ahead" "$w1" "$w2" "$(ratio "$w1" "$w2")x"
}
for f in plain defer; do
	pipe_ahead_row "$B/$f.data" "$f profile"
done
# a stream (perf record -o -): the reading thread reads it and puts it in
# order, its records copied, as a pipe's are
build/tools/gen_synth --pipe -n "$n" -o "$B/defer_pipe.data" >/dev/null
pipe_ahead_row "$B/defer_pipe.data" "defer profile, a stream"
rm -f "$B/defer_pipe.data"
if "$cs" inject -h 2>&1 | grep -q -- '-j, --jobs'; then
	for f in plain defer; do
		read -r w1 w2 < <(wall_j "$cs" inject -q -o /dev/null -i "$B/$f.data")
		line "inject, $f profile (records read ahead)" "$w1" "$w2" "$(ratio "$w1" "$w2")x"
	done
fi
# a compressed profile (perf record -z): with -j 2 the payloads are
# decompressed on a thread of their own, ahead of the reading
if "$cs" folded -h 2>&1 | grep -q -- '-j, --jobs'; then
	build/tools/gen_synth -z -n "$n" -o "$B/defer_z.data" >/dev/null
	# the reading thread inflates the payloads itself (stitch_only asks
	# for no inflater)
	pipe_ahead_row "$B/defer_z.data" "defer profile, zstd-compressed"
	for c in script folded; do
		read -r w1 w2 < <(wall_j "$cs" "$c" -q -i "$B/defer_z.data")
		line "$c, deferred profile, zstd-compressed" "$w1" "$w2" "$(ratio "$w1" "$w2")x"
		c1=$(best "$cs" "$c" -q -j 1 -i "$B/defer_z.data")
		c2=$(best "$cs" "$c" -q -j 2 -i "$B/defer_z.data")
		line "  the same, CPU seconds (every thread)" "$c1" "$c2" ""
	done
	rm -f "$B/defer_z.data"
fi
