#!/usr/bin/env bash
# script_fixtures.sh - `callstitch script` on the real-kernel recordings
# equals perf 7.3's own output, sample by sample and frame by frame; the
# late samples perf left unmerged are stitched by us and counted apart.
source "$CS_ROOT/tests/lib.sh"

D=$FIXTURES/linux-7.3.4
CMP=$CS_ROOT/tests/integration/script_compare.awk
K=$(fixture linux-7.3.4/kallsyms) || { notok "kallsyms fixture"; exit 0; }

# the workload was recorded at /opt/fixt/workload
S=$T/symfs
mkdir -p "$S/opt/fixt" && cp "$D/bin/workload" "$S/opt/fixt/workload"

# libc and ld.so frames resolve against this host's files: the same
# Debian 12 builds, with the names perf found in their debug files
# (libc6-dbg). Without them only kernel and workload frames could match.
host_libs=yes
for id in 93/ac61ec5a8eb1396f9fbd350e3169a558528a40 \
	  7e/bc65e52f2bbea498b4040fa92f7238377aaba9; do
	[ -f "/usr/lib/debug/.build-id/$id.debug" ] || host_libs=no
done

cookies() {	# every cookie of the file, from perf's unmerged view
	xz -dc "$D/$1.script-nomerge.txt.xz" | grep -o 'cookie: [0-9a-f]*' | cut -d' ' -f2
}

# compare NAME LATE EXPECTED_LATE REF OURS
compare() {
	local name=$1 late=$2 want_late=$3 ref=$4 ours=$5 sum
	sum=$(awk -v late="$late" -f "$CMP" "$T/$name.cookies" "$ref" "$ours" 2>"$T/$name.diff")
	set -- $sum
	# samples N same S late L differ D missing M extra E
	if [ "${8:-x}" = 0 ] && [ "${10:-x}" = 0 ] && [ "${12:-x}" = 0 ] &&
	   [ "$6" = "$want_late" ] && [ $(($4 + $6)) = "$2" ] && [ "$2" -gt 0 ]; then
		if [ "$late" = 1 ]; then
			ok "$name: $2 samples as perf prints them, $6 late ones stitched"
		else
			ok "$name: $2 samples and records as perf prints them"
		fi
	else
		notok "$name: $sum"
		sed 's/^/# /' "$T/$name.diff" | head -30
	fi
}

stat_of() {	# stat_of FILE "stitched late"
	sed -n "s/^ *$2  *\([0-9][0-9]*\)$/\1/p" "$1" | head -1
}

for f in task-defer:69 syswide-defer:148; do
	name=${f%%:*} want_late=${f##*:}
	cookies "$name" >"$T/$name.cookies"
	cookies "$name" >"$T/$name-nomerge.cookies"
	ref=$(fixture "linux-7.3.4/$name.script.txt") || { notok "$name reference"; continue; }
	refnm=$(fixture "linux-7.3.4/$name.script-nomerge.txt") || { notok "$name nomerge reference"; continue; }

	if ! $CS script --stats --kallsyms "$K" --symfs "$S" -i "$D/$name.data" \
		>"$T/$name.out" 2>"$T/$name.err"; then
		notok "$name: script failed: $(tail -1 "$T/$name.err")"
		continue
	fi
	check_eq "$name: stitched late counted apart" "$want_late" \
		"$(stat_of "$T/$name.err" 'stitched late')"
	check_eq "$name: nothing left kernel-only" 0 \
		"$(stat_of "$T/$name.err" 'kernel-only')"
	# the late samples perf shows with a bare cookie are whole here
	check_eq "$name: no cookie left in the merged view" 0 \
		"$(grep -c '(cookie)\|\[user stack missing' "$T/$name.out")"

	if ! $CS script -q --no-merge-callchains --kallsyms "$K" --symfs "$S" \
		-i "$D/$name.data" >"$T/$name.nomerge.out" 2>"$T/$name.nomerge.err"; then
		notok "$name: script --no-merge-callchains failed"
		continue
	fi
	check_eq "$name: every sample's cookie shown unmerged" \
		"$(grep -c '(cookie)' "$refnm")" "$(grep -c '(cookie)' "$T/$name.nomerge.out")"
	check_eq "$name: every DEFERRED CALLCHAIN record shown" \
		"$(grep -c 'DEFERRED CALLCHAIN \[cookie: ' "$refnm")" \
		"$(grep -c 'DEFERRED CALLCHAIN \[cookie: ' "$T/$name.nomerge.out")"

	if [ $host_libs = no ]; then
		skip "$name: frames equal perf's" "libc6-dbg for Debian 12's libc 2.36-9+deb12u14 not installed"
		continue
	fi
	compare "$name" 1 "$want_late" "$ref" "$T/$name.out"
	compare "$name-nomerge" 0 0 "$refnm" "$T/$name.nomerge.out"
done

# no deferral: exactly what perf prints
ref=$(fixture linux-7.3.4/task-nodefer.script.txt)
: >"$T/task-nodefer.cookies"
if $CS script -q --kallsyms "$K" --symfs "$S" -i "$D/task-nodefer.data" >"$T/nodefer.out"; then
	if [ $host_libs = yes ]; then
		compare task-nodefer 0 0 "$ref" "$T/nodefer.out"
	else
		skip "task-nodefer: frames equal perf's" "libc6-dbg not installed"
	fi
else
	notok "task-nodefer: script failed"
fi

# libc's MMAP2 carries its build id: a file of another build at DIR + path
# is refused and the matching one (this host's) is used; the workload's
# carries none, so a --symfs file is taken as it is (as perf does). Build-id
# lookup under --symfs (.build-id/xx/rest, any file) is in test_machine.
mkdir -p "$T/wrongfs/usr/lib/x86_64-linux-gnu" "$T/wrongfs/opt/fixt"
cp /bin/true "$T/wrongfs/usr/lib/x86_64-linux-gnu/libc.so.6"
cp "$D/bin/workload" "$T/wrongfs/opt/fixt/workload"
$CS script -q --kallsyms "$K" --symfs "$T/wrongfs" -i "$D/task-defer.data" >"$T/wrong.out"
grep 'libc.so.6)$' "$T/task-defer.out" >"$T/libc.want"
grep 'libc.so.6)$' "$T/wrong.out" >"$T/libc.got"
if [ -s "$T/libc.want" ] && cmp -s "$T/libc.want" "$T/libc.got"; then
	ok "a libc of another build under --symfs is refused for the matching one"
else
	notok "a libc of another build under --symfs is refused for the matching one"
fi

# kernel symbols given by hand must be readable kallsyms, and say so if not
if $CS script -q --kallsyms "$T/nonexistent" -i "$D/task-defer.data" >/dev/null 2>"$T/nok.err"; then
	notok "a missing --kallsyms file is an error"
else
	check_eq "a missing --kallsyms file is an error" 1 \
		"$(grep -c 'kallsyms.*nonexistent: No such file' "$T/nok.err")"
fi
printf 'not kallsyms at all\n' >"$T/bad.kallsyms"
$CS script --kallsyms "$T/bad.kallsyms" -i "$D/task-defer.data" >/dev/null 2>"$T/bad.err"
check_eq "a file that is not kallsyms is named with its bad line" 1 \
	"$(grep -c 'no kernel symbols: .*bad.kallsyms: line 1 ' "$T/bad.err")"
