#!/usr/bin/env bash
# kernel_qemu.sh - records on a real kernel with deferred user callchains:
# boots Debian's newest cloud kernel under qemu (tests/kernel/), records
# there with `callstitch record --call-graph fp,defer` per task, system-wide,
# and while threads sit in long system calls (drain window off, then on,
# twice), and checks the files here with `callstitch script --stats` and
# `callstitch dump`, and the system-wide one through `callstitch inject`.
# And off-CPU time: `record --off-cpu` of tests/workloads/offcpu, whose
# switch-outs' user stacks are deferred, says how long each of its
# functions waited, within 5% of the times it measured itself, with whole
# stacks.
#
# Skipped (never passed) when this machine cannot download or boot the
# kernel. CS_KERNEL_DIR (default build/kernel) holds the cached download.
source "$CS_ROOT/tests/lib.sh"

export CS_KERNEL_DIR=${CS_KERNEL_DIR:-$CS_ROOT/build/kernel}
KDIR=$CS_KERNEL_DIR
RUN=$T/kernel		# this run's own: runs of the suite may overlap
OUT=$RUN/out

echo "# kernel test: fetch, build the initramfs, boot (log: $T/guest-side.log)"
"$CS_ROOT/tests/kernel/run.sh" "$RUN" >"$T/guest-side.log" 2>&1
rc=$?
sed 's/^/#   /' "$T/guest-side.log" | grep -v '^#   \(CS-RUN\|  \)' | tail -40
if [ $rc = 77 ]; then
	skip "records on a kernel with deferred callchains under qemu" \
		"$(grep -E '^(fetch|initramfs|boot): ' "$T/guest-side.log" | tail -1)"
	exit 0
fi
if [ $rc != 0 ]; then
	notok "the guest ran the recordings and its files came back (exit $rc)"
	[ -f "$RUN/console.log" ] && tail -30 "$RUN/console.log" | sed 's/^/#   console: /'
	exit 0
fi
ok "the guest ran the recordings and its files came back"

. "$RUN/kernel.env"
guest_rel=$(sed -n 's/^uname -r: //p' "$OUT/guest.log")
echo "# kernel: $guest_rel (Debian package of $KREL)"
check_eq "the guest runs the fetched kernel" "$KREL" "$guest_rel"

# the guest kernel's own complaints, for people (perf warnings, oopses)
grep -E 'WARNING:|BUG:|Oops|perf: ' "$OUT/dmesg.txt" 2>/dev/null | head -10 |
	sed 's/^/# guest kernel: /'

KALLSYMS=$OUT/kallsyms
SYMFS=$RUN/initramfs

# stat FILE NAME: one row of the --stats table
stat() { sed -n "s/^ *$2  *\([0-9][0-9]*\)\$/\1/p" "$1" | head -1; }

# deepstack: read() from libc is the leaf (its wrapper keeps no frame, so
# do_syscalls itself may not show), then the recursion and deep_h..deep_a.
DEEP_CHAIN='do_syscalls|burn_cpu|recurse,deep_h,deep_g,deep_f,deep_e,deep_d,deep_c,deep_b,deep_a'
LONG_CHAIN='big_read|pipe_write|ls_inner,ls_middle,ls_outer'

declare -A END_WAITING
for name in task-defer syswide-defer drain-off-1 drain-on-1 drain-off-2 drain-on-2; do
	f=$OUT/$name.data
	rec_rc=$(sed -n "s/^CS-RESULT: $name //p" "$OUT/guest.log")
	if [ "$rec_rc" != 0 ] || [ ! -s "$f" ]; then
		notok "$name: record in the guest (exit ${rec_rc:-none})"
		sed 's/^/#   /' "$OUT/$name.out" 2>/dev/null | tail -10
		continue
	fi
	ok "$name: record in the guest"
	sed 's/^/#   guest: /' "$OUT/$name.out" | tail -5

	if ! "$CS" script -i "$f" --kallsyms "$KALLSYMS" --symfs "$SYMFS" --stats \
		>"$T/$name.script" 2>"$T/$name.stats"; then
		notok "$name: script --stats reads it"
		sed 's/^/#   /' "$T/$name.stats" | tail -5
		continue
	fi
	ok "$name: script --stats reads it"
	sed 's/^/#   /' "$T/$name.stats"

	s=$T/$name.stats
	deferred=$(stat "$s" 'deferred records')
	samples=$(stat "$s" samples)
	with=$(stat "$s" 'with deferred user stack')
	stitched=$(stat "$s" stitched)
	late=$(stat "$s" 'stitched late')
	konly=$(stat "$s" kernel-only)
	recorded=$(stat "$s" 'as recorded')
	by_reason=0
	for r in lost superseded exited end; do
		by_reason=$((by_reason + $(stat "$s" $r)))
	done
	END_WAITING[$name]=$(stat "$s" end)
	echo "# $name: $deferred type-22 records; $samples samples, $with deferred:" \
		"$stitched stitched, $late stitched late, $konly kernel-only" \
		"(${END_WAITING[$name]} waiting at stop), $recorded as recorded"

	check "$name: has type-22 records ($deferred)" test "${deferred:-0}" -gt 0
	dumped=$("$CS" dump -i "$f" 2>&1 | sed -n 's/^ *CALLCHAIN_DEFERRED events: *\([0-9]*\).*/\1/p')
	check_eq "$name: dump counts the same type-22 records" "$deferred" "$dumped"
	# the raw view: each deferred sample ends with its cookie, each
	# type-22 record shows as a DEFERRED CALLCHAIN entry
	"$CS" script --no-merge-callchains -i "$f" --kallsyms "$KALLSYMS" \
		--symfs "$SYMFS" >"$T/$name.nomerge" 2>/dev/null
	check_eq "$name: unmerged view shows each type-22 record" "$deferred" \
		"$(grep -c 'DEFERRED CALLCHAIN \[cookie: ' "$T/$name.nomerge")"
	check_eq "$name: unmerged view shows each deferred sample's cookie" "$with" \
		"$(grep -c '(cookie) (\[unknown\])$' "$T/$name.nomerge")"
	check "$name: has samples with deferred user stacks ($with)" test "${with:-0}" -gt 0
	check_eq "$name: every deferred sample is stitched or kernel-only" \
		"$with" "$((stitched + late + konly))"
	check_eq "$name: every kernel-only sample has its reason" "$konly" "$by_reason"
	check_eq "$name: every sample is deferred or as recorded" \
		"$samples" "$((with + recorded))"

	case $name in
	drain-*) chain=$LONG_CHAIN ;;
	*)       chain=$DEEP_CHAIN ;;
	esac
	read -r _ good _ full _ bad < <(awk -v chain="$chain" \
		-f "$CS_ROOT/tests/kernel/order.awk" "$T/$name.script" 2>"$T/$name.order")
	sed 's/^/#   /' "$T/$name.order" | head -40
	echo "# $name: $good kernel samples with the workload's stack in order ($full from its innermost function), $bad out of order"
	check "$name: the workload's functions follow the kernel frames, caller->callee ($full whole stacks)" \
		test "${full:-0}" -gt 0 -a "${bad:-1}" -eq 0
done

# off-CPU time with deferred user stacks: each measured function's time
# within 5% of the time it measured; its stacks whole, the user part stitched
# from the type-22 records, the kernel part in the scheduler
name=offcpu-defer f=$OUT/offcpu-defer.data
rec_rc=$(sed -n "s/^CS-RESULT: $name //p" "$OUT/guest.log")
if [ "$rec_rc" = 0 ] && [ -s "$f" ]; then
	ok "$name: record --off-cpu in the guest"
	sed 's/^/#   guest: /' "$OUT/$name.out" | tail -5
	"$CS" script -q -i "$f" --kallsyms "$KALLSYMS" --symfs "$SYMFS" --stats \
		>/dev/null 2>"$T/$name.stats"
	sed 's/^/#   /' "$T/$name.stats"
	deferred=$(stat "$T/$name.stats" 'deferred records')
	stitched=$(( $(stat "$T/$name.stats" stitched) + $(stat "$T/$name.stats" 'stitched late') ))
	check "$name: the switch-outs' user stacks were deferred ($deferred type-22 records)" \
		test "${deferred:-0}" -gt 0
	"$CS" report -q -i "$f" --kallsyms "$KALLSYMS" --symfs "$SYMFS" --off-cpu \
		-g none --sort sym >"$T/$name.report" 2>&1
	sed -n 's/^# off-CPU/#   off-CPU/p' "$T/$name.report"
	# the workload's own clock says how long each function waited (a
	# sleep overruns its 50 ms, more so under an emulator): the profile
	# must say the same within 5%, and that is the nominal time within 15%
	for fw in sleep_in_nanosleep:10 read_from_pipe:2 wait_on_futex:1; do
		got=$(awk -v s="${fw%:*}" '$NF == s && $(NF-1) == "[.]" { print $3; exit }' \
			"$T/$name.report")
		waited=$(awk -v s="${fw%:*}" '$1 == "waited" && $2 == s { print $3 }' "$OUT/$name.out")
		check "$name: ${fw%:*} off the CPU ${got:-?} s, known ${waited:-?} s (5%)" \
			awk -v g="${got:-0}" -v w="${waited:-0}" 'BEGIN { exit !(w > 0 && g >= w * 0.95 && g <= w * 1.05) }'
		check "$name: ... and it waited its nominal ${fw#*:} s (15%)" \
			awk -v g="${waited:-0}" -v w="${fw#*:}" 'BEGIN { exit !(g >= w * 0.85 && g <= w * 1.15) }'
	done
	"$CS" folded -q -i "$f" --kallsyms "$KALLSYMS" --symfs "$SYMFS" --off-cpu --no-inline \
		>"$T/$name.folded" 2>/dev/null
	for fn in sleeper\;sleep_in_nanosleep reader\;read_from_pipe waiter\;wait_on_futex; do
		n=$(grep -c "$fn;" "$T/$name.folded")
		whole=$(grep "$fn;" "$T/$name.folded" |
			grep -c "^start_thread;$fn;.*;__schedule;\[off-cpu: [A-Za-z /]*\] [0-9]*$")
		echo "# $name: ${fn#*;}: $(grep "$fn;entry" "$T/$name.folded" | head -1)"
		check "$name: ${fn#*;}'s stacks are whole: start_thread -> ... -> __schedule ($whole of $n)" \
			test "$n" -gt 0 -a "$whole" -eq "$n"
	done
	# the waits in the kernel (only these functions make these calls)
	# all have their user part
	for k in __x64_sys_nanosleep:sleeper\;sleep_in_nanosleep ksys_read:reader\;read_from_pipe; do
		n=$(grep -c ";${k%%:*};" "$T/$name.folded")
		user=$(grep ";${k%%:*};" "$T/$name.folded" | grep -c "^start_thread;${k#*:};")
		check "$name: every ${k%%:*} wait has its stitched user stack ($user of $n)" \
			test "$n" -gt 0 -a "$user" -eq "$n"
	done
	check "$name: the user stacks were stitched ($stitched samples)" test "$stitched" -gt 0
else
	notok "$name: record --off-cpu in the guest (exit ${rec_rc:-none})"
	sed 's/^/#   /' "$OUT/$name.out" 2>/dev/null | tail -10
fi

# inject on a fresh real-kernel recording: the system-wide one starts its
# workload with exec, and samples taken inside execve get the new image's
# stack; read back, the injected file shows every sample as the original
# does (docs/inject.md). perf 6.1 is compared on the fixtures instead
# (inject_perf.sh): here it would find other symbol names, as it does not
# look for the guest's libc's debug file by build id.
f=$OUT/syswide-defer.data
if [ -s "$f" ] && command -v python3 >/dev/null; then
	"$CS" inject -i "$f" -o "$T/syswide.inj" 2>"$T/syswide.inject.err"
	check "syswide-defer: inject writes it" [ $? -eq 0 ]
	sed 's/^/#   /' "$T/syswide.inject.err"
	"$CS" script -q -i "$f" --kallsyms "$KALLSYMS" --symfs "$SYMFS" \
		>"$T/syswide.orig.txt" 2>/dev/null
	"$CS" script -q -i "$T/syswide.inj" --kallsyms "$KALLSYMS" --symfs "$SYMFS" \
		>"$T/syswide.inj.txt" 2>/dev/null
	if python3 "$CS_ROOT/tests/integration/inject_compare.py" --exact \
		"$T/syswide.orig.txt" "$T/syswide.inj.txt" >"$T/syswide.cmp"; then
		ok "syswide-defer: the injected file shows the same samples and stacks"
	else
		notok "syswide-defer: the injected file shows the same samples and stacks"
	fi
	sed 's/^/#   /' "$T/syswide.cmp"
fi

# How many samples wait at a stop varies from run to run, so the drain
# is judged on two pairs of recordings taken in turn.
off=0 on=0 pairs=0
for n in 1 2; do
	o=${END_WAITING[drain-off-$n]:-} w=${END_WAITING[drain-on-$n]:-}
	[ -n "$o" ] && [ -n "$w" ] || continue
	echo "# drain window, pair $n: $o samples waiting at stop with --drain-ms 0, $w with the default 500 ms"
	off=$((off + o)) on=$((on + w)) pairs=$((pairs + 1))
done
if [ $pairs = 2 ]; then
	echo "# drain window: $off samples waiting at stop without a drain, $on with it"
	check "stopping inside long system calls leaves samples waiting without a drain ($off)" \
		test "$off" -gt 0
	check "the drain window reduces the samples waiting at stop ($off -> $on)" \
		test "$on" -lt "$off"
else
	notok "drain window compared (a drain recording is missing)"
fi
