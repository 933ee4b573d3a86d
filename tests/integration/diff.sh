#!/usr/bin/env bash
# diff.sh - `callstitch diff OLD NEW` against `perf diff` on two recordings
# of tests/workloads/shift, whose hot function moves from spin_a (80% of
# its time) to spin_b: every entry perf 6.1 shows, we show with the same
# baseline and delta (within rounding), with each sort key perf and
# report share. And `flame --diff`: the new profile's shape, coloured by
# the change, checked in headless Chromium (tests/browser/).
source "$CS_ROOT/tests/lib.sh"
cd "$T"
W=$CS_WORKLOADS/shift
PERF=/usr/bin/perf
BROWSER_DIR=$CS_ROOT/tests/browser
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

# entries FILE: "keys|baseline|delta" per entry line of a perf diff table
# (blank columns as "-"), sorted. perf's pid key reads "PID:COMM" where
# ours, as report's, is the number alone. perf 6.1 names libc's PLT
# entries after .rela.plt's order, or not at all ("@plt"), where we name
# them after their GOT slots (docs/outputs.md): a dso's PLT entries are
# one entry here, their weights summed, so that the weight is still
# compared.
entries() {
	awk '/^#/ || !NF { next }
	{
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+:./) sub(/:.*/, "", $i)
		base = "-"; delta = "-"; i = 1
		if ($i ~ /%$/ && $i !~ /^[+-]/) { base = $i; i++ }
		if ($i ~ /^[+-].*%$/) { delta = $i; i++ }
		keys = $i; for (i++; i <= NF; i++) keys = keys " " $i
		if ($NF ~ /@plt$/) {
			sub(/[^ ]*@plt$/, "(PLT)", keys)
			plt[keys] = 1
			if (base != "-") { pb[keys] += base + 0; hb[keys] = 1 }
			if (delta != "-") { pd[keys] += delta + 0; hd[keys] = 1 }
			next
		}
		print keys "|" base "|" delta
	}
	END {
		for (k in plt)
			print k "|" (hb[k] ? sprintf("%.2f%%", pb[k]) : "-") "|" \
				(hd[k] ? sprintf("%+.2f%%", pd[k]) : "-")
	}' "$1" | sort -t'|' -k1,1
}

# same LABEL PERF_OUT OURS: the same entries, values within 0.01 points
same() {
	local bad n
	entries "$2" >"$2.e"
	entries "$3" >"$3.e"
	if ! bad=$(set -o pipefail; join -t'|' -a1 -a2 -e MISSING -o 0,1.2,1.3,2.2,2.3 "$2.e" "$3.e" |
		awk -F'|' 'function v(s) { sub(/%/, "", s); return s + 0 }
		$2 == "MISSING" || $4 == "MISSING" || ($2 == "-") != ($4 == "-") ||
		($3 == "-") != ($5 == "-") ||
		($2 != "-" && (v($2) - v($4) > 0.011 || v($4) - v($2) > 0.011)) ||
		($3 != "-" && (v($3) - v($5) > 0.011 || v($5) - v($3) > 0.011)) { print }'); then
		notok "$1: join failed"
		return
	fi
	n=$(wc -l <"$2.e")
	if [ -z "$bad" ] && [ "$n" -gt 2 ]; then
		ok "$1: every one of perf diff's $n entries, same baseline and delta"
	else
		notok "$1: the entries agree with perf diff"
		printf '%s\n' "$bad" | head -10 | sed 's/^/#   perf|ours: /'
	fi
}

if "$PERF" record -q -e cpu-clock -g -o old.data -- "$W" 1 80 >/dev/null 2>&1 &&
   "$PERF" record -q -e cpu-clock -g -o new.data -- "$W" 1 20 >/dev/null 2>&1; then
	$CS diff -q old.data new.data >ours.txt 2>ours.err
	check "diff OLD NEW reads perf's two recordings" [ $? -eq 0 -a -s ours.txt ]
	"$PERF" diff old.data new.data >perf.txt 2>/dev/null
	same "perf's recordings" perf.txt ours.txt
	check "the hot function moved: spin_a lost, spin_b gained" \
		awk '$NF == "spin_a" && $2 ~ /^-[1-9]/ { a = 1 } $NF == "spin_b" && $2 ~ /^\+[1-9]/ { b = 1 } END { exit !(a && b) }' ours.txt
	for s in sym dso comm,dso,sym pid,sym; do
		$CS diff -q -s "$s" old.data new.data >ours.$s 2>/dev/null
		"$PERF" diff -s "$s" old.data new.data >perf.$s 2>/dev/null
		same "--sort $s" "perf.$s" "ours.$s"
	done
	check "the table is perf's: header columns" \
		grep -q "^# Baseline  Delta Abs  Shared Object  *Symbol" ours.txt
else
	skip "diff against perf diff" "perf record failed here"
fi

# our own recordings, read by perf diff too
$CS record -q -e cpu-clock -g -o cold.data -- "$W" 1 80 &&
	$CS record -q -e cpu-clock -g -o cnew.data -- "$W" 1 20
check "callstitch records the two runs" [ -s cold.data -a -s cnew.data ]
$CS diff -q cold.data cnew.data >cours.txt 2>/dev/null
"$PERF" diff cold.data cnew.data >cperf.txt 2>/dev/null
same "callstitch's recordings" cperf.txt cours.txt

# mistakes
$CS diff -q only-one-missing.data cnew.data >/dev/null 2>err.txt
check_eq "a missing profile is an error" 1 $?
check "... naming it" grep -q "only-one-missing.data" err.txt
$CS diff -q a b c >/dev/null 2>err.txt
check_eq "three profiles are refused" 129 $?
$CS diff -q - - <cnew.data >/dev/null 2>err.txt
check_eq "OLD and NEW both standard input are refused" 129 $?
check "... in one line saying so" grep -q "cannot both be standard input" err.txt
$CS diff -q cold.data cnew.data >/dev/full 2>err.txt
check_eq "a full disk fails diff" 1 $?
check "... naming the output and why" grep -q "standard output: cannot write: No space left on device" err.txt

# bash completion: diff's options and sort keys, flame --diff's profiles
if [ -f /usr/share/bash-completion/bash_completion ]; then
	got=$(bash -c '
		source /usr/share/bash-completion/bash_completion
		source "$1"
		t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		      COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
		      _callstitch; echo "${COMPREPLY[*]}"; }
		t "$2" dif; t "$2" diff --perc; t "$2" diff -s dso,s; t "$2" flame --d
		t "$2" flame --diff cold; t "$2" diff cold.data cn' _ \
		"$CS_ROOT/completion/callstitch.bash" "$CS_REL" 2>/dev/null)
	check_eq "bash completion: diff, its options, its sort keys, flame --diff OLD NEW" \
		"diff
--percent-limit
dso,sym dso,state
--diff
cold.data
cnew.data" "$got"
else
	skip "bash completion of diff" "bash-completion is not installed"
fi

# the differential flame graph
$CS flame -q --diff cold.data cnew.data -o diff.html 2>flame.err
check "flame --diff OLD NEW writes the page" [ $? -eq 0 -a -s diff.html ]
check "... with the baseline on the same paths" grep -q '"base":\[' diff.html
$CS flame -q cnew.data -o x.html 2>/dev/null
check_eq "flame --diff wants two profiles" 129 $?
if [ ! -x "$CHROMIUM" ] || ! command -v node >/dev/null ||
   [ ! -d "$BROWSER_DIR/node_modules/playwright-core" ]; then
	skip "differential flame page in a browser" "no chromium, node or playwright-core (scripts/setup.sh --test)"
	exit 0
fi
# each function's share of the samples whose stack holds it, new and old
share() { awk -v f="$1" '{ n = $NF; t += n } $0 ~ "(^|;)" f "(;| )" { s += n }
	END { printf "%.6f", t ? s / t : 0 }' "$2"; }
$CS folded -q -i cnew.data >new.folded
$CS folded -q -i cold.data >old.folded
cat >spec.json <<EOF
{ "share": { "spin_a": [$(share spin_a new.folded), $(share spin_a old.folded)],
             "spin_b": [$(share spin_b new.folded), $(share spin_b old.folded)],
             "always": [$(share always new.folded), $(share always old.folded)] },
  "grew": ["spin_b"], "shrank": ["spin_a"], "steady": ["always"] }
EOF
CHROMIUM=$CHROMIUM timeout 120 node "$BROWSER_DIR/flame_diff_test.mjs" diff.html spec.json diff.png
rc=$?
[ "$rc" -eq 0 ] || echo "not ok - the differential browser test exited $rc"
exit 0
