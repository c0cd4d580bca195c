#!/bin/sh
# CPU cost of one sample cycle against the number of processes: N idle
# processes in pairs holding pipes and Unix sockets (tools/helpers/ccxt-hold),
# plus P pairs streaming 8 MiB/s each through pipes, Unix sockets and
# loopback TCP in turn (tools/helpers/ccxt-talk), sampled by ccxd in dry-run
# mode. Each N is run with 10 talking pairs, then with 30 more, under the
# same ccxd: the cycle's growth between the two, over the growth in active
# processes, is the cost of one active process; the rest of the cycle is
# the cost of the idle ones and of what every cycle does. The cycle's CPU
# time is ccxd's own figure (status: sampling.last_cycle_usec), the median
# of 16 cycles once idle processes are read every 8th. Prints a Markdown
# table.
#
# TRAFFIC sets ccxd.conf's traffic key (auto, syscalls or no: where the
# kernel counts channels). PINGPONG=N adds N pairs that ping-pong 64-byte
# messages through a Unix socketpair as fast as they can, all along.
#
# KINDS chooses what the pairs stream through, in turn. Loopback TCP's
# softirqs are charged to whatever task runs when they come, ccxd's cycle
# included, on a kernel without CONFIG_IRQ_TIME_ACCOUNTING: KINDS="pipe
# unix" leaves them out.
#
#   [KINDS="pipe unix tcp"] [TRAFFIC=auto] [PINGPONG=0] tools/bench/sample-cost.sh [N...]
#   (root; default 100 1000 5000)
set -eu
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "sample-cost.sh needs root" >&2; exit 1; }
make -s all >/dev/null
COUNTS=${*:-100 1000 5000}
KINDS=${KINDS:-pipe unix tcp}
TRAFFIC=${TRAFFIC:-auto}
PINGPONG=${PINGPONG:-0}
WORK=$(mktemp -d /tmp/ccxd-bench.XXXXXX)
PIDS=
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	pkill -f "ccxt-hold .* 600" 2>/dev/null || true
	pkill -f "ccxt-talk .* 600" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

cat > "$WORK/ccxd.conf" <<CONF
[daemon]
socket = $WORK/ccxd.sock
mode = dry-run
interval = 1s
runtime_dir = $WORK/run
state_dir = $WORK/state
traffic = $TRAFFIC
CONF

# talk PAIRS: starts that many more streaming pairs.
talk() {
	i=0
	while [ "$i" -lt "$1" ]; do
		for kind in $KINDS; do
			[ "$i" -lt "$1" ] || break
			./tools/helpers/ccxt-talk "$kind" 8 600 >/dev/null &
			PIDS="$PIDS $!"
			i=$((i + 1))
		done
	done
}

# cycles: prints "cycle_usec scanned active counting_usec", medians of 16
# cycles (counting: reading the traffic counters, part of the cycle). Idle
# processes are read every 8th sample once they have slept 10: 16 samples
# span two rounds of that.
cycles() {
	: > "$WORK/cycles"
	for i in $(seq 16); do
		./tools/ccxctl --socket "$WORK/ccxd.sock" --json status |
			jq -r '.sampling | "\(.last_cycle_usec) \(.processes_scanned) \(.processes_active) \(.last_counting_usec)"' >> "$WORK/cycles"
		sleep 1
	done
	for col in 1 2 3 4; do
		cut -d' ' -f"$col" "$WORK/cycles" | sort -n | sed -n 8p
	done | tr '\n' ' '
}

# measure N: N idle processes and 10 pairs, then 30 pairs more, under one
# ccxd: the two figures differ by the 30 pairs alone.
measure() {
	./tools/helpers/ccxt-hold "$1" 600 &
	PIDS="$PIDS $!"
	i=0
	while [ "$i" -lt "$PINGPONG" ]; do
		./tools/helpers/ccxt-talk pingpong-unix 0 600 >/dev/null &
		PIDS="$PIDS $!"
		i=$((i + 1))
	done
	talk 10
	sleep 2
	./daemon/ccxd --config "$WORK/ccxd.conf" 2>/dev/null &
	DAEMON=$!
	PIDS="$PIDS $DAEMON"
	sleep 20
	./tools/ccxctl --socket "$WORK/ccxd.sock" --json status | jq -r '"counted: \(.sampling.counted)"' >&2
	cycles
	talk 30
	sleep 12
	cycles
	kill "$DAEMON"
	wait "$DAEMON" 2>/dev/null || true
	pkill -f "ccxt-hold $1 600" || true
	pkill -f "ccxt-talk .* 600" || true
	sleep 1
}

echo "Machine: $(nproc) CPUs, $(uname -r); command: KINDS=\"$KINDS\" TRAFFIC=$TRAFFIC PINGPONG=$PINGPONG tools/bench/sample-cost.sh $COUNTS ($(date -u +%Y-%m-%d))"
echo
echo "| idle processes | scanned | active | cycle us | counting us | active (40 pairs) | cycle us (40 pairs) | counting us (40 pairs) | us per active process | us per scanned process |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for n in $COUNTS; do
	set -- $(measure "$n")
	c1=$1 s1=$2 a1=$3 k1=$4 c2=$5 a2=$7 k2=$8
	awk -v n="$n" -v c1="$c1" -v s1="$s1" -v a1="$a1" -v k1="$k1" -v c2="$c2" -v a2="$a2" -v k2="$k2" 'BEGIN {
		per_active = a2 > a1 ? (c2 - c1) / (a2 - a1) : 0
		printf "| %d | %d | %d | %d | %d | %d | %d | %d | %.1f | %.1f |\n", n, s1, a1, c1, k1, a2, c2, k2, per_active, c1 / s1 }'
done
