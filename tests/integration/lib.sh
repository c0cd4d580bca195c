# Shared by the integration scripts: each runs the real ccxd in the foreground
# on a private socket and config, against the real kernel, and cleans up on
# any exit. Prints TAP-style lines that tests/run counts.

set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CCXD=$TOP/daemon/ccxd
CCXCTL=$TOP/tools/ccxctl
TWO_CCX="synthetic:pack:1 l3:2 core:1 pu:1"
CCXD_TOPOLOGIES=${CCXD_TOPOLOGIES:-$(cd "$TOP/.." && pwd)/shared/topologies}

[ "$(id -u)" -eq 0 ] || { echo "integration tests need root"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "integration tests need 2 CPUs"; exit 77; }

WORK=$(mktemp -d /tmp/ccxd-test.XXXXXX)
chmod 755 "$WORK"
SOCK=$WORK/ccxd.sock
CONF=$WORK/ccxd.conf
LOG=$WORK/ccxd.log
CCXD_PID=
CHILDREN=
ON_EXIT=:    # more cleaning for a script to add

cleanup() {
	for p in $CHILDREN; do kill -9 "$p" 2>/dev/null; done
	[ -n "$CCXD_PID" ] && kill -9 "$CCXD_PID" 2>/dev/null
	wait 2>/dev/null
	eval "$ON_EXIT"
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ok() { echo "ok - $1"; }
not_ok() {
	echo "not ok - $1"
	shift
	[ $# -gt 0 ] && echo "# $*"
	[ -s "$LOG" ] && sed 's/^/# ccxd: /' "$LOG" | tail -n 20
	return 0
}
# check NAME COMMAND...: ok when the command succeeds
check() {
	name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name" "failed: $*"; fi
}

# A program with a name of its own, so rules match nothing else on the machine.
make_program() {
	cp "$(command -v sleep)" "$WORK/$1"
	echo "$WORK/$1"
}

# spawn CMD...: starts it in the background; its pid is in $SPAWNED
spawn() {
	"$@" &
	SPAWNED=$!
	CHILDREN="$CHILDREN $SPAWNED"
}

cpus_of() {
	sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null
}

# wait_for SECONDS COMMAND...: polls every 20 ms
wait_for() {
	deadline=$(( $(date +%s%N) + $1 * 1000000000 ))
	shift
	while ! "$@"; do
		[ "$(date +%s%N)" -lt "$deadline" ] || return 1
		sleep 0.02
	done
}

cpus_are() { [ "$(cpus_of "$1")" = "$2" ]; }

write_conf() {
	cat > "$CONF"
}

ctl() { "$CCXCTL" --socket "$SOCK" "$@"; }

start_ccxd() {
	"$CCXD" --config "$CONF" --verbose "$@" >"$LOG" 2>&1 &
	CCXD_PID=$!
	wait_for 5 ctl version >/dev/null 2>&1 || { not_ok "ccxd starts" "no answer on $SOCK"; exit 1; }
}

stop_ccxd() {
	[ -n "$CCXD_PID" ] || return 0
	kill -TERM "$CCXD_PID" 2>/dev/null
	wait "$CCXD_PID"
	rc=$?
	CCXD_PID=
	return $rc
}
