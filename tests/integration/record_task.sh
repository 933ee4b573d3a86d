#!/usr/bin/env bash
# record_task.sh - `callstitch record` of a command (per-task, inherited to
# its threads): callstitch and perf 6.1 both read the file and agree on
# every sample and stack; the workload's own functions come out in
# caller->callee order; the events and the header are what perf would
# write.
source "$CS_ROOT/tests/lib.sh"
cd "$T"
W=$CS_WORKLOADS/deepstack
PERF=/usr/bin/perf
STACKS="python3 $CS_ROOT/tests/integration/record_stacks.py"


$CS record -g -o task.data -- "$W" 1 2 30 >rec.out 2>rec.err
check "record -g of a command exits 0" [ $? -eq 0 ]
check "the workload's stdout is left alone" [ ! -s rec.out ]
n=$(samples_of rec.err)
check "the summary names the file and its samples" grep -q "^\[ callstitch record: wrote .* MB task.data ([0-9]* samples) \]$" rec.err
check "a second of two busy threads gives hundreds of samples" [ "${n:-0}" -gt 200 ]

# this machine has no PMU: cycles falls back to cpu-clock, said once
if $PERF stat -e cycles -x, true 2>&1 | grep -q "not supported"; then
	check_eq "the fallback to cpu-clock is said once" 1 \
		"$(grep -c 'cycles event is not supported here.*cpu-clock' rec.err)"
else
	skip "the fallback to cpu-clock is said once" "this machine has a cycles event"
fi
$CS record -g -e cpu-clock -o explicit.data -- "$W" 0.1 1 5 2>explicit.err
check_eq "an explicit cpu-clock asks nothing" 1 "$(wc -l <explicit.err)"

$CS script -q --no-inline -i task.data >cs.txt 2>cs.err
check "callstitch script reads it" [ $? -eq 0 ]
$PERF script -i task.data >perf.txt 2>perf.err
check "perf 6.1 script reads it" [ $? -eq 0 ]
check_eq "perf script sees every sample the recorder wrote" "$n" "$($STACKS count perf.txt)"
check_eq "callstitch script sees every sample the recorder wrote" "$n" "$($STACKS count cs.txt)"
if $STACKS compare perf.txt cs.txt >cmp.txt; then
	ok "both readers agree on every sample's time, tid and stack"
else
	notok "both readers agree on every sample's time, tid and stack"
	sed 's/^/#   /' cmp.txt
fi

# caller -> callee: worker, deep_a ... deep_h, recurse..., burn_cpu|do_syscalls
ord=$($STACKS order cs.txt deepstack)
good=${ord%/*} total=${ord#*/}
check "most samples land under the workload's deep stack ($ord)" [ "$total" -gt 100 ]
check "every such stack reads worker -> deep_a .. deep_h -> recurse -> leaf ($ord)" \
	[ "$good" -eq "$total" ]
check_eq "perf reads the same stacks in the same order" "$ord" "$($STACKS order perf.txt deepstack)"

# the layout: a sampling event and a side-band dummy, one id per CPU
ncpu=$(getconf _NPROCESSORS_ONLN)
$STACKS attrs task.data >attrs.txt
# sample_type IP|TID|TIME|CALLCHAIN|CPU|PERIOD|IDENTIFIER = 0x101a7
check_eq "the sampling event: cpu-clock with callchains" "1 0 101a7" "$(head -1 attrs.txt | cut -d' ' -f1-3)"
check_eq "the dummy tracks the side band with the same sample_type" "1 9 101a7" "$(sed -n 2p attrs.txt | cut -d' ' -f1-3)"
flags=$(head -1 attrs.txt | cut -d' ' -f4)
check "the sampling event is inherited and starts at exec" \
	[ $(( 0x$flags & (1 << 1) )) -ne 0 -a $(( 0x$flags & (1 << 12) )) -ne 0 ]
check "the sampling event carries no side band" [ $(( 0x$flags & (1 << 8 | 1 << 9 | 1 << 13) )) -eq 0 ]
dflags=$(sed -n 2p attrs.txt | cut -d' ' -f4)
check "the dummy carries mmap2, comm and task" \
	[ $(( 0x$dflags & (1 << 23) )) -ne 0 -a $(( 0x$dflags & (1 << 9) )) -ne 0 -a $(( 0x$dflags & (1 << 13) )) -ne 0 ]
$PERF report -i task.data --header-only >header.txt 2>&1
check "perf sees one id per CPU for each event" \
	grep -q "name = cpu-clock, , id = { [0-9]*\(, [0-9]*\)\{$((ncpu - 1))\} }" header.txt
check "the header says which command was recorded" grep -q "^# cmdline : callstitch record -g -o task.data -- $W 1 2 30 *$" header.txt
check "the header says how many CPUs" grep -q "^# nrcpus online : $ncpu" header.txt
check "the header says where it was recorded" grep -q "^# os release : $(uname -r)" header.txt

# build ids of the binaries that got samples
want=$(readelf -n "$W" | sed -n 's/.*Build ID: //p')
$PERF buildid-list -i task.data >bids.txt 2>&1
check "the workload's build id is in the header" grep -q "^$want $W\$" bids.txt
check "libc's build id is in the header" grep -q " /.*libc.so.6\$" bids.txt

# -c PERIOD and -F FREQ
$CS record -g -c 1000000 -o period.data -- "$W" 0.2 1 5 2>period.err
$PERF evlist -v -i period.data >period.txt 2>&1
check "-c sets a fixed period" grep -q "^cpu-clock: .*sample_period, sample_freq }: 1000000," period.txt
check "-c turns frequency mode off" sh -c "! grep '^cpu-clock:' period.txt | grep -q 'freq: 1'"
$CS record -F 500 -o freq.data -- "$W" 0.5 1 5 2>freq.err
$PERF evlist -v -i freq.data >freq.txt 2>&1
check "-F sets the frequency" grep -q "^cpu-clock: .*sample_freq }: 500, .*freq: 1" freq.txt
nf=$(samples_of freq.err)
check "-F 500 for half a second gives at most about 250 samples ($nf)" [ "${nf:-0}" -gt 10 -a "${nf:-0}" -lt 400 ]
check "without -g no callchain is recorded" sh -c "! $PERF evlist -v -i freq.data | grep -q CALLCHAIN"
