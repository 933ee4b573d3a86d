#!/usr/bin/env bash
# tests/run.sh - runs the whole suite and ends with "N passed, N failed".
#
# Unit tests are cmocka binaries (build/asan/tests/*); each case counts.
# Integration tests are tests/integration/*.sh, run with the sanitized
# binary in $CS; each prints TAP-style lines ("ok - what",
# "not ok - what", "ok - what # SKIP why") and each line counts. A script
# that exits non-zero without a "not ok" line, or prints no result at all,
# counts as one failure.
#
#   tests/run.sh [PATTERN]     only tests whose file name matches PATTERN
set -u
cd "$(dirname "$0")/.."
export CS_ROOT=$PWD
export CS=${CS:-$PWD/build/asan/callstitch}
export CS_REL=${CS_REL:-$PWD/build/callstitch}
export CS_TOOLS=${CS_TOOLS:-$PWD/build/asan/tools}
export CS_WORKLOADS=${CS_WORKLOADS:-$PWD/build/workloads}
# a scratch directory of our own is removed as the tests pass (a
# synthetic profile can take a gigabyte); what a failure left is kept
own_tmp=false
if [ -z "${CS_TMP:-}" ]; then
	CS_TMP=$(mktemp -d /tmp/callstitch-tests.XXXXXX) && own_tmp=true
fi
export CS_TMP
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# no test asks a symbol server it did not start itself
unset DEBUGINFOD_URLS
pattern=${1:-}

passed=0 failed=0 skipped=0
failures=()

# each test's line says how long it took; the slowest are listed at the end
now_us() { echo "${EPOCHREALTIME/[.,]/}"; }
since() { local d=$((($(now_us) - $1) / 100000)); echo "$((d / 10)).$((d % 10))"; }
times=()

run_unit() {
	local t=$1 out start took
	start=$(now_us)
	out=$("$t" 2>&1)
	local rc=$?
	local p f
	# a binary may run its cases in several groups: each has its line
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' <<<"$out" |
		awk '{ n += $1 } END { print n + 0 }')
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s).*/\1/p' <<<"$out" |
		awk '{ n += $1 } END { print n + 0 }')
	p=${p:-0} f=${f:-0}
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then f=1; fi	# ran no case
	passed=$((passed + p)); failed=$((failed + f))
	if [ "$f" -ne 0 ]; then
		failures+=("$(basename "$t")")
		printf '%s\n' "$out" | grep -E 'FAILED|ERROR|error|Assert|Sanitizer|runtime error' | head -20
	fi
	took=$(since "$start")
	times+=("$took $(basename "$t")")
	printf '%-40s %3d passed, %d failed  %ss\n' "unit/$(basename "$t")" "$p" "$f" "$took"
}

run_script() {
	local t=$1 log="$CS_TMP/$(basename "$t").log" start took
	start=$(now_us)
	bash "$t" >"$log" 2>&1
	local rc=$?
	local p f s
	p=$(grep -cE '^ok\b' "$log" 2>/dev/null)
	s=$(grep -cE '^ok\b.*# SKIP' "$log" 2>/dev/null)
	f=$(grep -cE '^not ok\b' "$log" 2>/dev/null)
	p=$((${p:-0} - ${s:-0})) s=${s:-0} f=${f:-0}
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "not ok - exited $rc" >>"$log"; fi
	# a script that said nothing (its log gone, a crash before the first
	# check) has not passed
	if [ $((p + s + f)) -eq 0 ]; then f=1; echo "not ok - no result at all" >>"$log"; fi
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	if [ "$f" -ne 0 ]; then
		failures+=("$(basename "$t")")
		grep -E '^not ok|^#' "$log" | head -30
		echo "  (full log: $log)"
	fi
	grep -E '^ok\b.*# SKIP' "$log" | sed 's/^/  /'
	if $own_tmp && [ "$f" -eq 0 ]; then
		rm -rf "$CS_TMP/$(basename "$t" .sh)".*/
	fi
	took=$(since "$start")
	times+=("$took $(basename "$t")")
	printf '%-40s %3d passed, %d failed, %d skipped  %ss\n' "$(basename "$t")" "$p" "$f" "$s" "$took"
}

suite_start=$(now_us)
ran=0
for t in build/asan/tests/test_*; do
	[ -x "$t" ] || continue
	[ -n "$pattern" ] && [[ $t != *$pattern* ]] && continue
	run_unit "$t"
	ran=$((ran + 1))
done
for t in tests/integration/*.sh; do
	[ -f "$t" ] || continue
	[ -n "$pattern" ] && [[ $t != *$pattern* ]] && continue
	run_script "$t"
	ran=$((ran + 1))
done

if [ "$ran" -eq 0 ]; then
	echo "run.sh: no test file's name contains '$pattern'" >&2
else
	echo "took $(since "$suite_start")s; the slowest: $(printf '%s\n' "${times[@]}" |
		sort -rn | head -5 | awk '{ printf "%s%s %ss", (NR > 1 ? ", " : ""), $2, $1 }')"
fi
if [ ${#failures[@]} -ne 0 ]; then
	echo "failed: ${failures[*]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
if $own_tmp && [ "$failed" -eq 0 ]; then
	rm -rf "$CS_TMP"
elif $own_tmp; then
	echo "logs and files of the failures: $CS_TMP"
fi
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
