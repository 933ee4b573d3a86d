#!/usr/bin/env bash
# scripts/setup.sh - installs what callstitch needs on Debian 12.
#
#   scripts/setup.sh          build dependencies (compiler, libelf/libdw,
#                             libdebuginfod, libarchive, zstd, zlib,
#                             libiberty, libtraceevent) and perf
#   scripts/setup.sh --test   also what the test suite uses: cmocka, a
#                             debuginfod server, Go's
#                             pprof, Chromium and Node for the flame graph
#                             and speedscope tests, man-db and
#                             bash-completion for the install test, qemu,
#                             busybox and cpio for the real-kernel test,
#                             clang with libFuzzer for make fuzz (Debian
#                             12's own clang-14; llvm-14 measures the
#                             fuzzers' coverage)
set -euo pipefail
cd "$(dirname "$0")/.."

build_pkgs=(build-essential pkg-config libelf-dev libdw-dev libzstd-dev
	    zlib1g-dev libiberty-dev libdebuginfod-dev libarchive-dev
	    libtraceevent-dev xz-utils linux-perf)
test_pkgs=(libcmocka-dev zstd file python3 bc libc6-dbg man-db groff-base
	   bash-completion debuginfod strace)
# tests that need these say SKIP when they are missing, so a machine where
# one cannot be installed still runs the rest of the suite
optional_pkgs=(golang-go chromium qemu-system-x86 busybox-static cpio libbz2-dev
	       clang-14 libclang-rt-14-dev libfuzzer-14-dev llvm-14)

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

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

missing=() missing_optional=()
for p in "${pkgs[@]}"; do
	installed "$p" || missing+=("$p")
done
if $testing; then
	for p in "${optional_pkgs[@]}"; do
		installed "$p" || missing_optional+=("$p")
	done
fi

SUDO=
if [ $((${#missing[@]} + ${#missing_optional[@]})) -ne 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null || {
			echo "setup: need root (or sudo) to install:" \
			     "${missing[*]} ${missing_optional[*]}" >&2
			exit 1
		}
		SUDO=sudo
	fi
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -q
fi
if [ ${#missing[@]} -ne 0 ]; then
	echo "setup: installing ${missing[*]}"
	$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
for p in "${missing_optional[@]}"; do
	$SUDO apt-get install -y -q --no-install-recommends "$p" ||
		echo "setup: warning: could not install $p; the tests that need it will be skipped" >&2
done

# the browser tests' npm packages (playwright-core, which drives Debian's
# chromium and downloads no browser, and speedscope's built app), pinned
# in the lock file
if $testing && { [ ! -d tests/browser/node_modules/playwright-core ] ||
		 [ ! -d tests/browser/node_modules/speedscope ]; }; then
	(cd tests/browser && npm ci --no-audit --no-fund --loglevel=error) ||
		echo "setup: warning: npm ci failed; the browser test will be skipped" >&2
fi
exit 0
