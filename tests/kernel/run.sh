#!/usr/bin/env bash
# tests/kernel/run.sh - the kernel test's guest side, start to finish:
# fetch the newest Debian cloud kernel (fetch.sh), build the initramfs
# (initramfs.sh), boot it and record inside (boot.sh). The guest's files
# land in RUN_DIR/out; tests/integration/kernel_qemu.sh checks them.
#
#   tests/kernel/run.sh [RUN_DIR]         default $CS_KERNEL_DIR/run
#
# The download is cached in $CS_KERNEL_DIR (default build/kernel), shared
# by all runs; everything of one run is in RUN_DIR.
#
# Exits 0 when the guest's files are back, 77 when this machine cannot
# fetch or boot the kernel (the reason is the last line on stderr), other
# values on a failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
KDIR=$(realpath -m "${CS_KERNEL_DIR:-build/kernel}")
export CS_KERNEL_DIR=$KDIR
RUN=$(realpath -m "${1:-$KDIR/run}")
tests/kernel/fetch.sh || exit $?
# this run's kernel, whatever a later fetch picks
mkdir -p "$RUN"
cp "$KDIR/kernel.env" "$RUN/kernel.env"
for step in initramfs boot; do
	tests/kernel/$step.sh "$RUN" || exit $?
done
