#!/usr/bin/env bash
# Containers: a workload in its own mount namespace, its binary
# bind-mounted at a path that does not exist outside, is recorded; the
# recorder copies the binary into the build-id cache while the process
# lives, so the profile is symbolized after the namespace is gone.
source "$CS_ROOT/tests/lib.sh"

export HOME=$T/home
mkdir -p "$HOME" "$T/store" "$T/hidden"
if ! unshare -m true 2>/dev/null; then
	skip "a workload in its own mount namespace" "unshare -m is not allowed here"
	exit 0
fi

cp "$CS_WORKLOADS/deepstack" "$T/store/deepstack"
APP=$T/hidden/app/deepstack
# inside: a tmpfs over $T/hidden (empty outside), the binary bound into it
cat >"$T/container.sh" <<EOF
mount -t tmpfs none "$T/hidden" && mkdir "$T/hidden/app" &&
	touch "$APP" && mount --bind "$T/store/deepstack" "$APP" &&
	exec "$APP" 0.3 2 10
EOF
record() { "$CS" record -e cpu-clock -F 2000 -g "$@" -- unshare -m sh "$T/container.sh"; }
if ! record -o "$T/data" >"$T/record.log" 2>&1; then
	skip "a workload in its own mount namespace" "record fails here: $(head -1 "$T/record.log")"
	exit 0
fi
check "the recorder says what it cached" \
	grep -q "callstitch: copied [0-9]* files\? into the build-id cache $HOME/.debug" "$T/record.log"
HOME=$T/home-N record -N -o "$T/data.nocache" >"$T/record-N.log" 2>&1
rm "$T/store/deepstack"		# the container's image is gone too
check "the binary's path does not exist outside the namespace" test ! -e "$APP"

bid=$(readelf -n "$CS_WORKLOADS/deepstack" | awk '/Build ID/ { print $3 }')
link=$HOME/.debug/.build-id/${bid:0:2}/${bid:2}
check_eq "perf's cache layout: .build-id link to PATH/BUILDID" \
	"../../${APP#/}/$bid" "$(readlink "$link")"
check "the cached binary is the workload" cmp -s "$link/elf" "$CS_WORKLOADS/deepstack"

"$CS" script -q -i "$T/data" >"$T/out.txt" 2>"$T/err.txt"
check_eq "no frame of the workload is unknown" 0 \
	"$(grep -c "\[unknown\] ($APP)" "$T/out.txt")"
check "the workload's functions are named" grep -q "deep_a+0x[0-9a-f]* ($APP)" "$T/out.txt"

# the same as with the binary handed over explicitly
mkdir -p "$T/ref$(dirname "$APP")"
cp "$CS_WORKLOADS/deepstack" "$T/ref$APP"
HOME=$T/nohome "$CS" script -q -i "$T/data" --symfs "$T/ref" >"$T/ref.txt" 2>/dev/null
# (under --symfs the vdso is not this host's: its frames are left out)
same_file "symbols from the cache equal symbols from the binary itself" \
	<(grep -v '(\[vdso\])$' "$T/ref.txt") <(grep -v '(\[vdso\])$' "$T/out.txt")

HOME=$T/home-N "$CS" script -q -i "$T/data.nocache" >"$T/nocache.txt" 2>/dev/null
check "with -N the cache stays empty" test ! -e "$T/home-N/.debug"
check "with -N nothing was cached: the workload's frames are unknown" \
	grep -q "\[unknown\] ($APP)" "$T/nocache.txt"

# perf reads the cache it shares with us
if [ -x /usr/bin/perf ] && /usr/bin/perf script -i "$T/data" >"$T/perf.txt" 2>/dev/null; then
	check "perf 6.1 finds the cached binary too" grep -q "deep_a.*($APP)" "$T/perf.txt"
else
	skip "perf 6.1 finds the cached binary too" "perf script cannot read the profile here"
fi

# --buildid-cache: every binary with samples, and the kernel's symbols
export HOME=$T/home-bc
mkdir -p "$T/host"
cp "$CS_WORKLOADS/deepstack" "$T/host/deepstack"
"$CS" record -q -e cpu-clock -F 2000 -g --buildid-cache -o "$T/data.bc" -- \
	"$T/host/deepstack" 0.2 1 10 >/dev/null 2>&1
"$CS" script -q -i "$T/data.bc" >"$T/bc.before" 2>/dev/null
check "--buildid-cache: the workload is cached" \
	cmp -s "$HOME/.debug/.build-id/${bid:0:2}/${bid:2}/elf" "$CS_WORKLOADS/deepstack"
check "--buildid-cache: and libc, which it called" \
	test -n "$(ls "$HOME/.debug/usr/lib/x86_64-linux-gnu/libc.so.6/"*/elf 2>/dev/null)"
if [ "$(head -c 16 /proc/kallsyms)" != 0000000000000000 ]; then
	check "--buildid-cache: the kernel's symbols, as perf keeps them" \
		test -s "$(ls "$HOME/.debug/[kernel.kallsyms]/"*/kallsyms | head -1)"
fi
rm "$T/host/deepstack"
"$CS" script -q -i "$T/data.bc" >"$T/bc.after" 2>/dev/null
same_file "--buildid-cache: the binary gone, the output is the same" "$T/bc.before" "$T/bc.after"
