#!/usr/bin/env bash
# script_line_cache.sh - script's line cache keeps each address's lines as
# text in an arena. Where the place table finds lines other processes made
# (many processes of a few programs: --paths with thousands of tasks) the
# arena grows once, from 7 to 15 MiB, instead of starting over, and its
# text from past the first 8 MiB (this profile's fills 10 MiB of it; an
# entry's offset takes its 24th bit) is written like the rest: the bytes are
# those of -j 2, whose formatting thread keeps an arena that never grows,
# with and without inlined lines, cut by --max-stack.
source "$CS_ROOT/tests/lib.sh"
cd "$T"

"$CS_TOOLS/gen_synth" --no-defer -n 100000 --paths 60000 -t 2048 -s 5 \
	-o paths.data >/dev/null
"$CS_TOOLS/gen_synth" --no-defer -n 60000 -s 6 -o plain.data >/dev/null

"$CS" script --stats -q -j 1 --no-inline -i paths.data >one 2>err
check "many processes of a few programs: the line cache grows" \
	grep -q '^  line cache grown to 15 MiB of text' err
for v in "--no-inline" "" "--no-inline --max-stack 2"; do
	# shellcheck disable=SC2086
	"$CS" script -q -j 1 $v -i paths.data >one 2>/dev/null
	# shellcheck disable=SC2086
	"$CS" script -q -j 2 $v -i paths.data >two 2>/dev/null
	same_file "paths $v: -j 1, its line cache grown, prints what -j 2 prints" one two
done

# addresses all new (a random profile): the place table finds nothing and
# the arena starts over as it did
check "addresses all new: script runs" \
	bash -c '"$CS" script --stats -q -j 1 --no-inline -i plain.data >/dev/null 2>err'
check "... and its line cache does not grow" \
	bash -c '! grep -q "line cache grown" err'
