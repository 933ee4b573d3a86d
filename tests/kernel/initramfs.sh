#!/usr/bin/env bash
# tests/kernel/initramfs.sh - builds the kernel test's initramfs.
#
#   tests/kernel/initramfs.sh RUN_DIR
#
# Needs $CS_KERNEL_DIR/kernel.env (default build/kernel; from fetch.sh).
# Builds, in RUN_DIR (one per run: runs at the same time do not meet):
#   RUN_DIR/initramfs/        the tree (kept: the host resolves the guest's
#                             binaries with --symfs RUN_DIR/initramfs)
#   RUN_DIR/initramfs.cpio.gz
# The tree holds busybox (static), callstitch linked statically (or, if the
# static link fails, the dynamic binary with its libraries and loader),
# deepstack and longsys linked statically with frame pointers, the
# decompressed virtio_blk module, /init and /cs/guest.sh.
# Exits 77 when a tool it needs is missing here (a skip), 1 on a failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
KDIR=$(realpath -m "${CS_KERNEL_DIR:-build/kernel}")
RUN=$(realpath -m "${1:?usage: initramfs.sh RUN_DIR}")
say()  { echo "initramfs: $*" >&2; }
skip() { say "$*"; exit 77; }

# this run's kernel (run.sh's copy), else the one fetched last
if [ -f "$RUN/kernel.env" ]; then . "$RUN/kernel.env"; else . "$KDIR/kernel.env"; fi
BUSYBOX=$(command -v busybox || true)
[ -n "$BUSYBOX" ] || skip "no busybox (Debian package busybox-static)"
file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$BUSYBOX" 2>&1 | grep -q 'not a dynamic' ||
	skip "$BUSYBOX is not static (install busybox-static)"
command -v cpio >/dev/null || skip "no cpio"

# The release objects of the binary, then one static link of them. The
# list of objects is the Makefile's own wildcard, so stale objects of
# deleted sources never get in. CS_KERNEL_CALLSTITCH names a ready
# binary instead (one built elsewhere, static). The build directory is
# shared by every run, so one run builds at a time.
mkdir -p "$RUN"
exec 9>"$KDIR/.build.lock"
flock 9
STATIC=$RUN/callstitch.static
static_ok=0
if [ -n "${CS_KERNEL_CALLSTITCH:-}" ]; then
	cp "$CS_KERNEL_CALLSTITCH" "$STATIC"
	static_ok=1
else
	# its own object directory: a build here never races another one
	# in build/ (the objects are the same release objects)
	REL=$KDIR/rel
	make -s -j"$(nproc)" REL="$REL" "$REL/callstitch" >&2
	objs=()
	for c in src/cli/*.c src/outputs/*.c src/record/*.c; do
		[ -f "$c" ] && objs+=("$REL/obj/${c%.c}.o")
	done
	if ${CC:-cc} -static -o "$STATIC" "${objs[@]}" "$REL/libcallstitch.a" \
		-ldw -lelf -lzstd -lz -lbz2 -llzma -liberty -ltraceevent -lpthread \
		>"$RUN/static-link.log" 2>&1; then
		static_ok=1
	else
		say "static link failed (see $RUN/static-link.log); copying the shared libraries in"
	fi
fi

WL_FLAGS=(-std=gnu11 -O1 -g -static -fno-omit-frame-pointer
	-mno-omit-leaf-frame-pointer -fno-inline -Wall -Wextra -Werror)
R=$RUN/initramfs
rm -rf "$R"
mkdir -p "$R"/{bin,cs,dev,proc,sys,tmp,lib,out}
cp "$BUSYBOX" "$R/bin/busybox"
${CC:-cc} "${WL_FLAGS[@]}" -o "$R/cs/deepstack" tests/workloads/deepstack.c -lpthread
${CC:-cc} "${WL_FLAGS[@]}" -o "$R/cs/longsys" tests/kernel/longsys.c -lpthread
${CC:-cc} "${WL_FLAGS[@]}" -o "$R/cs/offcpu" tests/workloads/offcpu.c -lpthread
if [ $static_ok = 1 ]; then
	cp "$STATIC" "$R/cs/callstitch"
else
	cp "$REL/callstitch" "$R/cs/callstitch"
	flock -u 9
	# every library ldd names, and the loader, at the same paths
	ldd "$REL/callstitch" | grep -o '/[^ ]*' | sort -u | while read -r lib; do
		mkdir -p "$R$(dirname "$lib")"
		cp -L "$lib" "$R$lib"
	done
fi
[ -n "$VIRTIO_BLK" ] && cp "$VIRTIO_BLK" "$R/lib/virtio_blk.ko"
install -m 755 tests/kernel/init "$R/init"
install -m 644 tests/kernel/guest.sh "$R/cs/guest.sh"
(cd "$R" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
	gzip -1 >"$RUN/initramfs.cpio.gz"
say "$(du -h "$RUN/initramfs.cpio.gz" | cut -f1) initramfs, callstitch $([ $static_ok = 1 ] && echo static || echo dynamic)"
