#!/usr/bin/env bash
# output_devices.sh - commands that write through a temporary file renamed
# over the target (flame, inject, archive) write devices, FIFOs and symbolic links in
# place: as root, a rename over /dev/null would replace the device node with
# a plain file, and one over a link (/dev/stdout) the link.
source "$CS_ROOT/tests/lib.sh"
F=$FIXTURES/linux-7.3.4/task-defer.data

for cmd in flame inject archive; do
	rc=0; $CS $cmd -q -i "$F" -o /dev/null 2>"$T/err" || rc=$?
	check "$cmd -o /dev/null succeeds" [ $rc -eq 0 ]
	check "$cmd -o /dev/null leaves /dev/null a character device" [ -c /dev/null ]
	rc=0; $CS $cmd -q -i "$F" -o /dev/full 2>"$T/err" || rc=$?
	check "$cmd -o /dev/full fails" [ $rc -ne 0 ]
	check "$cmd -o /dev/full says so in one line naming the device" \
		[ "$(grep -c /dev/full "$T/err")" -ge 1 ]
	check "$cmd -o /dev/full leaves /dev/full a character device" [ -c /dev/full ]

	rc=0; $CS $cmd -q -i "$F" -o "$T/no/such/dir/out" 2>"$T/err" || rc=$?
	check "$cmd -o into a missing folder fails" [ $rc -ne 0 ]
	check "$cmd -o into a missing folder says so in one line" [ "$(wc -l <"$T/err")" -eq 1 ]
	check "$cmd -o into a missing folder names the output" grep -qF "$T/no/such/dir/out:" "$T/err"
	check "$cmd -o into a missing folder does not name a temporary" \
		[ "$(grep -c '\.tmp' "$T/err")" -eq 0 ]

	mkfifo "$T/fifo.$cmd"
	wc -c <"$T/fifo.$cmd" >"$T/fifo.$cmd.bytes" &
	reader=$!
	rc=0; $CS $cmd -q -i "$F" -o "$T/fifo.$cmd" 2>"$T/err" || rc=$?
	wait $reader
	check "$cmd -o FIFO writes into the FIFO" [ $rc -eq 0 -a "$(cat "$T/fifo.$cmd.bytes")" -gt 1000 ]
	check "$cmd -o FIFO leaves it a FIFO" [ -p "$T/fifo.$cmd" ]

	# a link to a regular file (as /dev/stdout is when stdout is
	# redirected): the file gets the output, the link stays a link
	: >"$T/target.$cmd"
	ln -s "$T/target.$cmd" "$T/link.$cmd"
	rc=0; $CS $cmd -q -i "$F" -o "$T/link.$cmd" 2>"$T/err" || rc=$?
	check "$cmd -o LINK succeeds" [ $rc -eq 0 ]
	check "$cmd -o LINK leaves the link a link" [ -L "$T/link.$cmd" ]
	check "$cmd -o LINK writes the file it names" [ -s "$T/target.$cmd" ]
done

# record keeps the previous recording as FILE.old (as perf does); through a
# link, the file it names is kept and the link stays a link
echo previous >"$T/rec.data"
ln -s "$T/rec.data" "$T/rec.link"
if $CS record -q -e cpu-clock -o "$T/rec.link" -- true 2>"$T/err"; then
	check "record -o LINK leaves the link a link" [ -L "$T/rec.link" ]
	check "record -o LINK keeps the file it named as FILE.old" \
		[ "$(cat "$T/rec.data.old" 2>/dev/null)" = previous ]
	check "record -o LINK writes a profile script reads" \
		[ "$($CS script -q -i "$T/rec.link" 2>/dev/null | wc -l)" -gt 0 ]
else
	skip "record -o LINK" "record cannot run here: $(head -1 "$T/err")"
fi
