#!/usr/bin/env python3
"""flame_stacks.py - reads the data embedded in a `callstitch flame` page.

    flame_stacks.py PAGE.html stacks     the tree as folded stacks, one line
                                         per path with self samples, sorted
                                         ("a;b;c N", the root "all" left out)
    flame_stacks.py PAGE.html total      samples at the root
    flame_stacks.py PAGE.html kinds      self samples per frame kind
    flame_stacks.py PAGE.html meta       the meta object, as JSON

Checks the tree on the way (an independent reading of the format described
in src/outputs/flame.h): one root, every child within its parent, and the self
counts summing to the root's. Exits 1 with a message when it is broken.
"""
import json
import re
import sys

KINDS = ["other", "user", "kernel", "missing"]


def fail(msg):
    print(f"flame_stacks.py: {msg}", file=sys.stderr)
    sys.exit(1)


def load(path):
    html = open(path, encoding="utf-8").read()
    m = re.search(r'<script id="flame-data" type="application/json">(.*?)</script>', html, re.S)
    if not m:
        fail(f"{path}: no flame-data script element")
    d = json.loads(m.group(1))
    if d.get("v") != 1:
        fail(f"{path}: data version {d.get('v')}, expected 1")
    return d


def walk(d):
    """Yields (path of frame ids, self count) and checks the tree."""
    strings, frames, nodes = d["strings"], d["frames"], d["nodes"]
    if len(nodes) % 3 or len(frames) % 3 or not nodes:
        fail("nodes/frames are not whole triples")
    n = len(nodes) // 3
    for i in range(len(frames) // 3):
        name, dso, kind = frames[3 * i: 3 * i + 3]
        if not (0 <= name < len(strings)) or not (-1 <= dso < len(strings)) or kind not in range(4):
            fail(f"frame {i} is out of range: {frames[3 * i: 3 * i + 3]}")
    stack = []          # [node, value, children left, children's sum]
    path = []
    out = []
    self_total = 0
    for i in range(n):
        f, v, nch = nodes[3 * i: 3 * i + 3]
        # only the root of an empty profile holds no samples
        if not (0 <= f < len(frames) // 3) or nch < 0 or v < 0 or (v == 0 and n > 1):
            fail(f"node {i} is bad: {nodes[3 * i: 3 * i + 3]}")
        if stack:
            top = stack[-1]
            top[2] -= 1
            top[3] += v
            if v > top[1]:
                fail(f"node {i} holds {v} samples, more than its parent's {top[1]}")
        elif i:
            fail(f"node {i} is a second root")
        stack.append([i, v, nch, 0])
        path.append(f)
        while stack and stack[-1][2] == 0:
            node, val, _, kids = stack.pop()
            if kids > val:
                fail(f"children of node {node} hold {kids} samples, more than its {val}")
            if val > kids:
                out.append((list(path), val - kids))
                self_total += val - kids
            path.pop()
    if stack:
        fail("the tree ends inside a node")
    if self_total != nodes[1]:
        fail(f"self counts sum to {self_total}, the root holds {nodes[1]}")
    return out


def main():
    if len(sys.argv) != 3:
        fail("usage: flame_stacks.py PAGE.html stacks|total|kinds|meta")
    d = load(sys.argv[1])
    what = sys.argv[2]
    strings, frames = d["strings"], d["frames"]
    stacks = walk(d)
    if what == "total":
        print(d["nodes"][1])
    elif what == "meta":
        print(json.dumps(d["meta"], sort_keys=True))
    elif what == "kinds":
        per = {k: 0 for k in KINDS}
        for path, count in stacks:
            for f in path[1:]:
                per[KINDS[frames[3 * f + 2]]] += count
        for k in KINDS:
            print(f"{k} {per[k]}")
    elif what == "stacks":
        lines = [";".join(strings[frames[3 * f]] for f in path[1:]) + f" {count}"
                 for path, count in stacks]
        for line in sorted(lines):
            print(line)
    else:
        fail(f"unknown request {what}")


main()
