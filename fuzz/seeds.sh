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
mkdir -p "$C"/{script,dump,pipe,zstd,flame,pprof,unwind,expr,elf}

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

# expr: the expressions real CFI uses (the PLT's CFA, a signal frame's
# saved register, a CFA-relative value), and ones that branch, loop,
# divide by zero and read past the copy; the layout is fuzz_expr.c's
python3 - "$C/expr" <<'PY'
import struct, sys
out = sys.argv[1]
W = {0: 0, 1: 1, 2: 2, 4: 3, 8: 4}
def seed(name, known, ops, stack):
    b = bytearray([known]) + bytes(range(0, 17 * 4, 4))
    for atom, n1, w1, n2, w2 in ops:
        b += bytes([atom, W[w1] | W[w2] << 4])
        b += (n1 & ((1 << 8 * w1) - 1)).to_bytes(w1, 'little')
        b += (n2 & ((1 << 8 * w2) - 1)).to_bytes(w2, 'little')
    b += b'\xff' + struct.pack('<%dQ' % len(stack), *stack)
    open('%s/%s' % (out, name), 'wb').write(b)
def op(atom, n1=0, w1=0, n2=0, w2=0):
    return (atom, n1, w1, n2, w2)
lit = lambda n: op(0x30 + n)
breg = lambda r, off: op(0x70 + r, off, 8)
stack = [0x1000 + 8 * i for i in range(64)]
# rsp + 8 + 8 * ((rip & 15) >= 11): the PLT's CFA
seed('plt', 0xff, [breg(7, 8), breg(16, 0), lit(15), op(0x1a), lit(11), op(0x2a),
                   lit(3), op(0x24), op(0x22)], stack)
# a signal frame: the register saved at rsp + 0x28 in the context
seed('signal', 0xff, [breg(7, 0x28), op(0x06)], stack)
seed('cfa-value', 0x80, [op(0x9c), op(0x23, 16, 1), op(0x9f)], stack)
seed('deref-size', 0xff, [breg(7, 3), op(0x94, 2, 1), op(0x12), op(0x1c)], stack)
seed('bregx', 0xff, [op(0x92, 7, 1, 0x10, 8), op(0x06), op(0x08, 9, 1), op(0x22)], stack)
# a loop counting down from 5, then out (offsets are the input's)
hdr = 1 + 17
ops = [lit(5)]                       # at hdr
top = hdr + 2                        # lit1 minus dup bra(top)
ops += [lit(1), op(0x1c), op(0x12)]
bra_at = top + 6
ops += [op(0x28, top - bra_at - 3, 2)]
seed('loop', 0xff, ops, stack)
seed('forever', 0xff, [op(0x2f, -3, 2)], stack)
seed('div-zero', 0xff, [lit(7), lit(0), op(0x1b)], stack)
seed('past-copy', 0xff, [breg(7, 0x7ff8), op(0x06)], stack[:4])
seed('below-copy', 0xff, [breg(7, -0x100), op(0x06)], stack[:4])
seed('unknown-reg', 0x00, [breg(3, 0)], stack)
PY

# elf: small binaries of every kind symbols come from (with and without
# .symtab and DWARF, PIE and not, a shared object, C++ names), and saved
# tables under fuzz_elf.c's key (the layout of symtab.c's saved_head)
cp "$FIX/bin/workload" "$C/elf/workload"
strip -o "$C/elf/workload-stripped" "$FIX/bin/workload"
printf 'static int f(int x) { return x * 3; }\nint g(int x) { return f(x) + 1; }\n' >"$T/g.c"
printf 'int main(int c, char **v) { (void)v; extern int g(int); return g(c); }\n' >"$T/m.c"
cc -O2 -g -shared -fPIC -o "$C/elf/lib.so" "$T/g.c"
cc -O2 -g -no-pie -o "$C/elf/nopie" "$T/m.c" "$T/g.c"
printf 'namespace ns { struct S { int f(int x) { return x + 1; } }; }\n' >"$T/s.cc"
printf 'int h(int x) { ns::S s; return s.f(x); }\nint main(int c, char **) { return h(c); }\n' >>"$T/s.cc"
if command -v g++ >/dev/null; then g++ -O0 -g -o "$C/elf/cxx" "$T/s.cc"; fi
python3 - "$C/elf" <<'PY'
import struct, sys
out = sys.argv[1]
def table(name, syms, key=b'fuzz'):
    pool, ents = b'', []
    for start, end, sym, module in syms:
        # each string: its length (2 bytes), its bytes, a NUL; an offset
        # is that of its bytes
        n = len(pool) + 2; pool += struct.pack('<H', len(sym)) + sym + b'\0'
        m = 0xffffffff
        if module is not None:
            m = len(pool) + 2
            pool += struct.pack('<H', len(module)) + module + b'\0'
        ents.append((start, end, n, m))
    b = b'CSSYMT2\0' + struct.pack('<3Q', len(key), len(ents), len(pool))
    b += key + b'\0' * (-len(key) % 8)
    b += b''.join(struct.pack('<Q', e[0]) for e in ents)
    b += b''.join(struct.pack('<QII', e[1], e[2], e[3]) for e in ents)
    b += bytes([i & 1 for i in range(len(ents))]) + b'\0' * (-len(ents) % 8)
    open('%s/%s' % (out, name), 'wb').write(b + pool)
table('saved', [(0x1000, 0x1040, b'main', None), (0x1040, 0x1100, b'_ZN2ns1S1fEi', None),
                (0xffffffff81000000, 0xffffffff81000100, b'do_syscall_64', b'[kvm]')])
table('saved-empty-names', [(0x10, 0x10, b'', None), (0x20, 0x30, b'a', None)])
table('saved-other-key', [(0x1000, 0x1040, b'main', None)], key=b'another key')
PY
du -sh "$C"
