#!/bin/sh
# What the kernel's traffic counters (daemon/traffic.h) cost the processes
# they count: a pipe streamed in 64 KiB calls (MB/s), a byte passed back
# and forth through two pipes and through a Unix socketpair (round trips/s),
# and getppid(2) (calls/s: what every system call pays where pipes are
# counted at system calls' exit), without the counters and with them loaded
# and read every second (tools/bench/traffic-cost hold), in alternating
# rounds, the order switched each round. Prints the medians of the rates
# and of the CPU time per unit (ns per MB, round trip or call), their
# ratios (with / without), and how long the reads of the counts took.
#
#   tools/bench/traffic-cost.sh [ROUNDS [SECONDS]]   (root; default 5 rounds of 3 s each)
set -eu
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "traffic-cost.sh needs root" >&2; exit 1; }
make -s tools/bench/traffic-cost >/dev/null
ROUNDS=${1:-5}
SECONDS_EACH=${2:-3}
BIN=tools/bench/traffic-cost
WORK=$(mktemp -d /tmp/ccxd-bench.XXXXXX)
HOLD=
cleanup() {
	[ -z "$HOLD" ] || kill "$HOLD" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

measure() {   # $1: off or on
	for w in "stream" "pingpong pipe" "pingpong unix" "syscalls"; do
		set -- "$1" $w
		value=$("$BIN" "$2" "$SECONDS_EACH" ${3:-})
		echo "$value" >> "$WORK/$1.$(echo "$w" | tr ' ' _)"
	done
}

with_counters() {
	"$BIN" hold 1000 > "$WORK/hold.$r" &
	HOLD=$!
	while ! grep -q loaded "$WORK/hold.$r" 2>/dev/null; do sleep 0.1; done
	measure on
	kill "$HOLD"
	wait "$HOLD" || true
	HOLD=
}

for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) -eq 1 ]; then
		measure off
		with_counters
	else
		with_counters
		measure off
	fi
done

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
sed -n 's/^loaded: //p' "$WORK/hold.1"
echo "| workload | rate without | with | with / without | CPU ns per unit without | with | with / without |"
echo "|---|---|---|---|---|---|---|"
for w in stream pingpong_pipe pingpong_unix syscalls; do
	for c in off on; do
		cut -d' ' -f1 "$WORK/$c.$w" > "$WORK/rate.$c"
		cut -d' ' -f2 "$WORK/$c.$w" > "$WORK/cpu.$c"
	done
	echo "| $w | $(median "$WORK/rate.off") | $(median "$WORK/rate.on") |" \
	     "$(echo "$(median "$WORK/rate.on") $(median "$WORK/rate.off")" | awk '{ printf "%.3f", $1 / $2 }') |" \
	     "$(median "$WORK/cpu.off") | $(median "$WORK/cpu.on") |" \
	     "$(echo "$(median "$WORK/cpu.on") $(median "$WORK/cpu.off")" | awk '{ printf "%.3f", $1 / $2 }') |"
done
cat "$WORK"/hold.* | grep '^reads'
