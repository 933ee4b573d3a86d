#!/usr/bin/env bash
# report's early switch to spill mode (report_spill.c): tables that pass
# 7/8 of the memory budget while the part of the input read says they will
# end past 5/4 of it go to the temporary file then, not once they pass the
# budget, so that the rest of the process fits beside them; those it says
# will end past twice the budget go at half of it. The command
# tells each sample how far into the file it is (its record's offset in
# the data section; in a compressed file, the compressed record's).
# From a pipe, whose size is not known, or when the projection says they
# end between the budget and 5/4 of it, the tables stop growing past 7/8
# of the budget and the later samples are set aside in the temporary file;
# the end of the input says whether they fit back (in memory) or send the
# tables to the file, which then never pass the budget.
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

# at_most NOTE: the most bytes the tables held, as a note of samples set
# aside and the switch at the end gives it
at_most() {
	sed -n 's/.* the tables at most \([0-9]*\) bytes.*/\1/p' "$1"
}

for kind in file zstd pipe; do
	p=$T/$kind.data
	rep "$p" --memory 1G >"$T/mem" 2>"$T/mem.err"
	tables=$(tables_of "$T/mem.err")
	check "$kind: in memory, the note gives the tables' size ($(head -1 "$T/mem.err"))" \
		test -n "$tables"
	[ -n "$tables" ] || continue
	# half the tables (for a file, 2/3: at half the budget, a file's
	# tables project to 3/2 of it, under twice it, and go on): the plain
	# budget would switch about half way in (2/3), the projection (twice
	# the budget; 3/2 of it) a little before
	budget=$((tables / 2))
	[ "$kind" = pipe ] || budget=$((tables * 2 / 3))
	rep "$p" --memory "$budget" >"$T/ext" 2>"$T/ext.err"
	check_eq "$kind: the output is the in-memory one" 0 "$(cmp -s "$T/mem" "$T/ext"; echo $?)"
	note=$(head -1 "$T/ext.err")
	if [ "$kind" = pipe ]; then
		check "$kind: the size unknown, samples set aside past 7/8 of the budget, until as many again as 3/7 of those before ($note)" \
			grep -q '^callstitch: report: from a temporary file: the tables passed 7/8 of the budget .* samples set aside since would' "$T/ext.err"
		most=$(at_most "$T/ext.err")
		check "$kind: the tables never pass the budget (${most:-none} of $budget bytes)" \
			test -n "$most" -a "${most:-0}" -le "$budget"
	else
		check "$kind: the projection decides ($note)" \
			grep -q '^callstitch: report: from a temporary file: the tables were projected past 5/4 of the budget' "$T/ext.err"
		# the samples counted are ~7/12 of them; the share of the
		# input read, of the compressed bytes for zstd, says as much
		share=$(sed -n 's/.* at \([0-9]*\)\.[0-9]% of the input.*/\1/p' "$T/ext.err")
		check "$kind: the share of the input read is about 7/12 (${share:-none}%)" \
			test "${share:-0}" -ge 48 -a "${share:-0}" -le 68
		# a quarter of the tables: at half the budget (1/8 of the
		# samples), they project to four times it and go then
		budget=$((tables / 4))
		rep "$p" --memory "$budget" >"$T/ext" 2>"$T/ext.err"
		check_eq "$kind: far past the budget, the output is the in-memory one" 0 "$(cmp -s "$T/mem" "$T/ext"; echo $?)"
		check "$kind: far past the budget, the projection decides at half of it ($(head -1 "$T/ext.err"))" \
			grep -q '^callstitch: report: from a temporary file: the tables were projected past twice the budget' "$T/ext.err"
		share=$(sed -n 's/.* at \([0-9]*\)\.[0-9]% of the input.*/\1/p' "$T/ext.err")
		check "$kind: far past the budget, the share of the input read is about 1/8 (${share:-none}%)" \
			test "${share:-0}" -ge 8 -a "${share:-0}" -le 18
	fi
	# tables that would end a little past the budget (1.05 of it): set
	# aside at 7/8 of it, and to the file at the end, never past it
	budget=$((tables - tables / 20))
	rep "$p" --memory "$budget" >"$T/ext" 2>"$T/ext.err"
	check_eq "$kind: a little past the budget, the output is the in-memory one" 0 "$(cmp -s "$T/mem" "$T/ext"; echo $?)"
	check "$kind: a little past the budget, set aside past 7/8 of it ($(head -1 "$T/ext.err"))" \
		grep -q '^callstitch: report: from a temporary file: the tables passed 7/8 of the budget' "$T/ext.err"
	most=$(at_most "$T/ext.err")
	check "$kind: a little past the budget, the tables never pass it (${most:-none} of $budget bytes)" \
		test -n "$most" -a "${most:-0}" -le "$budget"
	# tables (and the steps of their indexes: at this size, the last
	# doubles a third of them) that end between 7/8 of the budget and the
	# budget: from a pipe set aside, and all taken back
	if [ "$kind" = pipe ]; then
		rep "$p" --memory $((tables + tables / 4)) >"$T/ext" 2>"$T/ext.err"
		check_eq "$kind: within the budget, the output is the in-memory one" 0 "$(cmp -s "$T/mem" "$T/ext"; echo $?)"
		check "$kind: within the budget, the samples set aside are taken back ($(head -1 "$T/ext.err"))" \
			grep -q '^callstitch: report: in memory: .* taken back' "$T/ext.err"
	fi
	# the budget's last eighth never reached: in memory
	rep "$p" --memory $((tables + tables / 2)) >"$T/ext" 2>"$T/ext.err"
	check "$kind: tables that end at 2/3 of the budget stay in memory ($(head -1 "$T/ext.err"))" \
		grep -q '^callstitch: report: in memory: tables of [0-9]* bytes, the budget [0-9]*$' "$T/ext.err"
done

# without the variable, nothing is said
"$CS" report -q -i "$T/file.data" --memory 1M >/dev/null 2>"$T/err"
check_eq "no note without CALLSTITCH_REPORT_VERBOSE" 0 "$(wc -c <"$T/err")"
left=$(find "$TMPDIR" -mindepth 1 | wc -l)
check_eq "no temporary file left behind" 0 "$left"
