#!/usr/bin/env bash
# demo.sh - `make demo` (scripts/demo.sh) on this machine: part 1 records
# and shows the local profile whatever the kernel can do; part 2 stitches
# the bundled real-kernel recording, shows its summary and one late sample
# whose stitched stack is exactly the sample record's kernel frames
# followed by the earlier deferred record's user frames, and says which
# part came from where.
source "$CS_ROOT/tests/lib.sh"

if ! DEMO_OUT=$T/demo.data "$CS_ROOT/scripts/demo.sh" >"$T/out" 2>"$T/err"; then
	notok "scripts/demo.sh exits 0"; sed 's/^/#   /' "$T/err" | tail -5
	exit 0
fi
ok "scripts/demo.sh exits 0"

part1=$(sed -n '/^==== 1\./,/^==== 2\./p' "$T/out")
part2=$(sed -n '/^==== 2\./,$p' "$T/out")
check "part 1 names this machine's kernel" grep -q "on Linux $(uname -r)" <<<"$part1"
check "part 1 reports the local profile (deep_ frames)" grep -q 'deep_a' <<<"$part1"
check "part 1 writes the flame graph and folded stacks" test -s "$T/demo.html" -a -s "$T/demo.folded"
check "part 1 says how its stacks were recorded" \
	grep -qE 'no deferred user callchains|deferred the user part' <<<"$part1"
check "part 2 names the bundled recording and its kernel" \
	grep -q 'tests/fixtures/linux-7.3.4/syswide-defer.data' <<<"$part2"
check "part 2 shows the recording's summary (148 stitched late)" \
	grep -q '# user stacks *: 13410 stitched, 148 stitched late' <<<"$part2"

# the late sample: raw sample, deferred record, stitched sample
sec() { awk -v from="$1" -v to="$2" 'index($0, from) == 1 { on = 1; next } on && index($0, to) == 1 { exit } on' "$T/out"; }
sec "-- the sample record" "-- the CALLCHAIN_DEFERRED" | grep -P '^\t' >"$T/raw"
sec "-- the CALLCHAIN_DEFERRED" "-- stitched by callstitch" | grep -P '^\t' >"$T/rec"
sec "-- stitched by callstitch" "@@" | grep -P '^\t' >"$T/stitched"
check "the raw sample ends in its cookie" grep -q '(cookie)' <(tail -1 "$T/raw")
{ grep -v '(cookie)' "$T/raw"; cat "$T/rec"; } >"$T/want"
if [ -s "$T/rec" ] && cmp -s "$T/want" "$T/stitched"; then
	ok "the stitched late sample is the sample's kernel frames, then the record's user frames ($(wc -l <"$T/stitched") frames)"
else
	notok "the stitched late sample is the sample's kernel frames, then the record's user frames"
	diff "$T/want" "$T/stitched" | head -10 | sed 's/^/#   /'
fi
# the record came first: its time is before the sample's
t_sample=$(grep -A1 -- '-- the sample record' "$T/out" | tail -1 | awk '{ print $4 }' | tr -d :)
t_record=$(grep 'DEFERRED CALLCHAIN' "$T/out" | awk '{ print $4 }' | tr -d :)
check "the deferred record ($t_record) came before the sample ($t_sample)" \
	awk -v r="$t_record" -v s="$t_sample" 'BEGIN { exit !(r < s) }'
