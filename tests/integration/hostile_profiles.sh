#!/usr/bin/env bash
# hostile_profiles.sh - well-formed profiles with hostile contents
# (tests/tools/hostile_profile.c): DSO paths naming a FIFO, /dev/zero, a
# 10 GB sparse file, a directory, /proc/self/mem and a path with "..";
# JIT addresses at or above PERF_CONTEXT_MAX in a deferred stack; names
# with markup, control characters and bytes that are not UTF-8; absurd
# counts. Nothing hangs, no such file is read past an ELF header's worth,
# --symfs is never left through "..", and the outputs stay well-formed.
source "$CS_ROOT/tests/lib.sh"

H=$CS_TOOLS/hostile_profile
pid=$((4000000 + RANDOM))
map=/tmp/perf-$pid.map
trap 'rm -f "$map"' EXIT

mkfifo "$T/fifo"
truncate -s 10G "$T/sparse"
mkdir -p "$T/symfs" "$T/outside/opt/fixt"
cp "$FIXTURES/linux-7.3.4/bin/workload" "$T/outside/opt/fixt/"
# a JIT's symbol map (perf's format): a name with markup and broken
# bytes; /dev/zero is anonymous memory, which perf-PID.map names
printf '%s\n' $'11001200 100 </script><script>alert(1)</script>bad\xff\xfe\x01' >"$map"
comm=$'</script>\x01\xff<b>'
dsos=("$T/fifo" /dev/zero "$T/sparse" "$T" /proc/self/mem
      /../outside/opt/fixt/workload "$map" /opt/fixt/workload)
args=()
for d in "${dsos[@]}"; do args+=(--dso "$d"); done
"$H" -o "$T/h.data" --pid "$pid" --comm "$comm" "${args[@]}" >"$T/ips" ||
	{ notok "hostile_profile writes the profile"; exit 0; }

# script: ends, quickly, with every sample
for how in "without --symfs" "with --symfs"; do
	extra=()
	[ "$how" = "with --symfs" ] && extra=(--symfs "$T/symfs")
	start=$SECONDS
	timeout 30 "$CS" script -q -i "$T/h.data" --kallsyms /dev/null "${extra[@]}" \
		>"$T/out" 2>"$T/err"
	rc=$?
	check_eq "script $how: exits 0 (not stuck on a FIFO, /dev/zero or 10 GB)" 0 "$rc"
	check "script $how: within 10 s ($((SECONDS - start)) s)" [ $((SECONDS - start)) -le 10 ]
	check_eq "script $how: every sample shown" 9 "$(grep -c 'cpu-clock:' "$T/out")"
done

# no hostile file is read past an ELF header (strace names each fd's file)
if command -v strace >/dev/null &&
   strace -f -y -o "$T/strace" -e trace=openat,read,pread64 \
	"$CS_REL" script -q -i "$T/h.data" --kallsyms /dev/null >/dev/null 2>&1; then
	big=$(awk -v t="$T" '
		/(^|[^a-z])(read|pread64)\(/ && (index($0, "<" t "/fifo>") ||
		    index($0, "</dev/zero>") || index($0, "<" t "/sparse>") ||
		    index($0, "<" t ">") || index($0, "/mem>")) {
			n = $NF + 0; if (n > 64) print
		}' "$T/strace" | head -3)
	check_eq "no FIFO, device, directory, /proc/self/mem or sparse file read past 64 bytes" "" "$big"
	check_eq "the FIFO was opened without blocking, or not at all" "" \
		"$(grep -a "openat(.*$T/fifo\"" "$T/strace" | grep -v O_NONBLOCK)"
else
	skip "no hostile file read past 64 bytes" "strace is not installed"
fi

# "..": never looked up, so never outside --symfs; the same file by its
# own name under --symfs is found (the control)
strace -f -e trace=openat -o "$T/strace2" "$CS_REL" script -q -i "$T/h.data" \
	--kallsyms /dev/null --symfs "$T/symfs" >/dev/null 2>&1 || true
if [ -s "$T/strace2" ]; then
	check_eq "a path with '..' is not opened under --symfs" "" \
		"$(grep -a 'outside/opt/fixt/workload' "$T/strace2")"
fi
"$CS" script -q -i "$T/h.data" --kallsyms /dev/null --symfs "$T/symfs" >"$T/dotdot" 2>/dev/null
check "a path with '..' resolves nothing under --symfs" \
	grep -q '15001234 \[unknown\] (/../outside/opt/fixt/workload)' "$T/dotdot"
"$CS" script -q -i "$T/h.data" --kallsyms /dev/null --symfs "$T/outside" >"$T/control" 2>/dev/null
check "control: the same binary by its own name under --symfs resolves" \
	grep -q '17001234 thread_main+0x2b (/opt/fixt/workload)' "$T/control"

# JIT addresses at or above PERF_CONTEXT_MAX: stitched, shown as addresses
"$CS" script -q -i "$T/h.data" --kallsyms /dev/null --stats >"$T/jit" 2>"$T/stats"
check "deferred stack with ips >= PERF_CONTEXT_MAX is stitched" \
	grep -qE '^ +stitched +1$' "$T/stats"
check "its ips are shown as addresses, in order" \
	awk '/ffffffff81000010/ { k = NR } /^\t +401000 / && NR == k + 1 { a = NR }
	     /^\tfffffffffffff100 / && NR == a + 1 { b = NR }
	     /^\tffffffffffffffff / && NR == b + 1 { ok = 1 } END { exit !ok }' "$T/jit"

# the flame page: no name closes its <script>; compare with a tame profile
"$H" -o "$T/tame.data" --pid "$pid" --comm tame --dso /opt/fixt/workload >/dev/null
"$CS" flame -q -i "$T/h.data" --kallsyms /dev/null -o "$T/h.html" 2>/dev/null
"$CS" flame -q -i "$T/tame.data" --kallsyms /dev/null -o "$T/tame.html" 2>/dev/null
check_eq "flame page: hostile names add no </script" \
	"$(grep -aoi '</script' "$T/tame.html" | wc -l)" "$(grep -aoi '</script' "$T/h.html" | wc -l)"
check "flame page: the names are there, escaped" grep -aq '\\u003c/script>\\u0001\\ufffd\\u003cb>.*\\u003c/script>bad\\ufffd\\ufffd\\u0001' "$T/h.html"

# pprof: every string of the table is UTF-8
"$CS" pprof -q -i "$T/h.data" --kallsyms /dev/null -o "$T/h.pb.gz" 2>/dev/null
check "pprof: string table is UTF-8, hostile names included" python3 - "$T/h.pb.gz" <<'EOF'
import gzip, sys
b = gzip.open(sys.argv[1]).read()
def varint(i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
i, strings = 0, []
while i < len(b):
    key, i = varint(i)
    if key & 7 == 0: _, i = varint(i)
    elif key & 7 == 2:
        n, i = varint(i)
        if key >> 3 == 6: strings.append(b[i:i + n].decode('utf-8'))  # raises if not UTF-8
        i += n
    else: sys.exit(1)
sys.exit(0 if any('alert(1)' in s and '\ufffd' in s for s in strings) else 1)
EOF

# absurd counts are refused from the bytes that remain, before anything
# is allocated: the release binary in 256 MB of address space
absurd() {
	local what=$1 off=$2 value=$3 re=$4 rc
	cp "$T/h.data" "$T/absurd.data"
	python3 -c "import struct,sys; f=open(sys.argv[1],'r+b'); f.seek($off); f.write(struct.pack('<Q', $value))" "$T/absurd.data"
	(ulimit -v 262144; "$CS_REL" script -q -i "$T/absurd.data" --kallsyms /dev/null) >/dev/null 2>"$T/absurd.err"
	rc=$?
	if [ $rc -le 1 ] && grep -Eq "$re" "$T/absurd.err" && ! grep -q 'out of memory' "$T/absurd.err"; then
		ok "absurd $what: refused ($(head -c 150 "$T/absurd.err"))"
	else
		notok "absurd $what: refused without allocating (exit $rc: $(head -c 200 "$T/absurd.err"))"
	fi
}
read -r attrs_off data_off data_size <<<"$(python3 -c "
import struct,sys; b=open(sys.argv[1],'rb').read(104)
print(*struct.unpack_from('<Q', b, 24), *struct.unpack_from('<QQ', b, 40))" "$T/h.data")"
attr_size=$(python3 -c "import struct,sys; print(struct.unpack_from('<Q', open(sys.argv[1],'rb').read(32), 16)[0])" "$T/h.data")
deferred=$(python3 -c "
import struct,sys; b=open(sys.argv[1],'rb').read(); at=$data_off
while at < $data_off + $data_size:
    t, _, s = struct.unpack_from('<IHH', b, at)
    if t == 22: print(at); break
    at += s" "$T/h.data")
absurd "2^32 attrs" 32 "$((attr_size << 32))" 'attr section at offset 0x[0-9a-f]+.* does not fit'
absurd "2^32 ids" "$((attrs_off + attr_size - 8))" "$((8 << 32))" 'ids of attr 0 at offset'
absurd "nr of 2^60 ips" "$((deferred + 16))" "$((1 << 60))" 'CALLCHAIN_DEFERRED record at offset 0x[0-9a-f]+: nr exceeds the record'
absurd "4 GB feature section" "$((data_off + data_size + 8))" "$((1 << 32))" 'warning: .*feature table at offset 0x[0-9a-f]+ is damaged'
