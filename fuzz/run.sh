#!/usr/bin/env bash
# fuzz/run.sh SECONDS [HARNESS...] - builds the libFuzzer harnesses of
# fuzz/ (make fuzzers) and runs each for SECONDS, one after the other, on
# its corpus: build/fuzz/corpus/HARNESS (what earlier runs found; kept)
# seeded from fuzz/corpus/HARNESS. Prints one line per harness: runs,
# coverage, corpus size, and the verdict. Exits 1 if a harness crashed,
# hung (-timeout) or blew its memory limit (the input is saved under
# build/fuzz/artifacts/HARNESS/: fix the bug, then add the input to
# tests/fuzz-regressions/HARNESS/ so the suite replays it), and 77 if
# clang cannot build a fuzzer here (no clang or no fuzzer runtime).
#
# Environment: FUZZ_CC (default clang-14), FUZZ_NICE (default 10: the
# machine is shared), FUZZ_ARGS (more libFuzzer flags).
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:?usage: fuzz/run.sh SECONDS [HARNESS...]}
shift
FUZZ_CC=${FUZZ_CC:-clang-14}
nice=${FUZZ_NICE:-10}
out=build/fuzz

probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' >"$probe/p.c"
if ! "$FUZZ_CC" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" 2>"$probe/err"; then
	echo "fuzz: SKIP: $FUZZ_CC cannot link -fsanitize=fuzzer here" \
	     "($(head -1 "$probe/err" | cut -c1-120)); scripts/setup.sh --test" \
	     "installs clang-14 and its fuzzer runtime (libclang-rt-14-dev)"
	exit 77
fi
make -s -j"$(nproc)" fuzzers FUZZ_CC="$FUZZ_CC" >"$probe/build.log" 2>&1 || {
	cat "$probe/build.log" >&2
	echo "fuzz: the harnesses do not build" >&2
	exit 1
}

harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] &&
	for f in fuzz/fuzz_*.c; do harnesses+=("$(basename "$f" .c | sed 's/^fuzz_//')"); done

rc=0
for h in "${harnesses[@]}"; do
	bin=$out/fuzz_$h
	[ -x "$bin" ] || { echo "fuzz: no harness $h" >&2; rc=1; continue; }
	work=$out/corpus/$h arts=$out/artifacts/$h log=$out/log/$h.log
	mkdir -p "$work" "$arts" "$(dirname "$log")"
	case $h in flame|pprof) maxlen=65536 ;; *) maxlen=131072 ;; esac
	before=$(ls "$arts" | wc -l)
	start=$SECONDS
	# shellcheck disable=SC2086
	nice -n "$nice" "$bin" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=$maxlen \
		-dict=fuzz/perf.dict -artifact_prefix="$arts/" \
		-print_final_stats=1 ${FUZZ_ARGS:-} \
		"$work" "fuzz/corpus/$h" >"$log" 2>&1
	status=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
	corpus=$(ls "$work" | wc -l)
	new=$(( $(ls "$arts" | wc -l) - before ))
	verdict="no crash, hang or leak"
	if [ "$status" -ne 0 ] || [ "$new" -gt 0 ]; then
		verdict="FAILED (exit $status): $(grep -m1 -E '^==[0-9]+==ERROR|^SUMMARY|ALARM|out-of-memory|runtime error|deadly signal' "$log" | cut -c1-160); input in $arts; log $log"
		rc=1
	fi
	printf 'fuzz %-7s %9s runs in %4d s, %s, corpus %d: %s\n' "$h" "${runs:-?}" \
		$((SECONDS - start)) "${cov:-cov ?}" "$corpus" "$verdict"
done
exit $rc
