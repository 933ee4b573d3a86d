#!/usr/bin/env bash
# inject_perf.sh - `callstitch inject` makes profiles with deferred
# callchains readable by perf 6.1 (which knows nothing of deferral), with
# the same stacks; --passthrough copies every record unchanged.
source "$CS_ROOT/tests/lib.sh"

PERF=${PERF:-/usr/bin/perf}
compare() { python3 "$CS_ROOT/tests/integration/inject_compare.py" "$@"; }
have_perf=1
if [ ! -x "$PERF" ] || ! "$PERF" version >/dev/null 2>&1; then have_perf=0; fi
have_py=1
command -v python3 >/dev/null || have_py=0

KALLSYMS=$(fixture linux-7.3.4/kallsyms)
# perf 6.1 looks for every binary under --symfs: the fixture's workload
# there, the rest (Debian 12's libc, ld.so, ...) through /usr
mkdir -p "$T/symfs/opt/fixt"
ln -s "$FIXTURES/linux-7.3.4/bin/workload" "$T/symfs/opt/fixt/workload"
ln -s /usr "$T/symfs/usr"
# and the synthetic profile's binary at its path
mkdir -p "$T/symfs$(dirname "$CS_WORKLOADS/deepstack")"
ln -s "$CS_WORKLOADS/deepstack" "$T/symfs$CS_WORKLOADS/deepstack"

# the deferral bits, type 22 and the cookies are gone; the rest stays
check_header() {
	local what=$1 orig=$2 out=$3
	"$CS" dump --header-only -i "$orig" >"$T/h.orig" 2>/dev/null
	"$CS" dump --header-only -i "$out" >"$T/h.out" 2>/dev/null
	if grep -q 'defer_' "$T/h.out"; then
		notok "$what: the deferral bits are cleared"; grep 'defer_' "$T/h.out" | sed 's/^/#   /'
	else
		ok "$what: the deferral bits are cleared"
	fi
	if grep -E '^# event [0-9]+:' -A1 "$T/h.out" | grep -q 'size 128,'; then
		ok "$what: attrs are 128 bytes"
	else
		notok "$what: attrs are 128 bytes"
	fi
	same_file "$what: hostname, os release, version, arch, cpus, cmdline kept" \
		<(grep -E '^# (hostname|os release|perf version|arch|nrcpus|cpudesc|cmdline):' "$T/h.orig") \
		<(grep -E '^# (hostname|os release|perf version|arch|nrcpus|cpudesc|cmdline):' "$T/h.out")
}

inject_one() {
	local name=$1 data=$2 ksyms=$3 nr_kernel_only=$4
	local out=$T/$name.inj.data

	if ! "$CS" inject -i "$data" -o "$out" 2>"$T/$name.inject.err"; then
		notok "$name: inject runs"; sed 's/^/#   /' "$T/$name.inject.err" | head -5
		return
	fi
	ok "$name: inject runs"
	if grep -q "inject: wrote .* $nr_kernel_only kernel-only" "$T/$name.inject.err"; then
		ok "$name: the summary counts $nr_kernel_only kernel-only samples"
	else
		notok "$name: summary: $(grep 'inject:' "$T/$name.inject.err")"
	fi
	check_header "$name" "$data" "$out"

	"$CS" script -i "$data" --kallsyms "$ksyms" --symfs "$T/symfs" \
		>"$T/$name.orig.txt" 2>"$T/$name.orig.err"
	"$CS" script -i "$out" --kallsyms "$ksyms" --symfs "$T/symfs" \
		>"$T/$name.inj.txt" 2>"$T/$name.inj.err"
	if grep -q ' 0 deferred records' "$T/$name.inj.err" &&
	   grep -q ' 0 stitched, 0 stitched late, 0 kernel-only' "$T/$name.inj.err"; then
		ok "$name: no deferred records or deferred samples are left"
	else
		notok "$name: left in the output: $(cat "$T/$name.inj.err")"
	fi
	if [ "$have_py" = 1 ]; then
		if compare --exact "$T/$name.orig.txt" "$T/$name.inj.txt" >"$T/$name.cmp1"; then
			ok "$name: callstitch script shows the same stacks before and after"
		else
			notok "$name: callstitch script before and after"
		fi
		sed 's/^#/# before\/after:/' "$T/$name.cmp1"
	fi

	if [ "$have_perf" = 0 ]; then
		skip "$name: perf 6.1 reads the output" "no working $PERF"
		return
	fi
	if "$PERF" script -i "$out" --kallsyms "$ksyms" --symfs "$T/symfs" \
		>"$T/$name.perf.txt" 2>"$T/$name.perf.err"; then
		ok "$name: perf 6.1 script reads the output"
	else
		notok "$name: perf 6.1 script reads the output"; sed 's/^/#   /' "$T/$name.perf.err" | head -5
	fi
	if [ "$have_py" = 1 ]; then
		# perf 6.1 shows no lines for inlined functions
		"$CS" script -q --no-inline -i "$data" --kallsyms "$ksyms" \
			--symfs "$T/symfs" >"$T/$name.orig-noinline.txt"
		if compare "$T/$name.orig-noinline.txt" "$T/$name.perf.txt" >"$T/$name.cmp2"; then
			ok "$name: perf 6.1 script shows callstitch's stacks"
		else
			notok "$name: perf 6.1 script shows callstitch's stacks"
		fi
		sed 's/^#/# perf 6.1:/' "$T/$name.cmp2"
	fi
	if "$PERF" report --stdio -i "$out" --kallsyms "$ksyms" --symfs "$T/symfs" \
		>"$T/$name.report.txt" 2>"$T/$name.report.err" &&
	   ! grep -qiE 'error|fail|unknown|invalid' "$T/$name.report.err"; then
		ok "$name: perf 6.1 report runs without errors"
	else
		notok "$name: perf 6.1 report"; sed 's/^/#   /' "$T/$name.report.err" | head -5
	fi
	# perf report's sample count is the number of samples we wrote
	local n got
	n=$(grep -c 'cpu-clock:' "$T/$name.orig.txt")
	# perf abbreviates large counts in its header ("14K"): sum per comm
	got=$("$PERF" report --stdio -i "$out" --kallsyms "$ksyms" --symfs "$T/symfs" \
		--sort comm -F sample,comm -g none 2>/dev/null |
		awk '/^ +[0-9]+ +[^ ]/ { s += $1 } END { print s + 0 }')
	check_eq "$name: perf 6.1 report counts every sample" "$n" "$got"
}

passthrough_one() {
	local name=$1 data=$2 out=$T/$1.pass.data
	norm() {
		# every record with its bytes, offsets left out (the header is
		# shorter: 128-byte attrs, fewer features)
		"$CS" dump -x --no-stats -i "$1" | sed -n '/^$/,$p' |
			sed -E 's/^([^ ]*) 0x[0-9a-f]+ /\1 /; s/^0x[0-9a-f]+ \[/[/'
	}
	if ! "$CS" inject --passthrough -i "$data" -o "$out" 2>"$T/$name.pass.err"; then
		notok "$name: inject --passthrough runs"; sed 's/^/#   /' "$T/$name.pass.err" | head -5
		return
	fi
	same_file "$name: --passthrough keeps every record, byte for byte" \
		<(norm "$data") <(norm "$out")
	if "$CS" dump --header-only -i "$out" | grep -E '^# event [0-9]+:' -A1 | grep -q 'size 128,'; then
		ok "$name: --passthrough writes 128-byte attrs"
	else
		notok "$name: --passthrough writes 128-byte attrs"
	fi
}

for f in task-defer syswide-defer; do
	inject_one "$f" "$FIXTURES/linux-7.3.4/$f.data" "$KALLSYMS" 0
	# each recording has one exec with samples inside it: its COMM and
	# three MMAP2s (program, ld.so, vdso) move back to the first of them,
	# and the comparisons above show those samples whole (docs/inject.md)
	if grep -q '; 4 comm/mmap records moved back' "$T/$f.inject.err"; then
		ok "$f: the exec's COMM and MMAP2s apply to the samples inside execve"
	else
		notok "$f: exec records moved: $(grep 'inject:' "$T/$f.inject.err")"
	fi
	passthrough_one "$f" "$FIXTURES/linux-7.3.4/$f.data"
done

# a known profile with samples whose user stack never came
if "$CS_TOOLS/flame_synth" "$T/synth.data" "$T/synth.kallsyms" "$CS_WORKLOADS/deepstack" \
	>/dev/null 2>"$T/synth.err"; then
	inject_one synth "$T/synth.data" "$T/synth.kallsyms" 10
	passthrough_one synth "$T/synth.data"
	if [ "$have_perf" = 1 ]; then
		# the 10 samples of tid 101 keep exactly their 4 kernel frames
		frames=$(awk '/^synth +101 /{s=1; next} /^$/{s=0} s' "$T/synth.perf.txt" | wc -l)
		check_eq "synth: kernel-only samples keep their kernel part in perf 6.1" 40 "$frames"
		# -o -: the stream format into a pipe, file format into a file
		"$CS" inject -q -i "$T/synth.data" -o - |
			"$PERF" script -i - --kallsyms "$T/synth.kallsyms" --symfs "$T/symfs" \
			>"$T/pipe.txt" 2>/dev/null
		same_file "synth: -o - into a pipe reads the same in perf 6.1" "$T/synth.perf.txt" "$T/pipe.txt"
		"$CS" inject -q -i "$T/synth.data" -o - >"$T/stdout.data"
		"$PERF" script -i "$T/stdout.data" --kallsyms "$T/synth.kallsyms" \
			--symfs "$T/symfs" >"$T/stdout.txt" 2>/dev/null
		if grep -q 'burn_cpu+0x4 (.*deepstack)' "$T/synth.perf.txt"; then
			ok "synth: perf 6.1 resolves the user frames"
		else
			notok "synth: perf 6.1 resolves the user frames"
		fi
		same_file "synth: -o - into a file reads the same in perf 6.1" "$T/synth.perf.txt" "$T/stdout.txt"
	fi
else
	notok "flame_synth writes the known profile"; sed 's/^/#   /' "$T/synth.err"
fi

# a profile perf 6.1 recorded here (no deferral): inject must lose nothing
# perf shows, build ids included
if [ "$have_perf" = 1 ] &&
   "$PERF" record -q -e cpu-clock -F 2000 -g -o "$T/p61.data" -- \
	"$CS_WORKLOADS/deepstack" 0.3 >/dev/null 2>"$T/p61.rec.err"; then
	if "$CS" inject -q -i "$T/p61.data" -o "$T/p61.inj.data" 2>"$T/p61.err"; then
		"$PERF" script -i "$T/p61.data" >"$T/p61.a" 2>/dev/null
		"$PERF" script -i "$T/p61.inj.data" >"$T/p61.b" 2>/dev/null
		if [ -s "$T/p61.a" ]; then
			same_file "perf record file: perf 6.1 script shows the same after inject" \
				"$T/p61.a" "$T/p61.b"
		else
			notok "perf record file: perf 6.1 script shows samples"
		fi
		same_file "perf record file: build ids are kept" \
			<("$PERF" buildid-list -i "$T/p61.data" 2>/dev/null) \
			<("$PERF" buildid-list -i "$T/p61.inj.data" 2>/dev/null)
		"$CS" inject -q -z -i "$T/p61.data" -o "$T/p61.z.data" &&
			"$PERF" script -i "$T/p61.z.data" >"$T/p61.c" 2>/dev/null
		same_file "perf record file: -z writes compressed records perf 6.1 reads" \
			"$T/p61.a" "$T/p61.c"
		# through a stream and back: build ids as HEADER_BUILD_ID records
		"$CS" inject -q -i "$T/p61.data" -o - | "$CS" inject -q -i - -o "$T/p61.rt.data"
		same_file "perf record file: a stream and back keeps the build ids" \
			<("$PERF" buildid-list -i "$T/p61.data" 2>/dev/null) \
			<("$PERF" buildid-list -i "$T/p61.rt.data" 2>/dev/null)
		"$PERF" script -i "$T/p61.rt.data" >"$T/p61.d" 2>/dev/null
		same_file "perf record file: a stream and back shows the same in perf 6.1" \
			"$T/p61.a" "$T/p61.d"
		same_file "perf record file: cpuid is kept" \
			<("$PERF" report --header-only -i "$T/p61.data" 2>/dev/null | grep '^# cpuid') \
			<("$PERF" report --header-only -i "$T/p61.inj.data" 2>/dev/null | grep '^# cpuid')
	else
		notok "perf record file: inject runs"; sed 's/^/#   /' "$T/p61.err" | head -3
	fi
else
	skip "inject of a perf 6.1 recording" "perf record does not work here: $(head -1 "$T/p61.rec.err" 2>/dev/null)"
fi
# a stream perf 6.1 recorded (perf record -o -) read from stdin
if [ "$have_perf" = 1 ] &&
   "$PERF" record -q -e cpu-clock -F 2000 -g -o - -- "$CS_WORKLOADS/deepstack" 0.3 \
	>"$T/stream.data" 2>/dev/null; then
	if "$CS" inject -q -i - -o "$T/stream.inj.data" <"$T/stream.data" 2>"$T/stream.err"; then
		"$PERF" script -i "$T/stream.data" >"$T/stream.a" 2>/dev/null
		"$PERF" script -i "$T/stream.inj.data" >"$T/stream.b" 2>/dev/null
		same_file "perf record -o - stream: perf 6.1 script shows the same after inject" \
			"$T/stream.a" "$T/stream.b"
	else
		notok "perf record -o - stream: inject -i - runs"; sed 's/^/#   /' "$T/stream.err" | head -3
	fi
else
	skip "inject of a perf 6.1 stream" "perf record -o - does not work here"
fi

# errors
"$CS" inject -i "$FIXTURES/linux-7.3.4/task-defer.data" >/dev/null 2>"$T/e0"
check_eq "inject without -o exits 129" 129 "$?"
if "$CS" inject -i "$T/none.data" -o "$T/none.out" 2>"$T/e1"; then
	notok "a missing input fails"
elif grep -q 'none.data' "$T/e1" && [ -z "$(ls "$T" | grep 'none.out')" ]; then
	ok "a missing input fails, naming it, and leaves no output"
else
	notok "a missing input: $(head -1 "$T/e1")"
fi
if "$CS" inject -q -i "$FIXTURES/linux-7.3.4/task-defer.data" -o "$T/no/dir/x.data" 2>"$T/e2"; then
	notok "an unwritable output fails"
elif grep -q 'x.data' "$T/e2"; then
	ok "an unwritable output fails, naming it"
else
	notok "unwritable output: $(head -1 "$T/e2")"
fi
"$CS" inject --help | grep -q -- '--passthrough'
check_eq "inject --help lists --passthrough" 0 "$?"
"$CS" inject -z0 -i "$FIXTURES/linux-7.3.4/task-defer.data" -o "$T/z0.data" 2>"$T/e3"
check_eq "inject -z0 is refused with 129" 129 "$?"
