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
	# A sanitizer build's ccxd reports to its stderr (UBSan ignores
	# log_path): any report fails the script, even one at shutdown.
	if grep -Eq 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$LOG" 2>/dev/null; then
		echo "not ok - ccxd's log holds a sanitizer report"
		grep -E -A 12 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$LOG" | head -n 60 | sed 's/^/# /'
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# jq 1.6 exits 0 from -e when its input is empty (later versions exit 4), so
# a check that pipes a command's output into jq -e would pass when the
# command printed nothing. The checks' jq fails then.
JQ=$(command -v jq)
mkdir -p "$WORK/bin"
cat > "$WORK/bin/jq" <<JQ
#!/bin/sh
case " \$* " in *" -e "*) ;; *) exec "$JQ" "\$@" ;; esac
out=\$("$JQ" "\$@") || { rc=\$?; [ -z "\$out" ] || printf '%s\\n' "\$out"; exit \$rc; }
[ -n "\$out" ] || exit 4
printf '%s\\n' "\$out"
JQ
chmod 755 "$WORK/bin/jq"
PATH=$WORK/bin:$PATH
export PATH

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
# quietly COMMAND...: without its output. For check: a redirection after
# check would swallow the verdict too.
quietly() { "$@" >/dev/null; }

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

# write_conf: the config from standard input; its [daemon] section gets a
# state_dir and a runtime_dir of the test's own unless it names them.
write_conf() {
	cat > "$CONF"
	grep -q '^state_dir' "$CONF" || sed -i "0,/^\[daemon\]/s||[daemon]\nstate_dir = $WORK/state|" "$CONF"
	grep -q '^runtime_dir' "$CONF" || sed -i "0,/^\[daemon\]/s||[daemon]\nruntime_dir = $WORK/run|" "$CONF"
	# No calibration unless the test asks (calibrate = yes): the probe loads
	# both CPUs for a moment, and its figures would steer the automatic
	# policy of tests that are about something else.
	grep -q '^calibrate' "$CONF" || sed -i "0,/^\[daemon\]/s||[daemon]\ncalibrate = no|" "$CONF"
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
