#!/usr/bin/env bash
# fuzz/coverage.sh CORPUS_ROOT [HARNESS...] - line coverage of the library
# and outputs reached by each harness's corpus (CORPUS_ROOT/HARNESS/, e.g.
# build/fuzz/corpus after make fuzz), measured with clang's source-based
# coverage: each harness is linked with fuzz/replay.c, built with
# -fprofile-instr-generate, run once over its corpus, and llvm-cov prints
# the lines of src/ it covered, and all harnesses together.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${1:?usage: fuzz/coverage.sh CORPUS_ROOT [HARNESS...]}
shift
CC=${FUZZ_CC:-clang-14}
PROFDATA=${LLVM_PROFDATA:-llvm-profdata-14}
COV=${LLVM_COV:-llvm-cov-14}
out=build/fuzz-cov
mkdir -p "$out"
harnesses=("$@")
[ ${#harnesses[@]} -eq 0 ] &&
	for f in fuzz/fuzz_*.c; do harnesses+=("$(basename "$f" .c | sed 's/^fuzz_//')"); done

flags=(-std=gnu11 -O1 -g -fprofile-instr-generate -fcoverage-mapping -Iinclude -Isrc
       -D_GNU_SOURCE "-DCS_SOURCE_DIR=\"$PWD\"")
lib=$(ls src/lib/*/*.c src/outputs/*.c src/record/*.c)
libs=$(sed -n 's/^LIBS *:= *//p' Makefile)
objs=()
mkdir -p "$out/obj"
for f in $lib fuzz/common.c fuzz/names.c fuzz/replay.c; do
	o=$out/obj/$(echo "$f" | tr / _).o
	[ "$o" -nt "$f" ] || "$CC" "${flags[@]}" -c "$f" -o "$o"
	objs+=("$o")
done
profiles=()
for h in "${harnesses[@]}"; do
	bin=$out/replay_$h
	"$CC" "${flags[@]}" fuzz/fuzz_$h.c "${objs[@]}" $libs -o "$bin"
	LLVM_PROFILE_FILE=$out/$h.profraw "$bin" "$root/$h" >/dev/null 2>&1 || true
	"$PROFDATA" merge -sparse "$out/$h.profraw" -o "$out/$h.profdata"
	profiles+=("$out/$h.profdata")
	printf 'coverage %-7s %s\n' "$h" "$("$COV" report "$bin" -instr-profile="$out/$h.profdata" \
		src/lib src/outputs | awk '/^TOTAL/ { print $(NF-3) " of " $(NF-5) " lines" }' )"
done
"$PROFDATA" merge -sparse "${profiles[@]}" -o "$out/all.profdata"
all=("$out/replay_${harnesses[0]}")
for h in "${harnesses[@]:1}"; do all+=(-object "$out/replay_$h"); done
# the library and outputs (writer, recorder helpers and report included,
# which no harness drives), then the reading pipeline alone
for part in "src/lib src/outputs" "src/lib/read src/lib/order src/lib/stitch src/lib/session"; do
	# shellcheck disable=SC2086
	printf 'coverage all     %s (%s)\n' "$("$COV" report "${all[@]}" \
		-instr-profile="$out/all.profdata" $part |
		awk '/^TOTAL/ { print $(NF-3) " of " $(NF-5) " lines" }')" "$part"
done
