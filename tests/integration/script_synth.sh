#!/usr/bin/env bash
# script_synth.sh - on a synthetic profile with every fault (gen_synth), the
# merged view prints exactly the generator's stitched stacks, and a sample
# whose user part never came ends in one "[user stack missing: REASON]"
# frame that stackcollapse-perf.pl reads as a frame.
source "$CS_ROOT/tests/lib.sh"

GEN=$CS_TOOLS/gen_synth
if [ ! -x "$GEN" ]; then skip "script on synthetic profiles" "no $GEN"; exit 0; fi

"$GEN" -n 20000 -s 7 -o "$T/s.data" --expect "$T/s.expect" >"$T/s.sum" ||
	{ notok "gen_synth failed"; exit 0; }
if ! $CS script -q --no-inline -i "$T/s.data" >"$T/s.out" 2>"$T/s.err"; then
	notok "script failed: $(tail -1 "$T/s.err")"
	exit 0
fi

# "TID SEC.USEC REASON ADDR,ADDR,..." from the generator's truth ...
awk '{
	sec = int($2 / 1000000000); us = int(($2 - sec * 1000000000) / 1000)
	n = split($5, a, ","); chain = ""
	for (i = 1; i <= n; i++)
		if (a[i] != "-" && substr(a[i], 1, 13) != "fffffffffffff")
			chain = chain (chain == "" ? "" : ",") a[i]
	printf "%s %d.%06d %s %s\n", $1, sec, us, $3 == "kernel-only" ? $4 : "-",
		chain == "" ? "-" : chain
}' "$T/s.expect" | sort >"$T/want"

# ... and from our text
awk 'BEGIN { RS = ""; FS = "\n" }
{
	if (!match($1, /[0-9]+ +(\[[0-9]+\] +)?[0-9]+\.[0-9]+:/)) next
	split(substr($1, RSTART, RLENGTH), h, " ")
	tid = h[1]; t = h[2] ~ /^\[/ ? h[3] : h[2]; sub(/:$/, "", t)
	reason = "-"; chain = ""
	for (i = 2; i <= NF; i++) {
		if ($i ~ /\[user stack missing: [a-z]+\] \(\[unknown\]\)$/) {
			reason = $i; sub(/.*missing: /, "", reason); sub(/\].*/, "", reason)
			continue
		}
		split($i, f, " ")
		chain = chain (chain == "" ? "" : ",") f[1]
	}
	print tid, t, reason, chain == "" ? "-" : chain
}' "$T/s.out" | sort >"$T/got"

same_file "merged view equals the generator's stitched stacks" "$T/want" "$T/got"
check_eq "every kernel-only sample ends in one missing-user frame" \
	"$(grep -c ' kernel-only ' "$T/s.expect")" \
	"$(grep -c '\[user stack missing: [a-z]*\] (\[unknown\])$' "$T/s.out")"

# stackcollapse-perf.pl's frame pattern takes the line as pc, function, module
frame_re='^[[:space:]]*[[:alnum:]_]+[[:space:]]*.+ \([^[:space:]]*\)'
check_eq "missing-user frames parse as stackcollapse-perf.pl frames" 0 \
	"$(grep '\[user stack missing' "$T/s.out" | grep -Evc "$frame_re")"

$CS script -q --no-merge-callchains -i "$T/s.data" >"$T/nm.out"
check_eq "unmerged view: one cookie line per deferred sample" \
	"$(sed -n 's/.*deferred=\([0-9]*\).*/\1/p' "$T/s.sum")" \
	"$(grep -c ' (cookie) (\[unknown\])$' "$T/nm.out")"
