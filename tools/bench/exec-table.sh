#!/bin/sh
# ccxd's CPU per exec of a program a rule pins, as its table of pinned
# processes grows: with none, and with HELD programs of that rule asleep
# and pinned all along. For this build and, given BEFORE (another ccxd
# binary: the build before a change), that one, in alternating rounds.
# Prints a Markdown report.
#
#   tools/bench/exec-table.sh [ROUNDS] [EXECS] [HELD] [BEFORE]
#       (root; default 3 100 400 "")
#
# Paced: EXECS execs of a copy of ccxt-exec under the rule's name, one at
# a time (ccxt-exec latency: computing, killed 40 ms later), so that ccxd
# wakes for each. Storm: 10 times as many, as fast as they come, exiting
# at once; where ccxd falls behind it reads several records a wake-up and
# shares each wake-up's cost out, so its wake-ups per exec are shown too.
# The CPU is ccxd's on-CPU time (/proc/PID/task/*/schedstat) over the
# execs, per exec, the interval's own work in those windows included; the
# wake-ups its voluntary context switches. Each figure is the median over
# the rounds.
set -eu
cd "$(dirname "$0")/../.."
ROUNDS=${1:-3}
N=${2:-100}
HELD=${3:-400}
BEFORE=${4:-}
. tools/bench/lib.sh
bench_init exec-table.sh

DAEMON_PID=
HELD_PIDS=
stop_held() {
	for h in $HELD_PIDS; do kill_pid "$h"; done
	HELD_PIDS=
}
cleanup() {
	stop_held
	stop_daemon
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
EXEC=tools/helpers/ccxt-exec
cp "$EXEC" "$WORK/ccxt-bench"
ROLES="ccxd"
[ -n "$BEFORE" ] && ROLES="$ROLES before"

rule_conf ccxt-bench

schedstat() { cat /proc/"$1"/task/*/schedstat | awk '{c += $1} END {printf "%d", c}'; }
wakeups() { awk '/^voluntary_ctxt_switches/ {print $2}' /proc/"$1"/status; }
median() { sort -n | awk '{a[++n] = $1} END {print n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2}'; }
# pinned: how many processes ccxd holds pinned
pinned() {
	./tools/ccxctl --socket "$WORK/ccxd.sock" --json status | jq '[.processes[] | select(.state == "pinned")] | length'
}

# measure ROLE ROUND HELD: ccxd's CPU per exec with HELD pinned programs asleep
measure() {
	nice -n -5 "$([ "$1" = before ] && echo "$BEFORE" || echo ./daemon/ccxd)" --config "$WORK/ccxd.conf" \
		>/dev/null 2>>"$WORK/ccxd.log" &
	DAEMON_PID=$!
	wait_ccxd "$WORK/ccxd.sock"
	for h in $(seq 1 "$3"); do
		"$WORK/ccxt-bench" hold &
		HELD_PIDS="$HELD_PIDS $!"
	done
	i=0
	until [ "$(pinned)" -ge "$3" ]; do
		i=$((i + 1)); [ $i -lt 100 ] || { echo "ccxd did not pin the $3 held programs" >&2; exit 1; }; sleep 0.1
	done
	set -- "$@" "$(schedstat "$DAEMON_PID")"
	$EXEC latency "$N" "$WORK/ccxt-bench" 1 spin > "$WORK/latency"
	set -- "$@" "$(schedstat "$DAEMON_PID")" "$(wakeups "$DAEMON_PID")"
	$EXEC storm $((N * 10)) "$WORK/ccxt-bench"
	set -- "$@" "$(schedstat "$DAEMON_PID")" "$(wakeups "$DAEMON_PID")"
	echo "$4 $5 $6 $7 $8" | awk -v n="$N" '{printf "%.1f %.1f %.2f\n", ($2 - $1) / n / 1000,
		($4 - $2) / n / 10000, ($5 - $3) / n / 10}' > "$WORK/out.$1.$3.$2"
	stop_held
	stop_daemon
}

for r in $(seq 1 "$ROUNDS"); do
	for held in 0 "$HELD"; do
		for role in $ROLES; do measure "$role" "$r" "$held"; done
		ROLES=$(echo "$ROLES" | awk '{for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? " " : "")}')
	done
done

echo "Machine: $(nproc) CPUs, $(uname -r), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "Command: tools/bench/exec-table.sh $ROUNDS $N $HELD ($(date -u +%Y-%m-%d)); ccxd $(./daemon/ccxd --version | cut -d' ' -f2)"
echo
# column ROLE HELD FIELD: that figure's median over the rounds; rounds: each
column() {
	for r in $(seq 1 "$ROUNDS"); do cut -d' ' -f"$3" "$WORK/out.$1.$2.$r"; done | median
}
rounds() { for r in $(seq 1 "$ROUNDS"); do cut -d' ' -f"$3" "$WORK/out.$1.$2.$r"; done | tr '\n' ' ' | sed 's/ $//'; }
echo "| ccxd | table | paced: CPU us per exec | by round | storm: CPU us per exec | wake-ups per exec |"
echo "|---|---|---|---|---|---|"
for role in ccxd before; do
	case " $ROLES " in *" $role "*) ;; *) continue ;; esac
	for held in 0 "$HELD"; do
		echo "| $([ "$role" = before ] && echo "$BEFORE" || echo "this build") | $held held |" \
			"$(column $role $held 1) | $(rounds $role $held 1) | $(column $role $held 2) | $(column $role $held 3) |"
	done
done
