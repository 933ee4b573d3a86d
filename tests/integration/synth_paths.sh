#!/usr/bin/env bash
# synth_paths.sh - gen_synth --paths N: stacks drawn from N call paths, hot
# ones far more often, kernel frames on symbols of its --kallsyms file. The
# file is the same for the same seed, the stitched output still equals the
# generator's ground truth, the stacks are bounded by the paths, and every
# kernel frame resolves.
source "$CS_ROOT/tests/lib.sh"

GEN=$CS_ROOT/build/tools/gen_synth
[ -x "$GEN" ] || GEN=$CS_TOOLS/gen_synth
CANON=$CS_TOOLS/cs_canon
for x in "$GEN" "$CANON"; do
	if [ ! -x "$x" ]; then skip "gen_synth --paths" "no $x (make check)"; exit 0; fi
done
N=200000
P=300
export LC_ALL=C

gen() { "$GEN" --paths $P -n $N --seed "$1" -o "$T/$2.data" --expect "$T/$2.exp" \
	--kallsyms "$T/$2.kallsyms" >"$T/$2.sum" 2>"$T/gen.err"; }
# the same seed twice, to the same file names (the header holds the
# command line), then another seed
if gen 5 a && mkdir "$T/first" && mv "$T"/a.* "$T/first/" && gen 5 a && gen 6 c; then
	ok "gen_synth --paths $P wrote $N samples three times"
else
	notok "gen_synth --paths"; sed 's/^/#   /' "$T/gen.err" | head -5; exit 0
fi
for x in data exp kallsyms sum; do
	same_file "same seed, same $x" "$T/first/a.$x" "$T/a.$x"
done
rm -rf "$T/first"
if cmp -s "$T/a.exp" "$T/c.exp"; then notok "another seed, other stacks"
else ok "another seed, other stacks"; fi

# the ground truth holds every case of the stitcher, as without --paths
sum=$(cat "$T/a.sum")
for k in stitched late lost superseded exited end original duplicates orphans; do
	v=$(field "$k" "$sum")
	if [ "${v:-0}" -gt 0 ]; then ok "ground truth has $k ($v)"
	else notok "ground truth has $k (${v:-none})"; fi
done
canon_equals_truth "--paths" "$T/a.data" "$T/a.exp" "$sum"

# a chain is the kernel part, the user marker and the user part: each part
# comes from a path (the kernel's cut short by at most two inner frames)
awk '{ n = split($5, a, ","); u = k = ""; user = 0
	for (i = 1; i <= n; i++)
		if (a[i] == "fffffffffffffe00") user = 1
		else if (user) u = u "," a[i]
		else k = k "," a[i]
	if (user) print u >"'"$T/u"'"; if (k != "") print k >"'"$T/k"'" }' "$T/a.exp"
nu=$(sort -u "$T/u" | wc -l)
nk=$(sort -u "$T/k" | wc -l)
check "distinct user stacks: $nu, at most $P" [ "$nu" -le $P ]
check "most paths are drawn: $nu of $P" [ "$nu" -ge $((P / 2)) ]
check "distinct kernel stacks: $nk, at most 3 x $P" [ "$nk" -le $((3 * P)) ]
# Zipf over 300 paths: the hottest is ~16% of the draws, a uniform one 0.3%
top=$(sort "$T/u" | uniq -c | sort -rn | awk 'NR == 1 { print $1 }')
all=$(wc -l <"$T/u")
check "the hottest user stack is drawn far more than its share ($top of $all)" \
	[ $((top * 10)) -ge "$all" ]

# every kernel frame is on a symbol of the kallsyms file
"$CS" script -q -i "$T/a.data" --kallsyms "$T/a.kallsyms" >"$T/script" 2>"$T/script.err"
check_eq "script: every kernel frame resolves" 0 \
	"$(grep -c '\[unknown\] (\[kernel.kallsyms\])' "$T/script")"
check "script: kernel frames are named" grep -q "synth_kfunc_[0-9]*+0x" "$T/script"
rm -f "$T"/[ac].* "$T/want" "$T/got" "$T/script" "$T/u" "$T/k"
