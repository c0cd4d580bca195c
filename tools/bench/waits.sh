#!/bin/bash
# How much of the time pairs want a CPU they spend waiting for one (their
# threads' schedstat: wait / (run + wait), as ccxd reads it for a kept
# group), placed by hand, alone and with a CPU-bound program pinned to the
# pair's CPU: what crowded_wait is set by. Five one-second readings each.
#
#   tools/bench/waits.sh   (root)
set -eu
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "waits.sh needs root" >&2; exit 1; }
make -s all >/dev/null
TALK=./tools/helpers/ccxt-talk
WORK=$(mktemp -d /tmp/ccxd-bench.XXXXXX)
cp tools/helpers/ccxt-exec "$WORK/ccxt-hog"   # under another name: a program that computes
trap 'pkill -f "$WORK/ccxt-hog" 2>/dev/null || true; rm -rf "$WORK"' EXIT INT TERM

times_of() {   # PID: its threads' run and wait ns, summed
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{r += $1; w += $2} END {print r + 0, w + 0}'
}
share() {   # PIDS...: the share over one second
	local r0=0 w0=0 r1=0 w1=0 a b
	for p in "$@"; do read -r a b <<<"$(times_of "$p")"; r0=$((r0 + a)); w0=$((w0 + b)); done
	sleep 1
	for p in "$@"; do read -r a b <<<"$(times_of "$p")"; r1=$((r1 + a)); w1=$((w1 + b)); done
	awk -v r=$((r1 - r0)) -v w=$((w1 - w0)) 'BEGIN {printf "%.2f", w / (r + w)}'
}
# run LABEL CPU_WRITER CPU_READER HOG_CPUS TALK_ARGS...
run() {
	local label=$1 cw=$2 cr=$3 hogs=$4 P C hp="" out=""
	shift 4
	"$TALK" "$@" > "$WORK/pids" 2>/dev/null &
	local talk=$!
	sleep 0.3
	read -r P C < "$WORK/pids"
	taskset -pc "$cw" "$P" >/dev/null
	taskset -pc "$cr" "$C" >/dev/null
	for h in $hogs; do taskset -c "$h" "$WORK/ccxt-hog" spin & hp="$hp $!"; done
	sleep 1
	for i in 1 2 3 4 5; do out="$out $(share "$P" "$C")"; done
	echo "| $label | ${hogs:-none} |$out |"
	for h in $hp; do kill "$h"; done
	kill "$P" "$C" "$talk" 2>/dev/null || true
	wait "$talk" 2>/dev/null || true
}

echo "Machine: $(nproc) CPUs, $(uname -r), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "Command: tools/bench/waits.sh ($(date -u +%Y-%m-%d))"
echo
echo "| pair, and its CPUs | CPU-bound program pinned to | share waiting, five seconds |"
echo "|---|---|---|"
for hogs in "" 0; do
	run "pipe ping-pong, both on CPU 0" 0 0 "$hogs" pingpong 0 20
	run "TCP request/response, both on CPU 0" 0 0 "$hogs" pingpong-tcp 0 20
	run "Unix socket ping-pong, both on CPU 0" 0 0 "$hogs" pingpong-unix 0 20
	run "two busy processes (pipe), both on CPU 0" 0 0 "$hogs" pipe 0 20 500
	run "two busy processes (pipe), CPU 0 and 1" 0 1 "$hogs" pipe 0 20 500
	run "a stream (pipe), CPU 0 and 1" 0 1 "$hogs" pipe 0 20
done
