#!/bin/sh
# Exec-to-pin latency and daemon CPU per exec, for ccxd and, in the same run
# and in alternating rounds, for tuned's scheduler plugin, a bare pinner
# driven by perf, and the floor under them all. Prints a Markdown report.
#
#   tools/bench/exec-pin.sh [ROUNDS] [EXECS] [STORM] [BEFORE] [KINDS]
#       (root; default 3 200 2000; BEFORE: another ccxd binary, e.g. the
#       build before a change, measured as role "before", or "" for none;
#       KINDS: the kinds below to measure, all by default)
#
# Eight kinds of target: static or dynamic (ld.so runs first); after its
# exec it sleeps (hold), computes (spin) or makes 8 computing threads at
# once (threads: an encoder's shape, every CPU busy); and the "-busy"
# kinds, where two other programs compute all along (every CPU busy before
# the exec and after). Each round measures every role on every kind (EXECS
# execs each), in an order that turns from round to round.
#
# Latency: from the child's execve (timestamped in the child just before
# it) to the first sched_setaffinity() call on it, read from the kernel's
# trace (tracefs, trace_clock = mono, the event
# syscalls/sys_enter_sched_setaffinity), by ccxt-exec, which sleeps
# meanwhile: no observer takes a CPU from the daemon or enters the kernel
# on the target's CPU. "floor" is how long the exec event itself takes to
# reach a listener of its own, stamped by that listener (nice 0): no daemon
# driven by the proc connector can be faster. ccxd runs at nice -5, as its
# unit starts it; tuned as its own unit starts it, at nice 0. ccxd also says
# how long after the kernel's record of the exec it set each affinity
# (status exec_pins: ccxd is restarted for each kind to read it per kind).
# "perf" is the least a daemon could do with another source of exec events,
# perf's exec comm records (ccxt-exec perf-pinner): pin at once, nothing
# else.
#
# Figures: the median over the rounds of each round's p50 and p90; each
# round's p50 of ccxd (a round that waited for a timer tick stands out),
# and its ratio to that round's floor p50;
# and the share of all execs pinned within twice the floor's p50 of their
# round. CPU: the daemon's on-CPU time and the time it waited for a CPU
# while runnable (/proc/PID/task/*/schedstat) over the matched execs, per
# exec (each one pinned, killed and exiting, with the interval's own work
# in those windows), and its CPU per exec over STORM execs, as fast as they
# come, of a program a rule names (matched: pinned, decided, gone) and of
# one no rule names (unmatched); both exit at once.
set -eu
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
N=${2:-200}
STORM=${3:-2000}
BEFORE=${4:-}
KINDS=${5:-static-hold static-spin dynamic-hold dynamic-spin dynamic-threads static-spin-busy dynamic-spin-busy dynamic-hold-busy}
. tools/bench/lib.sh
bench_init exec-pin.sh

DAEMON_PID=
HOGS=
stop_hogs() {
	for h in $HOGS; do kill_pid "$h"; done
	HOGS=
}
TRACE=/sys/kernel/tracing
cleanup() {
	stop_hogs
	stop_daemon
	[ -f "$WORK/trace_clock" ] && cat "$WORK/trace_clock" > $TRACE/trace_clock
	echo 0 > $TRACE/events/syscalls/sys_enter_sched_setaffinity/enable 2>/dev/null || true
	rm -rf /etc/tuned/ccxd-bench
	[ -f "$WORK/active_profile" ] && mv "$WORK/active_profile" /etc/tuned/active_profile
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
EXEC=tools/helpers/ccxt-exec
mkdir "$WORK/static" "$WORK/dynamic" "$WORK/out"
cp "$EXEC" "$WORK/static/ccxt-bench"
cp "$EXEC-dynamic" "$WORK/dynamic/ccxt-bench"
cp "$EXEC" "$WORK/ccxt-other"
cp "$EXEC" "$WORK/ccxt-hog"
HAVE_TUNED=$(command -v tuned >/dev/null && echo yes || echo no)
ROLES="floor ccxd perf"
[ "$HAVE_TUNED" = yes ] && ROLES="$ROLES tuned"
[ -n "$BEFORE" ] && ROLES="$ROLES before"

# The kernel's trace of sched_setaffinity() calls, on the monotonic clock.
[ -d $TRACE/events ] || mount -t tracefs tracefs $TRACE
sed -n 's/.*\[\([a-z0-9_-]*\)\].*/\1/p' $TRACE/trace_clock > "$WORK/trace_clock"
echo mono > $TRACE/trace_clock
echo 1 > $TRACE/events/syscalls/sys_enter_sched_setaffinity/enable
cat $TRACE/trace_pipe >/dev/null & TRACE_DRAIN=$!; sleep 0.2; kill $TRACE_DRAIN

# schedstat PID: on-CPU and runqueue-wait nanoseconds of every thread
schedstat() { cat /proc/"$1"/task/*/schedstat | awk '{c += $1; w += $2} END {printf "%d %d", c, w}'; }
# rotate K WORD...: the words, the first K moved to the end, turn by turn
rotate() {
	k=$(( $1 % ($# - 1) )); shift
	while [ "$k" -gt 0 ]; do set -- "$@" "$1"; shift; k=$((k - 1)); done
	echo "$@"
}
# program KIND, mode KIND: its binary, and what it does after the exec
program() { echo "$WORK/${1%%-*}/ccxt-bench"; }
mode() { m=${1#*-}; echo "${m%-busy}"; }
# hogs KIND: two programs that compute all along, for the busy kind
hogs() {
	case $1 in *-busy) ;; *) return 0 ;; esac
	for i in 1 2; do "$WORK/ccxt-hog" spin & HOGS="$HOGS $!"; done
	sleep 0.2
}
# percentile P: of the numbers on stdin ("timeout" counts as the largest)
percentile() { sed 's/^\(timeout\|untraced\)$/1000000/' | sort -n | awk -v p="$1" '{a[++n] = $1} END {print a[int(n * p) + 1]}'; }
median() { sort -n | awk '{a[++n] = $1} END {print n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2}'; }

# start_ccxd ROLE: this ccxd, or the one given as BEFORE
start_ccxd() {
	rule_conf ccxt-bench
	nice -n -5 "$([ "$1" = before ] && echo "$BEFORE" || echo ./daemon/ccxd)" --config "$WORK/ccxd.conf" \
		>/dev/null 2>>"$WORK/ccxd.log" &
	DAEMON_PID=$!
	wait_ccxd "$WORK/ccxd.sock"
}

start_perf() {
	$EXEC perf-pinner ccxt-bench 1 &
	DAEMON_PID=$!
	sleep 0.5
}

start_tuned() {
	mkdir -p /etc/tuned/ccxd-bench
	[ -f /etc/tuned/active_profile ] && [ ! -f "$WORK/active_profile" ] && cp /etc/tuned/active_profile "$WORK/active_profile"
	cat > /etc/tuned/ccxd-bench/tuned.conf <<CONF
[main]
summary=ccxd benchmark: ccxt-bench on CPU 1

[scheduler]
group.ccxtbench=0:*:0:2:.*ccxt-bench.*
CONF
	tuned --no-dbus --profile ccxd-bench --log "$WORK/tuned.log" 2>>"$WORK/tuned.log" &
	DAEMON_PID=$!
	# Ready when a matching program gets pinned.
	i=0
	until [ "$($EXEC latency 1 "$WORK/static/ccxt-bench" 1 hold)" != timeout ]; do
		i=$((i + 1)); [ $i -lt 60 ] || { echo "tuned did not pin within 30 s" >&2; exit 1; }; sleep 0.5
	done
}

# measure ROLE ROUND: every kind's latencies, and for a daemon its CPU
measure() {
	if [ "$1" = floor ]; then
		for k in $KINDS; do
			hogs $k
			$EXEC events "$N" "$(program $k)" "$(mode $k)" > "$WORK/out/$1.$k.$2"
			stop_hogs
		done
		return
	fi
	case $1 in ccxd | before) ;; *) "start_$1" ;; esac
	cpu=0 wait=0
	for k in $KINDS; do
		# ccxd afresh for each kind, so that its exec_pins are that kind's
		case $1 in ccxd | before) start_ccxd "$1" ;; esac
		hogs $k
		set -- "$1" "$2" $(schedstat "$DAEMON_PID")
		$EXEC latency "$N" "$(program $k)" 1 "$(mode $k)" $TRACE/trace_pipe > "$WORK/out/$1.$k.$2"
		set -- "$1" "$2" "$3" "$4" $(schedstat "$DAEMON_PID")
		stop_hogs
		cpu=$((cpu + $5 - $3)) wait=$((wait + $6 - $4))
		case $1 in ccxd | before)
			./tools/ccxctl --socket "$WORK/ccxd.sock" --json status |
				jq -r '"\(.exec_pins.p50_usec) \(.exec_pins.p90_usec) \(.watcher.execs.source)"' > "$WORK/out/pins.$1.$k.$2"
			[ "$k" = "${KINDS##* }" ] || stop_daemon
		esac
		set -- "$1" "$2"
	done
	set -- "$1" "$2" $(schedstat "$DAEMON_PID")
	$EXEC storm "$STORM" "$WORK/ccxt-other"
	set -- "$@" $(schedstat "$DAEMON_PID")
	$EXEC storm "$STORM" "$WORK/static/ccxt-bench"
	set -- "$@" $(schedstat "$DAEMON_PID")
	echo "$cpu $wait $3 $5 $7" | awk -v n=$((N * $(echo $KINDS | wc -w))) -v s="$STORM" \
		'{printf "%.1f %.1f %.1f %.1f\n", $1 / n / 1000, $2 / n / 1000, ($4 - $3) / s / 1000, ($5 - $4) / s / 1000}' > "$WORK/out/$1.cpu.$2"
	stop_daemon
}

for r in $(seq 1 "$ROUNDS"); do
	# The order turns each round: no daemon always runs first or last.
	for role in $(rotate $((r - 1)) $ROLES); do measure "$role" "$r"; done
done

# stat ROLE KIND P: the median over rounds of each round's percentile P
stat() { for r in $(seq 1 "$ROUNDS"); do percentile "$3" < "$WORK/out/$1.$2.$r"; done | median; }
ratio() { echo "$1 $2" | awk '$2 ~ /^[0-9.]+$/ && $2 > 0 {printf "%.2f", $1 / $2; next} {printf "-"}'; }
cpu() { for r in $(seq 1 "$ROUNDS"); do cut -d' ' -f"$2" "$WORK/out/$1.cpu.$r"; done | median; }

echo "Machine: $(nproc) CPUs, $(uname -r), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "Command: tools/bench/exec-pin.sh $ROUNDS $N $STORM ($(date -u +%Y-%m-%d)); ccxd $(./daemon/ccxd --version | cut -d' ' -f2)$([ "$HAVE_TUNED" = yes ] && echo ", tuned $(tuned --version 2>&1 | awk '{print $2}')")"
echo
echo "ccxd's exec events: $(cut -d' ' -f3 "$WORK"/out/pins.ccxd.* | sort -u | tr '\n' ' ')"
echo
echo "Latency in us, medians over $ROUNDS rounds of $N execs per kind and role of each round's p50 and p90; \"within 2x\": the share of all execs pinned within twice the floor's p50 of their round:"
echo
LATENCY_ROLES=$(echo $ROLES | sed 's/floor //')
head="| target | floor p50 | floor p90 |"; line="|---|---|---|"
for d in $LATENCY_ROLES; do head="$head $d p50 | $d p90 | $d within 2x |"; line="$line---|---|---|"; done
echo "$head ccxd's own p50, p90 | ccxd's p50 by round (/ that round's floor p50) | ccxd/floor p50, p90 |$([ "$HAVE_TUNED" = yes ] && echo " ccxd/tuned p50, p90 |")"
echo "$line---|---|---|$([ "$HAVE_TUNED" = yes ] && echo "---|")"
# own KIND FIELD: the median over rounds of ccxd's own exec_pins figure
own() { for r in $(seq 1 "$ROUNDS"); do cut -d' ' -f"$2" "$WORK/out/pins.ccxd.$1.$r"; done | median; }
# within ROLE KIND: the share of its execs within twice its round's floor p50
within() {
	for r in $(seq 1 "$ROUNDS"); do
		f=$(percentile 0.5 < "$WORK/out/floor.$2.$r")
		sed 's/^\(timeout\|untraced\)$/1000000/' "$WORK/out/$1.$2.$r" | awk -v f="$f" '{n++; if ($1 <= 2 * f) w++} END {print w + 0, n}'
	done | awk '{w += $1; n += $2} END {printf "%d %%", 100 * w / n}'
}
# byround KIND: ccxd's p50 of each round, and its ratio to that round's floor p50
byround() {
	for r in $(seq 1 "$ROUNDS"); do
		echo "$(percentile 0.5 < "$WORK/out/ccxd.$1.$r") $(percentile 0.5 < "$WORK/out/floor.$1.$r")"
	done | awk '{printf "%s%s (%s)", (NR > 1 ? " " : ""), $1, ($2 > 0 ? sprintf("%.2f", $1 / $2) : "-")}'
}
for k in $KINDS; do
	f50=$(stat floor $k 0.5); f90=$(stat floor $k 0.9)
	row="| $k | $f50 | $f90 |"
	for d in $LATENCY_ROLES; do row="$row $(stat $d $k 0.5) | $(stat $d $k 0.9) | $(within $d $k) |"; done
	c50=$(stat ccxd $k 0.5); c90=$(stat ccxd $k 0.9)
	row="$row $(own $k 1), $(own $k 2) | $(byround $k) | $(ratio $c50 $f50), $(ratio $c90 $f90) |"
	[ "$HAVE_TUNED" = yes ] && row="$row $(ratio $c50 "$(stat tuned $k 0.5)"), $(ratio $c90 "$(stat tuned $k 0.9)") |"
	echo "$row"
done
echo
echo "Execs not pinned within 40 ms (timeout), and pinned but not in the trace (untraced), all rounds:$(for d in $LATENCY_ROLES; do
	printf ' %s %s, %s;' $d "$(cat "$WORK"/out/$d.*.[0-9]* | grep -c timeout || true)" "$(cat "$WORK"/out/$d.*.[0-9]* | grep -c untraced || true)"; done)"
echo
echo "Daemon time per exec in us, medians over rounds:"
echo
echo "| daemon | CPU, latency execs | waiting for a CPU, latency execs | CPU, unmatched storm | CPU, matched storm |"
echo "|---|---|---|---|---|"
for d in $ROLES; do
	[ "$d" = floor ] && continue
	echo "| $d | $(cpu $d 1) | $(cpu $d 2) | $(cpu $d 3) | $(cpu $d 4) |"
done
[ "$HAVE_TUNED" = yes ] || echo "(tuned is not installed: apt-get install tuned)"
