#!/usr/bin/env bash
# fuzz/seeds.sh - (re)makes the seed corpus in fuzz/corpus/HARNESS/ from
# the real-kernel fixtures (shrunk to their first records) and gen_synth.
# Kept small: every seed is a few tens of KiB. Needs `make all` first.
set -euo pipefail
cd "$(dirname "$0")/.."
GEN=build/tools/gen_synth
CS=build/callstitch
FIX=tests/fixtures/linux-7.3.4
C=fuzz/corpus
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

rm -rf "$C"
mkdir -p "$C"/{script,dump,pipe,zstd,flame,pprof,unwind}

# file mode: real recordings, shrunk; synthetic ones in every layout
for f in task-defer syswide-defer task-nodefer; do
	fuzz/shrink.py "$FIX/$f.data" "$C/script/$f.data" 24000
done
$GEN -n 150 -s 1 -o "$C/script/synth.data" >/dev/null
$GEN -n 150 -s 2 --big-endian -o "$C/script/synth-be.data" >/dev/null
$GEN -n 150 -s 3 -z -o "$C/script/synth-zstd.data" >/dev/null
$GEN -n 150 -s 4 --no-defer -o "$C/script/synth-nodefer.data" >/dev/null
$GEN -n 150 -s 5 --pipe -o "$C/script/synth-pipe.data" >/dev/null
cp "$C"/script/* "$C/dump/"

# streams
$GEN -n 150 -s 6 --pipe -o "$C/pipe/synth.data" >/dev/null
$GEN -n 150 -s 7 --pipe --big-endian -o "$C/pipe/synth-be.data" >/dev/null
$GEN -n 150 -s 8 --pipe -z -o "$C/pipe/synth-zstd.data" >/dev/null

# zstd: a selector byte (chunk size, frame per payload, record type) and
# an uncompressed stream
$GEN -n 200 -s 9 --pipe -o "$T/stream.data" >/dev/null
for sel in 00 07 4f 81 ff; do
	{ printf "\\x$sel"; cat "$T/stream.data"; } >"$C/zstd/synth-$sel.data"
done

# names: stacks of a real profile (folded: comm;frames root first), and
# the names that have broken writers elsewhere
fuzz/shrink.py "$FIX/task-defer.data" "$T/task.data" 60000
{ printf 'task-defer\t(none)\tperf record -g\tcpu-clock\n'
  $CS folded -q -i "$T/task.data" --kallsyms fuzz/symfs/kallsyms --symfs fuzz/symfs
} >"$C/flame/folded.txt"
printf '%s\n' \
	$'</script><script>alert(1)</script>\t<!--\t"quoted" \\ back\t</SCRIPT>' \
	$'proc;main;</script><img src=x onerror=alert(1)>;k_entry\t[kernel.kallsyms]' \
	$'\x01\x02\x1b[31m;ctrl\x7f;tab\there\tdso' \
	$'bad\xff\xfe;over\xc0\xaflong;surrogate\xed\xa0\x80;\xf4\x90\x80\x80beyond;cut\xe2\x82' \
	$'ok;caf\xc3\xa9;\xe2\x82\xac;\xf0\x9f\x94\xa5;\xe2\x80\xa8line-sep;\xe2\x80\xa9' \
	$'u;a;b;c;d;e;f;g;h;i;j;k;l;m;n;o;p;q;r;s;t;u;v;w;x;y;z' \
	>"$C/flame/hostile.txt"
cp "$C"/flame/* "$C/pprof/"

# unwind: the 24 registers and a stack copy, the ip in the fixture's
# program (mapped at 0x555555554000 by fuzz_unwind.c) at the start of a
# function or inside one, return addresses of its callers on the stack
python3 - "$C/unwind" "$FIX/bin/workload" <<'PY'
import struct, subprocess, sys
out, exe = sys.argv[1], sys.argv[2]
syms = {}
for line in subprocess.run(['nm', exe], capture_output=True, text=True).stdout.split('\n'):
    f = line.split()
    if len(f) == 3 and f[1] in 'tT':
        syms[f[2]] = int(f[0], 16)
base, sp = 0x555555554000, 0x7ffd00001000
def seed(name, ip, stack):
    regs = [0] * 24
    regs[6] = sp + 0x40         # bp
    regs[7] = sp                # sp
    regs[8] = ip                # ip
    with open('%s/%s' % (out, name), 'wb') as f:
        f.write(struct.pack('<24Q', *regs) + struct.pack('<%dQ' % len(stack), *stack))
ra = base + syms['main'] + 0x30
seed('entry', base + syms['do_getppid'], [ra, 0, sp + 0x80, ra])
seed('inside', base + syms['do_getppid'] + 8, [sp + 0x40, ra] + [0] * 6 + [sp + 0x90, base + syms['_start'] + 0x20])
seed('deep', base + syms['pp_l1'] + 4, [base + syms['pp_l2'] + 0x20, base + syms['pp_l3'] + 0x20,
     base + syms['pp_l4'] + 0x20, sp + 0x100, ra] * 4)
seed('libc', 0x7f0000000000 + 0x27000, [ra] * 8)
seed('nofile', 0x10100, [ra] * 4)
PY

du -sh "$C"
