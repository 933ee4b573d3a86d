#!/usr/bin/env bash
# read_ahead_inputs.sh - the reading thread (-j with a core left after the
# output's threads) on the inputs that are not a plain mapped file: a
# stream (pipe mode, from a pipe and from a file) and compressed payloads
# (perf record -z), inflated on the reading thread or by the inflater.
# Each command prints what -j 1 prints, --stats shows that the records
# were read on that thread (so the check fails if reading ahead stops at
# these inputs), and a broken input ends with -j 1's error after -j 1's
# output.
source "$CS_ROOT/tests/lib.sh"

GEN=$CS_TOOLS/gen_synth
"$GEN" -n 20000 -s 11 --pipe -o "$T/pipe.data" >/dev/null
"$GEN" -n 20000 -s 11 -z -o "$T/z.data" >/dev/null
"$GEN" -n 20000 -s 11 --pipe -z -o "$T/pipe-z.data" >/dev/null

# run OUT INPUT CMD...: the command's output, errors and exit code; INPUT
# "pipe:FILE" feeds FILE through a pipe (-i -), else -i FILE
run() {
	local out=$1 in=$2 rc=0; shift 2
	if [ "${in#pipe:}" != "$in" ]; then
		cat "${in#pipe:}" | "$CS" "$@" -i - >"$out" 2>"$out.err" || rc=$?
	else
		"$CS" "$@" -i "$in" >"$out" 2>"$out.err" || rc=$?
	fi
	echo "rc $rc" >>"$out.err"
}

# ahead OUT.err: how many records the reading thread read (--stats)
ahead() { sed -n 's/^ *read on a thread ahead *//p' "$1"; }
records() { sed -n 's/^ *records  *//p' "$1"; }

for in in "pipe:$T/pipe.data" "$T/pipe.data" "$T/z.data" "pipe:$T/pipe-z.data"; do
	name=$(basename "${in#pipe:}")
	[ "${in#pipe:}" != "$in" ] && name="$name from a pipe"
	for c in "script -j 3" "report --stdio -j 3" "folded -j 3"; do
		read -r cmd j1 <<<"${c% -j 3}"
		# shellcheck disable=SC2086
		run "$T/one" "$in" $cmd $j1 -q -j 1 --stats
		# shellcheck disable=SC2086
		run "$T/two" "$in" $cmd $j1 -q -j 3 --stats
		check_eq "$name: $c exits 0" "rc 0" "$(tail -1 "$T/two.err")"
		same_file "$name: $c prints what -j 1 prints" "$T/one" "$T/two"
		# all but what the order queue holds at the end (about two
		# rounds: a tenth here), which goes out after the thread ends
		n=$(records "$T/two.err") a=$(ahead "$T/two.err")
		check "$name: $c read $a of $n records on the reading thread" \
			test "${a:-0}" -gt $(( ${n:-1} * 3 / 4 ))
		check_eq "$name: -j 1 reads none ahead" "0" "$(ahead "$T/one.err")"
	done
	# inject's reading thread starts at -j 2 (it has no output thread);
	# in a compressed profile at -j 2 the inflater has the second CPU,
	# and the reading thread stops at the first payload: from -j 3 on
	# it reads through them
	run "$T/one.log" "$in" inject -q -j 1 -o "$T/one.inj"
	for j in 2 3; do
		run "$T/two.log" "$in" inject -q -j $j --stats -o "$T/two.inj"
		check_eq "$name: inject -j $j exits 0" "rc 0" "$(tail -1 "$T/two.log.err")"
		same_file "$name: inject -j $j writes what -j 1 writes" "$T/one.inj" "$T/two.inj"
		n=$(records "$T/two.log.err") a=$(ahead "$T/two.log.err")
		case $name-$j in
		*z.data*-2)
			check "$name: inject -j 2 leaves the payloads to the inflater ($a of $n read ahead)" \
				test "${a:-1}" -lt $(( ${n:-0} / 100 )) ;;
		*)
			check "$name: inject -j $j read $a of $n records on the reading thread" \
				test "${a:-0}" -gt $(( ${n:-1} * 3 / 4 )) ;;
		esac
	done
done

# a corrupt zstd frame, read on the reading thread: -j 1's error, after
# -j 1's output
off=$(corrupt_zstd_frame "$T/z.data" "$T/bad-z.data" 30)
run "$T/one" "$T/bad-z.data" script -q -j 1
run "$T/two" "$T/bad-z.data" script -q -j 3
check "corrupt frame: script -j 3 names the record" \
	grep -q "COMPRESSED record at offset $off: zstd: " "$T/two.err"
same_file "corrupt frame: script -j 3 says what -j 1 says" "$T/one.err" "$T/two.err"
same_file "corrupt frame: script -j 3 printed what -j 1 printed" "$T/one" "$T/two"

# a stream cut inside a record, from a pipe: the same
size=$(stat -c %s "$T/pipe.data")
head -c $((size * 2 / 3)) "$T/pipe.data" >"$T/cut.data"
run "$T/one" "pipe:$T/cut.data" script -q -j 1
run "$T/two" "pipe:$T/cut.data" script -q -j 3
check "cut stream: script -j 3 fails" grep -q "^rc [1-9]" "$T/two.err"
same_file "cut stream: script -j 3 says what -j 1 says" "$T/one.err" "$T/two.err"
same_file "cut stream: script -j 3 printed what -j 1 printed" "$T/one" "$T/two"

# the reader stopped early: the reading thread, blocked on the pipe or
# not, ends with it
start=$(date +%s%N)
cat "$T/pipe.data" | "$CS" script -q -j 3 -i - 2>/dev/null | head -1 >/dev/null
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "pipe | script -j 3 | head -1 ends (${ms} ms)" test "$ms" -lt 20000
