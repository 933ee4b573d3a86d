#!/usr/bin/env bash
# script_jobs_inline.sh - script with inlined functions on two or three
# threads prints what -j 1 prints. There the formatting thread names user
# addresses and looks up their inlined calls, so only it knows how many
# lines an address has: it cuts a stack at --max-stack itself, counting
# the kernel's and the unwound user part's lines apart (a sample unwound
# from its stack copy). The cut must fall inside an address's inlined
# lines for the test to mean anything, and it is checked that it does.
source "$CS_ROOT/tests/lib.sh"
cd "$T"

# a sample whose last frame line is an inlined call's: cut inside an
# address's lines (uncut, an address's own line comes last)
cut_inside() {
	awk '/^$/ { if (last ~ /\(inlined\)$/) n++ } { last = $0 } END { exit !n }' "$1"
}

# same NAME DATA OPTIONS...: -j 2 and -j 3 print -j 1's bytes
same() {
	local name=$1 data=$2 j bad=0
	shift 2
	"$CS" script -q -j 1 "$@" -i "$data" >"$name.one" 2>"$name.err" ||
		{ notok "$name: script -j 1 $* exits 0"; return; }
	for j in 2 3; do
		"$CS" script -q -j "$j" "$@" -i "$data" >"$name.$j" 2>/dev/null || bad=1
		cmp -s "$name.one" "$name.$j" || { bad=1; echo "# -j $j $* differs"; }
	done
	check "$name: -j 2 and -j 3 print what -j 1 prints ($*)" [ "$bad" = 0 ]
}

# ordinary callchains: gen_synth's stacks are in this host's libc, whose
# debug info (libc6-dbg) has the inlined calls
"$CS_TOOLS/gen_synth" --no-defer -n 20000 -s 11 -o plain.data >/dev/null
"$CS_TOOLS/gen_synth" -n 20000 -s 12 -o defer.data >/dev/null
"$CS" script -q -j 1 -i plain.data >plain.all 2>/dev/null
if ! grep -q '(inlined)$' plain.all; then
	skip "script -j with inlined functions" "no inlined calls in libc (libc6-dbg)"
	exit 0
fi
found=0
for n in 2 3 4 5; do
	same "plain-$n" plain.data --max-stack "$n"
	cut_inside "plain-$n.one" && found=1
	same "defer-$n" defer.data --max-stack "$n"
done
check "--max-stack cuts some ordinary stack inside an address's inlined lines" \
	[ "$found" = 1 ]
same "plain-nomerge" defer.data --max-stack 3 --no-merge-callchains
same "plain-fields" plain.data --max-stack 3 -F ip,sym

# unwound stacks: a kernel part and a user part, counted apart
W=$CS_WORKLOADS/nofp/dwarfmix
if [ ! -x "$W" ]; then
	skip "script -j with inlined functions, unwound" "no $W (make workloads)"
	exit 0
fi
if ! "$CS" record -q -e cpu-clock -F 1000 --call-graph dwarf -o dwarf.data \
	-- "$W" 1 >rec.log 2>&1; then
	skip "script -j with inlined functions, unwound" "record failed: $(tail -1 rec.log)"
	exit 0
fi
found=0
for n in "" 1 2 3 4 6; do
	same "dwarf-${n:-all}" dwarf.data ${n:+--max-stack "$n"}
	[ -n "$n" ] && cut_inside "dwarf-$n.one" && found=1
done
check "--max-stack cuts some unwound stack inside an address's inlined lines" \
	[ "$found" = 1 ]
