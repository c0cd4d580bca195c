#!/bin/sh
# How soon after the kernel's report of the exec ccxd pins a program that
# starts 8 computing threads at once, in alternating rounds, run by run:
# ccxd at nice 0, at nice -5 (its unit's Nice=), under SCHED_FIFO all
# along (chrt -f 1, where ccxd leaves its policy alone), and, given BEFORE
# (another ccxd binary: the build before a change), that one at nice -5.
# Under SCHED_OTHER ccxd asks for the shortest time slice itself, and
# waits for its events at real-time priority (ccxd(8)); a BEFORE without
# either shows what they change. With HOGS,
# that many other programs compute all along: every CPU is busy before the
# exec too. Prints a Markdown report.
#
#   tools/bench/exec-burst.sh [ROUNDS] [EXECS] [BEFORE] [HOGS] [KIND]
#       (root; default 3 60 "" 0 threads)
#
# Each exec is a copy of ccxt-exec under a name a rule pins, run as KIND:
# "threads" makes 7 more threads that compute, at once; "spin" computes
# alone; "hold" sleeps. It is killed 30 ms later. The figures are ccxd's own (status exec_pins: from the
# kernel's report of the exec to the affinity set), medians over the rounds.
set -eu
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
N=${2:-60}
BEFORE=${3:-}
HOGS=${4:-0}
KIND=${5:-threads}
. tools/bench/lib.sh
bench_init exec-burst.sh

DAEMON_PID=
SIDE_PIDS=
stop_run() {
	for p in $SIDE_PIDS; do kill_pid "$p"; done
	SIDE_PIDS=
	kill_pid "$DAEMON_PID"
	DAEMON_PID=
}
trap 'stop_run; rm -rf "$WORK"' EXIT INT TERM
cp tools/helpers/ccxt-exec "$WORK/ccxt-burst"
cp tools/helpers/ccxt-exec "$WORK/ccxt-hog"
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
RUNS="nice0 nice-5 fifo"
[ -n "$BEFORE" ] && RUNS="$RUNS before"
how() {
	case $1 in
	nice0) echo "nice -n 0 ./daemon/ccxd" ;;
	fifo) echo "chrt -f 1 ./daemon/ccxd" ;;
	before) echo "nice -n -5 $BEFORE" ;;
	*) echo "nice -n -5 ./daemon/ccxd" ;;
	esac
}
label() {
	case $1 in
	nice0) echo "nice 0, waiting at real time" ;;
	nice-5) echo "nice -5, waiting at real time (as installed)" ;;
	fifo) echo "SCHED_FIFO 1 all along" ;;
	before) echo "nice -5, the build before" ;;
	esac
}

for r in $(seq 1 "$ROUNDS"); do
	for run in $RUNS; do
		$(how "$run") --config "$WORK/ccxd.conf" >/dev/null 2>>"$WORK/ccxd.log" &
		DAEMON_PID=$!
		wait_ccxd "$WORK/ccxd.sock"
		for h in $(seq 1 "$HOGS"); do
			"$WORK/ccxt-hog" spin &
			SIDE_PIDS="$SIDE_PIDS $!"
		done
		for i in $(seq 1 "$N"); do
			"$WORK/ccxt-burst" "$KIND" &
			b=$!
			sleep 0.03
			kill -KILL "$b"
			wait "$b" 2>/dev/null || true
		done
		./tools/ccxctl --socket "$WORK/ccxd.sock" --json status |
			jq -r '.exec_pins | "\(.p50_usec) \(.p90_usec) \(.max_usec)"' > "$WORK/$run.$r"
		stop_run
	done
done

col() { for r in $(seq 1 "$ROUNDS"); do cut -d' ' -f"$2" "$WORK/$1.$r"; done | median; }
echo "Machine: $(nproc) CPUs, $(uname -r), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "Command: tools/bench/exec-burst.sh $ROUNDS $N${BEFORE:+ $BEFORE} $HOGS $KIND ($(date -u +%Y-%m-%d))"
echo
echo "| ccxd at | pinned after the exec's report, p50 us | p90 us | max us |"
echo "|---|---|---|---|"
for run in $RUNS; do echo "| $(label "$run") | $(col "$run" 1) | $(col "$run" 2) | $(col "$run" 3) |"; done
