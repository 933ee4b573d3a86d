#!/usr/bin/env bash
# jobs_same_output.sh - every command that takes -j prints, with 2 or 5
# threads, byte for byte what it prints with one, on the real-kernel
# recordings and on synthetic profiles, with every option that changes
# what is sorted or drawn.
source "$CS_ROOT/tests/lib.sh"

D=linux-7.3.4
KALLSYMS=$(fixture $D/kallsyms)
SYMFS=$T/symfs
mkdir -p "$SYMFS/opt/fixt" && cp "$FIXTURES/$D/bin/workload" "$SYMFS/opt/fixt/"
"$CS_TOOLS/gen_synth" -n 20000 -o "$T/defer.data" >/dev/null
"$CS_TOOLS/gen_synth" --no-defer -n 20000 -s 7 -o "$T/plain.data" >/dev/null

profiles=("$FIXTURES/$D/syswide-defer.data" "$FIXTURES/$D/task-defer.data"
	  "$T/defer.data" "$T/plain.data")
variants=("" "--no-children" "-g caller,0.01" "-g callee,0" "-g none"
	  "--sort dso,sym -n" "--sort pid,tid,comm" "--percent-limit 0.1")

cmds=()
for c in report script folded flame pprof; do
	"$CS" "$c" -h 2>&1 | grep -q -- '-j, --jobs' && cmds+=("$c")
done
if [ "${#cmds[@]}" -eq 0 ]; then
	notok "some command takes -j"
	exit 0
fi
ok "commands with -j: ${cmds[*]}"

for c in "${cmds[@]}"; do
	bad=0 runs=0
	for p in "${profiles[@]}"; do
		for v in "${variants[@]}"; do
			[ "$c" = report ] || [ -z "$v" ] || continue
			# shellcheck disable=SC2086
			"$CS" "$c" -q -j 1 -i "$p" --kallsyms "$KALLSYMS" --symfs "$SYMFS" \
				$v >"$T/one" 2>"$T/one.err" || { bad=1; echo "# -j 1 $v on $p failed"; }
			for j in 2 5; do
				# shellcheck disable=SC2086
				"$CS" "$c" -q -j "$j" -i "$p" --kallsyms "$KALLSYMS" \
					--symfs "$SYMFS" $v >"$T/many" 2>/dev/null
				runs=$((runs + 1))
				if ! cmp -s "$T/one" "$T/many"; then
					bad=1
					echo "# $c -j $j $v on $(basename "$p") differs from -j 1"
				fi
			done
		done
	done
	if [ "$bad" = 0 ]; then ok "$c: -j 2 and -j 5 print what -j 1 prints ($runs runs)"; else
		notok "$c: -j 2 and -j 5 print what -j 1 prints"; fi
done

"$CS" report -q -j 0 -i "$T/defer.data" >/dev/null 2>"$T/err"
check_eq "-j 0 is refused" 129 "$?"
check "with a message naming the option" grep -q -- "--jobs '0'" "$T/err"
