#!/usr/bin/env bash
# symbol_cache.sh - finished symbol tables and inflated debug sections
# (the inline lookups' images) kept in $XDG_CACHE_HOME/callstitch between
# runs (docs/symbols.md): a run with the cache answers byte for byte as one
# without, a damaged cache file is rebuilt, a cache that cannot be
# written changes nothing, two builds keep an entry each and the size
# bound removes the least recently used entries.
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

# a hit marks its file used (the size bound removes the least recently
# used first): every file the warm run mapped is newer than before it
touch -d '2 hours ago' "$XDG_CACHE_HOME"/callstitch/*
touch "$T/before-hit"
run touched
n=$(find "$XDG_CACHE_HOME/callstitch" -type f ! -newer "$T/before-hit" | wc -l)
check_eq "a run from the cache marks the files it used" 0 "$n"

# Two builds used in turn (the sanitized and the release one) each keep
# their own entries: each one's second run maps what its first saved, so
# no file is written again (same names, same inodes)
snapshot() { find "$XDG_CACHE_HOME/callstitch" -type f -printf '%f %i\n' | sort; }
export XDG_CACHE_HOME=$T/cache-builds
run asan1
"$CS_REL" script -q -i "$DATA" >"$T/rel1" 2>"$T/rel1.err"
snapshot >"$T/after-first"
run asan2
"$CS_REL" script -q -i "$DATA" >"$T/rel2" 2>"$T/rel2.err"
snapshot >"$T/after-second"
n=$(grep -c '^symtab-' "$T/after-first")
[ "$n" -gt 0 ] && [ $((n % 2)) -eq 0 ] && ok "two builds keep an entry each ($n tables)" ||
	notok "two builds keep an entry each ($n tables)"
same_file "each build's second run hits its own entries, writes nothing" \
	"$T/after-first" "$T/after-second"
same_file "the release build prints from the cache what it printed first" \
	"$T/rel1" "$T/rel2"

# The size bound (CS_CACHE_MAX_MB): in a 1 MiB cache the least recently
# used entries go as new ones are written, but never the one just written:
# what is left is under the bound, or that entry alone (a debug image or a
# big table is over 1 MiB by itself).
export XDG_CACHE_HOME=$T/cache-bound
run fill
rm -f "$XDG_CACHE_HOME"/callstitch/debugimg-*
for i in 1 2 3; do
	head -c 600000 /dev/zero >"$XDG_CACHE_HOME/callstitch/symtab-old$i"
done
touch -d '2 hours ago' "$XDG_CACHE_HOME"/callstitch/*
CS_CACHE_MAX_MB=1 run bounded
same_file "a bounded cache prints the same" "$T/cold" "$T/bounded"
n=$(find "$XDG_CACHE_HOME/callstitch" -name '*-old*' | wc -l)
check_eq "the least recently used entries go when the cache is full" 0 "$n"
n=$(find "$XDG_CACHE_HOME/callstitch" -type f | wc -l)
kb=$(du -sk "$XDG_CACHE_HOME/callstitch" | cut -f1)
if [ "$n" -ge 1 ] && { [ "$n" -eq 1 ] || [ "$kb" -le 1100 ]; }; then
	ok "the entry just written stays ($n files, $kb KiB)"
else
	notok "the entry just written stays ($n files, $kb KiB)"
fi
XDG_CACHE_HOME=$T/cache-off CS_CACHE_MAX_MB=0 run off
same_file "CS_CACHE_MAX_MB=0 turns the cache off" "$T/cold" "$T/off"
check "and writes nothing" test ! -e "$T/cache-off"
