#!/usr/bin/env bash
# jobs_tsan.sh - the threaded paths under ThreadSanitizer (make tsan): the
# thread utilities' unit tests, and every command that takes -j run with
# -j 2 on profiles that reach each thread (report's aggregation thread,
# its sort and table workers; script's formatting thread; the zstd
# inflater),
# printing what the ASan build prints with -j 1. A data race or a lock
# taken in the wrong order makes the run exit 66.
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

# the records read ahead on a thread of their own: with a core left over
# after the output's threads (report 3, script 4), and inject's -j 2
for run in "report -j 3" "script -j 4" "folded -j 3" "inject -j 2"; do
	read -r c j n <<<"$run"
	for p in "$FIXTURES/$D/syswide-defer.data" "$T/defer.data"; do
		args=(-q -i "$p" --kallsyms "$KALLSYMS" --symfs "$SYMFS")
		if [ "$c" = inject ]; then
			"$CS" inject -j 1 -q -i "$p" -o "$T/one" 2>/dev/null
		else
			"$CS" "$c" -j 1 "${args[@]}" >"$T/one" 2>/dev/null
		fi
		rc=0
		if [ "$c" = inject ]; then
			"$TSN/callstitch" inject "$j" "$n" -q -i "$p" -o "$T/two" 2>"$T/err" || rc=$?
		else
			"$TSN/callstitch" "$c" "$j" "$n" "${args[@]}" >"$T/two" 2>"$T/err" || rc=$?
		fi
		what="$c $j $n (reading ahead) on $(basename "$p") under ThreadSanitizer"
		if [ "$rc" != 0 ]; then
			notok "$what (exit $rc)"
			grep -E 'WARNING|#[0-9] ' "$T/err" | head -12 | sed 's/^/#   /'
		else
			same_file "$what writes what -j 1 writes" "$T/one" "$T/two"
		fi
	done
done
