#!/usr/bin/env bash
# scripts/setup.sh - installs what callstitch needs on Debian 12.
#
#   scripts/setup.sh          build dependencies (compiler, libelf/libdw,
#                             zstd, zlib, libiberty) and perf for comparison
#   scripts/setup.sh --test   also what the test suite uses: cmocka, Go's
#                             pprof, Chromium for the flame graph test, qemu,
#                             busybox and cpio for the real-kernel test
set -euo pipefail

build_pkgs=(build-essential pkg-config libelf-dev libdw-dev libzstd-dev
	    zlib1g-dev libiberty-dev xz-utils linux-perf)
test_pkgs=(libcmocka-dev golang-go chromium qemu-system-x86 busybox-static
	   cpio zstd file)

pkgs=("${build_pkgs[@]}")
if [ "${1:-}" = "--test" ]; then
	pkgs+=("${test_pkgs[@]}")
fi

# Skip apt entirely when everything is already there (fast re-runs).
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || {
		echo "setup: need root (or sudo) to install: ${missing[*]}" >&2
		exit 1
	}
	SUDO=sudo
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
