#!/usr/bin/env bash
# synth_perf.sh - files our writer makes are read by perf 6.1 without a
# warning: header, samples and report, in every form the writer has
# (big-endian, pipe, zstd); and the library reads them as perf does.
source "$CS_ROOT/tests/lib.sh"

GEN=$CS_TOOLS/gen_synth
CANON=$CS_TOOLS/cs_canon
PERF=${PERF:-/usr/bin/perf}
for x in "$GEN" "$CANON"; do
	if [ ! -x "$x" ]; then skip "perf reads our files" "no $x (make check)"; exit 0; fi
done
if ! "$PERF" version >/dev/null 2>&1; then
	skip "perf reads our files" "no $PERF"; exit 0
fi
export LC_ALL=C
N=20000
# perf 6.1 knows neither type 22 nor the deferral bits: no deferral here
args=(-n $N --no-defer --cpus 4 --tasks 12 --seed 11)

"$GEN" "${args[@]}" -o "$T/le.data" --expect "$T/exp" >"$T/sum"
check_eq "gen_synth --no-defer" 0 $?

"$PERF" report --header-only -i "$T/le.data" >"$T/hdr" 2>"$T/hdr.err"
check_eq "perf report --header-only exits 0" 0 $?
check_eq "perf report --header-only: no warnings" "" "$(cat "$T/hdr.err")"
for want in "hostname : synth" "os release : 6.19.0-synth" "perf version : gen_synth" \
	    "arch : x86_64" "nrcpus online : 4" "cmdline : .*gen_synth" \
	    "event : name = cpu-clock, , id = { 100, 101, 102, 103 }" \
	    "event : name = dummy:u"; do
	if grep -q "^# $want" "$T/hdr"; then ok "header shows '$want'"
	else notok "header shows '$want'"; fi
done

"$PERF" script -i "$T/le.data" >"$T/le.script" 2>"$T/script.err"
check_eq "perf script exits 0" 0 $?
check_eq "perf script: no warnings" "" "$(cat "$T/script.err")"
check_eq "perf script: every sample" $N "$(grep -c ' cpu-clock: *$' "$T/le.script")"
# its callchains are ours: the ips of each sample, in order
awk '/ cpu-clock: *$/ { if (n) print ips; n = 1; ips = ""; next }
     NF { ips = ips (ips == "" ? "" : ",") $1 }
     END { if (n) print ips }' "$T/le.script" | sort >"$T/perf.ips"
# perf shows a user address inside a map as the offset in its file:
# gen_synth maps /usr/bin/synth at 0x555555554000 (offset 0) and libc at
# 0x7f0000000000 (offset 0x26000)
python3 - "$T/exp" >"$T/our.ips.raw" <<'PY'
import sys
for line in open(sys.argv[1]):
    out = []
    for x in line.split()[4].split(','):
        v = int(x, 16)
        if v >= 0xfffffffffffff001:
            continue			# context markers: perf does not print them
        if 0x555555554000 <= v < 0x555555564000:
            v -= 0x555555554000
        elif 0x7f0000000000 <= v < 0x7f0000200000:
            v = v - 0x7f0000000000 + 0x26000
        out.append('%x' % v)
    print(','.join(out))
PY
sort "$T/our.ips.raw" >"$T/our.ips"
check_eq "perf script: a callchain per sample" $N "$(wc -l <"$T/perf.ips")"
same_file "perf script shows the callchains we wrote" "$T/our.ips" "$T/perf.ips"

"$PERF" report --stdio -i "$T/le.data" >"$T/report" 2>"$T/report.err"
check_eq "perf report --stdio exits 0" 0 $?
check_eq "perf report --stdio: no warnings" "" "$(cat "$T/report.err")"
if grep -q "^# Samples: 20K of event 'cpu-clock'" "$T/report"; then ok "perf report counts the samples"
else notok "perf report counts the samples"; fi

# (not big-endian in pipe mode: perf 6.1 does not swap the feature id of
# HEADER_FEATURE records, "wrong feature ID: 216172782113783808")
for form in "be:--big-endian" "pipe:--pipe" "zstd:-z3" "be-zstd:--big-endian -z1" \
	    "pipe-zstd:--pipe -z1"; do
	tag=${form%%:*} opts=${form#*:}
	# shellcheck disable=SC2086
	"$GEN" "${args[@]}" $opts -o "$T/$tag.data" >/dev/null
	"$PERF" script -i "$T/$tag.data" >"$T/$tag.script" 2>"$T/$tag.err"
	check_eq "$tag: perf script exits 0" 0 $?
	check_eq "$tag: perf script: no warnings" "" "$(cat "$T/$tag.err")"
	same_file "$tag: perf script prints what it prints for little-endian" \
		"$T/le.script" "$T/$tag.script"
	"$CANON" -i "$T/$tag.data" | sort >"$T/$tag.got"
	sort "$T/exp" >"$T/want"
	same_file "$tag: cs_canon gives the ground truth" "$T/want" "$T/$tag.got"
done
"$PERF" script -i - <"$T/pipe.data" >"$T/stdin.script" 2>"$T/stdin.err"
same_file "perf script -i - reads our stream" "$T/le.script" "$T/stdin.script"
