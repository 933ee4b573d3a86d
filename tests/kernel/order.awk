# tests/kernel/order.awk - checks that the workload's own functions appear
# in caller->callee order beneath the kernel frames of stitched samples,
# in `callstitch script` output (frames innermost first, one per line:
# "<tab>ADDR SYM+OFF (DSO)", a blank line after each sample).
#
#   awk -v chain='leaf1|leaf2,f1,f2,...,outermost' -f order.awk SCRIPT_OUTPUT
#
# chain lists the workload's functions innermost first; names joined by |
# stand at the same level. A sample counts when its first frame is a
# kernel address and it has user frames named in chain. It is good when
# all its kernel frames come before all its user frames, and the chain
# functions in it, repeats (recursion) folded, are one unbroken run of
# chain ending at the outermost level: the user stack was put back whole
# and in order. One gap is allowed right after the innermost user frame:
# a frame-pointer unwind whose sample IP is in a prologue or epilogue, or
# in a libc wrapper that keeps no frame, misses that function's caller. Prints "good N full N bad N" (full: good ones whose run
# starts at the innermost level), and the first bad samples on stderr.
BEGIN {
	n = split(chain, lv, ",")
	for (i = 1; i <= n; i++) {
		m = split(lv[i], alt, "|")
		for (j = 1; j <= m; j++)
			level[alt[j]] = i
	}
	good = full = bad = 0
}
function kaddr(a) { return length(a) == 16 && substr(a, 1, 4) == "ffff" }
function judge(   i, ok, seen_user, first, last, l, nu, gap_ok) {
	if (nf == 0)
		return
	if (!kaddr(addr[1]))
		return
	nu = 0
	for (i = 1; i <= nf; i++)
		if (!kaddr(addr[i]) && (sym[i] in level))
			nu++
	if (nu == 0)
		return
	ok = 1
	seen_user = 0
	first = last = 0
	gap_ok = 0
	for (i = 1; i <= nf; i++) {
		if (kaddr(addr[i])) {
			if (seen_user)
				ok = 0		# a kernel frame under a user frame
			continue
		}
		if (!(sym[i] in level)) {
			seen_user = 1
			continue
		}
		l = level[sym[i]]
		if (l == last)
			continue		# recursion
		if (last != 0 && l != last + 1 && !(gap_ok && l == last + 2))
			ok = 0			# out of order or a level missing
		gap_ok = !seen_user		# this is the sample's own IP
		seen_user = 1
		if (first == 0)
			first = l
		last = l
	}
	if (last != n && !(gap_ok && last == n - 1))
		ok = 0				# the outermost level is missing
	if (ok) {
		good++
		if (first == 1)
			full++
	} else {
		bad++
		if (bad <= 3) {
			print "order: bad sample: " head > "/dev/stderr"
			for (i = 1; i <= nf && i <= 60; i++)
				print "order:   " addr[i] " " sym[i] > "/dev/stderr"
		}
	}
}
/^\t/ {
	nf++
	addr[nf] = $1
	s = $2
	sub(/\+0x[0-9a-f]+$/, "", s)
	sym[nf] = s
	next
}
/^$/ { judge(); nf = 0; next }
{ judge(); nf = 0; head = $0 }
END { judge(); print "good " good " full " full " bad " bad }
