#!/usr/bin/env bash
# library_abi.sh - libcallstitch.so exports exactly the public API: the
# functions declared in include/callstitch/callstitch.h, each listed in
# src/callstitch.map under a version, and nothing else (nm -D); it carries
# its SONAME; the header compiles on its own, as C and as C++.
source "$CS_ROOT/tests/lib.sh"

SO=$CS_ROOT/build/libcallstitch.so
HDR=$CS_ROOT/include/callstitch/callstitch.h
MAP=$CS_ROOT/src/callstitch.map

# function names declared by the header (comments gone, through cpp)
cc -E -P -I"$CS_ROOT/include" "$HDR" | grep -oE '\bcs_[a-z0-9_]+ *\(' |
	tr -d ' (' | sort -u >"$T/header"
# names the version script makes global
sed -e 's|/\*.*\*/||' -e '/\/\*/,/\*\//d' "$MAP" |
	grep -oE '^\s*cs_[a-z0-9_]+;' | tr -d ' \t;' | sort -u >"$T/map"
# what the library exports, and under which version
nm -D --defined-only "$SO" | awk '$2 ~ /^[TWDBR]$/ { print $3 }' | sort -u >"$T/nm"
sed 's/@.*//' "$T/nm" | sort -u >"$T/exported"

check "the header declares the public functions ($(wc -l <"$T/header"))" test -s "$T/header"
same_file "src/callstitch.map lists every function the header declares, and no other" \
	"$T/header" "$T/map"
same_file "nm -D: the library exports exactly the header's functions" \
	"$T/header" "$T/exported"
if grep -v '@@CALLSTITCH_' "$T/nm" | grep -q .; then
	notok "every export carries a CALLSTITCH_ version"; grep -v '@@CALLSTITCH_' "$T/nm" | sed 's/^/#   /'
else
	ok "every export carries a CALLSTITCH_ version"
fi
check_eq "the SONAME is libcallstitch.so.0" "libcallstitch.so.0" \
	"$(readelf -d "$SO" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')"

# the header stands alone, and C++ callers can include it
printf '#include <callstitch/callstitch.h>\nint main(void) { return 0; }\n' >"$T/alone.c"
check "the header compiles alone with -Wall -Wextra -Werror -pedantic" \
	cc -std=c11 -Wall -Wextra -Werror -pedantic -I"$CS_ROOT/include" -c "$T/alone.c" -o "$T/alone.o"
if command -v c++ >/dev/null; then
	cp "$T/alone.c" "$T/alone.cc"
	check "the header compiles as C++" c++ -Wall -Wextra -Werror -I"$CS_ROOT/include" -c "$T/alone.cc" -o "$T/alone_cc.o"
else
	skip "the header compiles as C++" "no c++ compiler"
fi
# nothing of src/ leaks into it
if grep -nE '#include *"|struct cs_perf_attr' "$HDR" | grep -q .; then
	notok "the header names nothing internal"; grep -nE '#include *"|struct cs_perf_attr' "$HDR" | sed 's/^/#   /'
else
	ok "the header names nothing internal"
fi
