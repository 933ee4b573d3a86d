#!/usr/bin/env bash
# folded: counts add up to the samples, stacks equal a known truth, and the
# lines are what stackcollapse-perf.pl would make of our own script output.
source "$CS_ROOT/tests/lib.sh"

D=linux-7.3.4
KALLSYMS=$(fixture $D/kallsyms)
SYMFS=$T/symfs
fixture_symfs "$SYMFS"

sum() { awk '{ s += $NF } END { print s + 0 }' "$1"; }
nsamples() { sed -n 's/^callstitch: \([0-9]*\) samples:.*/\1/p' "$1"; }

# stackcollapse-perf.pl's rules, applied to `callstitch script` text:
# root first, "+0x.." dropped, an unknown symbol named by its dso's base
# name, ';' to ':', arguments and quotes dropped
collapse() {
	awk '
	function name(line,   dso, sym, n) {
		sub(/^[ \t]+[0-9a-f]+ /, "", line)
		dso = line; sub(/.* \(/, "", dso); sub(/\)$/, "", dso)
		sym = line; sub(/ \([^(]*\)$/, "", sym)
		sub(/\+0x[0-9a-f]+$/, "", sym)
		if (sym == "[unknown]" && dso != "[unknown]") {
			n = split(dso, parts, "/"); sym = "[" parts[n] "]"
		}
		gsub(/;/, ":", sym)
		if (sym !~ /^\[/ && sym !~ /\(anonymous namespace\)/) sub(/\(.*/, "", sym)
		gsub(/["\047]/, "", sym)
		return sym
	}
	function flush(   s, i) {
		if (!n) return
		s = f[n]; for (i = n - 1; i >= 1; i--) s = s ";" f[i]
		count[s]++; n = 0
	}
	/^[^ \t]/ { flush(); next }
	/^$/ { flush(); next }
	{ f[++n] = name($0) }
	END { flush(); for (s in count) print s, count[s] }' | LC_ALL=C sort
}

for f in task-defer syswide-defer task-nodefer; do
	in=(-i "$FIXTURES/$D/$f.data" --kallsyms "$KALLSYMS" --symfs "$SYMFS")
	if ! "$CS" folded "${in[@]}" >"$T/$f.folded" 2>"$T/$f.err"; then
		notok "$f: folded exits 0"; sed 's/^/#   /' "$T/$f.err"; continue
	fi
	n=$(nsamples "$T/$f.err")
	check "$f: has samples" test "${n:-0}" -gt 0
	check_eq "$f: counts sum to the samples" "$n" "$(sum "$T/$f.folded")"
	check_eq "$f: every line is 'frame;...;frame COUNT'" "" \
		"$(grep -vE '^[^ ;][^;]*(;[^;]+)* [0-9]+$' "$T/$f.folded" | head -3)"
	check_eq "$f: one line per stack" "$(wc -l <"$T/$f.folded")" \
		"$(awk '{ $NF = ""; print }' "$T/$f.folded" | sort -u | wc -l)"

	"$CS" script -q "${in[@]}" 2>/dev/null | collapse >"$T/$f.script"
	LC_ALL=C sort "$T/$f.folded" >"$T/$f.sorted"
	same_file "$f: equals stackcollapse-perf's rules applied to our script" \
		"$T/$f.script" "$T/$f.sorted"

	"$CS" folded -q --no-kernel "${in[@]}" >"$T/$f.user" 2>/dev/null
	check_eq "$f: --no-kernel keeps every sample" "$n" "$(sum "$T/$f.user")"
	check_eq "$f: --no-kernel drops kernel frames" "" \
		"$(grep -E '(^|;)(do_syscall_64|entry_SYSCALL_64_after_hwframe)(;| )' "$T/$f.user" | head -1)"
	"$CS" folded -q --comm --annotate "${in[@]}" >"$T/$f.comm" 2>/dev/null
	check_eq "$f: --comm puts a process name first" "" \
		"$(cut -d';' -f1 "$T/$f.comm" | sort -u | grep -vxE 'workload|rd-zero|wr-null|pipe-rd|pipe-wr|ppid|perf|:-?[0-9]+|kworker.*|swapper.*|ksoftirqd.*|rcu.*|migration.*|.*kthread.*|[a-z0-9_./-]+' | head -3)"
	check "$f: --annotate marks kernel frames" grep -q 'do_syscall_64_\[k\]' "$T/$f.comm"
done
check "task-defer: the stitched stack of spin_user is whole" grep -qx \
	'[^;]*;main;spin_l1;spin_l2;spin_l3;spin_l4;spin_l5;spin_l6;spin_l7;spin_l8;spin_l9;spin_l10;spin_user [0-9]*' \
	"$T/task-defer.folded"

# a synthetic deferred profile whose stitched stacks are known, kernel-only
# samples (their record never came) included
if "$CS_TOOLS/flame_synth" "$T/synth.data" "$T/synth.kallsyms" \
	"$CS_WORKLOADS/deepstack" >"$T/synth.truth" 2>"$T/synth.err"; then
	"$CS" folded -q --comm -i "$T/synth.data" --kallsyms "$T/synth.kallsyms" \
		>"$T/synth.folded" 2>&1
	LC_ALL=C sort "$T/synth.truth" >"$T/synth.want"
	same_file "synthetic profile: stacks and counts equal the truth" \
		"$T/synth.want" "$T/synth.folded"
	check "synthetic profile: kernel-only samples end in the marker frame" \
		grep -q '^synth;\[user stack missing: end\];entry_SYSCALL_64;' "$T/synth.folded"
	"$CS" folded -q --no-kernel -i "$T/synth.data" --kallsyms "$T/synth.kallsyms" \
		>"$T/synth.user" 2>&1
	check_eq "synthetic profile: --no-kernel leaves the marker alone" "10" \
		"$(sed -n 's/^\[user stack missing: end\] \([0-9]*\)$/\1/p' "$T/synth.user")"
else
	notok "flame_synth makes the synthetic profile"; sed 's/^/#   /' "$T/synth.err"
fi

# a recording made here, compared with perf 6.1's own script
if [ -x /usr/bin/perf ] && /usr/bin/perf record -q -e cpu-clock -F 2000 -g \
	-o "$T/deep.data" -- "$CS_WORKLOADS/deepstack" 1 2 30 >"$T/rec.log" 2>&1; then
	# perf 6.1 here shows no inlined functions: compare without ours
	"$CS" folded --no-inline -i "$T/deep.data" >"$T/deep.folded" 2>"$T/deep.err"
	n=$(nsamples "$T/deep.err")
	check_eq "deepstack: counts sum to the samples" "$n" "$(sum "$T/deep.folded")"
	/usr/bin/perf script -i "$T/deep.data" -F comm,pid,tid,time,event,ip,sym,dso \
		2>/dev/null | collapse >"$T/deep.perf"
	# lines that equal perf's: all but [vdso] frames (perf symbolizes its
	# saved copy of the vdso) and addresses in no map
	same=$(LC_ALL=C join <(sed 's/ \([0-9]*\)$/\t\1/' "$T/deep.perf" | LC_ALL=C sort) \
		<(sed 's/ \([0-9]*\)$/\t\1/' "$T/deep.folded" | LC_ALL=C sort) -t$'\t' |
		awk -F'\t' '$2 == $3 { s += $2 } END { print s + 0 }')
	check "deepstack: $same of $n samples have the very stack perf 6.1 shows (>= 97%)" \
		test $((same * 100)) -ge $((n * 97))
	check "deepstack: burn_cpu under the whole chain" grep -q \
		'^start_thread;worker;deep_a;deep_b;deep_c;deep_d;deep_e;deep_f;deep_g;deep_h;recurse;.*;recurse;burn_cpu [0-9]*$' \
		"$T/deep.folded"
else
	skip "folded vs perf 6.1 on a local recording" "perf record does not run here"
fi

rc=0; "$CS" folded --pid abc -i "$T/deep.data" >/dev/null 2>"$T/err" || rc=$?
check "--pid abc fails with a message" test "$rc" -ne 0 -a -s "$T/err"
rc=0; "$CS" folded --no-kernel --no-user -i "$T/deep.data" >/dev/null 2>"$T/err" || rc=$?
check "--no-kernel --no-user is refused" test "$rc" -ne 0
rc=0; "$CS" folded --help >/dev/null || rc=$?
check_eq "--help exits 0" 0 "$rc"
rc=0; "$CS" folded -q -i "$FIXTURES/$D/task-defer.data" --kallsyms "$KALLSYMS" \
	-o /dev/full 2>"$T/err" || rc=$?
check "a full disk fails folded and names the file" \
	test "$rc" -ne 0 -a -n "$(grep '/dev/full: cannot write' "$T/err")"
