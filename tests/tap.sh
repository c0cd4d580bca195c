# The TAP-style lines that tests/run counts, for the shell tests (lint/ and
# integration/): "ok - NAME", "not ok - NAME" with what failed below it.

ok() { echo "ok - $1"; }
not_ok() {
	echo "not ok - $1"
	shift
	[ $# -gt 0 ] && echo "# $*"
	# An integration test's ccxd: the end of its log.
	[ -n "${LOG:-}" ] && [ -s "$LOG" ] && sed 's/^/# ccxd: /' "$LOG" | tail -n 20
	return 0
}
# check NAME COMMAND...: ok when the command succeeds
check() {
	name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name" "failed: $*"; fi
}
# quietly COMMAND...: without its output. For check: a redirection after
# check would swallow the verdict too.
quietly() { "$@" >/dev/null; }
