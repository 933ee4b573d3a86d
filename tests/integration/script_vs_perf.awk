# script_vs_perf.awk - lockstep compare of perf 6.1's `perf script` text
# and ours, normalised for perf 6.1's known differences (see
# script_vs_perf.sh): runs of blanks are one, leading blanks go, user
# addresses are not compared (6.1 prints them dso-relative).
#
#   awk -v ours=OURS -v unresolved_ok=0|1 [-v names_of=COMM] \
#       [-v plt=TABLE -v dsos=FILE] -f script_vs_perf.awk PERF
#
# With names_of, the user frames of other commands' samples are compared
# by their dso, not their symbol: a system-wide recording holds whatever
# else ran on the machine, and binaries whose symbols overlap (a label
# inside a function, as node's builtins have), where perf 6.1 picks one by
# the shape of its symbol tree.
#
# Prints "lines N same S exited E unresolved U plt P differ D" and the
# first differences on stderr as "#" lines. TABLE (tests/plt_perf61.sh)
# lists the PLT entries that perf 6.1 names otherwise than we do: a frame
# in one of them, at the same offset, with perf 6.1's name on one side and
# ours on the other, counts as "plt" (without dsos shown: the same names
# in any of TABLE's dsos). FILE gets the dso of every user
# frame that differs otherwise, for the caller to build TABLE from.
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
# "\tU SYM+OFF (DSO)" into f["sym"], f["off"] ("" for none), f["dso"]
# ("" for a line without it: -F without dso)
function user_frame(l, f,    i, j) {
	if (substr(l, 1, 3) != "\tU ")
		return 0
	l = substr(l, 4)
	f["dso"] = ""
	if (substr(l, length(l)) == ")") {
		for (i = length(l); i > 0 && substr(l, i, 2) != " ("; i--)
			;
		if (i <= 0)
			return 0
		f["dso"] = substr(l, i + 2, length(l) - i - 2)
		l = substr(l, 1, i - 1)
	}
	j = match(l, /\+0x[0-9a-f]+$/)
	f["sym"] = j ? substr(l, 1, j - 1) : l
	f["off"] = j ? substr(l, j) : ""
	return 1
}
BEGIN {
	while (plt != "" && (getline l < plt) > 0) {
		split(l, t, "\t")
		known[t[1], t[2], t[3]] = 1
		known["", t[2], t[3]] = 1
	}
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
	# a PLT entry perf 6.1 names after another relocation (plt_perf61.sh)
	if (user_frame(p, pf) && user_frame(q, qf) && pf["dso"] == qf["dso"] &&
	    pf["off"] == qf["off"] && ((pf["dso"], pf["sym"], qf["sym"]) in known)) {
		pltd++; next
	}
	if (dsos != "" && user_frame(p, pf) && pf["dso"] != "")
		print pf["dso"] > dsos
	differ++
	if (differ <= 5) printf "# line %d\n#  perf: %s\n#  ours: %s\n", NR, $0, o > "/dev/stderr"
}
END {
	if (!short && (getline o < ours) > 0) short = 1
	printf "lines %d same %d exited %d unresolved %d plt %d differ %d%s\n",
		lines, same, exited, unresolved, pltd, differ, short ? " (lengths differ)" : ""
}
