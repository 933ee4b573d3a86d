#!/usr/bin/env bash
# tests/container/chroot.sh [TEST...] - runs integration tests the way a
# container does: in a clean Debian 12 chroot (debootstrap), in its own
# mount namespace, with this tree bind-mounted at /src (a path that exists
# only inside). By default the tests that compare with perf on recordings
# of the whole system. Needs root, debootstrap and the network to
# Debian's archive; the chroot is kept in build/chroot for the next run.
# Not part of make check: docs/reliability.md says what it showed.
#
# perf 6.1 in such a chroot resolves the symbols of other namespaces'
# processes by entering their mount namespace and coming back; coming
# back lands it at the namespace's real root, its working directory is
# gone ("assertion failed at util/namespaces.c:301") and it resolves the
# rest of the recording outside the chroot. Tests must say SKIP then.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "chroot.sh: needs root" >&2; exit 2; }
R=$PWD/build/chroot
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=(script_vs_perf record_syswide record_signals)
if [ ! -x "$R/usr/bin/perf" ]; then
	command -v debootstrap >/dev/null || apt-get install -y -q debootstrap
	debootstrap --variant=minbase --include=linux-perf bookworm "$R"
	chroot "$R" apt-get install -y -q --no-install-recommends libdw1 libelf1 \
		libzstd1 libdebuginfod1 libarchive13 python3 libasan8 libubsan1 \
		zlib1g libcmocka0 bc file xz-utils procps
fi
make -s -j"$(nproc)" all build/asan/callstitch
unshare -m --propagation private bash -euc '
	R=$1; shift
	mount -t proc proc "$R/proc"
	mount --rbind /sys "$R/sys"
	mount --rbind /dev "$R/dev"
	mkdir -p "$R/src"
	mount --bind "$PWD" "$R/src"
	for t in "$@"; do
		chroot "$R" /bin/bash -c "cd /src && tests/run.sh $t"
	done' chroot "$R" "${tests[@]}"
