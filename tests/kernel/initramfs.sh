#!/usr/bin/env bash
# tests/kernel/initramfs.sh - builds the kernel test's initramfs.
#
#   tests/kernel/initramfs.sh [KERNEL_DIR]      default build/kernel
#
# Needs KERNEL_DIR/kernel.env (from fetch.sh). Builds:
#   KERNEL_DIR/initramfs/     the tree (kept: the host resolves the guest's
#                             binaries with --symfs KERNEL_DIR/initramfs)
#   KERNEL_DIR/initramfs.cpio.gz
# The tree holds busybox (static), callstitch linked statically (or, if the
# static link fails, the dynamic binary with its libraries and loader),
# deepstack and longsys linked statically with frame pointers, the
# decompressed virtio_blk module, /init and /cs/guest.sh.
# Exits 77 when a tool it needs is missing here (a skip), 1 on a failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
KDIR=$(realpath -m "${1:-build/kernel}")
say()  { echo "initramfs: $*" >&2; }
skip() { say "$*"; exit 77; }

. "$KDIR/kernel.env"
BUSYBOX=$(command -v busybox || true)
[ -n "$BUSYBOX" ] || skip "no busybox (Debian package busybox-static)"
file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$BUSYBOX" 2>&1 | grep -q 'not a dynamic' ||
	skip "$BUSYBOX is not static (install busybox-static)"
command -v cpio >/dev/null || skip "no cpio"

# The release objects of the binary, then one static link of them. The
# list of objects is the Makefile's own wildcard, so stale objects of
# deleted sources never get in. CS_KERNEL_CALLSTITCH names a ready
# binary instead (one built elsewhere, static).
STATIC=$KDIR/callstitch.static
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
	for c in src/cli/*.c src/out/*.c src/record/*.c; do
		[ -f "$c" ] && objs+=("$REL/obj/${c%.c}.o")
	done
	if ${CC:-cc} -static -o "$STATIC" "${objs[@]}" "$REL/libcallstitch.a" \
		-ldw -lelf -lzstd -lz -lbz2 -llzma -liberty -lpthread \
		>"$KDIR/static-link.log" 2>&1; then
		static_ok=1
	else
		say "static link failed (see $KDIR/static-link.log); copying the shared libraries in"
	fi
fi

WL_FLAGS=(-std=gnu11 -O1 -g -static -fno-omit-frame-pointer
	-mno-omit-leaf-frame-pointer -fno-inline -Wall -Wextra -Werror)
R=$KDIR/initramfs
rm -rf "$R"
mkdir -p "$R"/{bin,cs,dev,proc,sys,tmp,lib,out}
cp "$BUSYBOX" "$R/bin/busybox"
${CC:-cc} "${WL_FLAGS[@]}" -o "$R/cs/deepstack" tests/workloads/deepstack.c -lpthread
${CC:-cc} "${WL_FLAGS[@]}" -o "$R/cs/longsys" tests/kernel/longsys.c -lpthread
if [ $static_ok = 1 ]; then
	cp "$STATIC" "$R/cs/callstitch"
else
	cp "$REL/callstitch" "$R/cs/callstitch"
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
	gzip -1 >"$KDIR/initramfs.cpio.gz.tmp"
mv "$KDIR/initramfs.cpio.gz.tmp" "$KDIR/initramfs.cpio.gz"
say "$(du -h "$KDIR/initramfs.cpio.gz" | cut -f1) initramfs, callstitch $([ $static_ok = 1 ] && echo static || echo dynamic)"
