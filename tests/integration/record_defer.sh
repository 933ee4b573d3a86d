#!/usr/bin/env bash
# record_defer.sh - deferred callchains are opt-in (--call-graph fp,defer,
# -G); a kernel that refuses the bits (EINVAL, before Linux 6.19) is told
# apart once and ordinary callchains are recorded; the drain at stop ends
# as soon as nothing waits; a recording made with deferral stitches fully.
source "$CS_ROOT/tests/lib.sh"
cd "$T"
W=$CS_WORKLOADS/deepstack
PERF=/usr/bin/perf
STACKS="python3 $CS_ROOT/tests/integration/record_stacks.py"
MSG="kernel does not support deferred callchains (Linux 6.19+); recording ordinary callchains"
DEFER_CALLCHAIN=$((1 << 38))
DEFER_OUTPUT=$((1 << 39))

$CS record --call-graph fp,defer -e cpu-clock -o defer.data -- "$W" 1 2 30 >rec.out 2>rec.err
check "record --call-graph fp,defer exits 0" [ $? -eq 0 ]
$STACKS attrs defer.data >attrs.txt
sflags=$(head -1 attrs.txt | cut -d' ' -f4)
dflags=$(sed -n 2p attrs.txt | cut -d' ' -f4)

if grep -qF "$MSG" rec.err; then
	# the kernel refused: the path this machine takes
	check_eq "the refusal is said in one line, once" 1 "$(grep -c 'deferred callchains' rec.err)"
	check_eq "and nothing else but the summary is said" 2 "$(wc -l <rec.err)"
	check_eq "the sampling event asks no deferral" 0 $(( 0x$sflags & DEFER_CALLCHAIN ))
	check_eq "the dummy asks no deferred output" 0 $(( 0x$dflags & DEFER_OUTPUT ))
	$PERF script -i defer.data >perf.txt 2>perf.err
	check "perf 6.1 reads the fallback recording" [ $? -eq 0 ]
	ord=$($STACKS order perf.txt deepstack)
	check "ordinary callchains carry the whole user stack ($ord)" \
		[ "${ord#*/}" -gt 100 -a "${ord%/*}" -eq "${ord#*/}" ]
	$CS script -q --stats -i defer.data >/dev/null 2>stats.txt
	check "no sample of the fallback waits for a deferred stack" \
		grep -qE "^ +with deferred user stack +0$" stats.txt

	$CS record -G -e cpu-clock -o g.data -- "$W" 0.2 1 5 2>g.err
	check_eq "-G is --call-graph fp,defer" 1 "$(grep -cF "$MSG" g.err)"
	$CS record -a -G -e cpu-clock -o wide.data -- "$W" 0.2 1 5 2>wide.err
	check_eq "-a: the refusal is said once for all CPUs" 1 "$(grep -cF "$MSG" wide.err)"
	wflags=$($STACKS attrs wide.data | cut -d' ' -f4 | tr '\n' ' ')
	check "-a: no event asks deferral ($wflags)" \
		[ $(( 0x${wflags%% *} & (DEFER_CALLCHAIN | DEFER_OUTPUT) )) -eq 0 -a \
		  $(( 0x${wflags#* } & (DEFER_CALLCHAIN | DEFER_OUTPUT) )) -eq 0 ]
else
	skip "the refusal is said in one line, once" "this kernel ($(uname -r)) has deferred callchains"
	check "the sampling event asks deferral" [ $(( 0x$sflags & DEFER_CALLCHAIN )) -ne 0 ]
	check "only the sampling event asks deferral" [ $(( 0x$dflags & DEFER_CALLCHAIN )) -eq 0 ]
	check "the dummy, and only it, receives deferred records" \
		[ $(( 0x$dflags & DEFER_OUTPUT )) -ne 0 -a $(( 0x$sflags & DEFER_OUTPUT )) -eq 0 ]
	$CS script -q --stats -i defer.data >/dev/null 2>stats.txt
	check "nothing is left without its user stack" grep -qE "^ +kernel-only +0$" stats.txt
fi

# deferral is opt-in: -g never asks for it
$CS record -g -e cpu-clock -o plain.data -- "$W" 0.2 1 5 2>plain.err
check_eq "-g does not ask for deferral" 0 "$(grep -c 'deferred' plain.err)"
pflags=$($STACKS attrs plain.data | head -1 | cut -d' ' -f4)
check_eq "-g records without the deferral bit" 0 $(( 0x$pflags & DEFER_CALLCHAIN ))

# the drain stops as soon as nothing waits: a long limit costs nothing
start=$(date +%s%N)
$CS record -G -e cpu-clock --drain-ms 20000 -o drain.data -- "$W" 0.2 1 5 2>drain.err
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "with nothing waiting the drain ends at once (${ms} ms for a 200 ms run)" [ "$ms" -lt 5000 ]
check "and no sample is reported waiting" sh -c "! grep -q 'still wait' drain.err"

# a recording made with deferral (Linux 7.3.4, perf 7.3) stitches fully
for f in task-defer syswide-defer; do
	data=$(fixture linux-7.3.4/$f.data)
	$CS script -q --stats -i "$data" --kallsyms "$(fixture linux-7.3.4/kallsyms)" \
		>/dev/null 2>$f.stats
	check "$f.data: callstitch reads it" [ $? -eq 0 ]
	check "$f.data: no sample is left kernel-only" grep -qE "^ +kernel-only +0$" $f.stats
	stitched=$(awk '$1 == "stitched" && NF == 2 { print $2 }' $f.stats)
	deferred=$(awk '/with deferred user stack/ { print $NF }' $f.stats)
	late=$(awk '$1 == "stitched" && $2 == "late" { print $3 }' $f.stats)
	check_eq "$f.data: every deferred sample got its user stack" "$deferred" "$((stitched + late))"
done
