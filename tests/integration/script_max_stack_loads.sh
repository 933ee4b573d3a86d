#!/usr/bin/env bash
# script_max_stack_loads.sh - script loads the symbols of a binary only
# when a line it prints names an address in it, at every -j: with
# --max-stack, a frame past the last line shown loads nothing, writes no
# cache file, builds no PLT table (docs/symbols.md, "Paying only for what
# is used"). With -j 2 and more the formatting thread names user
# addresses and knows how many lines their inlined calls take; the
# reading thread, which decides what is loaded, counts each as one line
# until it asks that thread (docs/script.md).
#
# Each profile is one stack, innermost first, made by samples_at --stack:
# an address of the DWARF workload with inlined calls (several lines,
# more than --max-stack allows), then frames of another binary.
source "$CS_ROOT/tests/lib.sh"
cd "$T"
W=$CS_WORKLOADS/nofp/dwarfmix
D=$CS_WORKLOADS/deepstack
if [ ! -x "$W" ] || [ ! -x "$D" ]; then
	skip "what --max-stack loads" "no $W or $D (make workloads)"; exit 0
fi

# an address of the workload that shows three inlined calls or more
inl=
for a in $(readelf --debug-dump=info "$W" 2>/dev/null |
	   awk '/DW_TAG_inlined_subroutine/ { f = 1 }
		f && /DW_AT_low_pc/ { print $NF; f = 0 }' | sort -u | head -50); do
	if [ "$(addr2line -i -e "$W" "$a" | wc -l)" -ge 4 ]; then inl=${a#0x}; break; fi
done
if [ -z "$inl" ]; then skip "what --max-stack loads" "no inlined calls in $W"; exit 0; fi
# a function of the other binary, and its first PLT entry
fn=$(nm "$D" | awk '$3 == "recurse" { print $1 }')
plt=$(readelf -SW "$D" | awk '$2 == ".plt" { print $4 }')
plt=$(printf %x $((0x${plt:-0} + 16)))

"$CS_TOOLS/samples_at" --stack beyond.data "$W" "$inl" "$D" "$fn"
"$CS_TOOLS/samples_at" --stack plt.data "$D" "$fn" "$W" "$inl" "$D" "$plt"
# n: the lines of that address, its inlined calls' and its own
n=$("$CS" script -q --max-stack 1000 -i beyond.data | grep -c "^[[:space:]]*[0-9a-f]* .*(\(inlined\|$W\))")
check "the workload's address shows 3 inlined calls or more ($((n - 1)))" \
	test "$n" -ge 4
check "the other binary's PLT entry is named from its PLT" \
	grep -q '@plt' <("$CS" script -q -i plt.data)

# "$@" at -j J, first run (an empty cache): its output into J.out, the
# names of the cache files it left into J.cache
run() {
	local j=$1 cache
	shift
	cache=$(mktemp -d "$T/cache.XXXXXX")
	XDG_CACHE_HOME=$cache "$CS" "$@" -j "$j" >"$j.out" 2>&1
	echo "exit $?" >>"$j.out"
	( cd "$cache" && find . -type f | sort ) >"$j.cache"
	rm -rf "$cache"
}

# the other binary's frame: past the last line, on it, the last line
for args in "script --max-stack 2 -i beyond.data" \
	    "script --max-stack $n -i beyond.data" \
	    "script --max-stack $((n + 1)) -i beyond.data" \
	    "script -i beyond.data" \
	    "script --no-inline --max-stack 1 -i beyond.data" \
	    "script --max-stack 3 -i plt.data" \
	    "script --max-stack $((n + 1)) -i plt.data" \
	    "script --max-stack $((n + 2)) -i plt.data"; do
	# shellcheck disable=SC2086
	run 1 $args
	for j in 2 3; do
		# shellcheck disable=SC2086
		run $j $args
		same_file "$args: -j $j prints what -j 1 prints" 1.out "$j.out"
		same_file "$args: -j $j leaves the cache files -j 1 leaves" \
			1.cache "$j.cache"
	done
	case $args in
	*"--max-stack 2 -i beyond"*|*"--max-stack $n -i beyond"*|*"--max-stack 1 -i beyond"*)
		check_eq "$args: one binary's lines, one table cached" \
			1 "$(grep -c symtab- 1.cache)" ;;
	esac
done
