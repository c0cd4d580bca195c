#!/bin/sh
# How soon after the kernel's report of the exec ccxd pins a program that
# starts 8 computing threads at once, in alternating rounds: with ccxd at
# nice 0, at nice -5 (its unit's Nice=), at nice -5 with a SCHED_IDLE
# process making system calls on the side (so that no CPU runs user code
# alone for long), and under SCHED_FIFO (chrt -f 1). Prints a Markdown
# report.
#
#   tools/bench/exec-burst.sh [ROUNDS] [EXECS]     (root; default 3 60)
#
# Each exec is a copy of ccxt-exec under a name a rule pins, run as
# "threads": it makes 7 more threads that compute, at once; it is killed
# 30 ms later. The figures are ccxd's own (status exec_pins: from the
# kernel's report of the exec to the affinity set), medians over the rounds.
set -eu
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
N=${2:-60}
[ "$(id -u)" -eq 0 ] || { echo "exec-burst.sh needs root" >&2; exit 1; }
make -s all >/dev/null
for v in $(env | sed -n 's/^\(CCXD_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done

WORK=$(mktemp -d /tmp/ccxd-bench.XXXXXX)
DAEMON_PID=
SIDE_PID=
stop_daemon() {
	case "$SIDE_PID" in
	'' | *[!0-9]* | 0 | 1) ;;
	*) kill "$SIDE_PID" 2>/dev/null && wait "$SIDE_PID" 2>/dev/null || true ;;
	esac
	SIDE_PID=
	case "$DAEMON_PID" in
	'' | *[!0-9]* | 0 | 1) ;;
	*) kill "$DAEMON_PID" 2>/dev/null && wait "$DAEMON_PID" 2>/dev/null || true ;;
	esac
	DAEMON_PID=
}
trap 'stop_daemon; rm -rf "$WORK"' EXIT INT TERM
cp tools/helpers/ccxt-exec "$WORK/ccxt-burst"
cat > "$WORK/ccxd.conf" <<CONF
[daemon]
socket = $WORK/ccxd.sock
topology = synthetic:pack:1 l3:2 core:1 pu:1
calibrate = no

[program:ccxt-burst]
ccx = 1
CONF
median() { sort -n | awk '{a[++n] = $1} END {print n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2}'; }

# The ways ccxd runs: name, and the command that starts it
RUNS="nice0 nice-5 nice-5+side fifo"
how() {
	case $1 in
	nice0) echo "nice -n 0" ;;
	fifo) echo "chrt -f 1" ;;
	*) echo "nice -n -5" ;;
	esac
}
label() {
	case $1 in
	nice0) echo "nice 0" ;;
	nice-5) echo "nice -5" ;;
	nice-5+side) echo "nice -5, a SCHED_IDLE process in system calls on the side" ;;
	fifo) echo "SCHED_FIFO 1" ;;
	esac
}

for r in $(seq 1 "$ROUNDS"); do
	for run in $RUNS; do
		$(how "$run") ./daemon/ccxd --config "$WORK/ccxd.conf" 2>>"$WORK/ccxd.log" &
		DAEMON_PID=$!
		i=0
		until ./tools/ccxctl --socket "$WORK/ccxd.sock" version >/dev/null 2>&1; do
			i=$((i + 1)); [ $i -lt 200 ] || { echo "ccxd did not start" >&2; exit 1; }; sleep 0.05
		done
		sleep 1.2    # past the proc connector's acknowledgement
		if [ "$run" = nice-5+side ]; then
			chrt -i 0 dd if=/dev/zero of=/dev/null bs=1 2>/dev/null &
			SIDE_PID=$!
		fi
		for i in $(seq 1 "$N"); do
			"$WORK/ccxt-burst" threads &
			b=$!
			sleep 0.03
			kill -KILL "$b"
			wait "$b" 2>/dev/null || true
		done
		./tools/ccxctl --socket "$WORK/ccxd.sock" --json status |
			jq -r '.exec_pins | "\(.p50_usec) \(.p90_usec) \(.max_usec)"' > "$WORK/$run.$r"
		stop_daemon
	done
done

col() { for r in $(seq 1 "$ROUNDS"); do cut -d' ' -f"$2" "$WORK/$1.$r"; done | median; }
echo "Machine: $(nproc) CPUs, $(uname -r), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "Command: tools/bench/exec-burst.sh $ROUNDS $N ($(date -u +%Y-%m-%d))"
echo
echo "| ccxd at | pinned after the exec's report, p50 us | p90 us | max us |"
echo "|---|---|---|---|"
for run in $RUNS; do echo "| $(label "$run") | $(col "$run" 1) | $(col "$run" 2) | $(col "$run" 3) |"; done
