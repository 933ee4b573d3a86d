#!/usr/bin/env bash
# reader_formats.sh - one profile in every form the reader takes: the
# real-kernel recordings rewritten big-endian, as a stream (read from a
# file and from stdin), zstd-compressed, and all at once, must decode to
# the same records, field for field, as the original.
source "$CS_ROOT/tests/lib.sh"

RF=$CS_TOOLS/reformat
if [ ! -x "$RF" ]; then skip "reader formats" "no $RF (make tools)"; exit 0; fi

# The records a reader of samples sees, without offsets (which change
# with the form) and without the synthesized records the rewrite drops.
records() {
	awk '
	/^Aggregated stats:/ { exit }
	/^[0-9]+ 0x[0-9a-f]+(\+z)? \[0x[0-9a-f]+\]: PERF_RECORD_/ {
		name = $4; sub(/[(:].*/, "", name)
		keep = name !~ /^PERF_RECORD_(ATTR|FEATURE|EVENT_UPDATE|BUILD_ID|ID_INDEX|THREAD_MAP|CPU_MAP|TIME_CONV|COMPRESSED2?|TYPE_[0-9]+)$/
		if (keep) { $2 = ""; print }
		next
	}
	/^#/ { next }
	keep && NF { print }'
}
meta() { grep -E '^# (hostname|os release|perf version|arch|nrcpus|cpudesc|cmdline|event [0-9]+):' "$1"; }

for name in task-defer syswide-defer; do
	f=$(fixture linux-7.3.4/$name.data) || { notok "$name: fixture"; continue; }
	"$CS" dump -i "$f" >"$T/$name.dump" 2>/dev/null
	records <"$T/$name.dump" >"$T/$name.want"
	meta "$T/$name.dump" >"$T/$name.meta"
	n=$(grep -c 'PERF_RECORD_SAMPLE(' "$T/$name.want")
	if [ "$n" -gt 10000 ]; then ok "$name: reference has $n samples"
	else notok "$name: reference has samples ($n)"; fi

	for form in "be:--big-endian" "pipe:--pipe" "zstd:--zstd 3" \
		    "be-pipe-zstd:--big-endian --pipe --zstd 1"; do
		tag=${form%%:*} opts=${form#*:}
		out=$T/$name.$tag.data
		# shellcheck disable=SC2086
		if ! "$RF" $opts "$f" "$out" 2>"$T/rf.err"; then
			notok "$name/$tag: rewrite"; sed 's/^/#   /' "$T/rf.err" | head -3
			continue
		fi
		"$CS" dump -i "$out" >"$T/$name.$tag.dump" 2>"$T/$tag.err"
		check_eq "$name/$tag: dump exits 0" 0 $?
		records <"$T/$name.$tag.dump" >"$T/$name.$tag.got"
		same_file "$name/$tag: the same records, field for field" \
			"$T/$name.want" "$T/$name.$tag.got"
		case $tag in
		be)	check_eq "$name/$tag: header says big-endian" 1 \
				"$(grep -c '^# big-endian, file mode' "$T/$name.$tag.dump")"
			same_file "$name/$tag: the same host, command and events" \
				"$T/$name.meta" <(meta "$T/$name.$tag.dump") ;;
		zstd)	c=$(grep -c 'PERF_RECORD_COMPRESSED' "$T/$name.$tag.dump")
			if [ "$c" -gt 0 ]; then ok "$name/$tag: read through $c COMPRESSED records"
			else notok "$name/$tag: COMPRESSED records"; fi ;;
		*pipe*)	"$CS" dump -i - <"$out" 2>/dev/null | records >"$T/$name.$tag.stdin"
			same_file "$name/$tag: from stdin too" "$T/$name.want" "$T/$name.$tag.stdin" ;;
		esac
	done
done

# A stream longer than the reader's 4 MiB buffer, through a real pipe,
# reads as the same profile written as a file.
GS=$CS_TOOLS/gen_synth
if [ -x "$GS" ]; then
	"$GS" -n 60000 -s 7 -o "$T/synth.data" >/dev/null 2>&1 &&
	"$GS" -n 60000 -s 7 --pipe -o "$T/synth-pipe.data" >/dev/null 2>&1
	size=$(stat -c %s "$T/synth-pipe.data" 2>/dev/null || echo 0)
	if [ "$size" -gt $((5 << 20)) ]; then ok "synthetic stream of $size bytes"
	else notok "synthetic stream over 5 MiB ($size bytes)"; fi
	"$CS" dump -i "$T/synth.data" >"$T/synth.dump" 2>/dev/null
	cat "$T/synth-pipe.data" | "$CS" dump -i - >"$T/synth-pipe.dump" 2>/dev/null
	check_eq "synthetic stream: dump -i - exits 0" 0 "${PIPESTATUS[1]}"
	same_file "synthetic stream: the same records as the file" \
		<(records <"$T/synth.dump") <(records <"$T/synth-pipe.dump")
else
	skip "long stream" "no $GS"
fi
