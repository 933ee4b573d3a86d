#!/usr/bin/env bash
# inject_header.sh - inject keeps the recording's header: perf 6.1 reading
# the injected file shows the same topology, memory, PMU mappings and caches
# as perf 7.3 showed for the original (the fixtures' *.header.txt).
source "$CS_ROOT/tests/lib.sh"
PERF=/usr/bin/perf
[ -x $PERF ] || { skip "inject keeps the header" "no /usr/bin/perf"; exit 0; }

# the header lines that come from copied feature sections
copied='^# (sibling |CPU [0-9]+:|node[0-9]|pmu mappings|CPU cache info|  L[0-9]|total memory)'
for name in task-defer syswide-defer; do
	$CS inject -q -i "$FIXTURES/linux-7.3.4/$name.data" -o "$T/$name.data"
	check "$name: inject succeeds" [ $? -eq 0 ]
	$PERF report --header-only -I -i "$T/$name.data" >"$T/$name.hdr" 2>"$T/$name.err"
	check "$name: perf 6.1 reads the injected header" [ $? -eq 0 ]
	grep -E "$copied" "$FIXTURES/linux-7.3.4/$name.header.txt" >"$T/$name.want"
	grep -E "$copied" "$T/$name.hdr" >"$T/$name.got"
	check "$name: the reference has such lines" [ -s "$T/$name.want" ]
	same_file "$name: topology, memory, PMU mappings and caches kept" \
		"$T/$name.want" "$T/$name.got"
done
