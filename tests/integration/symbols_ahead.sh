#!/usr/bin/env bash
# symbols_ahead.sh - with -j 2, the symbols of the binaries a profile's
# header lists (and the kernel's, and their DWARF for inlined calls) are
# loaded on worker threads ahead of their first use (docs/symbols.md).
# A first run (empty symbol cache) at -j 2 prints what -j 1 prints, on
# stdout and stderr (warnings, the summary), and leaves the same cache
# files; a binary gone or replaced since the recording is reported the
# same; the run after it reads the cache the same.
source "$CS_ROOT/tests/lib.sh"

PERF=${PERF:-/usr/bin/perf}
W=$CS_WORKLOADS/nofp/dwarfmix
if [ ! -x "$PERF" ] || ! "$PERF" version >/dev/null 2>&1; then
	skip "symbols loaded ahead" "no perf"; exit 0
fi
if [ ! -x "$W" ]; then skip "symbols loaded ahead" "no $W (make workloads)"; exit 0; fi

# the workload runs as three copies of itself, recorded from where they
# were: one stays, one goes, one is replaced by another build
mkdir -p "$T/bin"
cp "$W" "$T/bin/stays"; cp "$W" "$T/bin/goes"; cp "$W" "$T/bin/replaced"
run3='"$1/stays" 1 & "$1/goes" 1 & "$1/replaced" 1 & wait'
profiles=()
# -N: perf's build-id cache would keep the copies that go
if "$PERF" record -q -N -g -e cpu-clock -F 2000 -a -o "$T/syswide.data" \
	-- bash -c "$run3" _ "$T/bin" >"$T/rec.log" 2>&1; then
	profiles+=("$T/syswide.data")
else
	echo "# perf record -a failed: $(tail -1 "$T/rec.log")"
fi
if "$PERF" record -q -N -e cpu-clock -F 1000 --call-graph dwarf -o "$T/dwarf.data" \
	-- bash -c "$run3" _ "$T/bin" >"$T/rec.log" 2>&1; then
	profiles+=("$T/dwarf.data")
else
	echo "# perf record --call-graph dwarf failed: $(tail -1 "$T/rec.log")"
fi
if [ "${#profiles[@]}" = 0 ]; then
	skip "symbols loaded ahead" "perf record failed"; exit 0
fi
rm "$T/bin/goes"
cp "$CS_WORKLOADS/deepstack" "$T/bin/replaced"
# perf's build-id cache (~/.debug) may hold the workload by its build id,
# from another test: the reading runs get a home of their own
mkdir -p "$T/home"
export HOME=$T/home

for p in "${profiles[@]}"; do
	check "$(basename "$p")'s header lists the recorded binaries" \
		grep -q "$T/bin/stays" <("$PERF" buildid-list -i "$p" 2>/dev/null)
done

# "$@" run first with an empty cache at -j J, into $T/J.out, .err and
# .cache (every cache file's name and sum), then again from that cache
# into $T/J.warm
first_run() {
	local j=$1 cache
	shift
	cache=$(mktemp -d "$T/cache.XXXXXX")
	XDG_CACHE_HOME=$cache "$CS" "$@" -j "$j" >"$T/$j.out" 2>"$T/$j.err"
	echo "exit $?" >>"$T/$j.err"
	( cd "$cache" && find . -type f -exec md5sum {} + | sort -k2 ) >"$T/$j.cache"
	XDG_CACHE_HOME=$cache "$CS" "$@" -j "$j" >"$T/$j.warm" 2>&1
	rm -rf "$cache"
}

for p in "${profiles[@]}"; do
	name=$(basename "$p" .data)
	for args in "script" "script --no-inline" "report --stdio" \
		    "report --stdio --no-inline -g caller" "folded" \
		    "flame --no-inline -o -"; do
		# shellcheck disable=SC2086
		first_run 1 $args -i "$p"
		# shellcheck disable=SC2086
		first_run 2 $args -i "$p"
		what="$name: $args, first run at -j 2"
		same_file "$what prints what -j 1 prints" "$T/1.out" "$T/2.out"
		same_file "$what warns and sums up as -j 1 does" "$T/1.err" "$T/2.err"
		same_file "$what leaves the cache -j 1 leaves" "$T/1.cache" "$T/2.cache"
		same_file "$what, then from that cache, as -j 1" "$T/1.warm" "$T/2.warm"
	done
	first_run 2 script --no-inline -i "$p"
	check "$name: the output names the binary that stayed" grep -q "$T/bin/stays" "$T/2.out"
done
p=${profiles[0]}
XDG_CACHE_HOME=$(mktemp -d "$T/cache.XXXXXX") "$CS" script -j 2 -i "$p" \
	>/dev/null 2>"$T/warn"
check "the binary gone and the one replaced are told (-j 2)" \
	grep -q "differ from the recorded build" "$T/warn"

# a filter, -F without the stack, --max-stack: nothing is promised, so
# nothing loads ahead - and the output is -j 1's all the same (what a
# frame past --max-stack must not load, whatever the profile holds:
# script_max_stack_loads.sh)
for args in "report --stdio --comm stays" "script -F comm,tid,time" \
	    "script --max-stack 2" "folded --pid 1" "flame --off-cpu -o -"; do
	# shellcheck disable=SC2086
	first_run 1 $args -i "$p"
	# shellcheck disable=SC2086
	first_run 2 $args -i "$p"
	same_file "$args, first run at -j 2, as at -j 1" "$T/1.out" "$T/2.out"
	same_file "$args: the same cache files" "$T/1.cache" "$T/2.cache"
done

# the real-kernel fixtures: --symfs, whose index the reading thread
# builds (a worker leaves such a lookup to it), and --kallsyms
D=linux-7.3.4
KALLSYMS=$(fixture $D/kallsyms)
SYMFS=$T/symfs
mkdir -p "$SYMFS/elsewhere" && cp "$FIXTURES/$D/bin/workload" "$SYMFS/elsewhere/"
for f in syswide-defer task-defer; do
	first_run 1 script -i "$FIXTURES/$D/$f.data" --kallsyms "$KALLSYMS" --symfs "$SYMFS"
	first_run 2 script -i "$FIXTURES/$D/$f.data" --kallsyms "$KALLSYMS" --symfs "$SYMFS"
	same_file "$f, --symfs by build id and --kallsyms: -j 2 prints -j 1's" \
		"$T/1.out" "$T/2.out"
	same_file "$f: and says what -j 1 says" "$T/1.err" "$T/2.err"
done
