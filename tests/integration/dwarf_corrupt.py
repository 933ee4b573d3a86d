#!/usr/bin/env python3
"""dwarf_corrupt.py - a copy of a --call-graph dwarf perf.data with one kind
of damage to its register and stack copies, for the bad-input tests.

usage: dwarf_corrupt.py MODE IN OUT
MODE:
  big-stack     the first sample's stack size exceeds its record
  dyn           three samples' dyn_size exceed their stack size
  mask-noip     the attr's register mask lacks the pc (same count of
                registers: the records still parse)
  mask-foreign  the attr's mask names a register x86_64 does not have
  abi0          two samples say ABI 0 (no registers, as a kernel thread's)
                and carry none; FINISHED_ROUND records fill the bytes freed
Prints the file offset of the first record it changed.
"""
import struct
import sys

IP, TID, TIME, ADDR, READ, CALLCHAIN, ID, CPU, PERIOD, STREAM_ID, RAW, \
    BRANCH, REGS_USER, STACK_USER = [1 << i for i in range(14)]
IDENTIFIER = 1 << 16
SAMPLE, FINISHED_ROUND = 9, 68


def u64(b, off):
    return struct.unpack_from('<Q', b, off)[0]


def main():
    mode, src, dst = sys.argv[1:4]
    data = bytearray(open(src, 'rb').read())
    assert data[:8] == b'PERFILE2', 'not a perf.data file'
    attr_size = u64(data, 16)
    attrs_off, attrs_size = u64(data, 24), u64(data, 32)
    data_off, data_size = u64(data, 40), u64(data, 48)
    assert attrs_size == attr_size, 'one event expected'
    attr = attrs_off
    sample_type = u64(data, attr + 24)
    mask_at = attr + 80
    mask = u64(data, mask_at)
    assert sample_type & (REGS_USER | STACK_USER) == REGS_USER | STACK_USER
    assert not sample_type & (READ | RAW | BRANCH)

    if mode.startswith('mask-'):
        extra = 1 << 12 if mode == 'mask-noip' else 1 << 40
        struct.pack_into('<Q', data, mask_at, (mask & ~(1 << 8)) | extra)
        print(mask_at)
        open(dst, 'wb').write(data)
        return

    want = {'big-stack': 1, 'dyn': 3, 'abi0': 2}[mode]
    nregs = bin(mask).count('1')
    done, first = 0, None
    off = data_off
    while off < data_off + data_size and done < want:
        rtype, misc, size = struct.unpack_from('<IHH', data, off)
        assert size >= 8
        if rtype != SAMPLE:
            off += size
            continue
        p = off + 8
        for bit in (IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD):
            if sample_type & bit:
                p += 8
        if sample_type & CALLCHAIN:
            p += 8 + 8 * u64(data, p)
        abi_at = p
        abi = u64(data, p)
        p += 8 + (8 * nregs if abi else 0)
        stack_at = p
        stack = u64(data, p)
        if not abi or not stack:
            off += size
            continue
        if first is None:
            first = off
        if mode == 'big-stack':
            struct.pack_into('<Q', data, stack_at, off + size - stack_at + 8)
        elif mode == 'dyn':
            struct.pack_into('<Q', data, stack_at + 8 + stack, stack + 8)
        elif mode == 'abi0':
            freed = 8 * nregs
            struct.pack_into('<Q', data, abi_at, 0)
            rest = data[abi_at + 8 + freed:off + size]
            data[abi_at + 8:off + size - freed] = rest
            struct.pack_into('<IHH', data, off, SAMPLE, misc, size - freed)
            for i in range(freed // 8):
                struct.pack_into('<IHH', data, off + size - freed + 8 * i,
                                 FINISHED_ROUND, 0, 8)
        done += 1
        off += size
    assert done == want, 'not enough dwarf samples'
    print(first)
    open(dst, 'wb').write(data)


if __name__ == '__main__':
    main()
