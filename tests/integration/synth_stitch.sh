#!/usr/bin/env bash
# synth_stitch.sh - a synthetic profile of a million samples with every
# fault of deferred callchains (migration, long system calls, late samples,
# duplicate, orphan, lost and missing records, exits in the kernel, tasks
# still there at the end): the library's stitched output equals the
# generator's ground truth, line for line, and the counts add up.
source "$CS_ROOT/tests/lib.sh"

# the release generator is faster; what is checked runs sanitized
GEN=$CS_ROOT/build/tools/gen_synth
[ -x "$GEN" ] || GEN=$CS_TOOLS/gen_synth
CANON=$CS_TOOLS/cs_canon
for x in "$GEN" "$CANON"; do
	if [ ! -x "$x" ]; then skip "synthetic stitching" "no $x (make check)"; exit 0; fi
done
N=1000000
export LC_ALL=C

if "$GEN" -n $N --cpus 8 --tasks 64 --seed 42 -o "$T/big.data" \
	--expect "$T/big.exp" >"$T/gen.sum" 2>"$T/gen.err"; then
	ok "gen_synth wrote $N samples"
else
	notok "gen_synth"; sed 's/^/#   /' "$T/gen.err" | head -5; exit 0
fi
check_eq "ground truth has a line per sample" $N "$(wc -l <"$T/big.exp")"

# The ground truth must hold every case, or matching it proves less.
sum=$(cat "$T/gen.sum")
for k in stitched late lost superseded exited end original duplicates orphans lost-events; do
	v=$(field "$k" "$sum")
	if [ "${v:-0}" -gt 0 ]; then ok "ground truth has $k ($v)"
	else notok "ground truth has $k (${v:-none})"; fi
done
# kernel-only is the sum of its reasons; the states add up to the samples
s=$(field samples "$sum") st=$(field stitched "$sum") la=$(field late "$sum")
ko=$(field kernel-only "$sum") orig=$(field original "$sum")
by=$(( $(field lost "$sum") + $(field superseded "$sum") + $(field exited "$sum") + $(field end "$sum") ))
check_eq "generator: kernel-only = lost + superseded + exited + end" "$ko" "$by"
check_eq "generator: states add up to the samples" "$s" "$((st + la + ko + orig))"
for state in stitched late kernel-only original; do
	check_eq "ground truth lines in state $state" "$(field "$state" "$sum")" \
		"$(awk -v s="$state" '$3 == s' "$T/big.exp" | wc -l)"
done

# the file is written the way perf record drains per-CPU buffers: not in
# time order
inv=$("$CANON" --file-order -i "$T/big.data" | awk '$2 < last { n++ } { last = $2 } END { print n + 0 }')
if [ "$inv" -gt 100 ]; then ok "file order is not time order ($inv steps back)"
else notok "file order is not time order ($inv steps back)"; fi

# the sanitized library, through the public API
canon_equals_truth "1M samples" "$T/big.data" "$T/big.exp" "$sum"
check_eq "every sample delivered" $N "$(wc -l <"$T/canon.out")"
check_eq "cs_canon delivered = samples" "delivered=$N" "$(grep '^delivered=' "$T/canon.err")"
# each sample once: no line twice (times are unique)
check_eq "no sample delivered twice" 0 "$(cut -d' ' -f2 "$T/got" | uniq -d | wc -l)"
rm -f "$T/big.data" "$T/big.exp" "$T/canon.out" "$T/got"

# Shaped like real recordings (--short-entries): kernel entries of a
# sample or two, so that a deferred record follows nearly every other
# sample and most records take the deferred record's path
N=200000
if "$GEN" -n $N --short-entries --seed 7 -o "$T/short.data" \
	--expect "$T/short.exp" >"$T/short.sum" 2>"$T/gen.err"; then
	ok "gen_synth --short-entries wrote $N samples"
else
	notok "gen_synth --short-entries"; sed 's/^/#   /' "$T/gen.err" | head -5; exit 0
fi
sum=$(cat "$T/short.sum")
recs=$(field records "$sum")
if [ "$((recs * 100 / (recs + N)))" -ge 30 ]; then
	ok "deferred records are $((recs * 100 / (recs + N)))% of the records"
else
	notok "deferred records are $((recs * 100 / (recs + N)))% of the records (< 30)"
fi
canon_equals_truth "short entries" "$T/short.data" "$T/short.exp" "$sum"
rm -f "$T/short.data" "$T/short.exp" "$T/canon.out" "$T/got"

# A machine of many CPUs: 128, so that a round's merge meets more runs
# than 64 (the merge's scans and its heap), and the events' ids of so
# many CPUs stay apart
N=50000
if "$GEN" -n $N --short-entries --cpus 128 --seed 11 -o "$T/wide.data" \
	--expect "$T/wide.exp" >"$T/wide.sum" 2>"$T/gen.err"; then
	ok "gen_synth --cpus 128 wrote $N samples"
else
	notok "gen_synth --cpus 128"; sed 's/^/#   /' "$T/gen.err" | head -5; exit 0
fi
canon_equals_truth "128 CPUs" "$T/wide.data" "$T/wide.exp" "$(cat "$T/wide.sum")"
rm -f "$T/wide.data" "$T/wide.exp" "$T/canon.out" "$T/got"
