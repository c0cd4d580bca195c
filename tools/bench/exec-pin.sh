#!/bin/sh
# Exec-to-pin latency and daemon CPU per exec event, for ccxd and, in the same
# run, for tuned's scheduler plugin. Prints a Markdown report.
#
#   tools/bench/exec-pin.sh [LATENCY_EXECS] [CPU_EXECS]     (root; default 1000 10000)
#
# Latency: from the child's execve (timestamped in the child just before it)
# to the moment its affinity equals the rule's CPU, watched from outside by a
# SCHED_IDLE poller (tools/helpers/ccxt-exec). "floor" is how long the exec
# event itself takes to reach a listener: no connector-driven daemon can be
# faster. CPU: the daemon's on-CPU time (/proc/PID/task/*/schedstat) over
# CPU_EXECS execs, divided by CPU_EXECS; "matched" execs are pinned by a rule,
# "unmatched" ones are of a program no rule names.
set -eu
cd "$(dirname "$0")/../.."
N_LAT=${1:-1000}
N_CPU=${2:-10000}
[ "$(id -u)" -eq 0 ] || { echo "exec-pin.sh needs root" >&2; exit 1; }
make -s all >/dev/null

WORK=$(mktemp -d /tmp/ccxd-bench.XXXXXX)
DAEMON_PID=
cleanup() {
	[ -n "$DAEMON_PID" ] && kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null
	rm -rf "$WORK" /etc/tuned/ccxd-bench
	[ -f "$WORK.active_profile" ] && mv "$WORK.active_profile" /etc/tuned/active_profile
	true
}
trap cleanup EXIT INT TERM
EXEC=tools/helpers/ccxt-exec
cp "$EXEC" "$WORK/ccxt-bench"
cp "$EXEC" "$WORK/ccxt-other"

# cpu_ns PID: on-CPU nanoseconds of every thread
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{s += $1} END {printf "%d", s}'; }
stats() { sort -n | awk '$1 != "timeout" {a[++n] = $1} $1 == "timeout" {t++}
	END {printf "%d | %.0f | %.0f | %.0f | %d", n + t, a[int(n * 0.5) + 1], a[int(n * 0.99) + 1], a[n], t}'; }
per_exec() { echo "$1 $2 $3" | awk '{printf "%.1f", ($2 - $1) / $3 / 1000}'; }

measure() {   # NAME PID: prints one table row
	lat=$($EXEC latency "$N_LAT" "$WORK/ccxt-bench" 1 | stats)
	before=$(cpu_ns "$2")
	$EXEC latency "$N_CPU" "$WORK/ccxt-bench" 1 >/dev/null
	after=$(cpu_ns "$2")
	matched=$(per_exec "$before" "$after" "$N_CPU")
	before=$(cpu_ns "$2")
	$EXEC storm "$N_CPU" "$WORK/ccxt-other"
	after=$(cpu_ns "$2")
	unmatched=$(per_exec "$before" "$after" "$N_CPU")
	echo "| $1 | $lat | $matched | $unmatched |"
}

echo "Machine: $(nproc) CPUs, $(uname -r), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "Command: tools/bench/exec-pin.sh $N_LAT $N_CPU ($(date -u +%Y-%m-%d))"
echo
echo "| daemon | execs | p50 us | p99 us | max us | timeouts | CPU us/exec, matched | CPU us/exec, unmatched |"
echo "|---|---|---|---|---|---|---|---|"
echo "| floor: exec event reaches a listener | $($EXEC events "$N_LAT" "$WORK/ccxt-bench" | stats) | - | - |"

cat > "$WORK/ccxd.conf" <<CONF
[daemon]
socket = $WORK/ccxd.sock
topology = synthetic:pack:1 l3:2 core:1 pu:1

[program:ccxt-bench]
ccx = 1
CONF
./daemon/ccxd --config "$WORK/ccxd.conf" 2>"$WORK/ccxd.log" &
DAEMON_PID=$!
until ./tools/ccxctl --socket "$WORK/ccxd.sock" version >/dev/null 2>&1; do sleep 0.05; done
sleep 1.2    # past the proc connector's acknowledgement
measure "ccxd $(./daemon/ccxd --version | cut -d' ' -f2)" "$DAEMON_PID"
kill "$DAEMON_PID"
wait "$DAEMON_PID" || true
DAEMON_PID=

if command -v tuned >/dev/null; then
	mkdir -p /etc/tuned/ccxd-bench
	[ -f /etc/tuned/active_profile ] && cp /etc/tuned/active_profile "$WORK.active_profile"
	cat > /etc/tuned/ccxd-bench/tuned.conf <<CONF
[main]
summary=ccxd benchmark: ccxt-bench on CPU 1

[scheduler]
group.ccxtbench=0:*:0:2:.*ccxt-bench.*
CONF
	tuned --no-dbus --profile ccxd-bench --log "$WORK/tuned.log" &
	DAEMON_PID=$!
	# Ready when a matching program gets pinned.
	i=0
	until [ "$($EXEC latency 1 "$WORK/ccxt-bench" 1)" != timeout ] || [ $i -ge 60 ]; do i=$((i + 1)); sleep 0.5; done
	measure "tuned $(tuned --version 2>&1 | awk '{print $2}') scheduler plugin" "$DAEMON_PID"
else
	echo "| tuned | not installed (apt-get install tuned) | | | | | | |"
fi
