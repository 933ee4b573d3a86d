#!/usr/bin/env bash
# speedscope.sh - `callstitch speedscope` on a real-kernel recording: the
# file follows speedscope's schema (one sampled profile per thread,
# heaviest first, weights summing to each thread's event count in
# `report`); then speedscope itself (the npm package's built app, in
# headless Chromium) loads it, and the profile name, total weight and top
# function it shows equal report's. See tests/browser/speedscope_test.mjs.
source "$CS_ROOT/tests/lib.sh"

BROWSER_DIR=$CS_ROOT/tests/browser
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
D=linux-7.3.4
F=$(fixture $D/task-defer.data)
xz -dc "$FIXTURES/$D/kallsyms.xz" >"$T/kallsyms"
mkdir -p "$T/symfs/opt/fixt" && cp "$FIXTURES/$D/bin/workload" "$T/symfs/opt/fixt/"
SYM=(--kallsyms "$T/kallsyms" --symfs "$T/symfs")
report() { "$CS" report -q -i "$F" "${SYM[@]}" --no-children -g none "$@" | grep -v '^#' | grep .; }

if ! "$CS" speedscope -q -i "$F" "${SYM[@]}" -o "$T/profile.json" 2>"$T/err"; then
	notok "speedscope -o writes the file"; sed 's/^/#   /' "$T/err" | head -5
	exit 0
fi
ok "speedscope -o writes the file"

# report's view of every thread: tid, total event count, top function
report --sort tid | awk '{ print $2 }' >"$T/tids"
: >"$T/want"
while read -r tid; do
	count=$("$CS" report -q -i "$F" "${SYM[@]}" --no-children -g none --tid "$tid" |
		sed -n 's/^# Event count (approx.): //p')
	echo "$tid $count" >>"$T/want"
done <"$T/tids"

python3 - "$T/profile.json" "$T/want" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = [l.split() for l in open(sys.argv[2]) if l.strip()]
def ok(what, cond, why=""):
    print(("ok - " if cond else "not ok - ") + what)
    if not cond and why:
        print("#   " + why)
ok("the file names speedscope's schema",
   d.get("$schema") == "https://www.speedscope.app/file-format-schema.json")
frames = d["shared"]["frames"]
ok("every frame has a name", all(isinstance(f.get("name"), str) and f["name"] for f in frames))
profs = d["profiles"]
ok("one sampled profile per thread (%d)" % len(want), len(profs) == len(want) and
   all(p["type"] == "sampled" for p in profs), "%d profiles" % len(profs))
good = True
for p, (tid, count) in zip(profs, want):
    total = sum(p["weights"])
    if not (p["name"].endswith("(tid %s)" % tid) and total == int(count) and
            p["endValue"] - p["startValue"] == total and p["unit"] == "nanoseconds" and
            len(p["samples"]) == len(p["weights"]) and
            all(0 <= i < len(frames) for s in p["samples"] for i in s)):
        good = False
        print("#   %s: weights %d, report %s for tid %s" % (p["name"], total, count, tid))
ok("heaviest first, each weighing report's event count for its thread, in ns", good)
PY

if [ ! -x "$CHROMIUM" ]; then
	skip "speedscope in a browser" "no $CHROMIUM (apt-get install chromium)"
	exit 0
fi
if ! command -v node >/dev/null; then
	skip "speedscope in a browser" "node is not installed"
	exit 0
fi
if [ ! -d "$BROWSER_DIR/node_modules/speedscope" ] &&
   ! (cd "$BROWSER_DIR" && npm ci --no-audit --no-fund >"$T/npm.log" 2>&1); then
	skip "speedscope in a browser" "speedscope is not installed and 'npm ci' in tests/browser failed"
	exit 0
fi

# what the page must show of the first (heaviest) profile, from report
tid=$(head -1 "$T/tids")
comm=$(report --sort comm --tid "$tid" | awk 'NR == 1 { print $2 }')
total=$(awk -v t="$tid" '$1 == t { print $2 }' "$T/want")
top=$(report --sort sym --tid "$tid" | awk 'NR == 1 { print $3 }')
CHROMIUM=$CHROMIUM timeout 150 node "$BROWSER_DIR/speedscope_test.mjs" "$T/profile.json" \
	"$comm (tid $tid)" "$total" "$top" "$T/speedscope.png"
rc=$?
[ "$rc" -eq 0 ] || echo "not ok - the speedscope browser test exited $rc"
