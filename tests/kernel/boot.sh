#!/usr/bin/env bash
# tests/kernel/boot.sh - boots the fetched kernel with the test initramfs
# under qemu and brings the guest's files back.
#
#   tests/kernel/boot.sh RUN_DIR
#
# Boots $CS_KERNEL_DIR's kernel (default build/kernel) with
# RUN_DIR/initramfs.cpio.gz.
# KVM when /dev/kvm works, else (or when KVM cannot run this kernel, as
# under some nested hypervisors) TCG. No network, console on a serial port
# logged to RUN_DIR/console.log, a hard time limit
# (CS_KERNEL_TIMEOUT seconds, default 300). The guest writes a tar archive
# of its /out onto a raw virtio disk; it lands in RUN_DIR/out/ and
# its checksums are verified.
#
# Exits 0 when the guest finished and its files are whole; 77 when the
# kernel could not be booted here at all (no qemu, or neither KVM nor TCG
# got the kernel to print its banner): a skip; 1 when the kernel started
# but the guest did not finish (our /init failed, a recording hung) or its
# files are bad.
set -euo pipefail
cd "$(dirname "$0")/../.."
KDIR=$(realpath -m "${CS_KERNEL_DIR:-build/kernel}")
RUN=$(realpath -m "${1:?usage: boot.sh RUN_DIR}")
LIMIT=${CS_KERNEL_TIMEOUT:-300}
BOOT_LIMIT=${CS_KERNEL_BOOT_TIMEOUT:-120}	# until /init runs
say()  { echo "boot: $*" >&2; }
ulimit -c 0	# an aborting qemu leaves no core file behind
skip() { say "$*"; exit 77; }

QEMU=$(command -v qemu-system-x86_64 || true)
[ -n "$QEMU" ] || skip "no qemu-system-x86_64 (Debian package qemu-system-x86)"
# this run's kernel (run.sh's copy), else the one fetched last
if [ -f "$RUN/kernel.env" ]; then . "$RUN/kernel.env"; else . "$KDIR/kernel.env"; fi
rm -rf "$RUN/out" "$RUN/disk.img" "$RUN"/console.log "$RUN"/qemu*
mkdir -p "$RUN/out"
truncate -s 512M "$RUN/disk.img"

# $1 = kvm or tcg. Returns 0 when the guest said "done", 2 when the
# accelerator could not run the kernel, 3 when the kernel never started,
# 1 when the kernel started but the guest did not finish.
boot() {
	local accel
	if [ "$1" = kvm ]; then
		accel=(-accel kvm -cpu host)
	else
		# One host thread for both vCPUs: with multi-threaded TCG
		# (qemu 7.2) a vCPU can run a kernel text_poke's temporary
		# int3 after the patch is done, and the guest oopses in
		# __schedule when perf flips its static keys.
		accel=(-accel tcg,thread=single -cpu max)
	fi
	: >"$RUN/console.log"
	rm -f "$RUN/qemu.pid" "$RUN/qemu.rc"
	# In a subshell whose stderr is dropped: bash would report an
	# aborting qemu there. qemu itself logs to qemu-$1.log.
	( "$QEMU" "${accel[@]}" -m 2048 -smp 2 -display none -vga none \
		-monitor none -serial "file:$RUN/console.log" -no-reboot -nic none \
		-pidfile "$RUN/qemu.pid" \
		-kernel "$VMLINUZ" -initrd "$RUN/initramfs.cpio.gz" \
		-append "console=ttyS0 panic=-1 loglevel=6" \
		-drive "file=$RUN/disk.img,format=raw,if=virtio,cache=unsafe" \
		</dev/null >"$RUN/qemu-$1.log" 2>&1
	  echo $? >"$RUN/qemu.rc" ) 2>/dev/null &
	local pid=$! start=$SECONDS started=0 rc
	stop_qemu() {
		[ -s "$RUN/qemu.pid" ] && kill "$(cat "$RUN/qemu.pid")" 2>/dev/null
		wait $pid 2>/dev/null || true
	}
	while kill -0 $pid 2>/dev/null; do
		if [ $started = 0 ] && grep -q '^CS-GUEST: init' "$RUN/console.log"; then
			started=1
			say "$1: guest $(sed -n 's/^CS-GUEST: init //p' "$RUN/console.log" | head -1) up after $((SECONDS - start)) s"
		fi
		# KVM under a nested hypervisor may fail to emulate an
		# instruction of the kernel's decompressor: qemu then stops
		# the guest and waits, so look for its message.
		if grep -q 'KVM internal error\|failed to set MSR' "$RUN/qemu-$1.log"; then
			stop_qemu
			return 2
		fi
		if { [ $started = 0 ] && [ $((SECONDS - start)) -ge "$BOOT_LIMIT" ]; } ||
		   [ $((SECONDS - start)) -ge "$LIMIT" ]; then
			say "$1: time limit reached after $((SECONDS - start)) s, stopping qemu"
			stop_qemu
			break
		fi
		sleep 0.2
	done
	wait $pid 2>/dev/null || true
	rc=$(cat "$RUN/qemu.rc" 2>/dev/null || echo killed)
	say "$1: qemu exited ($rc) after $((SECONDS - start)) s"
	grep -q '^CS-GUEST: done' "$RUN/console.log" && return 0
	grep -q '^CS-GUEST: init' "$RUN/console.log" && return 1
	# The banner says the kernel ran: from there on a failure is ours
	# (an initramfs the kernel cannot use), not this machine's.
	grep -q 'Linux version' "$RUN/console.log" && return 1
	[ "$1" = kvm ] && return 2
	return 3
}

rc=3
tried=
if [ -c /dev/kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] && [ "${CS_KERNEL_ACCEL:-}" != tcg ]; then
	boot kvm && rc=0 || rc=$?
	tried=kvm
	if [ $rc = 2 ]; then
		say "kvm cannot run this kernel here ($(grep -m1 -o 'KVM internal error.*\|failed to set MSR.*' "$RUN/qemu-kvm.log" || echo 'no console output')); trying tcg"
	fi
fi
if [ -z "$tried" ] || [ $rc = 2 ]; then
	boot tcg && rc=0 || rc=$?
fi
case $rc in
0) ;;
1) say "the kernel started but the guest did not finish; see $RUN/console.log"
   grep -E '^CS-GUEST: error|Kernel panic|not syncing' "$RUN/console.log" >&2 || true
   exit 1 ;;
*) tail -5 "$RUN/console.log" | sed 's/^/boot:   /' >&2
   skip "the kernel did not start under qemu here; see $RUN/console.log" ;;
esac

tar -xf "$RUN/disk.img" -C "$RUN/out" || { say "no tar archive on the guest's disk"; exit 1; }
(cd "$RUN/out" && sha256sum --quiet -c SHA256SUMS) >&2 ||
	{ say "the guest's files do not match their checksums"; exit 1; }
rm -f "$RUN/disk.img"
say "$(ls "$RUN/out" | wc -l) files back from the guest in $RUN/out"
