#!/usr/bin/env bash
# tests/kernel/fetch.sh - downloads Debian's newest cloud kernel (one that
# has deferred user callchains) through a private apt configuration and
# unpacks it, without installing anything or touching the machine's apt.
#
#   tests/kernel/fetch.sh           into $CS_KERNEL_DIR (default build/kernel)
#
# Writes KERNEL_DIR/kernel.env (KREL, VMLINUZ, VIRTIO_BLK) on success.
# Exits 77 with the reason on stderr when no kernel can be had here (no
# Debian mirror in the apt sources, the archive cannot be reached, no such
# package), so callers can report a skip; any other non-zero exit is a bug.
#
# The mirror is the one the machine already uses: the URI of its Debian
# (not security) sources, read with apt's own parser. Suites default to
# trixie-backports and sid (CS_KERNEL_SUITES overrides); CS_KERNEL_RELEASE
# pins a kernel release such as 7.3.4+deb13-cloud-amd64. The package lists
# are refreshed when older than a day and the .debs are kept, so a second
# run needs no network.
set -euo pipefail
cd "$(dirname "$0")/../.."
KDIR=$(realpath -m "${CS_KERNEL_DIR:-build/kernel}")
SUITES=${CS_KERNEL_SUITES:-trixie-backports sid}
KEYRING=${CS_KERNEL_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
MIN_VERSION=6.19	# the first release with deferred user callchains

say()  { echo "fetch: $*" >&2; }
skip() { say "$*"; exit 77; }

command -v apt-get >/dev/null || skip "no apt-get on this machine"
command -v dpkg-deb >/dev/null || skip "no dpkg-deb on this machine"
[ -r "$KEYRING" ] || skip "no Debian archive keyring at $KEYRING"

# The Debian mirror: apt's view of the configured sources first (handles
# both sources.list and deb822 .sources), then a plain read of the files
# when apt has no Release files yet (no 'apt-get update' ever ran).
mirror_uri() {
	local uri
	uri=$(apt-get indextargets --format '$(REPO_URI) $(LABEL)' 2>/dev/null |
		awk '$2 == "Debian" { print $1; exit }')
	if [ -z "$uri" ]; then
		uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			sed -n 's/^[[:space:]]*deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\)[[:space:]]\+\([^[:space:]]\+\).*/\2 \3/p' |
			awk '$2 !~ /security/ { print $1; exit }')
	fi
	if [ -z "$uri" ]; then
		uri=$(awk 'BEGIN { RS = ""; FS = "\n" }
			/(^|\n)Suites:/ && !/Suites:[^\n]*security/ && !/(^|\n)Enabled: *no/ {
				for (i = 1; i <= NF; i++)
					if ($i ~ /^URIs:/) { split($i, a, /[ \t]+/); print a[2]; exit }
			}' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
	fi
	case $uri in
	http://*|https://*|file:/*) echo "${uri%/}" ;;
	*) return 1 ;;
	esac
}

# one fetch at a time: runs of the test may overlap
mkdir -p "$KDIR"
exec 9>"$KDIR/.fetch.lock"
flock 9

APTDIR=$KDIR/apt
mkdir -p "$APTDIR/etc/prefs" "$APTDIR/etc/conf-parts" \
	"$APTDIR/state/lists/partial" "$APTDIR/cache/archives/partial" "$KDIR/deb"
touch "$APTDIR/state/status"
APT_OPTS=(
	-o "Dir::Etc::sourcelist=$APTDIR/etc/sources.list"
	-o "Dir::Etc::sourceparts=-"
	-o "Dir::Etc::preferences=$APTDIR/etc/preferences"
	-o "Dir::Etc::preferencesparts=$APTDIR/etc/prefs"
	-o "Dir::Etc::parts=$APTDIR/etc/conf-parts"
	-o "Dir::State=$APTDIR/state"
	-o "Dir::State::status=$APTDIR/state/status"
	-o "Dir::Cache=$APTDIR/cache"
	-o "APT::Architecture=amd64"
	-o "APT::Architectures::=amd64"
	-o "APT::Sandbox::User=root"
	-o "Debug::NoLocking=1"
	-o "Acquire::Languages=none"
	-o "Acquire::http::Timeout=20"
	-o "Acquire::Retries=2"
)

have_lists() { ls "$APTDIR"/state/lists/*_Packages* >/dev/null 2>&1; }

# Refresh the lists when the sources changed or they are older than a day.
if uri=$(mirror_uri); then
	: >"$APTDIR/etc/sources.list.new"
	for s in $SUITES; do
		echo "deb [signed-by=$KEYRING] $uri $s main" >>"$APTDIR/etc/sources.list.new"
	done
	if ! cmp -s "$APTDIR/etc/sources.list.new" "$APTDIR/etc/sources.list" ||
	   ! have_lists ||
	   [ -n "$(find "$APTDIR/state/lists" -maxdepth 1 -name '*_Packages*' -mmin +1440)" ]; then
		mv "$APTDIR/etc/sources.list.new" "$APTDIR/etc/sources.list"
		rm -f "$KDIR/kernel.env"
		say "apt-get update ($SUITES) from the machine's Debian mirror"
		# One suite failing (unsigned by a key we lack, not on this
		# mirror) is not fatal while another one gave us its list.
		if ! apt-get "${APT_OPTS[@]}" -q update >"$APTDIR/update.log" 2>&1; then
			grep -E '^(E|W):' "$APTDIR/update.log" | sed 's/^/fetch:   /' >&2 || true
		fi
	else
		rm -f "$APTDIR/etc/sources.list.new"
	fi
else
	say "no Debian mirror in this machine's apt sources"
fi
# Lists unchanged since the last pick: that pick still stands.
if [ -z "${CS_KERNEL_RELEASE:-}" ] && [ -f "$KDIR/kernel.env" ]; then
	. "$KDIR/kernel.env"
	if [ -f "$VMLINUZ" ]; then
		say "kernel $KREL (cached)"
		exit 0
	fi
fi
have_lists || skip "no package lists (the Debian archive could not be reached; see $APTDIR/update.log)"

# The newest kernel release R that ships a cloud kernel image package
# (linux-binary[-unsigned]-R) and its modules (linux-modules-R). One
# pkgnames call: each apt-cache run reloads the whole cache.
NAMES=$(apt-cache "${APT_OPTS[@]}" pkgnames linux- 2>/dev/null | sort -u)
has() { grep -qxF "$1" <<<"$NAMES"; }
pick_release() {
	sed -n 's/^linux-binary-\(unsigned-\)\?\([0-9][^ ]*-cloud-amd64\)$/\2/p' <<<"$NAMES" |
		sort -u -V | tac | while read -r r; do
			[ "$(printf '%s\n%s\n' "$MIN_VERSION" "${r%%[+-]*}" | sort -V | head -1)" = "$MIN_VERSION" ] || continue
			has "linux-modules-$r" || continue
			echo "$r"
			break
		done
}
KREL=${CS_KERNEL_RELEASE:-$(pick_release)}
[ -n "$KREL" ] || skip "no cloud kernel >= $MIN_VERSION in $SUITES"

# Prefer the unsigned image: the same kernel, without the EFI signature.
img=linux-binary-unsigned-$KREL
has "$img" || img=linux-binary-$KREL
ROOT=$KDIR/root/$KREL
if [ ! -f "$ROOT/.unpacked" ]; then
	for p in "$img" "linux-modules-$KREL"; do
		if ! ls "$KDIR/deb/${p}_"*.deb >/dev/null 2>&1; then
			say "apt-get download $p"
			(cd "$KDIR/deb" && apt-get "${APT_OPTS[@]}" -q download "$p" \
				>"$APTDIR/download.log" 2>&1) ||
				skip "cannot download $p (see $APTDIR/download.log)"
		fi
	done
	rm -rf "$ROOT" "$KDIR/modules.tmp"
	mkdir -p "$ROOT"
	deb() { ls "$KDIR/deb/${1}_"*.deb | sort -V | tail -1; }
	dpkg-deb -x "$(deb "$img")" "$ROOT"
	# Of the modules only virtio-blk is needed (a module in the cloud
	# flavour); busybox insmod cannot read xz, so the guest gets it
	# decompressed. The rest is not kept: thousands of files under
	# build/ would slow down every make that scans it.
	dpkg-deb -x "$(deb "linux-modules-$KREL")" "$KDIR/modules.tmp"
	ko=$(find "$KDIR/modules.tmp" -name 'virtio_blk.ko*' | head -1)
	case $ko in
	"")    ;;	# built in
	*.xz)  xz -dc "$ko" >"$ROOT/virtio_blk.ko" ;;
	*.zst) zstd -qdc "$ko" >"$ROOT/virtio_blk.ko" ;;
	*.gz)  gzip -dc "$ko" >"$ROOT/virtio_blk.ko" ;;
	*)     cp "$ko" "$ROOT/virtio_blk.ko" ;;
	esac
	rm -rf "$KDIR/modules.tmp"
	touch "$ROOT/.unpacked"
fi

VMLINUZ=$(find "$ROOT" -name 'vmlinuz*' -type f | head -1)
[ -n "$VMLINUZ" ] || { say "no vmlinuz in $img"; exit 1; }
VIRTIO_BLK=
[ -f "$ROOT/virtio_blk.ko" ] && VIRTIO_BLK=$ROOT/virtio_blk.ko
cat >"$KDIR/kernel.env" <<EOT
KREL='$KREL'
VMLINUZ='$VMLINUZ'
VIRTIO_BLK='$VIRTIO_BLK'
EOT
say "kernel $KREL ($img)"
