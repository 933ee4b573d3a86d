#!/usr/bin/env bash
# tests/kernel/run.sh - the kernel test's guest side, start to finish:
# fetch the newest Debian cloud kernel (fetch.sh), build the initramfs
# (initramfs.sh), boot it and record inside (boot.sh). The guest's files
# land in KERNEL_DIR/run/out; tests/integration/kernel_qemu.sh checks them.
#
#   tests/kernel/run.sh [KERNEL_DIR]      default build/kernel
#
# Exits 0 when the guest's files are back, 77 when this machine cannot
# fetch or boot the kernel (the reason is the last line on stderr), other
# values on a failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
KDIR=$(realpath -m "${1:-build/kernel}")
for step in fetch initramfs boot; do
	tests/kernel/$step.sh "$KDIR" || exit $?
done
