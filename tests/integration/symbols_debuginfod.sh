#!/usr/bin/env bash
# Symbols from a real debuginfod server: a profile whose stripped binary
# is no longer at its recorded path gets full symbols (and inlines) from
# the server's copy of the binary and its separate debug file; with the
# server stopped, one clear warning and the output of a run without it.
source "$CS_ROOT/tests/lib.sh"

# libdebuginfod is loaded when a server is first asked, not at every start
check "the binaries do not load libdebuginfod at start" \
	sh -c "! ldd '$CS_REL' '$CS' | grep -q libdebuginfod"

if ! command -v debuginfod >/dev/null; then
	skip "symbols through debuginfod" "debuginfod is not installed (scripts/setup.sh --test)"
	exit 0
fi
# nothing of the user's: no build-id cache, no configured server
export HOME=$T/home
unset DEBUGINFOD_URLS
mkdir -p "$HOME" "$T/app" "$T/srv"

W=$CS_WORKLOADS/deepstack
objcopy --only-keep-debug "$W" "$T/srv/deepstack.debug"
objcopy --strip-all --add-gnu-debuglink="$T/srv/deepstack.debug" "$W" "$T/app/deepstack"
if ! "$CS" record -q -e cpu-clock -F 2000 -g -o "$T/data" -- \
	"$T/app/deepstack" 0.3 2 10 >"$T/record.log" 2>&1; then
	skip "symbols through debuginfod" "record fails here: $(head -1 "$T/record.log")"
	exit 0
fi

script() { "$CS" script -q -i "$T/data" "$@"; }

# what the recording host shows with the unstripped binary (same build id)
cp "$W" "$T/app/deepstack"
script --no-debuginfod >"$T/full.txt"
check "the reference names the workload's functions" \
	grep -q 'deep_a+0x[0-9a-f]* (.*/app/deepstack)' "$T/full.txt"

# the binary leaves its recorded path for the server's directory
mv "$T/app/deepstack" "$T/srv/deepstack.unstripped"
objcopy --strip-all --add-gnu-debuglink="$T/srv/deepstack.debug" "$W" "$T/srv/deepstack"
rm "$T/srv/deepstack.unstripped"
script >"$T/none.txt" 2>"$T/none.err"
check "without debuginfod the workload's frames are unknown" \
	grep -q '\[unknown\] (.*/app/deepstack)' "$T/none.txt"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
debuginfod -F -p "$port" -d "$T/db.sqlite" -c 1 -t 0 -g 0 "$T/srv" >"$T/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
bid=$(readelf -n "$W" | awk '/Build ID/ { print $3 }')
export DEBUGINFOD_URLS=http://127.0.0.1:$port
ready=false
for _ in $(seq 100); do	# the first scan of the directory, at most 20 s
	rm -rf "$T/probe"	# the client remembers a miss: ask afresh
	if DEBUGINFOD_CACHE_PATH=$T/probe debuginfod-find debuginfo "$bid" >/dev/null 2>&1; then
		ready=true
		break
	fi
	sleep 0.2
done
check "the server indexed the binary and its debug file" $ready

export DEBUGINFOD_CACHE_PATH=$T/cache
script >"$T/fetched.txt" 2>"$T/fetched.err"
same_file "through debuginfod: the same output as with the binary in place" \
	"$T/full.txt" "$T/fetched.txt"
check "the fetched files are in DEBUGINFOD_CACHE_PATH" \
	test -f "$T/cache/$bid/executable" -a -f "$T/cache/$bid/debuginfo"
check_eq "no warning when the server answers" "" \
	"$(grep -i warning "$T/fetched.err")"

# with -j 2 symbols load ahead on worker threads (docs/symbols.md), but
# a lookup that would ask the server is left to the reading thread: a
# first run (nothing fetched, nothing in the symbol cache) prints and
# says what -j 1 does
for j in 1 2; do
	DEBUGINFOD_CACHE_PATH=$T/cache.j$j XDG_CACHE_HOME=$T/xdg.j$j \
		"$CS" script -j $j -i "$T/data" >"$T/j$j.txt" 2>"$T/j$j.err"
done
same_file "-j 2, a first run: what -j 1 prints, fetched" "$T/j1.txt" "$T/j2.txt"
same_file "-j 2, a first run: what -j 1 says" "$T/j1.err" "$T/j2.err"

# on a terminal a download shows a progress line (util-linux script
# gives the command a pty)
if command -v /usr/bin/script >/dev/null; then
	DEBUGINFOD_CACHE_PATH=$T/cache.tty /usr/bin/script -qec \
		"'$CS' script -i '$T/data' >/dev/null" /dev/null >"$T/tty.out" 2>&1
	check "on a terminal: a progress line while fetching" \
		grep -q "callstitch: debuginfod: fetching $T/app/deepstack: [0-9.]* " "$T/tty.out"
else
	skip "on a terminal: a progress line while fetching" "util-linux script is missing"
fi

DEBUGINFOD_CACHE_PATH=$T/cache.off script --no-debuginfod >"$T/off.txt" 2>/dev/null
same_file "--no-debuginfod: as without a server" "$T/none.txt" "$T/off.txt"
check "--no-debuginfod fetches nothing" test ! -e "$T/cache.off/$bid"

kill $server
wait $server 2>/dev/null
trap - EXIT
export DEBUGINFOD_CACHE_PATH=$T/cache.down
script >"$T/down.txt" 2>"$T/down.err"
same_file "server stopped: the same output as without debuginfod" \
	"$T/none.txt" "$T/down.txt"
check_eq "server stopped: one warning naming the server and the reason" 1 \
	"$(grep -c "warning: debuginfod: cannot fetch .*deepstack (build id $bid) from http://127.0.0.1:$port.*: Connection refused" "$T/down.err")"
check_eq "server stopped: nothing else on stderr" 1 "$(wc -l <"$T/down.err")"
for j in 1 2; do
	DEBUGINFOD_CACHE_PATH=$T/cache.down.j$j XDG_CACHE_HOME=$T/xdg.down.j$j \
		"$CS" script -j $j -i "$T/data" >"$T/down.j$j.txt" 2>"$T/down.j$j.err"
done
same_file "server stopped, -j 2: what -j 1 prints" "$T/down.j1.txt" "$T/down.j2.txt"
same_file "server stopped, -j 2: the warning and summary of -j 1" \
	"$T/down.j1.err" "$T/down.j2.err"
