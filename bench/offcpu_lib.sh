# bench/offcpu_lib.sh - what the off-CPU benches (offcpu.sh, offcpu_lost.sh)
# share: the binaries they run, root for sched:sched_switch, a temporary
# folder. Sourced, not run.

# offcpu_setup NAME FILE...: exits with one line naming the first FILE that
# is not an executable, or saying root is needed; then sets $tmp to a new
# folder removed when the bench exits.
offcpu_setup() {
	local name=$1 f
	shift
	for f in "$@"; do
		[ -x "$f" ] || { echo "bench/$name: $f is missing (make first)" >&2; exit 1; }
	done
	if [ "$(id -u)" -ne 0 ]; then
		echo "bench/$name: sched:sched_switch needs root (tracefs)" >&2
		exit 1
	fi
	tmp=$(mktemp -d "/tmp/bench-${name%.sh}.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
}
