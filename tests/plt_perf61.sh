# plt_perf61.sh - perf 6.1's names of PLT entries, where they are not ours.
# Sourced by the tests that compare our output with perf 6.1's.
#
# perf 6.1 names the n-th entry of .plt after the n-th relocation of
# .rela.plt, and an IFUNC's relocation (R_X86_64_IRELATIVE) has no symbol:
# "@plt". In a binary whose IFUNC relocations the linker put at the end of
# .rela.plt (Debian's libc.so.6 has 39 among 53) the two orders differ, so
# perf 6.1 names most of its PLT wrongly ("realloc@plt" where the code
# jumps to strnlen, "@plt" at __tunable_get_val's entry). We name each
# entry after the relocation of the GOT slot it jumps through, and an
# IFUNC's after the IFUNC, as perf 6.3 and later do (docs/script.md). This
# is what perf 6.1 and we print at every such entry: a comparison with
# perf 6.1 may allow exactly these differences and no others.

# The addresses of dso's PLT entries that code calls (hex, one a line):
# .plt.sec's, or .plt's after its 16-byte header.
plt61_entries() {
	readelf -SW "$1" 2>/dev/null | awk '
		{ sub(/^ *\[ *[0-9]+\] /, "") }
		$1 == ".plt" { a = strtonum_("0x" $3); s = strtonum_("0x" $5); first = 16 }
		$1 == ".plt.sec" { sa = strtonum_("0x" $3); ss = strtonum_("0x" $5) }
		function strtonum_(h,    i, c, v) {
			v = 0; h = tolower(substr(h, 3))
			for (i = 1; i <= length(h); i++)
				v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
			return v
		}
		END {
			if (ss) { a = sa; s = ss; first = 0 }
			for (o = first; o + 16 <= s; o += 16) printf "%x\n", a + o
		}'
}

# plt61_table PERF CS SAMPLES_AT SCRATCH DSO...: for each PLT entry of each
# DSO where perf 6.1 and we print different names, the line
# "DSO<TAB>perf 6.1's name<TAB>ours", found by asking both what they name
# a sample at every entry (SCRATCH: a file the probe profile may take).
plt61_table() {
	local perf=$1 cs=$2 samples_at=$3 scratch=$4 dso addrs
	shift 4
	for dso in "$@"; do
		[ -r "$dso" ] || continue
		addrs=$(plt61_entries "$dso")
		[ -n "$addrs" ] || continue
		# shellcheck disable=SC2086
		"$samples_at" "$scratch" "$dso" $addrs 2>/dev/null || continue
		paste <("$perf" script -F ip,sym -i "$scratch" 2>/dev/null |
				sed 's/^ *[0-9a-f]* //') \
		      <("$cs" script -q --no-inline -F ip,sym -i "$scratch" 2>/dev/null |
				sed 's/^ *[0-9a-f]* //') |
			awk -F '\t' -v d="$dso" '$1 != $2 { print d "\t" $1 "\t" $2 }'
	done
	rm -f "$scratch"
}

# plt61_rename TABLE < OURS > OURS': each of our PLT names that ends a line
# (a report's entry or branch) replaced by perf 6.1's name for the same
# entry, from TABLE (plt61_table's); every other line as it was.
plt61_rename() {
	awk -v table="$1" '
		BEGIN { while ((getline l < table) > 0) { split(l, t, "\t"); to[t[3]] = t[2] } }
		{
			for (k in to) {
				n = length(k); m = length($0) - n
				if (m > 0 && substr($0, m + 1) == k && index(" -", substr($0, m, 1))) {
					$0 = substr($0, 1, m) to[k]
					break
				}
			}
			print
		}'
}

PLT61_CMP=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/integration/script_vs_perf.awk

# plt61_compare PERF CS SAMPLES_AT PERF_TXT OURS_TXT UNRESOLVED_OK
# [NAMES_OF]: the summary line of script_vs_perf.awk (its names_of:
# NAMES_OF) on the two texts ("#" lines of the first differences on
# stderr). Where user frames differ, the comparison
# is made again knowing the PLT entries perf 6.1 names otherwise in their
# binaries; those frames count as "plt". Scratch files: OURS_TXT.*.
plt61_compare() {
	local perf=$1 cs=$2 samples_at=$3 ptxt=$4 otxt=$5 unres=$6 names=${7:-} sum
	rm -f "$otxt.dsos"
	sum=$(awk -v ours="$otxt" -v unresolved_ok="$unres" -v names_of="$names" -v dsos="$otxt.dsos" \
		-f "$PLT61_CMP" "$ptxt" 2>"$otxt.diff")
	if [ -s "$otxt.dsos" ]; then
		# shellcheck disable=SC2046
		plt61_table "$perf" "$cs" "$samples_at" "$otxt.probe" \
			$(sort -u "$otxt.dsos") >"$otxt.plt"
		sum=$(awk -v ours="$otxt" -v unresolved_ok="$unres" -v names_of="$names" -v plt="$otxt.plt" \
			-f "$PLT61_CMP" "$ptxt" 2>"$otxt.diff")
	fi
	cat "$otxt.diff" >&2
	echo "$sum"
}
