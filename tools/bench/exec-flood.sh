#!/bin/sh
# What an exec flood by another user costs ccxd, and what ccxd costs it:
# user nobody runs FORKERS forkers that exec, as fast as they can for
# SECONDS, a copy of ccxt-exec named as a rule's program (it exits at
# once). In alternating rounds: no ccxd at all, this build, and, given
# BEFORE (another ccxd binary: the build before a change), that one; each
# ccxd as its unit runs it (nice -5, the default configuration but for the
# rule and two one-CPU CCXs). Prints a Markdown report, medians over the
# rounds:
#   execs/s     the flood's forks a second (/proc/stat "processes")
#   ccxd CPU    its run time over the flood (/proc/PID/schedstat)
#   status      ccxctl status, timed every 0.3 s: median and slowest
#   pins/s      status counters.pins
#   exec_pins   from the kernel's record of the exec to the affinity set,
#               p50 and p90 of the last 256 (ccxd's own figures)
#   dropped     records the ring could not hold
#   SIGXCPU     the kernel's real-time limit reached (log lines)
#   pin lines   the journal's lines for pins (stderr here)
#
#   tools/bench/exec-flood.sh [ROUNDS] [SECONDS] [FORKERS] [BEFORE]
#       (root; default 3 20 "6 per CPU" "")
set -eu
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
SECONDS_=${2:-20}
FORKERS=${3:-$(( $(nproc) * 6 ))}
BEFORE=${4:-}
. tools/bench/lib.sh
bench_init exec-flood.sh

chmod 755 "$WORK"
DAEMON_PID=
trap 'stop_daemon; rm -rf "$WORK"' EXIT INT TERM
cp tools/helpers/ccxt-exec "$WORK/ccxt-exec"
cp tools/helpers/ccxt-exec "$WORK/ccxt-flood"
cat > "$WORK/ccxd.conf" <<CONF
[daemon]
socket = $WORK/ccxd.sock
state_dir = $WORK/state
runtime_dir = $WORK/run
topology = synthetic:pack:1 l3:2 core:1 pu:1
calibrate = no

[program:ccxt-flood]
ccx = 1
CONF
median() { sort -n | awk '{a[++n] = $1} END {print n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2}'; }
forks() { awk '$1 == "processes" {print $2}' /proc/stat; }
ctl() { ./tools/ccxctl --socket "$WORK/ccxd.sock" "$@"; }

RUNS="none this"
[ -n "$BEFORE" ] && RUNS="$RUNS before"
label() {
	case $1 in
	none) echo "no ccxd" ;;
	this) echo "this build" ;;
	before) echo "the build before" ;;
	esac
}

# flood RUN ROUND: one flood, with RUN's ccxd or none; writes its figures
flood() {
	run=$1 r=$2 out="$WORK/$1.$2"
	if [ "$run" != none ]; then
		bin=./daemon/ccxd
		[ "$run" = before ] && bin=$BEFORE
		nice -n -5 "$bin" --config "$WORK/ccxd.conf" >/dev/null 2>"$WORK/$run.$r.log" &
		DAEMON_PID=$!
		wait_ccxd "$WORK/ccxd.sock"
		pins0=$(ctl --json status | jq .counters.pins)
		ns0=$(awk '{print $1}' "/proc/$DAEMON_PID/schedstat")
	fi
	f0=$(forks)
	t0=$(date +%s%N)
	fl=
	for i in $(seq "$FORKERS"); do
		runuser -u nobody -- timeout "$SECONDS_" "$WORK/ccxt-exec" storm 1000000000 "$WORK/ccxt-flood" >/dev/null 2>&1 &
		fl="$fl $!"
	done
	: > "$WORK/status.ms"
	end=$(( $(date +%s) + SECONDS_ ))
	while [ "$run" != none ] && [ "$(date +%s)" -lt "$end" ]; do
		s=$(date +%s%N)
		timeout 30 ./tools/ccxctl --socket "$WORK/ccxd.sock" status >/dev/null 2>&1 || true
		echo $(( ($(date +%s%N) - s) / 1000000 )) >> "$WORK/status.ms"
		sleep 0.3
	done
	wait $fl 2>/dev/null || true
	wall=$(( $(date +%s%N) - t0 ))
	execs=$(( ($(forks) - f0) * 1000000000 / wall ))
	if [ "$run" = none ]; then
		echo "$execs - - - - - - - - -" > "$out"
		return
	fi
	cpu=$(( ($(awk '{print $1}' "/proc/$DAEMON_PID/schedstat") - ns0) * 1000 / wall ))
	ctl --json status > "$WORK/st.json"
	pins=$(( ($(jq .counters.pins "$WORK/st.json") - pins0) * 1000000000 / wall ))
	stop_daemon
	echo "$execs $(awk "BEGIN {print $cpu / 10}") $(median < "$WORK/status.ms") $(sort -n "$WORK/status.ms" | tail -n 1) $pins" \
		"$(jq -r '"\(.exec_pins.p50_usec) \(.exec_pins.p90_usec) \(.watcher.execs.dropped)"' "$WORK/st.json")" \
		"$(grep -c SIGXCPU "$WORK/$run.$r.log" || true) $(grep -c 'Pinned ' "$WORK/$run.$r.log" || true)" > "$out"
}

for r in $(seq 1 "$ROUNDS"); do
	for run in $RUNS; do flood "$run" "$r"; done
done

col() { for r in $(seq 1 "$ROUNDS"); do cut -d' ' -f"$2" "$WORK/$1.$r"; done | grep -v '^-$' | median; }
echo "Machine: $(nproc) CPUs, $(uname -r), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "Command: tools/bench/exec-flood.sh $ROUNDS $SECONDS_ $FORKERS${BEFORE:+ $BEFORE} ($(date -u +%Y-%m-%d))"
echo
echo "| ccxd | execs/s | ccxd CPU % | status p50 ms | slowest ms | pins/s | exec_pins p50 us | p90 us | dropped | SIGXCPU | pin lines |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for run in $RUNS; do
	if [ "$run" = none ]; then
		echo "| $(label "$run") | $(col "$run" 1) | | | | | | | | | |"
	else
		echo "| $(label "$run") | $(col "$run" 1) | $(col "$run" 2) | $(col "$run" 3) | $(col "$run" 4) | $(col "$run" 5) | $(col "$run" 6) | $(col "$run" 7) | $(col "$run" 8) | $(col "$run" 9) | $(col "$run" 10) |"
	fi
done
echo
echo "By round (this build): CPU % $(for r in $(seq 1 "$ROUNDS"); do cut -d' ' -f2 "$WORK/this.$r"; done | tr '\n' ' ')," \
	"slowest status ms $(for r in $(seq 1 "$ROUNDS"); do cut -d' ' -f4 "$WORK/this.$r"; done | tr '\n' ' ')"
if [ -n "$BEFORE" ]; then
	echo "By round (the build before): CPU % $(for r in $(seq 1 "$ROUNDS"); do cut -d' ' -f2 "$WORK/before.$r"; done | tr '\n' ' ')," \
		"slowest status ms $(for r in $(seq 1 "$ROUNDS"); do cut -d' ' -f4 "$WORK/before.$r"; done | tr '\n' ' ')"
fi
