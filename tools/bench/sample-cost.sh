#!/bin/sh
# CPU cost of one sample cycle against the number of processes: N idle
# processes in pairs holding pipes and Unix sockets (tools/helpers/ccxt-hold),
# plus 10 pairs streaming 8 MiB/s each through pipes, Unix sockets and
# loopback TCP (tools/helpers/ccxt-talk), sampled by ccxd in dry-run mode.
# The cycle's CPU time is ccxd's own figure (status: sampling.last_cycle_usec),
# the median of 8 cycles once idle processes are read every 8th. Prints a
# Markdown table.
#
#   tools/bench/sample-cost.sh [N...]        (root; default 100 1000 5000)
set -eu
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "sample-cost.sh needs root" >&2; exit 1; }
make -s all >/dev/null
COUNTS=${*:-100 1000 5000}
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
CONF

echo "Machine: $(nproc) CPUs, $(uname -r); command: tools/bench/sample-cost.sh $COUNTS ($(date -u +%Y-%m-%d))"
echo
echo "| idle processes | scanned | active | cycle us (median of 8) | us per scanned process | us per active process |"
echo "|---|---|---|---|---|---|"
for n in $COUNTS; do
	./tools/helpers/ccxt-hold "$n" 600 &
	PIDS="$PIDS $!"
	for kind in pipe unix tcp pipe unix tcp pipe unix tcp pipe; do
		./tools/helpers/ccxt-talk "$kind" 8 600 >/dev/null &
		PIDS="$PIDS $!"
	done
	sleep 2
	./daemon/ccxd --config "$WORK/ccxd.conf" 2>/dev/null &
	DAEMON=$!
	PIDS="$PIDS $DAEMON"
	# Steady state: idle processes are read every 8th sample once they
	# have slept 10; the median of 8 samples spans one round of that.
	sleep 20
	: > "$WORK/cycles"
	for i in 1 2 3 4 5 6 7 8; do
		./tools/ccxctl --socket "$WORK/ccxd.sock" --json status |
			jq -r '.sampling | "\(.last_cycle_usec) \(.processes_scanned) \(.processes_active)"' >> "$WORK/cycles"
		sleep 1
	done
	sort -n "$WORK/cycles" | sed -n 4p | awk -v n="$n" \
		'{printf "| %d | %d | %d | %d | %.1f | %.1f |\n", n, $2, $3, $1, $1 / $2, $1 / ($3 ? $3 : 1)}'
	kill "$DAEMON"
	wait "$DAEMON" 2>/dev/null || true
	pkill -f "ccxt-hold $n 600" || true
	pkill -f "ccxt-talk .* 600" || true
	sleep 1
done
