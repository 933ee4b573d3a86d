# tests/lib.sh - helpers for integration tests (source it).
#
# Each check prints one TAP-style line that tests/run.sh counts:
#   ok - what        not ok - what        ok - what # SKIP why
set -u
: "${CS:?run through tests/run.sh}"
T=$(mktemp -d "$CS_TMP/$(basename "$0" .sh).XXXXXX")
FIXTURES=$CS_ROOT/tests/fixtures

ok()    { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
skip()  { echo "ok - $1 # SKIP ${2:-}"; }

# check "what" command...   runs the command, ok if it exits 0
check() {
	local what=$1; shift
	if "$@"; then ok "$what"; else notok "$what"; fi
}

# check_eq "what" expected actual
check_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else notok "$1 (expected '$2', got '$3')"; fi
}

# same_file "what" a b   ok if files are equal, else shows the first diffs
same_file() {
	if cmp -s "$2" "$3"; then ok "$1"; else
		notok "$1"; diff "$2" "$3" | head -20 | sed 's/^/#   /'
	fi
}

# A fixture, decompressed once into $CS_TMP
fixture() {
	local f=$FIXTURES/$1
	if [ -f "$f" ]; then echo "$f"; return; fi
	if [ -f "$f.xz" ]; then
		local out="$CS_TMP/fixtures/$1"
		if [ ! -f "$out" ]; then
			mkdir -p "$(dirname "$out")"
			xz -dc "$f.xz" >"$out.tmp" && mv "$out.tmp" "$out"
		fi
		echo "$out"; return
	fi
	echo "missing fixture $1" >&2
	return 1
}

# samples_of ERRFILE: the sample count `callstitch record` said it wrote
# ("... (N samples ...)", its last summary line on stderr)
samples_of() { sed -n 's/.*(\([0-9]*\) samples.*/\1/p' "$1" | tail -1; }

# field KEY "k=v k=v ...": the number after KEY= in a summary line
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<" $2"; }

# canon_equals_truth WHAT DATA EXPECT SUM: $CANON (tests/tools/cs_canon)
# reads DATA through the library; its counts are the generator's summary
# SUM and its stitched lines, sorted, the ground truth EXPECT. Leaves them
# in $T/canon.out, $T/canon.err and (sorted) $T/got.
canon_equals_truth() {
	if "$CANON" -i "$2" --stats >"$T/canon.out" 2>"$T/canon.err"; then
		ok "$1: cs_canon reads the profile"
	else
		notok "$1: cs_canon reads the profile"
		sed 's/^/#   /' "$T/canon.err" | head -5
	fi
	check_eq "$1: the session counts what the generator made" "$4" \
		"$(grep '^samples=' "$T/canon.err")"
	sort -S 25% "$3" >"$T/want"
	sort -S 25% "$T/canon.out" >"$T/got"
	same_file "$1: stitched output equals the ground truth, line for line" \
		"$T/want" "$T/got"
	rm -f "$T/want"
}

# fixture_symfs DIR: DIR made a --symfs root holding the fixtures'
# workload (linux-7.3.4) where it was recorded, /opt/fixt/workload
fixture_symfs() {
	mkdir -p "$1/opt/fixt" &&
		cp "$FIXTURES/linux-7.3.4/bin/workload" "$1/opt/fixt/"
}

# perf_broken ERRFILE: prints perf's own message when the reference perf
# itself broke (an assertion in perf, a crash) rather than disagreeing with
# us; a check that needs its answer then says SKIP with that reason, and
# neither fails nor passes. (perf 6.1 run in a chroot with its own mount
# namespace, as in a container, asserts in util/namespaces.c on
# system-wide recordings and resolves no symbols. And while another recorder
# on the machine asks for build ids in its MMAP2 records, callstitch record
# -a or perf --buildid-mmap, the kernel (6.18 here) marks the MMAP2 records
# it writes for perf's own events as carrying one too, though their bodies
# hold maj/min/ino: perf 6.1 takes the device number for a build id's size,
# asserts in util/build-id.c and overruns its stack, in record and readers.)
perf_broken() {
	grep -a -m1 -E 'assertion failed|stack smashing detected|Segmentation fault|Aborted|core dumped' "$1"
}

# recording FILE: waits up to 20 s until the callstitch recorder writing
# FILE has put its first samples there (it writes them at once, then once
# a second): from then on it records, however long its set-up took on a
# loaded machine. Tests that stop a recording time it from here.
recording() {
	local i
	for i in $(seq 400); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# corrupt_zstd_frame IN OUT N: OUT is IN with 16 bytes of its Nth
# COMPRESSED record's payload scrambled; prints that record's offset
corrupt_zstd_frame() {
	local off
	off=$("$CS" dump -i "$1" 2>/dev/null |
		awk -v n="$3" '/PERF_RECORD_COMPRESSED/ && ++k == n { print $2 }')
	cp "$1" "$2"
	printf '\x5a\x5a\x5a\x5a\x5a\x5a\x5a\x5a\x5a\x5a\x5a\x5a\x5a\x5a\x5a\x5a' |
		dd of="$2" bs=1 seek=$((off + 40)) conv=notrunc status=none
	echo "$off"
}
