#!/usr/bin/env bash
# symbols_data_maps.sh - a data (non-executable) map never shadows code.
# A synthetic profile maps the workload's text, then reports a data map of
# another file over all of it (as an mprotect() of JIT pages, or a stale
# record, would): the samples in the text are still named from the code.
source "$CS_ROOT/tests/lib.sh"
cd "$T"
W=$CS_WORKLOADS/deepstack
if [ ! -x "$W" ]; then skip "data maps over code" "no $W (make workloads)"; exit 0; fi

# the workload's functions: their addresses, and names as nm gives them
nm "$W" | awk '$2 ~ /^[tT]$/ && $3 ~ /^(burn_cpu|recurse|deep_[a-h])$/ { print $1, $3 }' |
	sort >funcs.txt
check_eq "the workload has its ten functions" 10 "$(wc -l <funcs.txt)"
# shellcheck disable=SC2046
"$CS_TOOLS/samples_at" code.data "$W" $(cut -d' ' -f1 funcs.txt)
# shellcheck disable=SC2046
"$CS_TOOLS/samples_at" --data-over data.data "$W" $(cut -d' ' -f1 funcs.txt)
names() { $CS script -q --no-inline -F ip,sym,dso -i "$1" | sed 's/^ *[0-9a-f]* //'; }
names code.data >code.txt
names data.data >data.txt
check_eq "without the data map: each address named after its function" \
	"$(awk '{ print $2 " (" w ")" }' w="$W" funcs.txt)" "$(cat code.txt)"
same_file "a data map over the code changes no name" code.txt data.txt
"$CS" dump -i data.data 2>/dev/null | grep -q 'PERF_RECORD_MMAP2.*probe-data' &&
	ok "the profile has the data map" || notok "the profile has the data map"
