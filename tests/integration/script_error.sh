#!/usr/bin/env bash
# script_error.sh - a profile found damaged partway prints every sample
# the library delivered before the damage, then fails. script holds a few
# samples back (to ask for their memory ahead): a run stopped by an error
# writes them too, at every -j.
source "$CS_ROOT/tests/lib.sh"

GEN=$CS_TOOLS/gen_synth
CANON=$CS_TOOLS/cs_canon
if [ ! -x "$GEN" ] || [ ! -x "$CANON" ]; then
	skip "script on a damaged profile" "no $GEN or $CANON"; exit 0
fi
"$GEN" -n 100000 -s 1 --no-defer -o "$T/s.data" >/dev/null ||
	{ notok "gen_synth failed"; exit 0; }

# the size field of the 50000th record made 3: the reader stops there
# (the samples delivered before it end with three held ones)
python3 - "$T/s.data" "$T/bad.data" <<'EOF' || { notok "cannot damage the profile"; exit 0; }
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
off, size = struct.unpack_from('<QQ', d, 40)	# the header's data section
p, n = off, 0
while n < 50000:
	p += struct.unpack_from('<H', d, p + 6)[0]
	n += 1
struct.pack_into('<H', d, p + 6, 3)
open(sys.argv[2], 'wb').write(d)
EOF

want=$("$CANON" -i "$T/bad.data" 2>/dev/null | wc -l)
$CS script -q --no-inline -j 1 -i "$T/s.data" >"$T/all.out" 2>/dev/null
for j in 1 2 3; do
	if $CS script -q --no-inline -j $j -i "$T/bad.data" >"$T/bad$j.out" \
		2>"$T/bad$j.err"; then
		notok "-j $j: script on the damaged profile did not fail"
		continue
	fi
	check_eq "-j $j: the samples delivered before the damage are printed" \
		"$want" "$(grep -c '^[^[:space:]]' "$T/bad$j.out")"
	head -c "$(wc -c <"$T/bad$j.out")" "$T/all.out" >"$T/want$j"
	same_file "-j $j: as the whole profile prints them" "$T/want$j" \
		"$T/bad$j.out"
done
