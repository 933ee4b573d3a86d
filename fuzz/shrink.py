#!/usr/bin/env python3
"""shrink.py IN OUT MAXBYTES - a small perf.data from a big one, for seeds.

Keeps the header, the attrs and their ids, the data records that fit in
MAXBYTES (whole records, cut at a record boundary) and every feature
section, moved to follow the shortened data. Only file-mode, native
(little-endian) files.
"""
import struct
import sys


def main():
    src, dst, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
    b = open(src, 'rb').read()
    if b[:8] != b'PERFILE2' or struct.unpack_from('<Q', b, 8)[0] != 104:
        sys.exit('shrink.py: %s: not a little-endian file-mode perf.data' % src)
    data_off, data_size = struct.unpack_from('<QQ', b, 40)
    feats = b[72:104]
    nfeat = sum(bin(w).count('1') for w in struct.unpack('<4Q', feats))
    table = data_off + data_size
    sections = [struct.unpack_from('<QQ', b, table + 16 * k) for k in range(nfeat)]

    end = data_off
    while end + 8 <= data_off + data_size:
        size = struct.unpack_from('<H', b, end + 6)[0]
        if size < 8 or end + size - data_off > limit:
            break
        end += size
    out = bytearray(b[:end])
    struct.pack_into('<Q', out, 48, end - data_off)
    ftab = len(out)
    out += bytes(16 * nfeat)
    for k, (off, size) in enumerate(sections):
        struct.pack_into('<QQ', out, ftab + 16 * k, len(out), size)
        out += b[off:off + size]
    open(dst, 'wb').write(out)


main()
