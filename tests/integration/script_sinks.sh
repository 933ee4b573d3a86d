#!/usr/bin/env bash
# script_sinks.sh - script writes the same bytes into a file, a pipe and a
# FIFO, at every -j. Into those its pieces of text (its own, and the line
# cache's) are gathered and go out in writes of one piece each; into
# /dev/null, which reads none of them, they go as they are, many to a
# writev(). A sink that fails ends the run with one line.
source "$CS_ROOT/tests/lib.sh"

D=linux-7.3.4
KALLSYMS=$(fixture $D/kallsyms)
SYMFS=$T/symfs
fixture_symfs "$SYMFS"
"$CS_TOOLS/gen_synth" --no-defer -n 20000 -s 5 -o "$T/plain.data" >/dev/null

# name FILE EXTRA-ARGS...
profiles=("syswide|$FIXTURES/$D/syswide-defer.data|--kallsyms $KALLSYMS --symfs $SYMFS"
	  "synthetic|$T/plain.data|")

for p in "${profiles[@]}"; do
	IFS='|' read -r name f extra <<<"$p"
	# shellcheck disable=SC2086 # extra is words
	"$CS" script -q -j 1 $extra -i "$f" >"$T/$name.want" 2>"$T/err"
	check "$name: script -j 1 into a file writes text" [ -s "$T/$name.want" ]
	for j in 1 2 3; do
		# shellcheck disable=SC2086
		"$CS" script -q -j $j $extra -i "$f" 2>"$T/err" | cat >"$T/$name.pipe$j"
		check "$name: -j $j into a pipe: the same bytes as into a file" \
			cmp -s "$T/$name.want" "$T/$name.pipe$j"
		# shellcheck disable=SC2086
		"$CS" script -q -j $j $extra -i "$f" >"$T/$name.file$j" 2>"$T/err"
		check "$name: -j $j into a file: the same bytes as -j 1" \
			cmp -s "$T/$name.want" "$T/$name.file$j"
		mkfifo "$T/fifo"
		cat "$T/fifo" >"$T/$name.fifo$j" &
		reader=$!
		# shellcheck disable=SC2086
		"$CS" script -q -j $j $extra -i "$f" >"$T/fifo" 2>"$T/err"
		wait $reader
		rm -f "$T/fifo"
		check "$name: -j $j into a FIFO: the same bytes" \
			cmp -s "$T/$name.want" "$T/$name.fifo$j"
		rc=0
		# shellcheck disable=SC2086
		"$CS" script -q -j $j $extra -i "$f" >/dev/null 2>"$T/err" || rc=$?
		check "$name: -j $j into /dev/null succeeds" [ $rc -eq 0 ]
		check "$name: -j $j leaves /dev/null a character device" [ -c /dev/null ]
		rc=0
		# shellcheck disable=SC2086
		"$CS" script -q -j $j $extra -i "$f" >/dev/full 2>"$T/err" || rc=$?
		check "$name: -j $j into /dev/full fails" [ $rc -ne 0 ]
		check "$name: -j $j into /dev/full says so in one line" \
			[ "$(wc -l <"$T/err")" -eq 1 ]
	done
done

# The writes themselves, as strace sees them: "PIECES BYTES" for each
# write() or writev() into standard output, from every thread's trace.
writes_of() {
	cat "$T/trace".* | sed -nE \
		-e 's/^writev\(1, 0x[0-9a-f]+, ([0-9]+)\) += ([0-9]+)$/\1 \2/p' \
		-e 's/^write\(1, 0x[0-9a-f]+, [0-9]+\) += ([0-9]+)$/1 \1/p'
}
traced() {
	rm -f "$T/trace".*
	strace -ff -o "$T/trace" -e trace=write,writev -e verbose=none \
		-e abbrev=none -e signal=none "$@"
}
f=$FIXTURES/$D/syswide-defer.data
args=(script -q --kallsyms "$KALLSYMS" --symfs "$SYMFS" -i "$f")
if ! command -v strace >/dev/null; then
	skip "script's writes, as strace sees them" "strace is not installed"
elif ! strace -o /dev/null true 2>/dev/null; then
	skip "script's writes, as strace sees them" "strace cannot trace here"
else
	size=$(wc -c <"$T/syswide.want")
	for j in 1 3; do
		traced "$CS" "${args[@]}" -j $j >"$T/traced.out" 2>"$T/err"
		writes_of >"$T/writes"
		check "-j $j into a file, traced: the same bytes" \
			cmp -s "$T/syswide.want" "$T/traced.out"
		check "-j $j into a file: every byte written is seen in the trace" \
			[ "$(awk '{ n += $2 } END { print n + 0 }' "$T/writes")" -eq "$size" ]
		check "-j $j into a file: each write is of one piece (gathered)" \
			[ "$(awk '$1 != 1' "$T/writes" | wc -l)" -eq 0 ]
		check "-j $j into a file: in writes of 16 KiB or more, on average" \
			[ $((size / $(wc -l <"$T/writes"))) -ge 16384 ]
		traced "$CS" "${args[@]}" -j $j >/dev/null 2>"$T/err"
		writes_of >"$T/writes"
		check "-j $j into /dev/null: every byte written is seen in the trace" \
			[ "$(awk '{ n += $2 } END { print n + 0 }' "$T/writes")" -eq "$size" ]
		check "-j $j into /dev/null: the pieces go as they are, many to a writev()" \
			[ "$(awk '$1 > 16' "$T/writes" | wc -l)" -gt 0 ]
	done
fi

# A full sink while the input is a pipe its writer holds open between
# rounds (a live `perf record -o -`): the run ends at the error, with its
# one line, and does not read on until the writer is done. (The output's
# stop was once taken for the reading thread's hand-back, and the session
# read the input to its end.)
"$CS_TOOLS/gen_synth" --pipe -n 20000 -s 9 -o "$T/stream.data" >/dev/null
# (with -j 2 or more the write fails on another thread, which asks the
# session to stop: its reading thread waits on the quiet pipe)
for j in 1 2 3; do
	rm -f "$T/live"
	mkfifo "$T/live"
	# the writer: the stream, then (the same process) half a minute quiet
	( cat "$T/stream.data"; exec sleep 30 ) >"$T/live" &
	writer=$!
	rc=0
	"$CS" script -q -j $j -i - <"$T/live" >/dev/full 2>"$T/err" || rc=$?
	open=no
	kill -0 "$writer" 2>/dev/null && open=yes
	kill "$writer" 2>/dev/null
	wait "$writer" 2>/dev/null
	check "-j $j from a live pipe into /dev/full fails" [ "$rc" -ne 0 ]
	check "-j $j from a live pipe into /dev/full says so in one line" \
		[ "$(wc -l <"$T/err")" -eq 1 ]
	check "-j $j from a live pipe into /dev/full ends before the pipe does" \
		[ "$open" = yes ]
done
