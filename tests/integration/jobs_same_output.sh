#!/usr/bin/env bash
# jobs_same_output.sh - every command that takes -j prints, with 2 or 5
# threads, byte for byte what it prints with one, on the real-kernel
# recordings and on synthetic profiles, with every option that changes
# what is sorted or drawn.
source "$CS_ROOT/tests/lib.sh"

D=linux-7.3.4
KALLSYMS=$(fixture $D/kallsyms)
SYMFS=$T/symfs
fixture_symfs "$SYMFS"
"$CS_TOOLS/gen_synth" -n 20000 -o "$T/defer.data" >/dev/null
"$CS_TOOLS/gen_synth" --no-defer -n 20000 -s 7 -o "$T/plain.data" >/dev/null
"$CS_TOOLS/gen_synth" -z -n 5000 -s 3 -o "$T/defer-z.data" >/dev/null

profiles=("$FIXTURES/$D/syswide-defer.data" "$FIXTURES/$D/task-defer.data"
	  "$T/defer.data" "$T/plain.data")
variants=("" "--no-children" "-g caller,0.01" "-g callee,0" "-g none"
	  "--sort dso,sym -n" "--sort pid,tid,comm" "--percent-limit 0.1")
# script -j: the reading thread sends the formatting thread each sample's
# first line as fields, and its frame lines as references into a line
# cache that both threads keep in step: every way a line is made, cached
# or cut short, every field of the first line
script_variants=("" "--no-merge-callchains" "--no-inline" "--max-stack 3"
		 "--max-stack 1 --no-merge-callchains" "-F +pid,-symoff"
		 "-F comm,tid,ip,sym" "-F time,event,ip,dso"
		 "--no-inline --no-merge-callchains --max-stack 2")
# report and folded count the samples on a second thread: every way a
# sample's keys are made (frames left out, the comm, off-CPU time)
folded_variants=("" "--comm" "--no-kernel --annotate" "--no-user --period")
# flame counts them the same way: frames left out, inlined ones
flame_variants=("" "--no-kernel" "--no-inline")
# pprof and speedscope count them too, pprof with its inlined lines;
# the filters leave samples out on the reading thread (@PID@ and @TID@:
# the process and the thread with the most samples in the profile)
pprof_variants=("" "--inline" "--pid @PID@" "--tid @TID@ --inline")
speedscope_variants=("" "--no-inline" "--pid @PID@" "--tid @TID@")

# busiest pid|tid P: the one with the most samples in profile P
busiest() {
	"$CS" script -q -F pid,tid -i "$2" --kallsyms /dev/null 2>/dev/null |
		tr '/' ' ' | awk -v f="$1" '{ n[f == "pid" ? $1 : $2]++ }
			END { for (i in n) if (n[i] > m || (n[i] == m && i < b)) { m = n[i]; b = i }
			      print b }'
}

cmds=()
for c in report script folded flame pprof speedscope; do
	"$CS" "$c" -h 2>&1 | grep -q -- '-j, --jobs' && cmds+=("$c")
done
if [ "${#cmds[@]}" -eq 0 ]; then
	notok "some command takes -j"
	exit 0
fi
ok "commands with -j: ${cmds[*]}"

for c in "${cmds[@]}"; do
	bad=0 runs=0
	ps=("${profiles[@]}")
	[ "$c" = script ] && ps+=("$T/defer-z.data")
	vs=("${variants[@]}")
	[ "$c" = script ] && vs=("${script_variants[@]}")
	[ "$c" = folded ] && vs=("${folded_variants[@]}")
	[ "$c" = flame ] && vs=("${flame_variants[@]}")
	[ "$c" = pprof ] && vs=("${pprof_variants[@]}")
	[ "$c" = speedscope ] && vs=("${speedscope_variants[@]}")
	out=()
	[ "$c" = flame ] || [ "$c" = pprof ] || [ "$c" = speedscope ] && out=(-o -)
	for p in "${ps[@]}"; do
		pid=$(busiest pid "$p") tid=$(busiest tid "$p")
		for v in "${vs[@]}"; do
			v=${v//@PID@/$pid} v=${v//@TID@/$tid}
			# shellcheck disable=SC2086
			"$CS" "$c" -q -j 1 -i "$p" --kallsyms "$KALLSYMS" --symfs "$SYMFS" \
				"${out[@]}" $v >"$T/one" 2>"$T/one.err" ||
				{ bad=1; echo "# -j 1 $v on $p failed"; }
			# script: 2 threads (reading, formatting) and 3 (and
			# writing, the records read ahead on a fourth, the same
			# formatting: default options only); the others: 2
			# and 5 (their counting thread, and the records read
			# ahead)
			for j in 2 3 5; do
				if [ "$c" = script ]; then
					[ "$j" = 2 ] || { [ "$j" = 3 ] && [ -z "$v" ]; } || continue
				else
					[ "$j" = 2 ] || [ "$j" = 5 ] || continue
				fi
				# shellcheck disable=SC2086
				"$CS" "$c" -q -j "$j" -i "$p" --kallsyms "$KALLSYMS" \
					--symfs "$SYMFS" "${out[@]}" $v >"$T/many" 2>/dev/null
				runs=$((runs + 1))
				if ! cmp -s "$T/one" "$T/many"; then
					bad=1
					echo "# $c -j $j $v on $(basename "$p") differs from -j 1"
				fi
			done
		done
	done
	if [ "$bad" = 0 ]; then ok "$c: more threads print what -j 1 prints ($runs runs)"; else
		notok "$c: more threads print what -j 1 prints"; fi
done

# script: a frame line too long for the line cache (a JIT symbol of 5000
# bytes, of which the map's reader keeps 4 KiB) is made on the reading
# thread (on the formatting thread with --no-inline), cut by --max-stack
# there too
pid=$((4200000 + RANDOM))
map=/tmp/perf-$pid.map
trap 'rm -f "$map"' EXIT
printf '11001200 100 %s\n' "$(printf 'a%.0s' {1..5000})" >"$map"
"$CS_TOOLS/hostile_profile" -o "$T/long.data" --pid "$pid" --dso "$map" \
	--dso /dev/zero >/dev/null
bad=0
for v in "" "--max-stack 1" "--no-inline" "--no-inline --max-stack 1"; do
	# shellcheck disable=SC2086
	"$CS" script -q -j 1 -i "$T/long.data" --kallsyms /dev/null $v >"$T/one" 2>/dev/null
	for j in 2 3; do
		# shellcheck disable=SC2086
		"$CS" script -q -j "$j" -i "$T/long.data" --kallsyms /dev/null $v \
			>"$T/many" 2>/dev/null
		cmp -s "$T/one" "$T/many" || { bad=1; echo "# -j $j $v differs"; }
	done
done
check "script: a 4 KiB symbol, with more threads as with one" [ "$bad" = 0 ]
check "... which is shown" awk 'length($0) > 4096 { f = 1 } END { exit !f }' "$T/one"
rm -f "$map"

# script --no-inline with a formatting thread names user addresses there
# and keeps their lines in an arena of its own (4 MiB), which starts over
# when full: a profile with more distinct user lines than that, and one
# without callchains, whose samples' one address is named there too
"$CS_TOOLS/gen_synth" --no-defer -n 120000 -s 11 -o "$T/wide.data" >/dev/null
"$CS" script -q -j 1 --no-inline -i "$T/wide.data" --kallsyms /dev/null >"$T/one" 2>/dev/null
check "script: a profile with more than 4 MiB of distinct user lines" \
	awk '/^[^\t]/ { pid = $2; next }
	     /^\t/ && $1 !~ /^ffff/ && !seen[pid " " $0]++ { n += length($0) + 1 }
	     END { exit !(n > 4 * 1048576) }' "$T/one"
bad=0
for j in 2 3; do
	"$CS" script -q -j "$j" --no-inline -i "$T/wide.data" --kallsyms /dev/null \
		>"$T/many" 2>/dev/null
	cmp -s "$T/one" "$T/many" || { bad=1; echo "# -j $j differs"; }
done
check "... is printed with more threads as with one" [ "$bad" = 0 ]
# ... but a KSYMBOL's address (a BPF program) is named on the reading
# thread, its name copied: a later record replaces it at the same address
"$CS_TOOLS/hostile_profile" -o "$T/ksym.data" --ksymbol bpf_prog_first \
	--ksymbol bpf_prog_second >/dev/null
"$CS" script -q -j 1 --no-inline -i "$T/ksym.data" --kallsyms "$KALLSYMS" >"$T/one" 2>/dev/null
bad=0
for j in 2 3; do
	"$CS" script -q -j "$j" --no-inline -i "$T/ksym.data" --kallsyms "$KALLSYMS" \
		>"$T/many" 2>/dev/null
	cmp -s "$T/one" "$T/many" || { bad=1; echo "# -j $j differs"; }
done
check "script: BPF programs' addresses, with more threads as with one" [ "$bad" = 0 ]
check "... each under its own name" \
	grep -q "bpf_prog_first+0x10 (bpf_prog_first).*bpf_prog_second+0x10" \
	<(tr '\n' ' ' <"$T/one")
if "$CS" record -q -e cpu-clock -F 4000 -o "$T/ip.data" -- \
	"$CS_WORKLOADS/fixedwork" >/dev/null 2>&1; then
	bad=0
	for v in "" "--no-inline" "--no-inline -F ip,sym,dso"; do
		# shellcheck disable=SC2086
		"$CS" script -q -j 1 $v -i "$T/ip.data" >"$T/one" 2>/dev/null
		# shellcheck disable=SC2086
		"$CS" script -q -j 2 $v -i "$T/ip.data" >"$T/many" 2>/dev/null
		cmp -s "$T/one" "$T/many" || { bad=1; echo "# -j 2 $v differs"; }
	done
	check "script: samples without callchains, with more threads as with one" \
		[ "$bad" = 0 ]
	check "... whose user addresses are named" grep -q "(.*fixedwork)" "$T/one"
else
	notok "script: callstitch record without -g"
fi

# a differential flame graph counts two profiles, one after the other
if [[ " ${cmds[*]} " == *" flame "* ]]; then
	"$CS" flame -q -j 1 -o "$T/diff1.html" --diff "$T/plain.data" "$T/defer.data"
	"$CS" flame -q -j 2 -o "$T/diff2.html" --diff "$T/plain.data" "$T/defer.data"
	check "flame --diff -j 2 draws what -j 1 draws" cmp -s "$T/diff1.html" "$T/diff2.html"
fi

# off-CPU time, recorded here: pprof --off-cpu counts it on its thread
if "$CS" record -q --off-cpu -o "$T/off.data" -- "$CS_WORKLOADS/offcpu" 200 100 10 \
	>/dev/null 2>&1; then
	off=$T/off.data
	bad=0
	for v in "--off-cpu" "--off-cpu --inline" "--no-off-cpu" ""; do
		# shellcheck disable=SC2086
		"$CS" pprof -q -j 1 $v -i "$off" -o "$T/one" 2>/dev/null
		for j in 2 5; do
			# shellcheck disable=SC2086
			"$CS" pprof -q -j "$j" $v -i "$off" -o "$T/many" 2>/dev/null
			cmp -s "$T/one" "$T/many" || { bad=1; echo "# pprof -j $j $v differs"; }
		done
	done
	check "pprof: off-CPU time, with more threads as with one" [ "$bad" = 0 ]
else
	off=
	skip "pprof --off-cpu with more threads" "callstitch record --off-cpu failed"
fi

# diff reads OLD and NEW at once, each on a thread, and writes its table
# in parts: OLD's events first, each profile's summary in order, every
# sort key; a table of 100k+ lines (sorted in parts), off-CPU time
if "$CS" diff -h 2>&1 | grep -q -- '-j, --jobs'; then
	pairs=("$T/plain.data $T/defer.data" "$FIXTURES/$D/syswide-defer.data $T/defer.data"
	       "$FIXTURES/$D/task-defer.data $FIXTURES/$D/syswide-defer.data"
	       "$T/wide.data $T/plain.data")
	[ -n "$off" ] && pairs+=("$off $T/plain.data")
	# NEW with two events OLD lacks: they follow OLD's, in NEW's order
	if "$CS" record -q -e task-clock,page-faults -F 2000 -o "$T/two-ev.data" -- \
		"$CS_WORKLOADS/fixedwork" >/dev/null 2>&1; then
		pairs+=("$T/plain.data $T/two-ev.data")
	else
		notok "callstitch record -e task-clock,page-faults"
	fi
	diff_variants=("" "-s comm,pid,tid" "-s sym --percent-limit 0.5" "-s dso"
		       "-s state,sym" "--off-cpu")
	bad=0 runs=0 lines=0
	for pair in "${pairs[@]}"; do
		for v in "${diff_variants[@]}"; do
			# shellcheck disable=SC2086
			"$CS" diff -j 1 $v --kallsyms "$KALLSYMS" --symfs "$SYMFS" $pair \
				>"$T/one" 2>"$T/one.err" ||
				{ bad=1; echo "# diff -j 1 $v $pair failed"; }
			n=$(wc -l <"$T/one")
			[ "$n" -gt "$lines" ] && lines=$n
			for j in 2 3 5; do
				# shellcheck disable=SC2086
				"$CS" diff -j "$j" $v --kallsyms "$KALLSYMS" --symfs "$SYMFS" \
					$pair >"$T/many" 2>"$T/many.err"
				runs=$((runs + 1))
				if ! cmp -s "$T/one" "$T/many" || ! cmp -s "$T/one.err" "$T/many.err"; then
					bad=1
					echo "# diff -j $j $v $pair differs from -j 1"
				fi
			done
		done
	done
	check "diff: more threads print what -j 1 prints, on stdout and stderr ($runs runs)" \
		[ "$bad" = 0 ]
	check "... a table of more than 32k lines among them ($lines)" [ "$lines" -gt 32768 ]
	# one profile missing: the same error, the same exit status
	for j in 1 2; do
		rc=0
		"$CS" diff -q -j "$j" "$T/plain.data" "$T/nonexistent.data" >/dev/null \
			2>"$T/err$j" || rc=$?
		check_eq "diff -j $j with NEW missing exits 1" 1 "$rc"
	done
	check "... saying the same" cmp -s "$T/err1" "$T/err2"
else
	notok "diff takes -j"
fi

# inject reads the records ahead on a thread of its own with -j 2: the
# same file as with one, stitched or passed through, compressed or not
bad=0
for p in "${profiles[@]}" "$T/defer-z.data"; do
	for v in "" "--passthrough" "-z"; do
		# shellcheck disable=SC2086
		"$CS" inject -q -j 1 $v -i "$p" -o "$T/one.data" 2>/dev/null ||
			{ bad=1; echo "# inject -j 1 $v on $p failed"; }
		# shellcheck disable=SC2086
		"$CS" inject -q -j 2 $v -i "$p" -o "$T/two.data" 2>/dev/null
		cmp -s "$T/one.data" "$T/two.data" ||
			{ bad=1; echo "# inject -j 2 $v on $(basename "$p") differs"; }
	done
done
check "inject -j 2 writes what -j 1 writes" [ "$bad" = 0 ]
# pprof and speedscope without -j take the CPUs the process may use: on
# two they count the samples on a second thread, on one they do not
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	for c in pprof speedscope; do
		bad=0
		for p in "${profiles[@]}"; do
			taskset -c 0 "$CS" "$c" -q -i "$p" --kallsyms "$KALLSYMS" \
				-o "$T/one.out" 2>/dev/null
			"$CS" "$c" -q -i "$p" --kallsyms "$KALLSYMS" -o "$T/two.out" 2>/dev/null
			cmp -s "$T/one.out" "$T/two.out" ||
				{ bad=1; echo "# $c on $(basename "$p") differs on two CPUs"; }
		done
		check "$c on two CPUs writes what it writes on one" [ "$bad" = 0 ]
	done
else
	ok "pprof and speedscope on two CPUs # SKIP needs taskset and 2 CPUs"
fi

"$CS" report -q -j 0 -i "$T/defer.data" >/dev/null 2>"$T/err"
check_eq "-j 0 is refused" 129 "$?"
check "with a message naming the option" grep -q -- "--jobs '0'" "$T/err"
"$CS" script -q -j x -i "$T/defer.data" >/dev/null 2>"$T/err"
check_eq "script -j x is refused" 129 "$?"
check "with a message naming the option" grep -q -- "--jobs 'x'" "$T/err"

# the writer thread's failure is the command's: a one-line error, exit 1
for j in 1 2; do
	rc=0
	"$CS" script -q -j "$j" -i "$T/plain.data" >/dev/full 2>"$T/err" || rc=$?
	check_eq "script -j $j to a full device fails" 1 "$rc"
	check_eq "script -j $j to a full device says so in one line" 1 \
		"$(grep -c . "$T/err")"
done
# pprof -j 2 compresses and writes on a thread of its own: its failure
# too is the command's, one line naming the file
for j in 1 2; do
	rc=0
	"$CS" pprof -q -j "$j" -i "$T/plain.data" -o /dev/full 2>"$T/err$j" || rc=$?
	check_eq "pprof -j $j to a full device fails" 1 "$rc"
done
check "... saying the same, in one line" \
	eval 'cmp -s "$T/err1" "$T/err2" && [ "$(grep -c . "$T/err2")" = 1 ]'
# through a pipe, read slowly, the same bytes as into a file
"$CS" script -q -j 2 -i "$T/defer.data" >"$T/file" 2>/dev/null
"$CS" script -q -j 2 -i "$T/defer.data" 2>/dev/null | dd bs=4096 status=none >"$T/piped"
check "script -j 2 through a pipe writes what it writes to a file" cmp -s "$T/file" "$T/piped"
