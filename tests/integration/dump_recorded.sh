#!/usr/bin/env bash
# dump_recorded.sh - `callstitch dump` on files recorded here by perf 6.1:
# ordinary callchains (-g), compressed (-z: COMPRESSED records whose
# contents straddle), and a stream (-o -), read from a file and from stdin.
# The record counts must equal what perf itself reads in the same file.
source "$CS_ROOT/tests/lib.sh"

PERF=/usr/bin/perf
W=$CS_WORKLOADS/deepstack
count() { awk -v t="$1" '$1 == t && $2 == "events:" { print $3 }' "$2"; }

if [ ! -x "$PERF" ]; then skip "recorded files" "no $PERF"; exit 0; fi
if [ ! -x "$W" ]; then skip "recorded files" "no workload $W (make workloads)"; exit 0; fi
if ! "$PERF" record -q -e cpu-clock -F 1000 -o "$T/probe.data" -- true >/dev/null 2>"$T/probe.err"; then
	if why=$(perf_broken "$T/probe.err"); then
		skip "recorded files" "perf 6.1 itself fails here: $why"
	else
		skip "recorded files" "perf record cannot run here (perf_event_paranoid?)"
	fi
	exit 0
fi

rec() {		# rec NAME ARGS... : records the workload for 0.4 s
	local name=$1; shift
	"$PERF" record -q -e cpu-clock -F 2000 "$@" -- "$W" 0.4 2 2>"$T/$name.rec.err"
}

rec g -g -o "$T/g.data"
rec z -g -z -o "$T/z.data"
rec pipe -g -o - >"$T/pipe.data"

for name in g z pipe; do
	f=$T/$name.data
	if why=$(perf_broken "$T/$name.rec.err"); then
		skip "$name: perf record wrote $f" "perf 6.1 itself fails here: $why"
		continue
	fi
	if [ ! -s "$f" ]; then
		notok "$name: perf record wrote $f"; sed 's/^/#   /' "$T/$name.rec.err" | head -3
		continue
	fi
	if "$CS" dump -i "$f" >"$T/$name.dump" 2>"$T/$name.err"; then
		ok "$name: dump exits 0"
	else
		notok "$name: dump exits 0"; sed 's/^/#   /' "$T/$name.err" | head -3
		continue
	fi
	n=$(count SAMPLE "$T/$name.dump")
	"$PERF" report -D -i "$f" >"$T/$name.perf" 2>"$T/$name.perf.err"
	if why=$(perf_broken "$T/$name.perf.err"); then
		skip "$name: as many samples as perf reads" "perf 6.1 itself fails here: $why"
	else
		check_eq "$name: as many samples as perf reads" \
			"$(grep -c 'PERF_RECORD_SAMPLE(' "$T/$name.perf")" "$n"
	fi
	if [ "${n:-0}" -gt 0 ]; then ok "$name: has samples ($n)"; else notok "$name: has samples"; fi
	check_eq "$name: callchains shown" "$n" "$(grep -c '^\.\.\. FP chain: nr:' "$T/$name.dump")"
	check_eq "$name: user frames marked" "1" \
		"$(grep -m1 -c '(USER)$' "$T/$name.dump")"
done

if [ -s "$T/z.dump" ]; then
	nz=$(count COMPRESSED "$T/z.dump")
	if [ "${nz:-0}" -gt 0 ]; then ok "z: $nz COMPRESSED records"; else notok "z: COMPRESSED records"; fi
	check_eq "z: records from payloads are marked +z" "$(count SAMPLE "$T/z.dump")" \
		"$(grep -c '^[0-9]* 0x[0-9a-f]*+z \[0x[0-9a-f]*\]: PERF_RECORD_SAMPLE(' "$T/z.dump")"
fi

if [ -s "$T/pipe.dump" ]; then
	check_eq "pipe: header says pipe mode" "1" "$(grep -c '^# little-endian, pipe mode$' "$T/pipe.dump")"
	n=$(count ATTR "$T/pipe.dump")
	if [ "${n:-0}" -gt 0 ]; then ok "pipe: HEADER_ATTR records ($n)"; else notok "pipe: HEADER_ATTR records"; fi
	"$CS" dump -i - <"$T/pipe.data" >"$T/stdin.dump" 2>"$T/stdin.err"
	check_eq "pipe: dump -i - exits 0" 0 $?
	# the same records, offsets and all; only the name in the titles differs
	untitled() { grep -v '^# callstitch dump of ' "$@"; }
	same_file "pipe: stdin and file give the same dump" \
		<(untitled "$T/pipe.dump") <(untitled "$T/stdin.dump")
	cat "$T/pipe.data" | "$CS" dump -i - --no-stats | untitled >"$T/catpipe.dump"
	same_file "pipe: through a real pipe too" \
		<(untitled "$T/pipe.dump" | sed '/^Aggregated stats:/,$d' | sed '$d') "$T/catpipe.dump"
fi
