#!/usr/bin/env python3
"""inject_compare.py - are two `perf script` texts the same samples and stacks?

    inject_compare.py [--exact] OURS.txt PERF61.txt

OURS is `callstitch script --no-inline` (perf 6.1 shows no inlined
functions) on a profile with deferred callchains, PERF61
`/usr/bin/perf script` (6.1) on what `callstitch inject` made of it. Samples
are paired by (tid, time); for each pair the period and every frame must
agree: the symbol with its offset, the dso, and the address. perf 6.1 shows
user addresses relative to their dso, so a user address agrees when it is
equal or when it differs only above the page offset (a map starts on a page);
--exact (both texts from callstitch) wants equal addresses. A sample whose
user stack never came ends, in ours, with a "[user stack missing: why]"
frame; inject keeps its kernel part only, so that frame is left out (and
the samples counted).

A sample taken inside exec() gets a user stack of the new program; we
resolve it when that stack arrives, perf 6.1 at the sample's time, so
inject moves the exec's COMM and MMAP2s back to the oldest such sample:
its frames and comm must agree like any other. Two differences of naming,
not of stacks, are counted instead of failed: PLT entries (perf 6.1 says
"@plt+0x6" where we, like perf 7.3, say "func@plt+0x6"), and the comm of a
thread that has exited, which we, like perf 7.3, show as ":TID".
Every other difference fails.
"""
import re
import sys
from collections import defaultdict

HEAD = re.compile(r"^(\S.*?)\s+(-?\d+)\s+(?:\[(\d+)\]\s+)?(\d+\.\d+):\s+(\d+)\s+(\S+):\s*$")
FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")


def parse(path):
    samples = defaultdict(list)
    cur = None
    n = 0
    for lineno, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
        line = line.rstrip("\n")
        if not line.strip():
            cur = None
            continue
        m = HEAD.match(line)
        if m and not line[0].isspace():
            comm, tid, _cpu, time, period, _ev = m.groups()
            cur = {"comm": comm.strip(), "period": int(period), "frames": []}
            samples[(int(tid), time)].append(cur)
            n += 1
            continue
        m = FRAME.match(line)
        if m and cur is not None:
            cur["frames"].append((int(m.group(1), 16), m.group(2), m.group(3)))
            continue
        sys.exit(f"inject_compare.py: {path}:{lineno}: cannot read: {line!r}")
    return samples, n


def is_kernel(addr):
    return addr >= 0xffff800000000000


def main():
    args = sys.argv[1:]
    exact = bool(args) and args[0] == "--exact"
    if exact:
        args = args[1:]
    if len(args) != 2:
        sys.exit("usage: inject_compare.py [--exact] OURS.txt PERF61.txt")
    ours, n_ours = parse(args[0])
    theirs, n_theirs = parse(args[1])
    kernel_only = 0
    for group in ours.values():
        for smp in group:
            if smp["frames"] and smp["frames"][-1][1].startswith("[user stack missing"):
                smp["frames"].pop()
                kernel_only += 1
    bad = []
    frames = plt = comm_unknown = 0
    if n_ours != n_theirs:
        bad.append(f"{n_ours} samples in ours, {n_theirs} in perf's")
    for key in sorted(set(ours) | set(theirs)):
        a, b = ours.get(key, []), theirs.get(key, [])
        if len(a) != len(b):
            bad.append(f"tid {key[0]} time {key[1]}: {len(a)} samples in ours, {len(b)} in perf's")
            continue
        # samples with the same key: pair them by their frames
        a = sorted(a, key=lambda s: s["frames"])
        b = sorted(b, key=lambda s: s["frames"])
        for x, y in zip(a, b):
            frames += len(x["frames"])
            if x["period"] != y["period"]:
                bad.append(f"tid {key[0]} time {key[1]}: period {x['period']} vs {y['period']}")
            if len(x["frames"]) != len(y["frames"]):
                bad.append(f"tid {key[0]} time {key[1]}: {len(x['frames'])} frames vs {len(y['frames'])}")
                continue
            for i, ((aa, asym, adso), (ba, bsym, bdso)) in enumerate(zip(x["frames"], y["frames"])):
                if asym == bsym and adso == bdso and (
                        aa == ba or (not exact and not is_kernel(aa) and
                                     (aa & 0xfff) == (ba & 0xfff))):
                    continue
                if (not exact and "@plt+" in bsym and adso == bdso and
                        (asym == "[unknown]" or (
                            "@plt+" in asym and asym.split("@plt")[1] == bsym.split("@plt")[1]))):
                    plt += 1    # perf 6.1 names no PLT entry by its GOT slot
                    continue
                bad.append(f"tid {key[0]} time {key[1]} frame {i}: {aa:x} {asym} ({adso})"
                           f" vs {ba:x} {bsym} ({bdso})")
            if x["comm"] != y["comm"]:
                if f":{key[0]}" in (x["comm"], y["comm"]):
                    comm_unknown += 1   # perf 7.3's view of an exited thread
                else:
                    bad.append(f"tid {key[0]} time {key[1]}: comm {x['comm']} vs {y['comm']}")
    print(f"# {n_ours} samples ({kernel_only} kernel-only), {frames} frames compared; "
          f"{plt} PLT entries named differently; {comm_unknown} samples of exited threads shown as ':TID' by one side")
    for line in bad[:20]:
        print(f"#   {line}")
    if bad:
        print(f"# {len(bad)} differences")
        sys.exit(1)


main()
