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
fixture_symfs "$SYMFS"
"$CS_TOOLS/gen_synth" -n 5000 -o "$T/defer.data" >/dev/null
"$CS_TOOLS/gen_synth" --no-defer -n 5000 -s 7 -z -o "$T/plain-z.data" >/dev/null
"$CS_TOOLS/gen_synth" -n 5000 -s 5 -z -o "$T/defer-z.data" >/dev/null
"$CS_TOOLS/gen_synth" -n 5000 -s 9 --pipe -o "$T/defer-pipe.data" >/dev/null

# verdict WHAT RC: a ThreadSanitizer run that exited RC wrote $T/two, to
# be what the ASan build wrote to $T/one with one thread
verdict() {
	if [ "$2" != 0 ]; then
		notok "$1 (exit $2)"
		grep -E 'WARNING|#[0-9] ' "$T/err" | head -12 | sed 's/^/#   /'
	else
		same_file "$1 writes what -j 1 writes" "$T/one" "$T/two"
	fi
}

for c in report script folded flame pprof speedscope; do
	"$CS" "$c" -h 2>&1 | grep -q -- '-j, --jobs' || continue
	for p in "$FIXTURES/$D/syswide-defer.data" "$T/defer.data" "$T/plain-z.data"; do
		args=(-q -i "$p" --kallsyms "$KALLSYMS" --symfs "$SYMFS")
		case $c in flame|pprof|speedscope) args+=(-o -) ;; esac
		"$CS" "$c" -j 1 "${args[@]}" >"$T/one" 2>/dev/null
		rc=0
		"$TSN/callstitch" "$c" -j 2 "${args[@]}" >"$T/two" 2>"$T/err" || rc=$?
		verdict "$c -j 2 on $(basename "$p") under ThreadSanitizer" "$rc"
	done
done

# the records read ahead on a thread of their own: with a core left over
# after the output's threads (report 3; script 3, beside its formatting
# thread and its writer), and inject's -j 2; also through compressed
# payloads (the reading thread inflates, or takes what the inflater
# inflated) and from a stream (pipe mode: the reading thread reads it)
for run in "report -j 3" "script -j 3" "folded -j 3" "inject -j 2" "pprof -j 3" \
	"speedscope -j 3"; do
	read -r c j n <<<"$run"
	for p in "$FIXTURES/$D/syswide-defer.data" "$T/defer.data" \
		"$T/defer-z.data" "$T/defer-pipe.data"; do
		args=(-q -i "$p" --kallsyms "$KALLSYMS" --symfs "$SYMFS")
		case $c in pprof|speedscope) args+=(-o -) ;; esac
		rc=0
		if [ "$c" = inject ]; then
			"$CS" inject -j 1 -q -i "$p" -o "$T/one" 2>/dev/null
			"$TSN/callstitch" inject "$j" "$n" -q -i "$p" -o "$T/two" 2>"$T/err" || rc=$?
		else
			"$CS" "$c" -j 1 "${args[@]}" >"$T/one" 2>/dev/null
			"$TSN/callstitch" "$c" "$j" "$n" "${args[@]}" >"$T/two" 2>"$T/err" || rc=$?
		fi
		verdict "$c $j $n (reading ahead) on $(basename "$p") under ThreadSanitizer" "$rc"
	done
done

# a stream from a pipe, read ahead: the reading thread waits on the pipe
# for the next header before it reads on
for c in "script -j 3" "inject -j 2"; do
	read -r c j n <<<"$c"
	out=(-o "$T/two")
	[ "$c" = script ] && out=()
	"$CS" "$c" -j 1 -q -i - "${out[@]/two/one}" <"$T/defer-pipe.data" >"$T/one.txt" 2>/dev/null
	rc=0
	cat "$T/defer-pipe.data" | "$TSN/callstitch" "$c" "$j" "$n" -q -i - "${out[@]}" \
		>"$T/two.txt" 2>"$T/err" || rc=$?
	if [ "$c" = script ]; then
		mv "$T/one.txt" "$T/one"
		mv "$T/two.txt" "$T/two"
	fi
	verdict "$c $j $n (reading ahead) from a pipe under ThreadSanitizer" "$rc"
done

# pprof with its inlined lines, and pprof and speedscope filtered: the
# counting thread takes fewer samples than the reading thread reads
for run in "pprof --inline" "pprof --tid 80" "speedscope --no-inline" \
	"speedscope --pid 80"; do
	p=$FIXTURES/$D/syswide-defer.data
	args=(-q -i "$p" --kallsyms "$KALLSYMS" --symfs "$SYMFS" -o -)
	# shellcheck disable=SC2086
	"$CS" $run -j 1 "${args[@]}" >"$T/one" 2>/dev/null
	rc=0
	# shellcheck disable=SC2086
	"$TSN/callstitch" $run -j 2 "${args[@]}" >"$T/two" 2>"$T/err" || rc=$?
	verdict "$run -j 2 under ThreadSanitizer" "$rc"
done

# diff reads OLD and NEW at once (-j 2: a thread each; -j 3: OLD's reads
# ahead too) and sorts and formats a table of 40k lines in parts
"$CS_TOOLS/gen_synth" --no-defer -n 40000 -s 9 -o "$T/wide.data" >/dev/null
for pair in "$FIXTURES/$D/syswide-defer.data $T/defer.data" "$T/wide.data $T/plain-z.data"; do
	for j in 2 3; do
		# shellcheck disable=SC2086
		"$CS" diff -j 1 --kallsyms "$KALLSYMS" --symfs "$SYMFS" $pair \
			>"$T/one" 2>/dev/null
		rc=0
		# shellcheck disable=SC2086
		"$TSN/callstitch" diff -j "$j" --kallsyms "$KALLSYMS" --symfs "$SYMFS" \
			$pair >"$T/two" 2>"$T/err" || rc=$?
		verdict "diff -j $j on $(basename "${pair% *}") and $(basename "${pair#* }") under ThreadSanitizer" "$rc"
	done
done
check "... a table of more than 32k lines" [ "$(wc -l <"$T/one")" -gt 32768 ]

# script names addresses on its formatting thread, to which the symbol
# tables belong from then on (with inlined calls: user addresses, and
# their DWARF, opened on the reading thread; kernel addresses stay
# there); with --stats the session resolves them too, on the reading
# thread, and the reading thread names them all
for p in "$FIXTURES/$D/syswide-defer.data" "$T/defer.data"; do
	for run in "-j 2 --no-inline" "-j 3 --no-inline" "-j 2 --stats --no-inline" \
		   "-j 2 --max-stack 3" "-j 2 --stats"; do
		args=(-q -i "$p" --kallsyms "$KALLSYMS" --symfs "$SYMFS")
		# shellcheck disable=SC2086
		"$CS" script ${run/-j [23]/-j 1} "${args[@]}" >"$T/one" 2>/dev/null
		rc=0
		# shellcheck disable=SC2086
		"$TSN/callstitch" script $run "${args[@]}" >"$T/two" 2>"$T/err" || rc=$?
		verdict "script $run on $(basename "$p") under ThreadSanitizer" "$rc"
	done
done

# on one CPU script gives its formatting thread up and takes over the
# line cache it made (script_jobs_one_cpu.sh)
if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then
	for v in "" "--no-inline"; do
		args=(-q -i "$T/defer.data" --kallsyms "$KALLSYMS" --symfs "$SYMFS")
		# shellcheck disable=SC2086
		"$CS" script -j 1 $v "${args[@]}" >"$T/one" 2>/dev/null
		rc=0
		# shellcheck disable=SC2086
		taskset -c 0 "$TSN/callstitch" script -j 2 $v "${args[@]}" >"$T/two" \
			2>"$T/err" || rc=$?
		verdict "script -j 2 $v on one CPU under ThreadSanitizer" "$rc"
	done
fi

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
		verdict "$c -j 2, a first run (symbols loaded ahead), under ThreadSanitizer" "$rc"
	done
	# diff's two sessions at once, each loading the same binaries and
	# writing their cache files
	XDG_CACHE_HOME=$(mktemp -d "$T/cache.XXXXXX") "$CS" diff -q -j 1 -s dso,sym \
		"$T/dwarf.data" "$T/dwarf.data" >"$T/one" 2>/dev/null
	rc=0
	XDG_CACHE_HOME=$(mktemp -d "$T/cache.XXXXXX") "$TSN/callstitch" diff -q -j 2 \
		-s dso,sym "$T/dwarf.data" "$T/dwarf.data" >"$T/two" 2>"$T/err" || rc=$?
	verdict "diff -j 2 of one recording, a first run, under ThreadSanitizer" "$rc"
else
	skip "symbols loaded ahead under ThreadSanitizer" "perf record --call-graph dwarf failed"
fi
