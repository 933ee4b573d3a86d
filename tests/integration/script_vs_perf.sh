#!/usr/bin/env bash
# script_vs_perf.sh - on profiles recorded here by /usr/bin/perf (6.1, no
# deferral), `callstitch script` prints the same samples, addresses and
# symbols as `perf script`.
#
# Known differences of perf 6.1, compared around: it prints user addresses
# relative to their dso (7.3 prints them absolute, as we do), pads tids to
# 5 columns (7.3: 7), shows no inlined frames, keeps naming a thread
# after its EXIT (7.3 names later samples ":TID", as we do), and names the
# PLT entries of a binary such as libc.so.6 in the order of its
# relocations, not after their GOT slots (tests/plt_perf61.sh): a frame
# there may have perf 6.1's name on its side and ours on ours, exactly as
# both name a sample at that entry.
source "$CS_ROOT/tests/lib.sh"
source "$CS_ROOT/tests/plt_perf61.sh"

PERF=/usr/bin/perf
W=$CS_WORKLOADS/deepstack
if [ ! -x "$PERF" ]; then skip "script vs perf" "no /usr/bin/perf"; exit 0; fi
if [ ! -x "$W" ]; then skip "script vs perf" "no $W (make workloads)"; exit 0; fi

CMP=$CS_ROOT/tests/integration/script_vs_perf.awk

# compare NAME UNRESOLVED_OK [NAMES_OF]: script_vs_perf.awk's summary of
# NAME, with the PLT entries perf 6.1 names otherwise (differences on
# NAME.diff)
compare() {
	plt61_compare /usr/bin/perf "$CS" "$CS_TOOLS/samples_at" "$T/$1.perf" \
		"$T/$1.ours" "$2" "${3:-}" 2>"$T/$1.diff"
}

# run NAME UNRESOLVED_OK NAMES_OF perf-record-args...: NAMES_OF, when not
# empty, is the command whose symbols are compared (script_vs_perf.awk)
run() {
	local name=$1 unres=$2 names=$3 sum rc broke; shift 3
	if ! "$PERF" record -q -o "$T/$name.data" "$@" >"$T/$name.rec" 2>&1; then
		rm -f "$T/$name.data"	# what a crashed perf left: no -F runs on it
		skip "$name: script equals perf script" \
			"perf record failed: $(grep -v '^$' "$T/$name.rec" | tail -1)"
		return
	fi
	"$PERF" script -i "$T/$name.data" >"$T/$name.perf" 2>"$T/$name.perf.err"
	rc=$? broke=$(perf_broken "$T/$name.perf.err")
	if [ $rc -ne 0 ] || [ -n "$broke" ]; then
		skip "$name: script equals perf script" \
			"perf 6.1 itself fails on this recording here: ${broke:-exit $rc}"
		return
	fi
	if ! $CS script -q --no-inline -i "$T/$name.data" >"$T/$name.ours" 2>"$T/$name.err"; then
		notok "$name: script failed: $(tail -1 "$T/$name.err")"
		return
	fi
	sum=$(compare "$name" "$unres" "$names")
	set -- $sum
	if [ "${12}" = 0 ] && [ $# = 12 ] && [ "$2" -gt 0 ] &&
	   grep -q 'deep_h+' "$T/$name.ours"; then
		ok "$name: script equals perf script ($sum)"
	else
		notok "$name: $sum"
		cat "$T/$name.diff"
	fi
	check_eq "$name: same number of samples" \
		"$(grep -c '^$' "$T/$name.perf")" "$(grep -c '^$' "$T/$name.ours")"
}

run task 0 "" -g -e cpu-clock -F 2000 -- "$W" 1
run syswide 1 deepstack -a -g -e cpu-clock -F 1000 -- "$W" 1

# -F picks fields as perf script -F does
if [ -f "$T/task.data" ]; then
	for f in comm,pid,tid,time,ip,sym,dso +pid,-period -event,-dso comm,tid,time; do
		"$PERF" script -F "$f" -i "$T/task.data" >"$T/f.perf" 2>/dev/null
		$CS script -q --no-inline -F "$f" -i "$T/task.data" >"$T/f.ours"
		# the same samples as task's: the PLT entries its comparison
		# found perf 6.1 naming otherwise (none if it found no difference)
		sum=$(awk -v ours="$T/f.ours" -v unresolved_ok=0 -v plt="$T/task.ours.plt" \
			-f "$CMP" "$T/f.perf" 2>"$T/f.diff")
		set -- $sum
		if [ "${12}" = 0 ] && [ $# = 12 ] && [ "$2" -gt 0 ]; then
			ok "-F $f: as perf script -F $f"
		else
			notok "-F $f: $sum"
			cat "$T/f.diff"
		fi
	done
fi
if $CS script -F comm,bogus -i "$T/task.data" >/dev/null 2>"$T/bad.err"; then
	notok "-F with an unknown field is refused"
else
	check_eq "-F with an unknown field is refused" 1 "$(grep -c "'bogus' is not a field" "$T/bad.err")"
fi
