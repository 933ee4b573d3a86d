#!/usr/bin/env bash
# flame_browser.sh - the flame graph page in a real browser (headless
# Chromium through playwright-core): on a profile whose stacks are known,
# frames have the widths their counts say, click zooms, search highlights
# and reports the matched share, hover shows details, the icicle toggle
# flips the graph, and a screenshot is taken. See tests/browser/.
source "$CS_ROOT/tests/lib.sh"

BROWSER_DIR=$CS_ROOT/tests/browser
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

if [ ! -x "$CHROMIUM" ]; then
	skip "flame page in a browser" "no $CHROMIUM (apt-get install chromium)"
	exit 0
fi
if ! command -v node >/dev/null; then
	skip "flame page in a browser" "node is not installed"
	exit 0
fi
if [ ! -d "$BROWSER_DIR/node_modules/playwright-core" ] &&
   ! (cd "$BROWSER_DIR" && npm ci --no-audit --no-fund >"$T/npm.log" 2>&1); then
	skip "flame page in a browser" "playwright-core is not installed and 'npm ci' in tests/browser failed"
	exit 0
fi

if ! "$CS_TOOLS/flame_synth" "$T/synth.data" "$T/synth.kallsyms" "$CS_WORKLOADS/deepstack" \
	>/dev/null 2>"$T/synth.err"; then
	notok "flame_synth writes the known profile"; sed 's/^/#   /' "$T/synth.err"
	exit 0
fi
check "flame writes the page" "$CS" flame -q -i "$T/synth.data" \
	--kallsyms "$T/synth.kallsyms" --title "callstitch flame: synthetic profile" \
	-o "$T/synth.html"

# the driver prints its own ok / not ok lines
CHROMIUM=$CHROMIUM timeout 120 node "$BROWSER_DIR/flame_test.mjs" "$T/synth.html" \
	"$BROWSER_DIR/synth_spec.json" "$T/flame.png"
rc=$?
[ "$rc" -eq 0 ] || echo "not ok - the browser test exited $rc"

if [ -s "$T/flame.png" ] && [ "$(head -c 8 "$T/flame.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
	ok "the screenshot is a PNG ($(stat -c %s "$T/flame.png") bytes)"
else
	notok "the screenshot is a PNG"
fi

# a profile without samples: a message, not an empty box or an error
if "$CS_TOOLS/flame_synth" "$T/empty.data" "$T/empty.kallsyms" "$CS_WORKLOADS/deepstack" empty \
	2>"$T/empty.err" && "$CS" flame -q -i "$T/empty.data" -o "$T/empty.html"; then
	CHROMIUM=$CHROMIUM timeout 120 node "$BROWSER_DIR/flame_test.mjs" "$T/empty.html" \
		"$BROWSER_DIR/empty_spec.json" "$T/empty.png" || echo "not ok - the empty-page browser test failed"
else
	notok "an empty profile's page is written"; sed 's/^/#   /' "$T/empty.err"
fi
