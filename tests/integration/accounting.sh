#!/usr/bin/env bash
# accounting.sh - every sample and every deferred record is counted once:
# on adversarial streams (gen_synth: migrations, late samples, duplicate,
# orphan, lost and missing records, exits, tasks still waiting at the end)
# `script --stats` prints the counts and their sums hold:
#   samples = stitched + stitched late + kernel-only + as recorded
#   kernel-only = the sum by reason
#   deferred records = used + duplicate + orphan
# and they equal what the generator made. The library checks the sums
# itself at the end of every run (cs_stats_mismatch) and fails the run if
# one does not hold.
source "$CS_ROOT/tests/lib.sh"

GEN=$CS_ROOT/build/tools/gen_synth
[ -x "$GEN" ] || GEN=$CS_TOOLS/gen_synth

# stat NAME: a row of the --stats table
stat() { awk -v k="$1" '{ v = $NF; $NF = ""; sub(/^ +/, ""); sub(/ +$/, "") } $0 == k { print v; exit }' "$T/stats"; }
gen() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<" $(cat "$T/gen")"; }

check_run() {
	local what=$1 n=$2
	local s st la ko ori rec used dup orph by
	s=$(stat samples) st=$(stat stitched) la=$(stat "stitched late")
	ko=$(stat kernel-only) ori=$(stat "as recorded")
	rec=$(stat "deferred records") used=$(stat used) dup=$(stat duplicate) orph=$(stat orphan)
	by=$(( $(stat lost) + $(stat superseded) + $(stat exited) + $(stat end) ))
	check_eq "$what: $n samples read" "$n" "$s"
	check_eq "$what: samples = stitched + late + kernel-only + as recorded" \
		"$s" "$((st + la + ko + ori))"
	check_eq "$what: kernel-only = lost + superseded + exited + end" "$ko" "$by"
	check_eq "$what: deferred records = used + duplicate + orphan" \
		"$rec" "$((used + dup + orph))"
	check "$what: --stats says the accounting holds" \
		grep -q '^  accounting: samples = stitched' "$T/stats"
}

# a million samples through a pipe, release build (the sanitized library
# reads the same generator's million in synth_stitch.sh)
N=1000000
"$GEN" -n $N --pipe --cpus 8 --tasks 64 -s 7 -o - 2>"$T/gen" |
	"$CS_REL" script -q --stats -i - >/dev/null 2>"$T/stats"
check_eq "1M-sample stream: script exits 0" "0 0" "${PIPESTATUS[*]}"
check_run "1M-sample stream" $N
for k in stitched "stitched late:late" kernel-only "as recorded:original" \
	 "deferred records:records" "duplicate:duplicates" "orphan:orphans"; do
	check_eq "1M-sample stream: ${k%%:*} as generated" "$(gen "${k##*:}")" "$(stat "${k%%:*}")"
done
check "1M-sample stream: kernel-only, duplicates, orphans and late all occur" \
	[ "$(gen kernel-only)" -gt 0 ] && [ "$(gen duplicates)" -gt 0 ] && \
	[ "$(gen orphans)" -gt 0 ] && [ "$(gen late)" -gt 0 ]

# unmerged: every sample as recorded, every record handed out
"$GEN" -n 100000 --pipe --cpus 4 --tasks 32 -s 8 -o - 2>"$T/gen" |
	"$CS" script -q --stats --no-merge-callchains -i - >/dev/null 2>"$T/stats"
check_eq "100k-sample stream, unmerged, sanitized: exits 0" "0 0" "${PIPESTATUS[*]}"
check_run "100k unmerged" 100000
check_eq "100k unmerged: every sample as recorded" 100000 "$(stat "as recorded")"

# a file of the same kind, sanitized, merged
"$GEN" -n 100000 --cpus 4 --tasks 32 -s 9 -o "$T/f.data" 2>"$T/gen" >"$T/gen"
"$CS" script -q --stats -i "$T/f.data" >/dev/null 2>"$T/stats"
check_eq "100k-sample file, sanitized: exits 0" 0 $?
check_run "100k file" 100000
rm -f "$T/f.data"
