#!/usr/bin/env python3
"""report_ties.py - puts the branches of equal weight in a perf report call
graph in an order both readers can follow.

perf orders a node's branches by weight and, among equal weights, by its
callchain key: the dso object, compared by its address in perf's memory
(which follows perf's allocations, not the profile), then the symbol's
address. Among equal-weight branches whose first frames are in different
dsos perf's order is that accident; within one dso it is the symbols'
order, and that stays compared.

    report_ties.py CHILDREN_REPORT < BLOCKS > BLOCKS

BLOCKS are report entries, one a line, their lines joined by \\x01 (as
report_local.sh makes them). CHILDREN_REPORT is the same reader's
--children report of the same file, where every frame is an entry with its
dso. Each run of branches of one weight is stable-sorted by the dsos of
their first frames, and the bars that join a branch to the next are
redrawn for the new order.
"""
import re
import sys

ENTRY = re.compile(r' +[0-9.]+% +[0-9.]+% +\S+ +(\S+) +\[.\] (.*)$')
BRANCH = re.compile(r'([| ])--([0-9.]+)%--(.*)$')


def dsos_of(report):
    """symbol -> the dsos it is an entry of, as one string"""
    names = {}
    with open(report, errors='replace') as f:
        for line in f:
            m = ENTRY.match(line.rstrip('\n'))
            if m:
                names.setdefault(m.group(2), set()).add(m.group(1))
    return {k: ' '.join(sorted(v)) for k, v in names.items()}


def bars_only(s):
    return not s.strip(' |')


def separator_col(line):
    """the column of a separator line's last bar ('   |   |   '), or -1"""
    col = line.rstrip().rfind('|')
    if col < 0 or line[col + 1:].strip() or not bars_only(line[:col]):
        return -1
    return col


def branch(line, col):
    """(weight, frame, bar) of a branch drawn at column col, or None"""
    if len(line) <= col or not bars_only(line[:col]):
        return None
    m = BRANCH.match(line, col)
    return m.groups()[1:] + (m.group(1),) if m else None


def group_at(lines, start, col):
    """the branches of the group whose first separator is lines[start], as
    [separator, branch line, body...] chunks, and the index past them"""
    chunks, i = [], start
    while i + 1 < len(lines) and separator_col(lines[i]) == col and \
            branch(lines[i + 1], col):
        last = branch(lines[i + 1], col)[2] == ' '
        j = i + 2
        while j < len(lines):
            if separator_col(lines[j]) == col and j + 1 < len(lines) and \
                    branch(lines[j + 1], col):
                break
            if last and len(lines[j]) - len(lines[j].lstrip()) <= col:
                break
            j += 1
        chunks.append(lines[i:j])
        i = j
        if last:
            break
    return chunks, i


def redraw(chunk, col, last):
    bar = ' ' if last else '|'
    return chunk[:1] + [l[:col] + bar + l[col + 1:] for l in chunk[1:]]


def sort_group(lines, start, col, dso):
    chunks, end = group_at(lines, start, col)
    weight = [branch(c[1], col)[0] for c in chunks]
    order, k = [], 0
    while k < len(chunks):
        run = [n for n in range(k, len(chunks)) if weight[n] == weight[k]]
        run = [n for i, n in enumerate(run) if n == k + i]
        run.sort(key=lambda n: dso.get(branch(chunks[n][1], col)[1], '?'))
        order += run
        k += len(run)
    out = []
    for pos, n in enumerate(order):
        out += redraw(chunks[n], col, pos == len(order) - 1)
    lines[start:end] = out


def normalize(block, dso):
    lines = block.split('\x01')
    for k in range(len(lines)):
        col = separator_col(lines[k])
        if col >= 0 and k + 1 < len(lines) and branch(lines[k + 1], col):
            sort_group(lines, k, col, dso)
    return '\x01'.join(lines)


def main():
    dso = dsos_of(sys.argv[1])
    for block in sys.stdin:
        print(normalize(block.rstrip('\n'), dso))


if __name__ == '__main__':
    main()
