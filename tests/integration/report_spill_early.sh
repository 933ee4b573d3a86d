#!/usr/bin/env bash
# report's early switch to spill mode (report_spill.c): tables that pass
# 7/8 of the memory budget while the part of the input read says they will
# end past 5/4 of it go to the temporary file then, not once they pass the
# budget, so that the rest of the process fits beside them. The command
# tells each sample how far into the file it is (its record's offset in
# the data section; in a compressed file, the compressed record's);
# from a pipe, whose size is not known, only the budget decides.
# CALLSTITCH_REPORT_VERBOSE=1 says which way the report was made and why.
source "$CS_ROOT/tests/lib.sh"

G=$CS_TOOLS/gen_synth
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"
# every stack distinct: the tables grow with the samples, evenly
"$G" --no-defer -n 20000 -s 3 -o "$T/file.data" >/dev/null
"$G" --no-defer -n 20000 -s 3 -z -o "$T/zstd.data" >/dev/null
"$G" --no-defer -n 20000 -s 3 --pipe -o "$T/pipe.data" >/dev/null

# the pipe's profile through a pipe
rep() {
	local p=$1; shift
	case $p in
	*pipe.data) cat "$p" | CALLSTITCH_REPORT_VERBOSE=1 "$CS" report -q -i - "$@" ;;
	*) CALLSTITCH_REPORT_VERBOSE=1 "$CS" report -q -i "$p" "$@" ;;
	esac
}
# tables_of NOTE: the bytes a note of the tables in memory gives
tables_of() {
	sed -n 's/^callstitch: report: in memory: tables of \([0-9]*\) bytes.*/\1/p' "$1"
}

for kind in file zstd pipe; do
	p=$T/$kind.data
	rep "$p" --memory 1G >"$T/mem" 2>"$T/mem.err"
	tables=$(tables_of "$T/mem.err")
	check "$kind: in memory, the note gives the tables' size ($(head -1 "$T/mem.err"))" \
		test -n "$tables"
	[ -n "$tables" ] || continue
	# half the tables: the plain budget would switch about half way in,
	# the projection (twice the budget) a little before
	budget=$((tables / 2))
	rep "$p" --memory "$budget" >"$T/ext" 2>"$T/ext.err"
	check_eq "$kind: the output is the in-memory one" 0 "$(cmp -s "$T/mem" "$T/ext"; echo $?)"
	note=$(head -1 "$T/ext.err")
	if [ "$kind" = pipe ]; then
		check "$kind: the size unknown, the budget decides ($note)" \
			grep -q '^callstitch: report: from a temporary file: the tables passed the budget' "$T/ext.err"
		continue
	fi
	check "$kind: the projection decides ($note)" \
		grep -q '^callstitch: report: from a temporary file: the tables were projected past 5/4 of the budget' "$T/ext.err"
	# the samples counted are ~7/16 of them; the share of the input read,
	# of the compressed bytes for zstd, says as much
	share=$(sed -n 's/.* at \([0-9]*\)\.[0-9]% of the input.*/\1/p' "$T/ext.err")
	check "$kind: the share of the input read is about 7/16 (${share:-none}%)" \
		test "${share:-0}" -ge 35 -a "${share:-0}" -le 55
	# the budget's last eighth never reached: in memory
	rep "$p" --memory $((tables + tables / 4)) >"$T/ext" 2>"$T/ext.err"
	check "$kind: tables that end at 4/5 of the budget stay in memory ($(head -1 "$T/ext.err"))" \
		grep -q '^callstitch: report: in memory' "$T/ext.err"
done

# without the variable, nothing is said
"$CS" report -q -i "$T/file.data" --memory 1M >/dev/null 2>"$T/err"
check_eq "no note without CALLSTITCH_REPORT_VERBOSE" 0 "$(wc -c <"$T/err")"
left=$(find "$TMPDIR" -mindepth 1 | wc -l)
check_eq "no temporary file left behind" 0 "$left"
