#!/bin/sh
# What the sampler sees under the default sampling settings (bpf, traffic,
# interval unset; mode = dry-run, calibrate = no, so that nothing moves and
# no probe loads the CPUs): in rounds, each ccxd given in turn,
#   - yes | pv -q -L RATE (64m unless RATE says otherwise): in how many of
#     SAMPLES looks, one a second, it is one group with its pipe;
#   - perf bench sched pipe (a ping-pong pair holding both ends of both
#     pipes): how long from its start until it is one group (looked at every
#     0.1 s, at most 15 s).
# Prints a Markdown table, a line per ccxd and round, and the medians.
#
#   [RATE=64m] tools/bench/eyes.sh [SAMPLES] [ROUNDS] [CCXD...]
#   (root; default 60 3, and this tree's daemon/ccxd: name another ccxd
#   binary, such as an older build's, to run it in turn with this one)
set -eu
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "eyes.sh needs root" >&2; exit 1; }
command -v pv >/dev/null && command -v perf >/dev/null || { echo "eyes.sh needs pv and perf" >&2; exit 1; }
make -s all >/dev/null
RATE=${RATE:-64m}
SAMPLES=${1:-60}
ROUNDS=${2:-3}
shift $(($# < 2 ? $# : 2))
BINARIES=${*:-./daemon/ccxd}
CCXCTL=./tools/ccxctl
WORK=$(mktemp -d /tmp/ccxd-bench.XXXXXX)
CCXD_PID=
cleanup() {
	pkill -x pv 2>/dev/null || true
	pkill -f 'perf bench sched pipe' 2>/dev/null || true
	[ -z "$CCXD_PID" ] || kill "$CCXD_PID" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

cat > "$WORK/ccxd.conf" <<CONF
[daemon]
socket = $WORK/ccxd.sock
mode = dry-run
calibrate = no
runtime_dir = $WORK/run
state_dir = $WORK/state
CONF

status() { "$CCXCTL" --socket "$WORK/ccxd.sock" --json status 2>/dev/null; }
# together A B: A and B are one group, over a pipe
together() {
	status | jq -e --argjson a "$1" --argjson b "$2" \
		'any(.groups[]?; (.pids | index($a)) and (.pids | index($b)) and any(.channels[]; .kind == "pipe"))' >/dev/null
}
start_ccxd() {
	"$1" --config "$WORK/ccxd.conf" >"$WORK/ccxd.log" 2>&1 &
	CCXD_PID=$!
	for i in $(seq 50); do status >/dev/null && return 0; sleep 0.1; done
	echo "$1 did not answer" >&2
	exit 1
}
stop_ccxd() {
	kill "$CCXD_PID"
	wait "$CCXD_PID" 2>/dev/null || true
	CCXD_PID=
}

echo "| ccxd | round | yes \\| pv -q -L $RATE: looks in one group | perf bench sched pipe: s to one group | counted |"
echo "|---|---|---|---|---|"
: > "$WORK/results"
for round in $(seq "$ROUNDS"); do
	for bin in $BINARIES; do
		start_ccxd "$bin"
		sh -c "yes | pv -q -L $RATE > /dev/null" &
		stream=$!
		sleep 0.3
		y=$(pgrep -n -x yes)
		p=$(pgrep -n -x pv)
		hits=0
		for i in $(seq "$SAMPLES"); do
			sleep 1
			if together "$y" "$p"; then hits=$((hits + 1)); fi
		done
		kill "$y" "$p" 2>/dev/null || true
		wait "$stream" 2>/dev/null || true

		perf bench sched pipe -l 100000000 >/dev/null 2>&1 &
		bench=$!
		started=$(date +%s%N)
		found=-
		for i in $(seq 150); do
			sleep 0.1
			set -- $(pgrep -f 'perf bench sched pipe' | sort -n)
			if [ $# -eq 2 ] && together "$1" "$2"; then
				found=$(( ($(date +%s%N) - started) / 1000000 ))
				break
			fi
		done
		counted=$(status | jq -r '.sampling.counted')
		pkill -f 'perf bench sched pipe' 2>/dev/null || true
		wait "$bench" 2>/dev/null || true
		stop_ccxd
		seconds=$( [ "$found" = - ] && echo "not within 15" || echo "$found" | awk '{printf "%.1f", $1 / 1000}')
		echo "| $bin | $round | $hits of $SAMPLES | $seconds | $counted |"
		echo "$bin $hits $found" >> "$WORK/results"
	done
done
# median COLUMN BINARY
median() {
	awk -v b="$2" -v c="$1" '$1 == b { print ($c == "-" ? 99999 : $c) }' "$WORK/results" | sort -n |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
for bin in $BINARIES; do
	found=$(median 3 "$bin")
	echo "median of $ROUNDS rounds, $bin: $(median 2 "$bin") of $SAMPLES looks in one group;" \
		"perf bench sched pipe one group after $( [ "$found" = 99999 ] && echo "more than 15" ||
			echo "$found" | awk '{printf "%.1f", $1 / 1000}') s"
done
