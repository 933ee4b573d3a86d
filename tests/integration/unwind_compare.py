#!/usr/bin/env python3
"""unwind_compare.py - perf 6.1's `perf script --no-inline` against
`callstitch script --no-inline` on a --call-graph dwarf recording, sample by
sample.

Layout, normalised away: perf 6.1 prints user addresses relative to their
dso (we print them absolute, as perf 7 does) and pads tids to 5 columns.

Differences allowed, each counted under its name:
  trampoline  the frame of a signal trampoline. A handler returns into
              __restore_rt; perf 6.1 shows that return address minus one,
              which is the byte glibc puts before __restore_rt (so that CFI
              lookups at address - 1 find it) and has no symbol: "[unknown]".
              We show the trampoline at its own address: __restore_rt+0x0.
  plt         a PLT entry without a symbol of its own (an IRELATIVE slot:
              libc calling its own ifuncs). perf 6.1 names it "@plt"; we
              leave it [unknown] or name it from the GOT slot it jumps
              through. The frame is the same address in the same dso.
Anything else makes the sample differ.

usage: unwind_compare.py PERF_TXT OURS_TXT
prints one line:
  samples N equal E allowed A (trampoline T plt P) differ D match R%
then the first differing samples, each line starting with "#".
"""
import re
import sys

FRAME = re.compile(r'^\s*([0-9a-f]+) (.*) \(([^()]*)\)$')


def blocks(path):
    with open(path, errors='replace') as f:
        text = f.read()
    return [b for b in text.split('\n\n') if b.strip()]


def header(line):
    return ' '.join(line.split())


def frame(line):
    """(address or 'U', symbol, dso) of a frame line"""
    m = FRAME.match(line)
    if not m:
        return ('?', line.strip(), '')
    addr, sym, dso = m.groups()
    if not (len(addr) == 16 and addr.startswith('ffff')):
        addr = 'U'
    return (addr, sym, dso)


def allowed(p, o):
    """the name of the allowed difference between frames p and o, or None"""
    if p[0] != o[0] or p[2] != o[2]:
        return None
    if p[1] == '[unknown]' and o[1] == '__restore_rt+0x0':
        return 'trampoline'
    if p[1].startswith('@plt+') and (o[1] == '[unknown]' or
                                     o[1].endswith('@plt+' + p[1][5:])):
        return 'plt'
    return None


def main():
    perf, ours = blocks(sys.argv[1]), blocks(sys.argv[2])
    equal = allow = differ = 0
    kinds = {'trampoline': 0, 'plt': 0}
    shown = []
    for i in range(max(len(perf), len(ours))):
        if i >= len(perf) or i >= len(ours):
            differ += 1
            continue
        p = perf[i].split('\n')
        o = ours[i].split('\n')
        same = header(p[0]) == header(o[0]) and len(p) == len(o)
        names = []
        for a, b in zip(p[1:], o[1:]) if same else ():
            fa, fb = frame(a), frame(b)
            if fa == fb:
                continue
            name = allowed(fa, fb)
            if name is None:
                same = False
                break
            names.append(name)
        if not same:
            differ += 1
            if len(shown) < 3:
                shown.append((perf[i], ours[i]))
        elif names:
            allow += 1
            for n in set(names):
                kinds[n] += 1
        else:
            equal += 1
    n = max(len(perf), len(ours))
    rate = 100.0 * (equal + allow) / n if n else 0.0
    print('samples %d equal %d allowed %d (trampoline %d plt %d) differ %d '
          'match %.2f%%' % (n, equal, allow, kinds['trampoline'],
                            kinds['plt'], differ, rate))
    for p, o in shown:
        print('# perf:\n' + '\n'.join('#   ' + l for l in p.split('\n')))
        print('# ours:\n' + '\n'.join('#   ' + l for l in o.split('\n')))


if __name__ == '__main__':
    main()
