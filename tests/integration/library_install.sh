#!/usr/bin/env bash
# library_install.sh - `make install` into a temporary prefix gives a
# usable library: both examples build with `pkg-config --cflags --libs
# callstitch` alone (copied out of the tree), run against the installed
# .so, and print what callstitch prints for the same real-kernel
# recording; the installed .so exports only the public API; every man
# page renders without warnings and has examples; the bash completion
# completes. A DESTDIR install stages the same files under DESTDIR.
source "$CS_ROOT/tests/lib.sh"

P=$T/usr
if ! make -s -C "$CS_ROOT" --no-print-directory install PREFIX="$P" >"$T/install.log" 2>&1; then
	notok "make install PREFIX=$P"; sed 's/^/#   /' "$T/install.log" | tail -5
	exit 0
fi
ok "make install PREFIX=$P"
for f in bin/callstitch lib/libcallstitch.a lib/libcallstitch.so lib/libcallstitch.so.0 \
	 include/callstitch/callstitch.h lib/pkgconfig/callstitch.pc \
	 share/man/man1/callstitch.1 share/bash-completion/completions/callstitch; do
	check "installed $f" test -e "$P/$f"
done

if ! make -s -C "$CS_ROOT" --no-print-directory install PREFIX=/usr DESTDIR="$T/stage" >"$T/stage.log" 2>&1; then
	notok "make install DESTDIR=... PREFIX=/usr"; sed 's/^/#   /' "$T/stage.log" | tail -5
else
	(cd "$P" && find . ! -type d | sort) >"$T/prefix.files"
	(cd "$T/stage/usr" && find . ! -type d | sort) >"$T/stage.files"
	same_file "DESTDIR stages the same files under DESTDIR/PREFIX" "$T/prefix.files" "$T/stage.files"
	check_eq "the staged callstitch.pc names the final prefix, not DESTDIR" "/usr/include" \
		"$(PKG_CONFIG_PATH=$T/stage/usr/lib/pkgconfig pkg-config --variable=includedir callstitch)"
fi

# ---- the examples, built against the installed library only ----
export PKG_CONFIG_PATH=$P/lib/pkgconfig
check_eq "pkg-config knows the version" "$("$CS_REL" --version | awk '{print $2}')" \
	"$(pkg-config --modversion callstitch)"
if pkg-config --static --libs callstitch | grep -q -- '-liberty'; then
	ok "pkg-config --static adds the private libraries"
else
	notok "pkg-config --static adds the private libraries"
fi
mkdir -p "$T/ex"
cp "$CS_ROOT"/examples/*.c "$CS_ROOT"/examples/*.h "$T/ex/"
for e in top_stacks folded; do
	# shellcheck disable=SC2046
	if (cd "$T/ex" && cc -std=c11 -Wall -Wextra -Werror -O2 "$e.c" \
		$(pkg-config --cflags --libs callstitch) -o "$e") >"$T/$e.cc.log" 2>&1; then
		ok "$e builds with pkg-config --cflags --libs callstitch alone"
	else
		notok "$e builds with pkg-config --cflags --libs callstitch alone"
		sed 's/^/#   /' "$T/$e.cc.log" | head -10
	fi
done
export LD_LIBRARY_PATH=$P/lib
so=$(ldd "$T/ex/folded" 2>/dev/null | awk '$1 == "libcallstitch.so.0" { print $3 }')
check_eq "the examples load the installed libcallstitch.so.0" "$P/lib/libcallstitch.so.0" "$so"

D=linux-7.3.4
F=$(fixture $D/syswide-defer.data)
xz -dc "$FIXTURES/$D/kallsyms.xz" >"$T/kallsyms"
fixture_symfs "$T/symfs"
"$CS" folded -q --no-inline --kallsyms "$T/kallsyms" --symfs "$T/symfs" -i "$F" >"$T/cs.folded"

if "$T/ex/folded" -k "$T/kallsyms" -s "$T/symfs" "$F" >"$T/ex.folded" 2>"$T/ex.folded.err"; then
	same_file "examples/folded (push) prints callstitch folded's lines ($(wc -l <"$T/cs.folded") stacks)" \
		"$T/cs.folded" "$T/ex.folded"
else
	notok "examples/folded runs"; sed 's/^/#   /' "$T/ex.folded.err" | head -5
fi

# callstitch's stacks ranked as top_stacks ranks them: count, then text
total=$(awk '{ n += $NF } END { print n }' "$T/cs.folded")
awk -v total="$total" '{ c = $NF; sub(/ [0-9]+$/, ""); printf "%d %.2f%% %s\n", c, 100 * c / total, $0 }' \
	"$T/cs.folded" | LC_ALL=C sort -t' ' -k1,1nr -k3 | head -20 >"$T/cs.top"
if "$T/ex/top_stacks" -n 20 -k "$T/kallsyms" -s "$T/symfs" "$F" >"$T/ex.top" 2>"$T/ex.top.err"; then
	grep -v '^#' "$T/ex.top" >"$T/ex.top.stacks"
	same_file "examples/top_stacks (pull) ranks callstitch's 20 heaviest stacks" \
		"$T/cs.top" "$T/ex.top.stacks"
	check_eq "top_stacks counts every sample" "# $total samples" \
		"$(head -1 "$T/ex.top" | cut -d, -f1)"
	# the README's numbers for this recording: all 13,558 deferred
	# samples got their user stack back
	check "top_stacks says how many samples were stitched" \
		grep -q "13558 of 13558 deferred samples" "$T/ex.top"
else
	notok "examples/top_stacks runs"; sed 's/^/#   /' "$T/ex.top.err" | head -5
fi
if grep -q 'spin_l1' "$T/ex.top"; then ok "the workload's own frames are named"; else notok "the workload's own frames are named"; fi

# ---- the installed .so exports the public API only ----
cc -E -P -I"$P/include" "$P/include/callstitch/callstitch.h" | grep -oE '\bcs_[a-z0-9_]+ *\(' |
	tr -d ' (' | sort -u >"$T/api"
nm -D --defined-only "$P/lib/libcallstitch.so" | awk '$2 ~ /^[TWDBR]$/ { sub(/@.*/, "", $3); print $3 }' |
	sort -u >"$T/exports"
same_file "nm -D on the installed .so: exactly the header's $(wc -l <"$T/api") functions" "$T/api" "$T/exports"

# ---- man pages ----
pages=$(cd "$P/share/man/man1" && ls)
for cmd in $("$CS_REL" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'); do
	if [[ " $(echo $pages) " == *" callstitch-$cmd.1 "* ]]; then
		ok "callstitch $cmd has a man page"
	else
		notok "callstitch $cmd has a man page (man/callstitch-$cmd.extra)"
	fi
done
if ! command -v man >/dev/null; then
	skip "man pages render" "man is not installed (apt-get install man-db)"
else
	for page in $pages; do
		out=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -E UTF-8 -l "$P/share/man/man1/$page" 2>"$T/$page.warn")
		if [ -s "$T/$page.warn" ]; then
			notok "man -l $page renders without warnings"; sed 's/^/#   /' "$T/$page.warn" | head -5
		elif ! grep -q '^EXAMPLES' <<<"$out" || ! grep -q '^NAME' <<<"$out"; then
			notok "man -l $page has NAME and EXAMPLES"
		else
			ok "man -l $page renders without warnings, with examples"
		fi
	done
	# options come from --help: a new option is in the page
	out=$(MANWIDTH=200 man -l "$P/share/man/man1/callstitch-report.1" 2>/dev/null)
	check "callstitch-report(1) documents --no-children" grep -q -- '--no-children' <<<"$out"
fi

# ---- bash completion ----
if [ -f /usr/share/bash-completion/bash_completion ]; then
	got=$(PATH=$P/bin:$PATH bash -c '
		source /usr/share/bash-completion/bash_completion
		source "$1"
		t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		      COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
		      _callstitch; echo "${COMPREPLY[*]}"; }
		t callstitch re; t callstitch report --no-ch' _ "$P/share/bash-completion/completions/callstitch" 2>/dev/null)
	check_eq "bash completion: commands and options" "record report
--no-children" "$got"
else
	skip "bash completion" "bash-completion is not installed"
fi
