#!/usr/bin/env python3
"""record_stacks.py - reads `perf script` / `callstitch script` text for the
record tests (an independent parse of perf script's default layout).

    record_stacks.py compare [--empty-ok N] [--names-of COMM] A.txt B.txt
                                             the same samples (tid, time) with
                                             the same stacks, in any order of
                                             equal times; prints what differs
    record_stacks.py count A.txt             number of samples
    record_stacks.py whole A.txt COMM        for COMM's samples with user frames:
                                             "whole W/T qsort R/C": W of T end in
                                             a root (_start, clone3, clone); R of
                                             the C under qsortcb's sort_round
                                             read sort_round <- sort_for <- main <-
                                             __libc_start_call_main, or <-
                                             start_thread <- clone3
    record_stacks.py attrs FILE.data         each event of a perf.data file
                                             (file mode) as "type config
                                             sample_type flags", in hex
    record_stacks.py order A.txt COMM        checks that COMM's stacks read,
                                             outermost first, worker ->
                                             deep_a -> ... -> deep_h ->
                                             recurse... -> burn_cpu|do_syscalls;
                                             prints "good/total"

A frame is equal in both when the addresses are equal (or perf printed a
dso-relative address, as perf 6.1 does for some maps, with the same page
offset) and, where both resolved it, the symbol+offset is the same.
Exits 1 with a message on a difference.
"""
import re
import sys

TIME = re.compile(r"^\d+\.\d+:$")
FRAME = re.compile(r"^\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")


def parse(path):
    samples = []
    cur = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                cur = None
                continue
            if line[0] not in " \t":
                toks = line.split()
                ti = next((i for i, t in enumerate(toks) if TIME.match(t)), None)
                if ti is None:
                    continue        # not a sample (a deferred record, ...)
                tid_i = ti - 1
                if toks[tid_i].startswith("["):
                    tid_i -= 1
                comm = " ".join(toks[:tid_i])
                cur = {"comm": comm, "tid": toks[tid_i], "time": toks[ti][:-1],
                       "frames": []}
                samples.append(cur)
                # one-line samples: the ip follows the event name
                rest = line.split(": ", 2)
                if len(rest) == 3:
                    m = FRAME.match(" " + rest[2].split(":", 1)[-1])
                    if m:
                        cur["frames"].append(m.groups())
                continue
            if cur is not None:
                m = FRAME.match(line)
                # inline expansions name no recorded address
                if m and m.group(3) != "inlined":
                    cur["frames"].append(m.groups())
    return samples


def key(s):
    return (s["time"], s["tid"], tuple(f[0] for f in s["frames"]))


def resolved(f):
    return not f[1].startswith("[unknown]")


def same_frame(a, b, names=True):
    x, y = int(a[0], 16), int(b[0], 16)
    if x != y:
        # perf 6.1 prints some user frames dso-relative: the page offset
        # still agrees, and the relative one is small
        if (x ^ y) & 0xfff or min(x, y) >= 1 << 32:
            return False
    # where both name the symbol, the name must agree (perf 6.1 leaves
    # PLT entries unnamed: "@plt")
    if not names or "@plt+" in a[1] and "@plt+" in b[1]:
        return True
    return a[1] == b[1] or not (resolved(a) and resolved(b))


def compare(pa, pb, empty_ok=0, names_of=None):
    a, b = sorted(parse(pa), key=key), sorted(parse(pb), key=key)
    empty = 0
    if len(a) != len(b):
        print(f"{pa}: {len(a)} samples, {pb}: {len(b)}")
        return 1
    bad = 0
    for x, y in zip(a, b):
        why = None
        if (x["tid"], x["time"]) != (y["tid"], y["time"]):
            why = "tid/time"
        elif not x["frames"] and y["frames"] and empty < empty_ok:
            empty += 1
        elif len(x["frames"]) != len(y["frames"]):
            why = f"{len(x['frames'])} vs {len(y['frames'])} frames"
        else:
            for i, (fa, fb) in enumerate(zip(x["frames"], y["frames"])):
                if not same_frame(fa, fb, names_of is None or x["comm"] == names_of):
                    why = f"frame {i}: {fa} vs {fb}"
                    break
        if why:
            bad += 1
            if bad <= 5:
                print(f"sample tid {x['tid']} at {x['time']}: {why}")
    if bad:
        print(f"{bad} of {len(a)} samples differ")
        return 1
    print(f"{len(a)} samples agree" +
          (f" ({empty} without a stack in {pa})" if empty else ""))
    return 0


CHAIN = ["deep_h", "deep_g", "deep_f", "deep_e", "deep_d", "deep_c", "deep_b", "deep_a"]


def order(path, comm):
    good = total = 0
    for s in parse(path):
        if s["comm"] != comm:
            continue
        names = [re.sub(r"\+0x[0-9a-f]+$", "", f[1]) for f in s["frames"]]
        leaf = next((i for i, n in enumerate(names) if n in ("burn_cpu", "do_syscalls")), None)
        if leaf is None:
            continue
        total += 1
        # innermost first: leaf, recurse..., deep_h ... deep_a, worker
        rest = names[leaf + 1:]
        n = 0
        while n < len(rest) and rest[n] == "recurse":
            n += 1
        if n >= 1 and rest[n:n + len(CHAIN)] == CHAIN and rest[n + len(CHAIN):n + len(CHAIN) + 1] == ["worker"]:
            good += 1
    print(f"{good}/{total}")
    return 0


ROOTS = ("_start", "clone3", "clone")


def whole(path, comm):
    w = t = r = c = 0
    for s in parse(path):
        if s["comm"] != comm:
            continue
        # user frames; GCC's clones (sort_round.constprop.0) by their name
        names = [re.sub(r"(\.(constprop|isra|part)\.\d+)*\+0x[0-9a-f]+$", "", f[1])
                 for f in s["frames"] if int(f[0], 16) < 0xffff800000000000]
        if not names:
            continue
        t += 1
        w += names[-1] in ROOTS
        if "sort_round" not in names:
            continue
        c += 1
        # innermost first: (compare_keys,) libc's qsort frames, sort_round...
        rest = names[names.index("sort_round") + 1:]
        if rest[:1] == ["sort_for"] and \
                (rest[1:3] == ["main", "__libc_start_call_main"] or
                 rest[1:3] == ["start_thread", "clone3"]):
            r += 1
    print(f"whole {w}/{t} qsort {r}/{c}")
    return 0


def attrs(path):
    import struct
    with open(path, "rb") as f:
        head = f.read(104)
        magic, size, attr_size, off, sz = struct.unpack_from("<8sQQQQ", head)
        if magic != b"PERFILE2" or size != 104 or attr_size < 72:
            print(f"{path}: not a little-endian file-mode perf.data")
            return 1
        f.seek(off)
        data = f.read(sz)
    for i in range(0, len(data) - attr_size + 1, attr_size):
        typ, _asz, config, _period, stype, _rf, flags = struct.unpack_from("<IIQQQQQ", data, i)
        print(f"{typ:x} {config:x} {stype:x} {flags:x}")
    return 0


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "compare":
        args, empty_ok, names_of = sys.argv[2:], 0, None
        while len(args) > 2 and args[0].startswith("--"):
            if args[0] == "--empty-ok":
                empty_ok = int(args[1])
            elif args[0] == "--names-of":
                names_of = args[1]
            else:
                break
            args = args[2:]
        if len(args) == 2:
            return compare(args[0], args[1], empty_ok, names_of)
    if len(sys.argv) == 3 and sys.argv[1] == "count":
        print(len(parse(sys.argv[2])))
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "attrs":
        return attrs(sys.argv[2])
    if len(sys.argv) == 4 and sys.argv[1] == "whole":
        return whole(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 4 and sys.argv[1] == "order":
        return order(sys.argv[2], sys.argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
