#!/usr/bin/env bash
# --sysroot and --jit-map: a "container" (a root file system run under
# chroot) whose binaries and JIT map exist only under its root; read with
# --sysroot DIR, or with the JIT map handed over by --jit-map DIR|FILE.
source "$CS_ROOT/tests/lib.sh"

export HOME=$T/home		# an empty build-id cache, and -N keeps it so
R=$T/rootfs
mkdir -p "$HOME" "$R/app" "$R/tmp"
if [ "$(uname -m)" != x86_64 ]; then
	skip "--sysroot and --jit-map" "the JIT workload writes x86-64 code"
	exit 0
fi
for w in deepstack jitloop; do
	cp "$CS_WORKLOADS/$w" "$R/app/"
	for lib in $(ldd "$CS_WORKLOADS/$w" | grep -o '/[^ ]*'); do
		cp --parents "$lib" "$R"
	done
done
record() {
	local out=$1; shift
	"$CS" record -q -N -e cpu-clock -F 2000 -g -o "$out" -- chroot "$R" "$@"
}
if ! record "$T/deep.data" /app/deepstack 0.3 2 10 >"$T/record.log" 2>&1; then
	skip "--sysroot and --jit-map" "record under chroot fails here: $(head -1 "$T/record.log")"
	exit 0
fi
record "$T/jit.data" /app/jitloop 0.3 >>"$T/record.log" 2>&1
check "-N: nothing went into the build-id cache" test ! -e "$HOME/.debug"
map=$(ls "$R/tmp/")
check "the JIT wrote its map inside the root" test -f "$R/tmp/$map"
pid=${map#perf-}; pid=${pid%.map}

script() { "$CS" script -q "$@"; }

script -i "$T/deep.data" >"$T/deep.bare"
check "without --sysroot the container's binary is unknown" \
	grep -q '\[unknown\] (/app/deepstack)' "$T/deep.bare"
script -i "$T/deep.data" --sysroot "$R" >"$T/deep.sysroot"
check_eq "--sysroot: no frame of the container's binary is unknown" 0 \
	"$(grep -c '\[unknown\] (/app/deepstack)' "$T/deep.sysroot")"
check "--sysroot: its functions are named" \
	grep -q 'deep_a+0x[0-9a-f]* (/app/deepstack)' "$T/deep.sysroot"

jit_named() { grep -q "jit_spin_a+0x[0-9a-f]* (/tmp/perf-$pid.map)" "$1"; }
script -i "$T/jit.data" >"$T/jit.bare"
check "without a map the JIT code is unknown" \
	grep -q "\[unknown\] (/tmp/perf-$pid.map)" "$T/jit.bare"
script -i "$T/jit.data" --sysroot "$R" >"$T/jit.sysroot"
check "--sysroot: the JIT map in the container's /tmp" jit_named "$T/jit.sysroot"
script -i "$T/jit.data" --jit-map "$R/tmp" >"$T/jit.dir"
check "--jit-map DIR: DIR/perf-PID.map" jit_named "$T/jit.dir"
grep "/tmp/perf-$pid.map" "$T/jit.sysroot" >"$T/jit.sysroot.jit"
grep "/tmp/perf-$pid.map" "$T/jit.dir" >"$T/jit.dir.jit"
same_file "--jit-map DIR and --sysroot name the JIT code alike" "$T/jit.sysroot.jit" "$T/jit.dir.jit"
# a runtime in a pid namespace names its map by the pid it sees there
cp "$R/tmp/$map" "$T/perf-1.map"
script -i "$T/jit.data" --jit-map "$T/perf-1.map" >"$T/jit.file"
check "--jit-map FILE: for JIT code without a map of its own" jit_named "$T/jit.file"
same_file "--jit-map FILE and --jit-map DIR: the same output" "$T/jit.dir" "$T/jit.file"
