# SPDX-License-Identifier: GPL-2.0 OR LGPL-2.1 OR BSD-2-Clause
#
# tap-count.awk - count the test points of one or more TAP documents: the
# one parser of tools/check.sh (Documentation/testing.rst, "One protocol").
#
#   awk -f tools/lib/tap-count.awk [-v label=NAME] LOG
#
# A document starts at "TAP version N", or at its first plan or test point
# when it has no version line; a second plan at the same depth, or a new
# version line, starts the next one.  Subtests (TAP 14) are documents
# indented by four spaces, named by a "# Subtest: NAME" line before them;
# the test point that follows one at the outer depth ("ok 3 - NAME") sums
# it up.  Only the leaf test points count:
#
#   ok N ...                      passed ("# TODO", "# XFAIL": passed too)
#   ok N ... # SKIP ...           skipped: neither passed nor failed
#   ok N ... # XPASS ...          failed (kselftest: passed, but expected
#                                 to fail)
#   not ok N ...                  failed, unless "# TODO" (then skipped)
#   not ok N (sums up a subtest)  one failure if the subtest counted none
#                                 (the program exited non-zero, say)
#   Bail out!                     a failure
#
# and each document must keep its word: a document with no plan, or that
# ran a number of tests other than its plan (a runner that died half way),
# is a failure; so is one that passed nothing and failed nothing (every
# test skipped: nothing was tested).  Lines that are not TAP (diagnostics,
# a kernel's console) are passed over, as TAP says.
#
# Prints one "fail<TAB>WHAT" line per failure, then
# "total<TAB>PASSED<TAB>FAILED<TAB>SKIPPED<TAB>DOCUMENTS", DOCUMENTS counting
# the top-level ones.  Always exits 0: the caller decides.

function open_doc(d) {
	top = d
	opened[d] = 1
	plan[d] = -1
	npts[d] = 0
	dp[d] = df[d] = ds[d] = 0
	docname[d] = (d in pending) ? pending[d] : (d == 0 ? label : "")
	delete pending[d]
	parent_pending[d] = 0
	bailed[d] = 0
}

function where(d,   s, i) {
	s = ""
	for (i = 0; i <= d; i++)
		if (docname[i] != "")
			s = s (s == "" ? "" : ": ") docname[i]
	return s == "" ? "" : s ": "
}

function failure(d, what) {
	printf "fail\t%s%s\n", where(d), what
	df[d]++
}

# close the document at depth d (and any deeper one): check its plan and
# hand its counts to its parent, or to the totals
function close_doc(d) {
	if (!opened[d])
		return
	if (opened[d + 1])
		close_doc(d + 1)
	if (parent_pending[d]) {
		# a subtest with no summary point: it stands for its own
		fold(d)
		npts[d]++
	}
	if (bailed[d])
		;	# counted once, as the bail-out
	else if (plan[d] < 0)
		failure(d, "no plan (1..N): the runner stopped before it was done")
	else if (npts[d] != plan[d])
		failure(d, "ran " npts[d] " of " plan[d] " planned tests")
	else if (dp[d] == 0 && df[d] == 0)
		failure(d, "every test skipped (or none planned): nothing was tested")
	opened[d] = 0
	top = d - 1
	if (d == 0) {
		P += dp[d]; F += df[d]; S += ds[d]; docs++
	} else {
		sp[d - 1] = dp[d]; sf[d - 1] = df[d]; ss[d - 1] = ds[d]
		parent_pending[d - 1] = 1
	}
}

function fold(d) {
	parent_pending[d] = 0
	dp[d] += sp[d]; df[d] += sf[d]; ds[d] += ss[d]
}

function point(d, line,   ok, rest, dir) {
	if (opened[d + 1])
		close_doc(d + 1)
	if (!opened[d])
		open_doc(d)
	npts[d]++
	ok = line !~ /^not ok/
	rest = line
	dir = ""
	if (match(rest, /[ \t]#[ \t]*[A-Za-z]+/)) {
		dir = toupper(substr(rest, RSTART, RLENGTH))
		sub(/^[ \t]#[ \t]*/, "", dir)
	}
	if (parent_pending[d]) {
		# this point sums up the subtest just closed
		fold(d)
		if (!ok && sf[d] == 0 && dir !~ /^TODO/)
			failure(d, line)
		return
	}
	if (dir ~ /^SKIP/)
		ds[d]++
	else if (dir ~ /^XPASS/)
		failure(d, line " (passed, but expected to fail)")
	else if (dir ~ /^TODO/)
		ok ? dp[d]++ : ds[d]++
	else if (ok)
		dp[d]++
	else
		failure(d, line)
}

BEGIN {
	top = -1
	P = F = S = docs = 0
}

{
	sub(/\r$/, "")
	match($0, /^ */)
	d = int(RLENGTH / 4)
	line = substr($0, RLENGTH + 1)
}

line ~ /^TAP version [0-9]+$/ {
	if (opened[d])
		close_doc(d)
	open_doc(d)
	next
}

line ~ /^1\.\.[0-9]+([ \t]*#.*)?$/ {
	if (opened[d + 1])
		close_doc(d + 1)
	if (opened[d] && plan[d] >= 0) {
		close_doc(d)
	}
	if (!opened[d])
		open_doc(d)
	n = line
	sub(/^1\.\./, "", n)
	plan[d] = int(n)
	next
}

line ~ /^(not )?ok([ \t]|$)/ {
	point(d, line)
	next
}

# TAP 14: the subtest's name, indented as the subtest is
line ~ /^# Subtest: / {
	pending[d] = substr(line, 12)
	next
}

# the document stops here (kselftest's ksft_exit_fail_msg()); the runner
# that ran it may go on with the next one
line ~ /^Bail out!/ {
	if (opened[d + 1])
		close_doc(d + 1)
	if (!opened[d])
		open_doc(d)
	failure(d, line)
	bailed[d] = 1
	close_doc(d)
	next
}

END {
	if (opened[0])
		close_doc(0)
	printf "total\t%d\t%d\t%d\t%d\n", P, F, S, docs
}
