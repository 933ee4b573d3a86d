#!/usr/bin/env bash
# callstitch archive: a profile moved with its archive to "another
# machine" (another hostname, so no /proc/kallsyms; no debug files; an
# empty build-id cache; every binary gone from its recorded path) prints
# the same script output through --archive, or --symfs on the archive
# unpacked, as on the recording host.
source "$CS_ROOT/tests/lib.sh"

# libarchive is loaded when an archive is first read or written
check "the binaries do not load libarchive at start" \
	sh -c "! ldd '$CS_REL' '$CS' | grep -q libarchive"

export HOME=$T/home
mkdir -p "$HOME" "$T/rec/lib" "$T/clean"

# the workload, its libc and its dynamic loader under one directory that
# is removed afterwards: no binary of the profile stays at its path
W=$CS_WORKLOADS/deepstack
cp "$W" "$T/rec/deepstack"
for lib in $(ldd "$W" | grep -o '/[^ ]*'); do
	cp "$lib" "$T/rec/lib/"
done
LDSO=$(ls "$T/rec/lib/"ld-linux*)
if ! "$CS" record -q -e cpu-clock -F 2000 -g -o "$T/data" -- \
	"$LDSO" --library-path "$T/rec/lib" "$T/rec/deepstack" 0.3 2 10 >"$T/record.log" 2>&1; then
	skip "archive: the same output elsewhere" "record fails here: $(head -1 "$T/record.log")"
	exit 0
fi
"$CS" script -q -i "$T/data" >"$T/here.txt"
check "on the recording host the workload's and libc's frames are named" \
	grep -q "deep_a+0x[0-9a-f]* ($T/rec/deepstack)" "$T/here.txt"

"$CS" archive -i "$T/data" -o "$T/profile.tar.zst" 2>"$T/archive.err"
check "archive says what it packed" \
	grep -q "callstitch: wrote $T/profile.tar.zst: [0-9]* binaries, [0-9]* debug files\?, the kernel's symbols" "$T/archive.err"
bid=$(readelf -n "$W" | awk '/Build ID/ { print $3 }')
libc_bid=$(readelf -n "$T/rec/lib/libc.so.6" | awk '/Build ID/ { print $3 }')
tar -tf "$T/profile.tar.zst" >"$T/list" 2>/dev/null
check "the workload, by build id" grep -qx ".build-id/${bid:0:2}/${bid:2}/elf" "$T/list"
check "libc and its debug file, by build id" \
	grep -qx ".build-id/${libc_bid:0:2}/${libc_bid:2}/debug" "$T/list"
check "the kernel's symbols" grep -q '^\.build-id/../.*/kallsyms$' "$T/list"
"$CS" archive -q -i "$T/data" -o - 2>/dev/null | tar --zstd -tf - >"$T/list.stdout" 2>/dev/null
same_file "-o -: the same archive on standard output" "$T/list" "$T/list.stdout"

mv "$T/data" "$T/profile.tar.zst" "$T/clean/"
rm -rf "$T/rec"
mkdir "$T/clean/unpacked"
tar -xf "$T/clean/profile.tar.zst" -C "$T/clean/unpacked"

# another machine: a hostname that is not the recording's, no debug files
elsewhere() {
	unshare -m -u sh -c 'hostname elsewhere && mount -t tmpfs none /usr/lib/debug &&
		cd "$0" && exec "$@"' "$T/clean" "$@"
}
if ! elsewhere true 2>/dev/null; then
	skip "archive: the same output elsewhere" "unshare -m -u is not allowed here"
	exit 0
fi
elsewhere "$CS" script -q -i data >"$T/bare.txt" 2>/dev/null
check "elsewhere without the archive the frames are unknown" \
	grep -q "\[unknown\] ($T/rec/deepstack)" "$T/bare.txt"
elsewhere "$CS" script -q -i data --archive profile.tar.zst >"$T/archive.txt" 2>"$T/archive.stderr"
same_file "elsewhere with --archive: the recording host's output" "$T/here.txt" "$T/archive.txt"
check_eq "--archive leaves nothing behind in TMPDIR" "" \
	"$(TMPDIR=$T/tmp; mkdir -p "$TMPDIR"; TMPDIR=$TMPDIR elsewhere "$CS" script -q -i data \
		--archive profile.tar.zst >/dev/null 2>&1; ls "$T/tmp")"
elsewhere "$CS" script -q -i data --symfs unpacked >"$T/symfs.txt" 2>/dev/null
same_file "elsewhere with --symfs on the unpacked archive: the same" "$T/here.txt" "$T/symfs.txt"

# a broken archive is an error that names it, not a silent [unknown]
head -c 1000 "$T/clean/profile.tar.zst" >"$T/clean/cut.tar.zst"
rc=0
"$CS" script -q -i "$T/clean/data" --archive "$T/clean/cut.tar.zst" >/dev/null 2>"$T/cut.err" || rc=$?
check_eq "a cut archive: exit 1" 1 "$rc"
check "a cut archive: the message names it" grep -q "cut.tar.zst: " "$T/cut.err"
