# script_compare.awk - compares `callstitch script` text with perf's, sample
# by sample (blocks keyed by their header line: comm, tid, cpu, time).
#
#   awk -v late=1 -f script_compare.awk COOKIES REFERENCE OURS
#
# COOKIES lists the file's deferred cookies (hex, one a line). With late=1,
# a reference sample ending in "<cookie> [unknown] ([unknown])" is one perf
# left unmerged: ours must hold the same frames before it, then the user
# stack. Frames of binaries we do not have ([vdso] and the recording host's
# perf) are compared by address and dso only, and their inlined lines are
# skipped. Prints one summary line:
#   samples N same S late L differ D missing M extra E
# then the first differences, each line starting with "#".
BEGIN { RS = ""; FS = "\n" }

function absent(line) {
	return line ~ /\((\[vdso\]|\/opt\/fixt\/perf-upstream\/perf)\)$/
}

function addr_of(line,    a) {
	a = line
	sub(/^\t */, "", a)
	sub(/ .*/, "", a)
	return a
}

# The block's frames as one string; frames of absent binaries lose their
# symbol, and their "(inlined)" lines go.
function frames(from,    i, j, out, line, a) {
	out = ""
	for (i = from; i <= NF; i++) {
		line = $i
		if (line ~ /\(inlined\)$/) {
			a = addr_of(line)
			for (j = i + 1; j <= NF && $j ~ /\(inlined\)$/; j++)
				;
			if (j <= NF && addr_of($j) == a && absent($j))
				continue
		}
		if (absent(line)) {
			a = line
			sub(/ [^ ]+ \(/, " ? (", a)
			line = a
		}
		out = out line "\n"
	}
	return out
}

FILENAME == ARGV[1] { for (i = 1; i <= NF; i++) cookie[$i] = 1; next }

FILENAME == ARGV[2] {
	key = $1
	if (key in ref) { dupkey++; key = key "#" dupkey }
	ref[key] = frames(2)
	order[++nref] = key
	is_late[key] = 0
	if (late && NF >= 2 && $NF ~ /^\t *[0-9a-f]+ \[unknown\] \(\[unknown\]\)$/ &&
	    (addr_of($NF) in cookie)) {
		is_late[key] = 1
		prefix[key] = frames(2)
		sub(/[^\n]*\n$/, "", prefix[key])
	}
	next
}

{
	key = $1
	if (key in ours) { dupours++; key = key "#" dupours }
	ours[key] = frames(2)
}

END {
	for (k = 1; k <= nref; k++) {
		key = order[k]
		if (!(key in ours)) {
			missing++
			if (shown++ < 5) print "# missing: " key > "/dev/stderr"
			continue
		}
		seen[key] = 1
		if (is_late[key]) {
			p = prefix[key]
			if (substr(ours[key], 1, length(p)) == p && length(ours[key]) > length(p))
				nlate++
			else {
				differ++
				if (shown++ < 5) printf "# late sample differs: %s\n# reference:\n%s# ours:\n%s", key, ref[key], ours[key] > "/dev/stderr"
			}
			continue
		}
		if (ours[key] == ref[key])
			same++
		else {
			differ++
			if (shown++ < 5) printf "# differs: %s\n# reference:\n%s# ours:\n%s", key, ref[key], ours[key] > "/dev/stderr"
		}
	}
	for (key in ours)
		if (!(key in seen)) {
			extra++
			if (shown++ < 5) print "# extra: " key > "/dev/stderr"
		}
	printf "samples %d same %d late %d differ %d missing %d extra %d\n",
		nref, same, nlate, differ, missing, extra
}
