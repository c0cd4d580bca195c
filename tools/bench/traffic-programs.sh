#!/bin/sh
# What the traffic counters cost real programs: `perf bench sched pipe`
# (a ping-pong through two pipes) and `yes | pv` (a stream through a pipe),
# each run ROUNDS times under a ccxd in dry-run that counts every channel
# (traffic = syscalls: where the kernel refuses the pipe programs, pipes are
# counted at every system call's exit) and ROUNDS times under one that
# counts nothing (traffic = no), the two in turn, the order switched from
# one round to the next. Prints a Markdown table: medians, and the median
# of the rounds' ratios.
#
#   tools/bench/traffic-programs.sh [ROUNDS]   (root; default 9)
set -eu
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "traffic-programs.sh needs root" >&2; exit 1; }
command -v perf >/dev/null && command -v pv >/dev/null || { echo "needs perf and pv (tools/install-deps)" >&2; exit 1; }
make -s all >/dev/null
ROUNDS=${1:-9}
WORK=$(mktemp -d /tmp/ccxd-bench.XXXXXX)
DAEMON=
stop() {
	[ -z "$DAEMON" ] && return 0
	kill "$DAEMON" 2>/dev/null || true
	wait "$DAEMON" 2>/dev/null || true
	DAEMON=
}
trap 'stop; rm -rf "$WORK"' EXIT INT TERM

# under TRAFFIC: a ccxd that counts as TRAFFIC says, until stop.
under() {
	cat > "$WORK/ccxd.conf" <<CONF
[daemon]
socket = $WORK/ccxd.sock
mode = dry-run
interval = 1s
runtime_dir = $WORK/run
state_dir = $WORK/state
calibrate = no
traffic = $1
CONF
	./daemon/ccxd --config "$WORK/ccxd.conf" 2>/dev/null &
	DAEMON=$!
	i=0
	until ./tools/ccxctl --socket "$WORK/ccxd.sock" version >/dev/null 2>&1; do
		i=$((i + 1))
		[ "$i" -lt 50 ] || { echo "ccxd did not start" >&2; exit 1; }
		sleep 0.1
	done
}

# pingpong: round trips a second of perf bench sched pipe.
pingpong() { perf bench sched pipe -l 200000 2>/dev/null | awk '/ops\/sec/ {print $1}'; }
# stream: MB a second of 2 GiB from yes through pv.
stream() {
	s=$(date +%s%N)
	yes | head -c 2G | pv -q > /dev/null
	e=$(date +%s%N)
	awk -v s="$s" -v e="$e" 'BEGIN {printf "%.0f", 2 * 1073.741824 / ((e - s) / 1e9)}'
}

: > "$WORK/results"
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) -eq 1 ]; then order="no syscalls"; else order="syscalls no"; fi
	for traffic in $order; do
		under "$traffic"
		sleep 2
		echo "$r $traffic $(pingpong) $(stream)" >> "$WORK/results"
		stop
	done
done

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
echo "Machine: $(nproc) CPUs, $(uname -r); command: tools/bench/traffic-programs.sh $ROUNDS ($(date -u +%Y-%m-%d))"
echo
echo "| workload | not counted | counted | counted / not counted |"
echo "|---|---|---|---|"
for col in 3 4; do
	name=$([ "$col" -eq 3 ] && echo "perf bench sched pipe (round trips/s)" || echo "\`yes \\| head -c 2G \\| pv\` (MB/s)")
	off=$(awk -v c="$col" '$2 == "no" {print $c}' "$WORK/results" | median)
	on=$(awk -v c="$col" '$2 == "syscalls" {print $c}' "$WORK/results" | median)
	ratio=$(awk -v c="$col" '$2 == "no" {off[$1] = $c} $2 == "syscalls" {on[$1] = $c}
		END {for (r in on) if (off[r] > 0) print on[r] / off[r]}' "$WORK/results" | median)
	printf '| %s | %.0f | %.0f | %.3f |\n' "$name" "$off" "$on" "$ratio"
done
