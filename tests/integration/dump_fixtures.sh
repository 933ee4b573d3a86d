#!/usr/bin/env bash
# dump_fixtures.sh - `callstitch dump` on the real-kernel recordings: every
# record read, the counts the fixtures' README gives, every cookie shown on
# both sides (samples and CALLCHAIN_DEFERRED records) and the same cookies
# perf 7.3 showed.
source "$CS_ROOT/tests/lib.sh"

# count TYPE FILE: the per-type total from the dump's closing stats
count() { awk -v t="$1" '$1 == t && $2 == "events:" { print $3 }' "$2"; }

declare -A samples=([task-defer]=14117 [syswide-defer]=13859)
declare -A deferred=([task-defer]=12800 [syswide-defer]=11369)

for name in task-defer syswide-defer task-nodefer; do
	f=$(fixture linux-7.3.4/$name.data) || { notok "$name: fixture"; continue; }
	out=$T/$name.dump
	if "$CS" dump -i "$f" >"$out" 2>"$T/$name.err"; then
		ok "$name: dump exits 0"
	else
		notok "$name: dump exits 0"; sed 's/^/#   /' "$T/$name.err" | head -5
		continue
	fi
	check_eq "$name: no messages on stderr" "" "$(cat "$T/$name.err")"
	check_eq "$name: every record has an offset line" \
		"$(count TOTAL "$out")" "$(grep -c '^[0-9]* 0x[0-9a-f]* \[0x[0-9a-f]*\]: PERF_RECORD_' "$out")"
	check_eq "$name: header names the event" "1" \
		"$(grep -c '^# event 0: cpu-clock$' "$out")"

	# samples: the README's numbers, or perf script's sample count
	if [ -n "${samples[$name]:-}" ]; then
		want=${samples[$name]}
	else
		want=$(xz -dc "$(fixture linux-7.3.4/$name.script.txt.xz)" | grep -c '^[^[:space:]]')
	fi
	check_eq "$name: SAMPLE records" "$want" "$(count SAMPLE "$out")"
	check_eq "$name: SAMPLE lines" "$want" "$(grep -c 'PERF_RECORD_SAMPLE(' "$out")"
	check_eq "$name: CALLCHAIN_DEFERRED records" "${deferred[$name]:-}" \
		"$(count CALLCHAIN_DEFERRED "$out")"

	# cookies: as samples show them, as records show them, as perf did
	awk '/\(cookie\)$/ { sub(/^0*/, "", $3); print $3 }' "$out" | sort -u >"$T/$name.sample-cookies"
	awk '/PERF_RECORD_CALLCHAIN_DEFERRED cookie/ { c = $6; sub(/^0x/, "", c); sub(/,$/, "", c); print c }' \
		"$out" | sort -u >"$T/$name.record-cookies"
	xz -dc "$(fixture linux-7.3.4/$name.script-nomerge.txt.xz)" |
		awk '/\(cookie\) \(\[unknown\]\)$/ { print $1 }' | sort -u >"$T/$name.perf-cookies"
	same_file "$name: the cookies of samples are the ones perf 7.3 shows" \
		"$T/$name.perf-cookies" "$T/$name.sample-cookies"
	if [ "$name" = task-nodefer ]; then
		check_eq "$name: no cookies" "0" "$(wc -l <"$T/$name.sample-cookies")"
		continue
	fi
	check_eq "$name: every sample's cookie has its record (nothing left waiting)" "" \
		"$(comm -23 "$T/$name.sample-cookies" "$T/$name.record-cookies" | head -3)"
	check_eq "$name: cookie lines follow the USER_DEFERRED marker" \
		"$(grep -c '(USER_DEFERRED)$' "$out")" "$(grep -c '(cookie)$' "$out")"
	check_eq "$name: deferred records show their user stack" "${deferred[$name]}" \
		"$(grep -c '^\.\.\. user chain: nr:' "$out")"
done

# the worked example of SPEC.md lives in no fixture; the first deferred
# record of task-defer is printed exactly so
f=$(fixture linux-7.3.4/task-defer.data)
"$CS" dump -i "$f" 2>/dev/null | grep -m1 -A3 'PERF_RECORD_CALLCHAIN_DEFERRED' >"$T/first22"
cat >"$T/first22.want" <<'X'
6536446357 0x898 [0x30]: PERF_RECORD_CALLCHAIN_DEFERRED cookie 0x300000001, nr 1
... user chain: nr:1
.....   0: 00007fd1e468fb70
... sample_id: 63/63 time 6536446357
X
same_file "task-defer: the first CALLCHAIN_DEFERRED record, decoded" "$T/first22.want" "$T/first22"

# speed: the release binary on a 3 MB file (cached) is well under a second
if [ -x "$CS_REL" ]; then
	"$CS_REL" dump -i "$f" >/dev/null
	s=$(date +%s%N)
	"$CS_REL" dump -i "$f" >/dev/null
	ms=$(( ($(date +%s%N) - s) / 1000000 ))
	if [ "$ms" -lt 1500 ]; then ok "release dump of task-defer in ${ms} ms"
	else notok "release dump of task-defer took ${ms} ms"; fi
else
	skip "release dump speed" "no release binary at $CS_REL"
fi

"$CS" dump --help >"$T/help" && grep -q '^usage: callstitch dump' "$T/help"
check_eq "dump --help" 0 $?
"$CS" dump --bogus >/dev/null 2>&1
check_eq "dump with an unknown option exits 129" 129 $?
