#!/usr/bin/env bash
# synth_formats.sh - one synthetic deferred profile written little- and
# big-endian, as a file and as a stream (read from a file and from stdin),
# zstd-compressed, and all at once: the stitched output is the same, and
# equals the ground truth.
source "$CS_ROOT/tests/lib.sh"

GEN=$CS_ROOT/build/tools/gen_synth
[ -x "$GEN" ] || GEN=$CS_TOOLS/gen_synth
CANON=$CS_TOOLS/cs_canon
for x in "$GEN" "$CANON"; do
	if [ ! -x "$x" ]; then skip "synthetic formats" "no $x (make check)"; exit 0; fi
done
export LC_ALL=C
args=(-n 300000 --cpus 6 --tasks 40 --seed 7)

"$GEN" "${args[@]}" -o "$T/le.data" --expect "$T/exp" >"$T/le.sum"
check_eq "gen_synth: little-endian file" 0 $?
sort "$T/exp" >"$T/want"
"$CANON" -i "$T/le.data" --stats 2>"$T/le.err" | sort >"$T/le.got"
same_file "little-endian file: stitched output equals the ground truth" "$T/want" "$T/le.got"
check_eq "little-endian file: counts" "$(cat "$T/le.sum")" "$(grep '^samples=' "$T/le.err")"

# (the command line is in the file: the same one, byte for byte)
mv "$T/le.data" "$T/le1.data"
"$GEN" "${args[@]}" -o "$T/le.data" --expect "$T/exp" >/dev/null
check "the same seed writes the same file" cmp -s "$T/le.data" "$T/le1.data"
rm -f "$T/le1.data"

for form in "be:--big-endian" "pipe:--pipe" "zstd:-z3" "be-pipe-zstd:--big-endian --pipe -z1"; do
	tag=${form%%:*} opts=${form#*:}
	# shellcheck disable=SC2086
	if ! "$GEN" "${args[@]}" $opts -o "$T/$tag.data" >"$T/$tag.sum" 2>"$T/$tag.gen"; then
		notok "$tag: gen_synth"; sed 's/^/#   /' "$T/$tag.gen" | head -3; continue
	fi
	check_eq "$tag: the generator made the same profile" "$(cat "$T/le.sum")" "$(cat "$T/$tag.sum")"
	if cmp -s "$T/le.data" "$T/$tag.data"; then notok "$tag: the file differs from little-endian"
	else ok "$tag: the file differs from little-endian"; fi
	"$CANON" -i "$T/$tag.data" --stats 2>"$T/$tag.err" | sort >"$T/$tag.got"
	check_eq "$tag: cs_canon exits 0" 0 "${PIPESTATUS[0]}"
	same_file "$tag: same stitched output" "$T/want" "$T/$tag.got"
	check_eq "$tag: same counts" "$(cat "$T/le.sum")" "$(grep '^samples=' "$T/$tag.err")"
	rm -f "$T/$tag.data" "$T/$tag.got"
done

# a stream straight from the generator, read from stdin
# shellcheck disable=SC2094
"$GEN" "${args[@]}" --pipe -z1 --big-endian -o - 2>"$T/stdin.sum" |
	"$CANON" -i - --stats 2>"$T/stdin.err" | sort >"$T/stdin.got"
check_eq "stdin: generator and cs_canon exit 0" "0 0" "${PIPESTATUS[0]} ${PIPESTATUS[1]}"
same_file "stdin (-i -): same stitched output" "$T/want" "$T/stdin.got"
check_eq "stdin: same counts" "$(cat "$T/le.sum")" "$(grep '^samples=' "$T/stdin.err")"

# a truncated big-endian stream is an error with the offset, not a crash
"$GEN" -n 20000 --seed 3 --pipe --big-endian -o "$T/cut.data" >/dev/null
head -c 400000 "$T/cut.data" >"$T/cut2.data"
"$CANON" -i "$T/cut2.data" >/dev/null 2>"$T/cut.err"
rc=$?
if [ $rc -eq 1 ] && grep -q 'offset' "$T/cut.err" && [ "$(wc -l <"$T/cut.err")" -eq 1 ]; then
	ok "truncated stream: one line naming the offset, exit 1"
else
	notok "truncated stream: one line naming the offset, exit 1 (rc $rc)"
	sed 's/^/#   /' "$T/cut.err" | head -3
fi
rm -f "$T"/*.data "$T/want" "$T"/*.got "$T/exp"

# the command line's own statistics add up the same way
"$GEN" -n 50000 --seed 5 -o "$T/cli.data" >"$T/cli.sum"
"$CS" script --stats -i "$T/cli.data" >/dev/null 2>"$T/cli.stats"
check_eq "callstitch script --stats exits 0" 0 $?
sum=$(cat "$T/cli.sum")
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<" $sum"; }
row() { sed -n "s/^ *$1  *\([0-9][0-9]*\)$/\1/p" "$T/cli.stats" | head -1; }
for pair in "samples:samples" "stitched:stitched" "stitched late:late" \
	    "kernel-only:kernel-only" "lost:lost" "superseded:superseded" \
	    "exited:exited" "end:end" "as recorded:original" \
	    "deferred records:records" "duplicate:duplicates" "orphan:orphans" \
	    "lost events:lost-events"; do
	check_eq "script --stats: ${pair%%:*}" "$(field "${pair#*:}")" "$(row "${pair%%:*}")"
done
