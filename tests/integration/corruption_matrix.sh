#!/usr/bin/env bash
# corruption_matrix.sh - every real-kernel fixture, a synthetic deferred
# profile, a stream and a zstd profile, damaged every way the matrix knows
# (tests/tools/corrupt_matrix.c: cuts at every record boundary and every
# 7th byte of the first 64 KiB, bit flips in the header, attrs, feature
# table and record sizes). Each case ends within 10 s under ASan/UBSan
# with one line of error (naming the offset, earlier samples intact), a
# one-line warning beside the clean run's samples, or the clean run's
# samples. The counts are printed.
source "$CS_ROOT/tests/lib.sh"

M=$CS_TOOLS/corrupt_matrix
G=$CS_TOOLS/gen_synth
"$G" -n 2000 -s 11 -o "$T/synth.data" >/dev/null &&
"$G" -n 400 -s 12 --pipe -o "$T/stream.data" >/dev/null &&
"$G" -n 800 -s 13 -z -o "$T/zstd.data" >/dev/null || notok "gen_synth makes the inputs"

cases=0 errors=0 warnings=0 clean=0
for f in "$FIXTURES"/linux-7.3.4/*.data "$T/synth.data" "$T/stream.data" "$T/zstd.data"; do
	name=$(basename "$f")
	"$M" --flip-bytes 65536 "$f" >"$T/$name.out" 2>&1
	rc=$?
	last=$(tail -1 "$T/$name.out")
	if [ $rc -eq 0 ]; then
		ok "$last"
	else
		notok "$name: every case ends as the matrix allows (exit $rc)"
		grep -E 'BROKEN|runtime error|Sanitizer|corrupt_matrix:' "$T/$name.out" | head -10 | sed 's/^/#   /'
	fi
	grep '^  ' "$T/$name.out" | sed 's/^/# /'
	read -r c e w k <<<"$(echo "$last" | sed -n 's/.*: \([0-9]*\) cases: \([0-9]*\) errors, \([0-9]*\) warnings, \([0-9]*\) clean.*/\1 \2 \3 \4/p')"
	cases=$((cases + ${c:-0})) errors=$((errors + ${e:-0}))
	warnings=$((warnings + ${w:-0})) clean=$((clean + ${k:-0}))
done
echo "# corruption matrix: $cases cases tried: $errors errors, $warnings warnings, $clean clean"
check "corruption matrix: $cases cases tried: $errors errors, $warnings warnings, $clean clean" \
	[ "$cases" -gt 100000 ]
