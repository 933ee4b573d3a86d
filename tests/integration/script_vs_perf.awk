# script_vs_perf.awk - lockstep compare of perf 6.1's `perf script` text
# and ours, normalised for perf 6.1's known differences (see
# script_vs_perf.sh): runs of blanks are one, leading blanks go, user
# addresses are not compared (6.1 prints them dso-relative).
#
#   awk -v ours=OURS -v unresolved_ok=0|1 -f script_vs_perf.awk PERF
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
{
	if ((getline o < ours) <= 0) { short = 1; exit }
	lines++
	p = norm($0); q = norm(o)
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
