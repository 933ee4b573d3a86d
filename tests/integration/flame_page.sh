#!/usr/bin/env bash
# flame_page.sh - `callstitch flame`: the page's embedded data on known and
# real profiles, its options, its errors, and the template it is built from.
source "$CS_ROOT/tests/lib.sh"

stacks() { python3 "$CS_ROOT/tests/integration/flame_stacks.py" "$@"; }

# the committed flame_template.inc is what its sources make
if "$CS_ROOT/src/outputs/flame_template.sh" "$T/template.inc" 2>"$T/template.err"; then
	same_file "flame_template.inc matches flame_template.{html,css,js}" \
		"$CS_ROOT/src/outputs/flame_template.inc" "$T/template.inc"
else
	notok "flame_template.sh runs"; sed 's/^/#   /' "$T/template.err"
fi

if ! command -v python3 >/dev/null; then
	skip "flame page data" "python3 is not installed (reads the embedded JSON)"
	exit 0
fi

# a profile whose stitched stacks are known exactly
SYNTH=$T/synth.data
if ! "$CS_TOOLS/flame_synth" "$SYNTH" "$T/synth.kallsyms" "$CS_WORKLOADS/deepstack" \
	>"$T/synth.truth" 2>"$T/synth.err"; then
	notok "flame_synth writes the known profile"; sed 's/^/#   /' "$T/synth.err"
	exit 0
fi
check "flame writes a page for the known profile" \
	"$CS" flame -q -i "$SYNTH" --kallsyms "$T/synth.kallsyms" -o "$T/synth.html"
stacks "$T/synth.html" stacks >"$T/synth.stacks" 2>&1
same_file "the page's tree holds exactly the known stacks and counts" \
	<(sort "$T/synth.truth") "$T/synth.stacks"
check_eq "the page's total is the number of samples" 100 "$(stacks "$T/synth.html" total)"
check_eq "kernel, user, marker and process frames are told apart" \
	"other 100 user 460 kernel 140 missing 10" \
	"$(stacks "$T/synth.html" kinds | tr '\n' ' ' | sed 's/ $//')"
meta=$(stacks "$T/synth.html" meta)
case $meta in
*'"deferred": true'*'"kernel_only": 10'*'"stitched": 74'*'"stitched_late": 1'*) ok "the header counts stitched and kernel-only samples" ;;
*) notok "header counts: $meta" ;;
esac

"$CS" flame -q -i "$SYNTH" --kallsyms "$T/synth.kallsyms" --no-kernel -o "$T/nok.html"
check_eq "--no-kernel leaves no kernel frame" "0" \
	"$(stacks "$T/nok.html" kinds | sed -n 's/^kernel //p')"
check_eq "--no-kernel keeps every sample" 100 "$(stacks "$T/nok.html" total)"

"$CS" flame -q -i "$SYNTH" --kallsyms "$T/synth.kallsyms" --title 'a </title> & <b>' -o - >"$T/title.html"
if grep -q '<title>a &lt;/title&gt; &amp; &lt;b&gt;</title>' "$T/title.html" &&
   ! grep -qF 'a </title> & <b>' "$T/title.html"; then
	ok "--title is escaped, and -o - writes to stdout"
else
	notok "--title escaping / -o -"
fi
if grep -qE '<script src|<link |https?://' "$T/synth.html"; then
	notok "the page loads nothing from elsewhere"
else
	ok "the page loads nothing from elsewhere"
fi

# the real-kernel recordings: totals, and the same stacks as `folded`
KALLSYMS=$(fixture linux-7.3.4/kallsyms)
mkdir -p "$T/symfs/opt/fixt"
ln -s "$FIXTURES/linux-7.3.4/bin/workload" "$T/symfs/opt/fixt/workload"
for f in task-defer syswide-defer; do
	data=$FIXTURES/linux-7.3.4/$f.data
	if ! "$CS" flame -i "$data" --kallsyms "$KALLSYMS" --symfs "$T/symfs" \
		-o "$T/$f.html" 2>"$T/$f.err"; then
		notok "$f: flame runs"; sed 's/^/#   /' "$T/$f.err" | head -5
		continue
	fi
	n=$(sed -n 's/^callstitch: \([0-9]*\) samples:.*/\1/p' "$T/$f.err")
	check_eq "$f: the page's total is the number of samples" "$n" "$(stacks "$T/$f.html" total)"
	stacks "$T/$f.html" stacks >"$T/$f.stacks"
	"$CS" folded -q --comm -i "$data" --kallsyms "$KALLSYMS" --symfs "$T/symfs" |
		sort >"$T/$f.folded"
	same_file "$f: the page's stacks are folded's stacks" "$T/$f.folded" "$T/$f.stacks"
	size=$(stat -c %s "$T/$f.html")
	if [ "$size" -lt 2000000 ]; then ok "$f: page is $size bytes"; else notok "$f: page is $size bytes"; fi
done

# errors: one line naming the problem, non-zero, no page left behind
if "$CS" flame -i "$T/missing.data" -o "$T/missing.html" 2>"$T/err1"; then
	notok "a missing input fails"
else
	if grep -q 'missing.data' "$T/err1" && [ ! -e "$T/missing.html" ]; then
		ok "a missing input fails, naming the file"
	else
		notok "a missing input: $(head -1 "$T/err1")"
	fi
fi
if "$CS" flame -q -i "$SYNTH" --kallsyms "$T/synth.kallsyms" -o "$T/no/such/dir/x.html" 2>"$T/err2"; then
	notok "an unwritable output fails"
else
	if grep -q 'x.html' "$T/err2"; then ok "an unwritable output fails, naming it"; else
		notok "unwritable output message: $(head -1 "$T/err2")"; fi
fi
"$CS" flame --bogus >/dev/null 2>&1
check_eq "an unknown option exits 129" 129 "$?"
"$CS" flame --help >"$T/help"
if grep -q -- '--no-kernel' "$T/help" && grep -q -- '--title' "$T/help"; then
	ok "flame --help lists its options"
else
	notok "flame --help"
fi
