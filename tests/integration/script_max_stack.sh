#!/usr/bin/env bash
# script_max_stack.sh - --max-stack as perf 6.1 applies it. On an ordinary
# callchain (-g) it counts the frames of the whole chain; a sample unwound
# from its stack copy (--call-graph dwarf) has two chains, the kernel's
# and the unwound user part, and perf takes up to N frames of each (127
# each by default). Compared per sample with perf 6.1's own script on
# recordings of a 200-deep recursion.
source "$CS_ROOT/tests/lib.sh"

PERF=/usr/bin/perf
W=$CS_WORKLOADS/deepstack
if [ ! -x "$PERF" ] || ! "$PERF" version >/dev/null 2>&1; then
	skip "--max-stack against perf" "no working $PERF"; exit 0
fi
if [ ! -x "$W" ]; then skip "--max-stack against perf" "no $W (make workloads)"; exit 0; fi

# "KERNEL USER" frame counts, one line per sample. perf 6.1 ends a user
# stack its unwinder could not finish with a ffffffffffffffff frame that
# we do not print: not counted.
counts() {
	awk '/^$/ { print k + 0, u + 0; k = u = 0; next }
	     /^\t *ffffffffffffffff \[unknown\] / { next }
	     /^\t *[0-9a-f]+ / { if ($NF ~ /kernel/) k++; else u++ }' "$1"
}

# same NAME DATA [--max-stack N]: our counts equal perf's, sample by sample
same() {
	local name=$1 data=$2
	shift 2
	"$PERF" script --no-inline "$@" -i "$data" >"$T/$name.perf" 2>/dev/null
	"$CS" script -q --no-inline "$@" -i "$data" >"$T/$name.ours" 2>"$T/$name.err"
	counts "$T/$name.perf" >"$T/$name.perf.n"
	counts "$T/$name.ours" >"$T/$name.ours.n"
	if [ -s "$T/$name.perf.n" ] && cmp -s "$T/$name.perf.n" "$T/$name.ours.n"; then
		ok "$name: as many kernel and user frames per sample as perf 6.1 ($(wc -l <"$T/$name.ours.n") samples)"
	else
		notok "$name: frames per sample differ from perf 6.1's"
		diff "$T/$name.perf.n" "$T/$name.ours.n" | head -5 | sed 's/^/#   /'
	fi
}

cd "$T"
# 200 levels of recursion: a copy of 32 KiB holds more than 127 frames
if ! "$PERF" record -q -e cpu-clock -F 500 --call-graph dwarf,32768 -o dwarf.data \
	-- "$W" 0.6 2 200 >rec.log 2>&1; then
	skip "--max-stack against perf" "perf record --call-graph dwarf fails: $(tail -1 rec.log)"
	exit 0
fi
same dwarf-default dwarf.data
check "dwarf: by default a deep user part stops at 127 frames" \
	grep -q '^0 127$' dwarf-default.ours.n
check "dwarf: samples in the kernel have both parts" \
	awk '$1 > 0 && $2 > 0 { f = 1 } END { exit !f }' dwarf-default.ours.n
same dwarf-4 dwarf.data --max-stack 4
check "dwarf --max-stack 4: 4 kernel frames and the user part beside them" \
	awk '$1 == 4 && $2 > 0 { f = 1 } END { exit !f }' dwarf-4.ours.n
check "dwarf --max-stack 4: no part longer" \
	awk '$1 > 4 || $2 > 4 { exit 1 }' dwarf-4.ours.n
same dwarf-1 dwarf.data --max-stack 1

if ! "$PERF" record -q -e cpu-clock -F 500 -g -o fp.data -- "$W" 0.6 2 200 >rec.log 2>&1; then
	skip "--max-stack against perf, -g" "perf record -g fails: $(tail -1 rec.log)"
	exit 0
fi
same fp-default fp.data
same fp-4 fp.data --max-stack 4
# a sample is cut to 4 frames, or keeps all it has when it has fewer (a
# sample taken early in the process may be shallow)
check "-g --max-stack 4: the whole chain is 4 frames, or all of a shorter one" \
	awk 'NR == FNR { all[FNR] = $1 + $2; next }
	     { want = all[FNR] < 4 ? all[FNR] : 4; if ($1 + $2 != want) exit 1 }
	     END { exit FNR == 0 }' fp-default.ours.n fp-4.ours.n
