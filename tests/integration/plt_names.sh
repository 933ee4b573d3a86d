#!/usr/bin/env bash
# plt_names.sh - what a PLT entry of libc.so.6 is called: after the
# relocation of the GOT slot the entry jumps through (objdump's labels say
# the same), an IFUNC's entry after the IFUNC's resolver symbol, as perf
# 6.3 and later name them; and perf 6.1's names, which follow .rela.plt's
# order instead, for the comparisons with perf 6.1 (tests/plt_perf61.sh).
source "$CS_ROOT/tests/lib.sh"
source "$CS_ROOT/tests/plt_perf61.sh"
cd "$T"
PERF=/usr/bin/perf
LIBC=$(ldd "$CS_WORKLOADS/deepstack" | awk '$1 ~ /^libc\.so/ { print $3 }')
if [ -z "$LIBC" ] || ! objdump -h "$LIBC" | grep -q ' \.plt '; then
	skip "libc's PLT entries" "no libc.so.6 with a .plt here"
	exit 0
fi

# objdump's label of each entry: "realloc@plt", or "*ABS*+0x9f550@plt"
# for an IFUNC's, whose resolver is at 0x9f550
objdump -d -j .plt "$LIBC" | sed -n 's/^0*\([0-9a-f]*\) <\(.*\)>:$/\1 \2/p' |
	tail -n +2 >labels.txt
entries=$(plt61_entries "$LIBC")
check_eq "the entries are objdump's" "$(cut -d' ' -f1 labels.txt)" "$entries"
resolvers=$(sed -n 's/^[0-9a-f]* \*ABS\*+0x\([0-9a-f]*\)@plt$/\1/p' labels.txt)
check "libc's PLT has IFUNC entries (R_X86_64_IRELATIVE)" [ -n "$resolvers" ]
"$CS_TOOLS/samples_at" probe.data "$LIBC" $entries $resolvers
export XDG_CACHE_HOME=$T/cache
$CS script -q --no-inline -F ip,sym,symoff -i probe.data | sed 's/^ *[0-9a-f]* //' >ours.txt
# a PLT's names are kept in the symbol cache like a binary's symbols
# (the file's key, after its 32-byte header, starts with "plt")
plt_saved=0
for f in "$XDG_CACHE_HOME"/callstitch/symtab-*; do
	[ "$(tail -c +33 "$f" | head -c 3)" = plt ] && plt_saved=$((plt_saved + 1))
done
check "the PLT's names are saved in the symbol cache" [ "$plt_saved" -gt 0 ]
$CS script -q --no-inline -F ip,sym,symoff -i probe.data | sed 's/^ *[0-9a-f]* //' >warm.txt
same_file "and read back from it, the same names" ours.txt warm.txt
check_eq "one name a sample" "$(($(wc -l <labels.txt) + $(wc -w <<<"$resolvers")))" \
	"$(wc -l <ours.txt)"

# the resolvers' names, as we name any address: "strlen+0x0"
mapfile -t names <ours.txt
nent=$(wc -l <labels.txt)
declare -A at
i=$nent
for r in $resolvers; do
	at[$r]=${names[i++]}
done
bad=0 n=0 ifuncs=0
while read -r addr label; do
	got=${names[n++]%+0x0}
	want=$label
	if [[ $label == '*ABS*+0x'*'@plt' ]]; then
		r=${label#'*ABS*+0x'}; r=${r%@plt}
		want=${at[$r]%+0x0}@plt
		[[ ${at[$r]} == *+0x0 ]] || want="a symbol starting at 0x$r"
		ifuncs=$((ifuncs + 1))
	fi
	if [ "$got" != "$want" ]; then
		bad=$((bad + 1))
		[ $bad -le 5 ] && echo "# $addr: objdump says $label, we say $got (want $want)"
	fi
done <labels.txt
check_eq "every entry named after its GOT slot's relocation ($n, $ifuncs IFUNCs)" 0 "$bad"
check "memcpy's IFUNC entry is named after memcpy" grep -q '^memcpy[^ ]*@plt+0x0$' ours.txt

if [ ! -x "$PERF" ] || ! "$PERF" version >/dev/null 2>&1; then
	skip "perf 6.1's names" "no working $PERF"
	exit 0
fi
# perf 6.1: the n-th entry after the n-th relocation of .rela.plt, "@plt"
# for an IFUNC's (no symbol); where the orders agree, its names are ours
readelf -rW "$LIBC" | awk '
	/^Relocation section/ { on = ($0 ~ /\.rela\.plt/); next }
	on && /R_X86_64_JUMP_SLOT/ { n = $5; sub(/@.*/, "", n); print n "@plt" }
	on && /R_X86_64_IRELATIVE/ { print "@plt" }' | head -n "$nent" >rela_order.txt
"$PERF" script -F ip,sym -i probe.data 2>/dev/null | sed 's/^ *[0-9a-f]* //' |
	head -n "$nent" >perf.txt
head -n "$nent" ours.txt | sed 's/+0x0$//' >ours_entries.txt
check_eq "perf 6.1 names the entries in .rela.plt's order" \
	"$(cat rela_order.txt)" "$(cat perf.txt)"
check "and so names some of libc's entries otherwise than we do" \
	[ "$(cat perf.txt)" != "$(cat ours_entries.txt)" ]
plt61_table "$PERF" "$CS" "$CS_TOOLS/samples_at" scratch.data "$LIBC" >table.txt
check_eq "plt61_table lists exactly the entries where perf 6.1 and we differ" \
	"$(paste perf.txt ours_entries.txt | awk -F '\t' '$1 != $2' | sort)" \
	"$(cut -f2,3 table.txt | sort)"
