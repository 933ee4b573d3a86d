#!/usr/bin/env bash
# scripts/setup.sh - installs what callstitch needs on Debian 12.
#
#   scripts/setup.sh          build dependencies (compiler, libelf/libdw,
#                             zstd, zlib, libiberty) and perf
#   scripts/setup.sh --test   also what the test suite uses: cmocka, Go's
#                             pprof, Chromium and Node for the flame graph
#                             test, qemu, busybox and cpio for the
#                             real-kernel test
set -euo pipefail
cd "$(dirname "$0")/.."

build_pkgs=(build-essential pkg-config libelf-dev libdw-dev libzstd-dev
	    zlib1g-dev libiberty-dev xz-utils linux-perf)
test_pkgs=(libcmocka-dev golang-go chromium qemu-system-x86 busybox-static
	   cpio zstd file python3 bc libc6-dbg)

testing=false
[ "${1:-}" = "--test" ] && testing=true

pkgs=("${build_pkgs[@]}")
if $testing; then
	pkgs+=("${test_pkgs[@]}")
	# the browser test drives Chromium from Node; a machine may already
	# have Node from elsewhere (with its own npm), which Debian's npm
	# package would conflict with
	command -v node >/dev/null || pkgs+=(nodejs)
	command -v npm >/dev/null || pkgs+=(npm)
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done

if [ ${#missing[@]} -ne 0 ]; then
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
fi

# the browser test's one npm package (playwright-core, pinned in the lock
# file); it drives Debian's chromium, it downloads no browser
if $testing && [ ! -d tests/browser/node_modules/playwright-core ]; then
	(cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)
fi
exit 0
