#!/usr/bin/env bash
# jobs_tsan.sh - the threaded paths under ThreadSanitizer (make tsan): the
# thread utilities' unit tests, and every command that takes -j run with
# -j 2 on profiles that reach each thread (report's aggregation thread,
# its sort and table workers; script's formatting thread; the zstd
# inflater; the workers that load symbols ahead of their first use, on a
# first run), printing what the ASan build prints with -j 1. A data race
# or a lock taken in the wrong order makes the run exit 66.
source "$CS_ROOT/tests/lib.sh"

TSN=$CS_ROOT/build/tsan
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
if [ ! -x "$TSN/callstitch" ]; then
	notok "the ThreadSanitizer build exists (make tsan)"
	exit 0
fi

for t in "$TSN"/tests/test_*; do
	if "$t" >"$T/unit.log" 2>&1; then
		ok "$(basename "$t") under ThreadSanitizer"
	else
		notok "$(basename "$t") under ThreadSanitizer"
		grep -E 'WARNING|FAILED|#[0-9] ' "$T/unit.log" | head -12 | sed 's/^/#   /'
	fi
done

D=linux-7.3.4
KALLSYMS=$(fixture $D/kallsyms)
SYMFS=$T/symfs
mkdir -p "$SYMFS/opt/fixt" && cp "$FIXTURES/$D/bin/workload" "$SYMFS/opt/fixt/"
"$CS_TOOLS/gen_synth" -n 5000 -o "$T/defer.data" >/dev/null
"$CS_TOOLS/gen_synth" --no-defer -n 5000 -s 7 -z -o "$T/plain-z.data" >/dev/null

for c in report script folded flame pprof; do
	"$CS" "$c" -h 2>&1 | grep -q -- '-j, --jobs' || continue
	for p in "$FIXTURES/$D/syswide-defer.data" "$T/defer.data" "$T/plain-z.data"; do
		args=(-q -i "$p" --kallsyms "$KALLSYMS" --symfs "$SYMFS")
		[ "$c" = flame ] && args+=(-o -)
		"$CS" "$c" -j 1 "${args[@]}" >"$T/one" 2>/dev/null
		rc=0
		"$TSN/callstitch" "$c" -j 2 "${args[@]}" >"$T/two" 2>"$T/err" || rc=$?
		what="$c -j 2 on $(basename "$p") under ThreadSanitizer"
		if [ "$rc" != 0 ]; then
			notok "$what (exit $rc)"
			grep -E 'WARNING|#[0-9] ' "$T/err" | head -12 | sed 's/^/#   /'
		else
			same_file "$what prints what -j 1 prints" "$T/one" "$T/two"
		fi
	done
done

# symbols loaded ahead on worker threads (symbols_ahead.sh): first runs,
# the symbol cache empty, of a recording made here - the kernel's list,
# libc's and the workload's tables and DWARF, the cache writes
PERF=${PERF:-/usr/bin/perf}
W=$CS_WORKLOADS/nofp/dwarfmix
if [ -x "$W" ] && "$PERF" record -q -N -e cpu-clock -F 1000 --call-graph dwarf \
	-o "$T/dwarf.data" -- "$W" 1 >/dev/null 2>&1; then
	for c in "script" "script --no-inline" "report --stdio"; do
		# shellcheck disable=SC2086
		XDG_CACHE_HOME=$(mktemp -d "$T/cache.XXXXXX") "$CS" $c -q -j 1 \
			-i "$T/dwarf.data" >"$T/one" 2>/dev/null
		rc=0
		# shellcheck disable=SC2086
		XDG_CACHE_HOME=$(mktemp -d "$T/cache.XXXXXX") "$TSN/callstitch" $c \
			-q -j 2 -i "$T/dwarf.data" >"$T/two" 2>"$T/err" || rc=$?
		what="$c -j 2, a first run (symbols loaded ahead), under ThreadSanitizer"
		if [ "$rc" != 0 ]; then
			notok "$what (exit $rc)"
			grep -E 'WARNING|#[0-9] ' "$T/err" | head -12 | sed 's/^/#   /'
		else
			same_file "$what prints what -j 1 prints" "$T/one" "$T/two"
		fi
	done
else
	skip "symbols loaded ahead under ThreadSanitizer" "perf record --call-graph dwarf failed"
fi
