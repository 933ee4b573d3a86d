#!/usr/bin/env bash
# jobs_zstd.sh - compressed profiles (perf record -z, gen_synth -z,
# callstitch inject -z) read with -j 2, their payloads decompressed on a
# second thread: script, report and folded print what -j 1 prints, and
# what the same profile uncompressed prints; a corrupt zstd frame is the
# same one-line error, after the same output; a reader stopped early
# (script | head) ends at once.
source "$CS_ROOT/tests/lib.sh"

D=linux-7.3.4
KALLSYMS=$(fixture $D/kallsyms)
SYMFS=$T/symfs
fixture_symfs "$SYMFS"
GEN=$CS_TOOLS/gen_synth

"$GEN" -n 20000 -s 3 -o "$T/synth.data" >/dev/null
"$GEN" -n 20000 -s 3 -z -o "$T/synth-z.data" >/dev/null
"$GEN" -n 20000 -s 3 -z --big-endian -o "$T/synth-zbe.data" >/dev/null
"$CS" inject -q -i "$FIXTURES/$D/syswide-defer.data" --kallsyms "$KALLSYMS" \
	--symfs "$SYMFS" -o "$T/fixt.data" 2>/dev/null
"$CS" inject -q -z -i "$FIXTURES/$D/syswide-defer.data" --kallsyms "$KALLSYMS" \
	--symfs "$SYMFS" -o "$T/fixt-z.data" 2>/dev/null
check "inject -z wrote a compressed profile" \
	grep -q PERF_RECORD_COMPRESSED <("$CS" dump -i "$T/fixt-z.data" 2>/dev/null)
pairs=("synth-z:synth" "synth-zbe:synth" "fixt-z:fixt")
if perf record -q -z -g -F 2000 -o "$T/perf-z.data" -- \
	sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i + 1)); done' \
	>/dev/null 2>&1; then
	pairs+=("perf-z:")
else
	skip "perf record -z" "perf cannot record here"
fi

run() {		# run OUT -j N ARGS...: the command's output and exit code
	local out=$1; shift
	"$CS" "$@" -q --kallsyms "$KALLSYMS" --symfs "$SYMFS" >"$out" 2>"$out.err"
	echo "rc $?" >>"$out.err"
}

for pair in "${pairs[@]}"; do
	z=${pair%%:*} plain=${pair#*:}
	for c in "script" "report --stdio" "folded"; do
		# shellcheck disable=SC2086
		run "$T/one" $c -j 1 -i "$T/$z.data"
		# shellcheck disable=SC2086
		run "$T/two" $c -j 2 -i "$T/$z.data"
		check_eq "$z: $c exits 0" "rc 0" "$(tail -1 "$T/one.err")"
		same_file "$z: $c -j 2 prints what -j 1 prints" "$T/one" "$T/two"
		[ -n "$plain" ] || continue
		# but for report's header: the file's name, how it was made
		# shellcheck disable=SC2086
		run "$T/plain" $c -j 2 -i "$T/$plain.data"
		sed -i -e "s|$T/$z.data|X|" -e '/^# cmdline/d' "$T/two"
		sed -i -e "s|$T/$plain.data|X|" -e '/^# cmdline/d' "$T/plain"
		same_file "$z: $c -j 2 prints what it prints uncompressed" "$T/plain" "$T/two"
	done
done

# a corrupt frame in the middle: the same output up to the same error
off=$(corrupt_zstd_frame "$T/synth-z.data" "$T/bad.data" 20)
for c in "script" "report --stdio" "folded"; do
	# shellcheck disable=SC2086
	run "$T/one" $c -j 1 -i "$T/bad.data"
	# shellcheck disable=SC2086
	run "$T/two" $c -j 2 -i "$T/bad.data"
	check "corrupt frame: $c fails naming the record" \
		grep -q "COMPRESSED record at offset $off: zstd: " "$T/two.err"
	same_file "corrupt frame: $c -j 2 says what -j 1 says" "$T/one.err" "$T/two.err"
	same_file "corrupt frame: $c -j 2 printed what -j 1 printed" "$T/one" "$T/two"
done

# the reader stopped early: the thread ahead of it ends with it
start=$(date +%s%N)
"$CS" script -q -j 2 -i "$T/synth-z.data" 2>/dev/null | head -1 >/dev/null
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "script -j 2 | head -1 ends (${ms} ms)" test "$ms" -lt 20000
rm -f "$T"/*.data "$T/one" "$T/two" "$T/plain"
