#!/usr/bin/env bash
# record_pipe.sh - `record -o -` writes pipe mode on stdout (the command's
# own stdout goes to stderr), `-z` compresses with zstd as perf record -z
# does; perf 6.1 and callstitch read both and agree.
source "$CS_ROOT/tests/lib.sh"
cd "$T"
W=$CS_WORKLOADS/deepstack
PERF=/usr/bin/perf
STACKS="python3 $CS_ROOT/tests/integration/record_stacks.py"


$CS record -g -e cpu-clock -o - -- sh -c "echo hello; exec $W 0.5 2 20" >pipe.data 2>pipe.err
check "record -o - exits 0" [ $? -eq 0 ]
check "the stream starts with perf's pipe header" \
	[ "$(head -c 16 pipe.data | od -An -tx1 | tr -d ' \n')" = "50455246494c45321000000000000000" ]
check "the command's stdout went to stderr, not into the profile" grep -q "^hello$" pipe.err
check "the summary says where it went" grep -q "wrote .* MB to stdout" pipe.err
n=$(samples_of pipe.err)
$PERF script -i - <pipe.data >perf.txt 2>perf.err
check "perf 6.1 reads the stream" [ $? -eq 0 ]
$CS script -q --no-inline -i - <pipe.data >cs.txt 2>cs.err
check "callstitch reads the stream" [ $? -eq 0 ]
check_eq "perf sees every sample" "$n" "$($STACKS count perf.txt)"
check_eq "callstitch sees every sample" "$n" "$($STACKS count cs.txt)"
if $STACKS compare perf.txt cs.txt >cmp.txt; then
	ok "both agree on the stream's samples and stacks"
else
	notok "both agree on the stream's samples and stacks"; sed 's/^/#   /' cmp.txt
fi

# straight into a reader, as `perf record -o - | perf script -i -`
$CS record -q -g -e cpu-clock -o - -- "$W" 0.3 1 10 2>/dev/null | $CS script -q -i - >live.txt 2>live.err
check "record -o - | callstitch script -i - works live" \
	[ "$($STACKS order live.txt deepstack | cut -d/ -f2)" -gt 0 ]

check "-o - refuses a terminal" sh -c "script -qec '$CS record -a -o -' /dev/null | grep -q 'redirect stdout'"

$CS record -g -z -e cpu-clock -o z.data -- "$W" 1 2 30 2>z.err
check "record -z exits 0" [ $? -eq 0 ]
nz=$(samples_of z.err)
$PERF report -i z.data --header-only 2>/dev/null >zh.txt
check "perf sees zstd compression in the header" grep -qi "compressed.*zstd" zh.txt
$PERF script -i z.data >zperf.txt 2>zperf.err
check "perf 6.1 reads the compressed file" [ $? -eq 0 ]
$CS script -q --no-inline -i z.data >zcs.txt 2>zcs.err
check "callstitch reads the compressed file" [ $? -eq 0 ]
check_eq "perf sees every compressed sample" "$nz" "$($STACKS count zperf.txt)"
if $STACKS compare zperf.txt zcs.txt >zcmp.txt; then
	ok "both agree on the compressed file's samples and stacks"
else
	notok "both agree on the compressed file's samples and stacks"; sed 's/^/#   /' zcmp.txt
fi
$CS record -g -e cpu-clock -o plainz.data -- "$W" 1 2 30 2>/dev/null
check "compression makes the file smaller" [ "$(stat -c %s z.data)" -lt "$(stat -c %s plainz.data)" ]
