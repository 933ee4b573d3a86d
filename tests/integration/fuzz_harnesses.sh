#!/usr/bin/env bash
# fuzz_harnesses.sh - the fuzz harnesses of fuzz/ without libFuzzer: each
# replays its seed corpus and every input that ever crashed, hung or blew
# memory (tests/fuzz-regressions/HARNESS/), under ASan and UBSan, within
# 10 s an input. Then, in CI (CI=true) or when CS_FUZZ_SECONDS is set,
# libFuzzer itself runs every harness for a bounded time (make fuzz).
source "$CS_ROOT/tests/lib.sh"

REPLAY=$CS_ROOT/build/asan/fuzz
REG=$CS_ROOT/tests/fuzz-regressions

for src in "$CS_ROOT"/fuzz/fuzz_*.c; do
	h=$(basename "$src" .c | sed 's/^fuzz_//')
	bin=$REPLAY/replay_fuzz_$h
	[ -x "$bin" ] || { notok "$h: replay binary $bin built"; continue; }
	n=0
	fail=
	for f in "$CS_ROOT/fuzz/corpus/$h"/* "$REG/$h"/*; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		timeout 10 "$bin" "$f" >/dev/null 2>"$T/err"
		rc=$?
		if [ $rc -ne 0 ]; then
			[ $rc -eq 124 ] && echo "# $f: still running after 10 s" >>"$T/err"
			fail="$f (exit $rc)"
			sed 's/^/#   /' "$T/err" | grep -v '^#   *#[0-9]' | head -8
			break
		fi
	done
	if [ -n "$fail" ]; then notok "$h: replays its corpus and regressions: $fail"
	elif [ $n -eq 0 ]; then notok "$h: has a seed corpus"
	else ok "$h: replays $n inputs (seeds and regressions), no sanitizer report"; fi
done

# every regression belongs to a harness that exists
for d in "$REG"/*/; do
	[ -d "$d" ] || continue
	h=$(basename "$d")
	check "regressions of '$h' have a harness" test -f "$CS_ROOT/fuzz/fuzz_$h.c"
done

# libFuzzer for a bounded time: CI runs it; a developer asks for it
secs=${CS_FUZZ_SECONDS:-}
if [ -z "$secs" ] && [ "${CI:-}" = true ]; then secs=30; fi
if [ -z "$secs" ]; then
	skip "libFuzzer run of every harness" "runs in CI (CI=true) or with CS_FUZZ_SECONDS=N"
	exit 0
fi
(cd "$CS_ROOT" && FUZZ_NICE=${FUZZ_NICE:-0} fuzz/run.sh "$secs") >"$T/fuzz.log" 2>&1
rc=$?
sed 's/^/# /' "$T/fuzz.log" | grep -v '^# clang\|^# ar ' | tail -12
case $rc in
0)  ok "libFuzzer: every harness ran $secs s without a crash, hang or leak" ;;
77) skip "libFuzzer run of every harness" "$(grep -m1 SKIP "$T/fuzz.log" | sed 's/^fuzz: SKIP: //')" ;;
*)  notok "libFuzzer: every harness ran $secs s without a crash, hang or leak" ;;
esac
