#!/usr/bin/env bash
# symbol_cache.sh - finished symbol tables and inflated debug sections
# (the inline lookups' images) kept in $XDG_CACHE_HOME/callstitch between
# runs (docs/symbols.md): a run with the cache answers byte for byte as one
# without, a damaged cache file is rebuilt, and a cache that cannot be
# written changes nothing.
source "$CS_ROOT/tests/lib.sh"

if [ ! -x /usr/bin/perf ]; then
	skip "symbol cache" "/usr/bin/perf is not installed"
	exit 0
fi
DATA=$T/deep.data
if ! /usr/bin/perf record -q -e cpu-clock -F 2000 -g -o "$DATA" -- \
	"$CS_WORKLOADS/deepstack" 1 2 20 >"$T/record.log" 2>&1; then
	skip "symbol cache" "perf record fails here: $(head -1 "$T/record.log")"
	exit 0
fi

export XDG_CACHE_HOME=$T/cache
run() { "$CS" script -q -i "$DATA" >"$T/$1" 2>"$T/$1.err"; }

run cold
n=$(find "$XDG_CACHE_HOME/callstitch" -name 'symtab-*' 2>/dev/null | wc -l)
if [ "$n" -gt 0 ]; then ok "a first run saves symbol tables ($n)"; else
	notok "a first run saves symbol tables"; fi
# libc's and ld.so's debug files (libc6-dbg) compress their sections
n=$(find "$XDG_CACHE_HOME/callstitch" -name 'debugimg-*' 2>/dev/null | wc -l)
if [ "$n" -gt 0 ]; then ok "a first run saves inflated debug sections ($n)"; else
	notok "a first run saves inflated debug sections"; fi
run warm
same_file "a run from the cache prints what a first run printed" "$T/cold" "$T/warm"

# damage every saved table: each is refused and made again
for f in "$XDG_CACHE_HOME"/callstitch/symtab-*; do
	head -c 100 "$f" >"$f.cut" && mv "$f.cut" "$f"
done
# a debug image cut after its header page, and one with a wrong key
first=true
for f in "$XDG_CACHE_HOME"/callstitch/debugimg-*; do
	if $first; then
		head -c 10000 "$f" >"$f.cut" && mv "$f.cut" "$f"
	else
		sed -i "1s/^callstitch debug image /callstitch debug imagX /" "$f"
	fi
	first=false
done
run damaged
same_file "damaged cache files are rebuilt, not trusted" "$T/cold" "$T/damaged"
run again
same_file "and the rebuilt ones read back the same" "$T/cold" "$T/again"

XDG_CACHE_HOME=/nonexistent/dir run nocache
same_file "an unwritable cache directory changes nothing" "$T/cold" "$T/nocache"
check "no error is printed for it" test ! -s "$T/nocache.err"
