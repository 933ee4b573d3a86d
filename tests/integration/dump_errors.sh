#!/usr/bin/env bash
# dump_errors.sh - bad input: a truncated or corrupted profile gives one
# error line naming the file and the offset, and exit 1; never a crash
# (this runs the ASan/UBSan binary), hang or silent success. Ends with a
# bounded byte-flipping loop.
source "$CS_ROOT/tests/lib.sh"

F=$(fixture linux-7.3.4/task-defer.data) || { notok "fixture"; exit 0; }

# expect_error NAME FILE REGEX: exit 1, exactly one stderr line matching
expect_error() {
	local name=$1 file=$2 re=$3 rc
	"$CS" dump -i "$file" >"$T/out" 2>"$T/err"
	rc=$?
	check_eq "$name: exit 1" 1 "$rc"
	check_eq "$name: one line on stderr" 1 "$(wc -l <"$T/err")"
	if grep -Eq "$re" "$T/err"; then ok "$name: says where"
	else notok "$name: says where (got: $(head -c 300 "$T/err"))"; fi
}

# poke FILE OFFSET HEXBYTES: overwrite bytes in place
poke() {
	printf "$(echo "$3" | sed 's/\(..\)/\\x\1/g')" |
		dd of="$1" bs=1 seek=$(($2)) conv=notrunc status=none
}

head -c 2000000 "$F" >"$T/cut.data"
expect_error "truncated copy" "$T/cut.data" \
	'^callstitch: .*cut\.data: .*offset 0x[0-9a-f]+.*(truncated|end of the file)'

cp "$F" "$T/zero.data"; poke "$T/zero.data" 0x306 0000
expect_error "record claiming 0 bytes" "$T/zero.data" \
	'^callstitch: .*zero\.data: SAMPLE record at offset 0x300 claims 0 bytes, [0-9]+ remain$'
check_eq "record claiming 0 bytes: records before it were shown" 1 \
	"$(grep -c 'PERF_RECORD_FINISHED_INIT' "$T/out")"

cp "$F" "$T/nr.data"; poke "$T/nr.data" 0x328 ff
expect_error "callchain nr past the record" "$T/nr.data" \
	'^callstitch: .*nr\.data: SAMPLE record at offset 0x300: callchain nr exceeds the record$'

# the last record, a FINISHED_ROUND, claiming more than the section holds
cp "$F" "$T/big.data"; poke "$T/big.data" 0x338566 0001
expect_error "record claiming more than remains" "$T/big.data" \
	'FINISHED_ROUND record at offset 0x338560 claims 256 bytes, 8 remain$'

cp "$F" "$T/attr.data"; poke "$T/attr.data" 0x10 0800000000000000
expect_error "attr entries too small" "$T/attr.data" 'attr entries of 8 bytes at offset 0x18'

# a damaged feature table costs the metadata, not the records
cp "$F" "$T/feat.data"; poke "$T/feat.data" 0x338568 ffffffff
"$CS" dump -i "$T/feat.data" >"$T/out" 2>"$T/err"
check_eq "feature section out of the file: exit 0" 0 $?
check_eq "feature section out of the file: one warning naming the section" 1 \
	"$(grep -c '^callstitch: warning: .*feat\.data: feature table at offset 0x338568 is damaged (feature [0-9]* section at 0xffffffff.*runs past the end of the file)' "$T/err")"
check_eq "feature section out of the file: the records are shown" 14117 \
	"$(awk '$1 == "SAMPLE" && $2 == "events:" { print $3 }' "$T/out")"

head -c 4096 /dev/urandom >"$T/random.data"
printf 'XXXXXXXX' | dd of="$T/random.data" conv=notrunc status=none
expect_error "not a perf.data file" "$T/random.data" 'not a perf.data file \(no PERFILE2 magic at offset 0x0\)'

: >"$T/empty.data"
expect_error "empty file" "$T/empty.data" 'too short for a perf.data header'

expect_error "missing file" "$T/nonexistent.data" 'nonexistent\.data: No such file or directory'

head -c 100000 "$F" | "$CS" dump -i - >/dev/null 2>"$T/err"
check_eq "file-mode data on a pipe: exit 1" 1 $?
check_eq "file-mode data on a pipe: says why" 1 "$(grep -c 'cannot be read from a pipe' "$T/err")"

# a recorder killed before it wrote the final header: data size 0
cp "$F" "$T/dead.data"; poke "$T/dead.data" 0x30 0000000000000000
head -c 1500003 "$T/dead.data" >"$T/dead-cut.data"
"$CS" dump -i "$T/dead-cut.data" >"$T/out" 2>"$T/err"
check_eq "dead recorder: exit 0" 0 $?
check_eq "dead recorder: one warning" 1 "$(grep -c 'warning: .*cut short' "$T/err")"
n=$(awk '$1 == "SAMPLE" && $2 == "events:" { print $3 }' "$T/out")
if [ "${n:-0}" -gt 5000 ]; then ok "dead recorder: records up to the cut ($n samples)"
else notok "dead recorder: records up to the cut (${n:-none})"; fi

# byte flips: a small piece of a real profile as a stream, mutated; every
# run ends with 0 or a one-line error, never a sanitizer report
# (a file-mode profile cut to its first records, with data size 0, is a
# valid small profile)
small=$T/small.data
head -c 24000 "$T/dead.data" >"$small"
crashes=0 runs=0 seed=12345
size=$(stat -c %s "$small")
deadline=$((SECONDS + 8))
for i in $(seq 1 80); do
	[ "$SECONDS" -ge "$deadline" ] && break
	cp "$small" "$T/fz.data"
	for k in 1 2 3; do
		seed=$(( (seed * 1103515245 + 12345) % 2147483648 ))
		off=$(( seed % size ))
		poke "$T/fz.data" "$off" "$(printf '%02x' $(( (seed >> 8) % 256 )))"
	done
	if [ $((i % 3)) -eq 0 ]; then
		"$CS" dump -i - <"$T/fz.data" >/dev/null 2>"$T/fz.err"
	else
		"$CS" dump -i "$T/fz.data" >/dev/null 2>"$T/fz.err"
	fi
	rc=$?
	runs=$((runs + 1))
	if { [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; } || grep -q 'Sanitizer\|runtime error' "$T/fz.err" ||
	   [ "$(grep -vc 'warning' "$T/fz.err")" -gt 1 ]; then
		crashes=$((crashes + 1))
		cp "$T/fz.data" "$T/crash-$crashes.data"
		head -5 "$T/fz.err" | sed 's/^/#   /'
	fi
done
check_eq "byte flips: $runs runs, no crash and at most one error line" 0 "$crashes"
