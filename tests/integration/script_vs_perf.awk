# script_vs_perf.awk - lockstep compare of perf 6.1's `perf script` text
# and ours, normalised for perf 6.1's known differences (see
# script_vs_perf.sh): runs of blanks are one, leading blanks go, user
# addresses are not compared (6.1 prints them dso-relative).
#
#   awk -v ours=OURS -v unresolved_ok=0|1 [-v names_of=COMM] -f script_vs_perf.awk PERF
#
# With names_of, the user frames of other commands' samples are compared
# by their dso, not their symbol: a system-wide recording holds whatever
# else ran on the machine, and binaries whose symbols overlap (a label
# inside a function, as node's builtins have), where perf 6.1 picks one by
# the shape of its symbol tree.
#
# Prints "lines N same S exited E unresolved U differ D" and the first
# differences on stderr as "#" lines.
function norm(l,    f, a) {
	if (l ~ /^\t/) {
		split(l, f, " ")
		a = f[1]; sub(/^\t */, "", a)
		if (length(a) < 16 || substr(a, 1, 4) != "ffff")
			sub(/^\t *[0-9a-f]+ /, "\tU ", l)
		return l
	}
	gsub(/ +/, " ", l)
	sub(/^ /, "", l)
	return l
}
# "\tU sym+off (dso)" -> "\tU (dso)"
function unsym(l,    i, k) {
	if (l !~ /^\tU /)
		return l
	k = 0
	while ((i = index(substr(l, k + 1), " (")) > 0)
		k += i
	return k ? "\tU" substr(l, k) : l
}
{
	if ((getline o < ours) <= 0) { short = 1; exit }
	lines++
	p = norm($0); q = norm(o)
	if (p !~ /^\t/ && p != "")
		other = names_of != "" && index(p, names_of " ") != 1
	if (other) { p = unsym(p); q = unsym(q) }
	if (p == q) { same++; next }
	# perf 7.3 and we name samples after the thread's EXIT ":TID"
	if (q ~ /^:[0-9]+ / && substr(q, index(q, " ")) == substr(p, index(p, " "))) {
		exited++; next
	}
	# a binary rebuilt since it was recorded (build id differs): we
	# refuse its symbols, perf 6.1 uses the new file's
	if (unresolved_ok && q ~ /^\tU \[unknown\] \(/ && p ~ /^\tU / &&
	    substr(q, index(q, "(")) == substr(p, index(p, "("))) {
		unresolved++; next
	}
	differ++
	if (differ <= 5) printf "# line %d\n#  perf: %s\n#  ours: %s\n", NR, $0, o > "/dev/stderr"
}
END {
	if (!short && (getline o < ours) > 0) short = 1
	printf "lines %d same %d exited %d unresolved %d differ %d%s\n",
		lines, same, exited, unresolved, differ, short ? " (lengths differ)" : ""
}
