#!/usr/bin/env bash
# pprof: `go tool pprof`, the real client, reads our profiles and shows the
# same totals and top functions as `callstitch report`.
source "$CS_ROOT/tests/lib.sh"

D=linux-7.3.4
KALLSYMS=$(fixture $D/kallsyms)
SYMFS=$T/symfs
fixture_symfs "$SYMFS"

# errors come first: they need no go
rc=0; "$CS" pprof -i "$FIXTURES/$D/task-defer.data" >/dev/null 2>"$T/err" || rc=$?
check "pprof without -o fails with a message" test "$rc" -ne 0 -a -s "$T/err"
rc=0; "$CS" pprof -i "$T/none.data" -o "$T/x.pb.gz" >/dev/null 2>"$T/err" || rc=$?
check "pprof of a missing file fails and names it" \
	test "$rc" -ne 0 -a -n "$(grep none.data "$T/err")"
rc=0; "$CS" pprof -i "$FIXTURES/$D/task-defer.data" --kallsyms "$KALLSYMS" \
	-o "$T/no/such/dir/p.pb.gz" >/dev/null 2>"$T/err" || rc=$?
check "pprof to an unwritable path fails" test "$rc" -ne 0
"$CS" pprof -q -i "$FIXTURES/$D/task-defer.data" --kallsyms "$KALLSYMS" \
	--symfs "$SYMFS" -o "$T/gz.pb.gz" 2>/dev/null
check "pprof writes gzip" test "$(head -c 2 "$T/gz.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b

rc=0; "$CS" pprof -q -i "$FIXTURES/$D/task-defer.data" --kallsyms "$KALLSYMS" \
	-o /dev/full 2>"$T/err" || rc=$?
check "a full disk fails pprof and names the file" \
	test "$rc" -ne 0 -a -n "$(grep '/dev/full: cannot write' "$T/err")"

if ! command -v go >/dev/null 2>&1 || ! go version >/dev/null 2>&1; then
	skip "go tool pprof reads our profiles" "go is not installed (Debian: golang-go)"
	exit 0
fi
export GOFLAGS=-mod=mod GOTOOLCHAIN=local HOME=${HOME:-$T}

# compare one profile: $1 name, $2 data file, $3... input options
compare() {
	local name=$1 data=$2; shift 2
	local in=(-i "$data" "$@")

	if ! "$CS" pprof -q "${in[@]}" -o "$T/$name.pb.gz" 2>"$T/$name.err"; then
		notok "$name: pprof exits 0"; sed 's/^/#   /' "$T/$name.err"; return
	fi
	"$CS" report -q "${in[@]}" --no-children --sort sym -n -g none \
		>"$T/$name.rep" 2>/dev/null
	if ! go tool pprof -top -sample_index=samples -nodecount=15 \
		"$T/$name.pb.gz" >"$T/$name.top" 2>"$T/$name.goerr"; then
		notok "$name: go tool pprof reads the profile"
		sed 's/^/#   /' "$T/$name.goerr" | head -5; return
	fi
	ok "$name: go tool pprof reads the profile"

	local samples events total ns
	samples=$(sed -n 's/^# samples *: \([0-9]*\),.*/\1/p' "$T/$name.rep")
	total=$(sed -n 's/.*Total samples = \([0-9]*\) *$/\1/p' "$T/$name.top")
	check_eq "$name: pprof's total samples are report's" "$samples" "$total"
	events=$(awk -F': ' '/^# Event count/ { s += $2 } END { printf "%.0f", s }' "$T/$name.rep")
	go tool pprof -top -unit=ns -nodecount=1 "$T/$name.pb.gz" >"$T/$name.ns" 2>/dev/null
	ns=$(sed -n 's/.*Total samples = \([0-9]*\)ns.*/\1/p' "$T/$name.ns")
	check_eq "$name: pprof's cpu total is report's event count (ns)" "$events" "$ns"

	# every top function: the same samples as report's entry of that name
	awk '/^ +[0-9.]+%/ { c[$4] += $2 } END { for (k in c) print k, c[k] }' \
		"$T/$name.rep" | sort >"$T/$name.rep.k"
	awk 'f && NF >= 6 { print $6, $1 } /flat%/ { f = 1 }' "$T/$name.top" |
		sort >"$T/$name.top.k"
	local rows differ first_pprof first_report
	rows=$(wc -l <"$T/$name.top.k")
	differ=$(join -a1 -e 0 -o 0,1.2,2.2 "$T/$name.top.k" "$T/$name.rep.k" | awk '$2 != $3' | wc -l)
	check "$name: pprof shows top functions ($rows)" test "$rows" -ge 5
	check_eq "$name: each of pprof's top functions has report's sample count" 0 "$differ"
	join -a1 -e 0 -o 0,1.2,2.2 "$T/$name.top.k" "$T/$name.rep.k" | awk '$2 != $3' | head -5 | sed 's/^/#   /'
	first_pprof=$(awk 'f && NF >= 6 { print $6; exit } /flat%/ { f = 1 }' "$T/$name.top")
	first_report=$(awk '/^ +[0-9.]+%/ { print $4; exit }' "$T/$name.rep")
	check_eq "$name: the top function is report's first entry" "$first_report" "$first_pprof"
}

compare task-defer "$FIXTURES/$D/task-defer.data" --kallsyms "$KALLSYMS" --symfs "$SYMFS"
compare syswide-defer "$FIXTURES/$D/syswide-defer.data" --kallsyms "$KALLSYMS" --symfs "$SYMFS"
go tool pprof -raw "$T/task-defer.pb.gz" >"$T/raw" 2>/dev/null
check "task-defer: the workload's mapping carries its build id" \
	grep -q '28c09c46a2e08a1a4195a57a1defbe8d377fa156' "$T/raw"
check "task-defer: samples carry comm and tid labels" \
	grep -q 'comm:\[rd-zero\]' "$T/raw"
check "task-defer: pprof names the program as the profile's file" \
	grep -qx 'File: workload' "$T/task-defer.top"
if [ -f /usr/lib/debug/.build-id/93/ac61ec5a8eb1396f9fbd350e3169a558528a40.debug ]; then
	"$CS" pprof -q --inline -i "$FIXTURES/$D/task-defer.data" \
		--kallsyms "$KALLSYMS" --symfs "$SYMFS" -o "$T/inline.pb.gz" 2>/dev/null
	go tool pprof -raw "$T/inline.pb.gz" >"$T/inline.raw" 2>/dev/null
	check_eq "task-defer --inline: read's location lists __GI___libc_read inlined in it" \
		"read /usr/lib/x86_64-linux-gnu/libc.so.6:0 s=0" \
		"$(grep -A1 -m1 ' __GI___libc_read /usr/lib/x86_64-linux-gnu/libc.so.6' \
			"$T/inline.raw" | tail -1 | sed 's/^ *//')"
else
	skip "task-defer --inline: functions inlined in libc" "libc6-dbg (Debian 12's libc) not installed"
fi
check "task-defer: cpu nanoseconds are the period type" grep -q '^PeriodType: cpu nanoseconds' "$T/raw"

if "$CS_TOOLS/flame_synth" "$T/synth.data" "$T/synth.kallsyms" \
	"$CS_WORKLOADS/deepstack" >/dev/null 2>&1; then
	compare synthetic "$T/synth.data" --kallsyms "$T/synth.kallsyms"
	go tool pprof -top -sample_index=samples -nodefraction=0 -nodecount=100 \
		"$T/synthetic.pb.gz" >"$T/synth.all" 2>/dev/null
	check "synthetic: kernel-only samples end at the marker function" \
		grep -qE '^ +0 +0% .* 10 +10(\.00)?%  \[user stack missing: end\]$' "$T/synth.all"
fi

if [ -x /usr/bin/perf ] && /usr/bin/perf record -q -e cpu-clock -F 2000 -g \
	-o "$T/deep.data" -- "$CS_WORKLOADS/deepstack" 1 2 30 >/dev/null 2>&1; then
	compare deepstack "$T/deep.data"
else
	skip "pprof vs report on a local recording" "perf record does not run here"
fi
