#!/bin/sh
# Request/response pairs, which take turns, on this machine split into two
# one-CPU "CCXs" (topology = synthetic:pack:1 l3:2 core:1 pu:1), in enforce
# mode from a fresh state_dir, against Linux alone and the best hand
# placement (both on CPU 0). In rounds, each placement in turn, for:
#   - tcp:  a loopback TCP pair, one 64-byte request in flight (ccxt-talk pingpong-tcp);
#   - pipe: perf bench sched pipe (two pipes, both ends held by both);
#   - pgbench: pgbench -c1 -S and its PostgreSQL backend, over a Unix
#     socket (where PostgreSQL's server and pgbench are installed).
# The rate is the client's read calls a second (/proc/PID/io syscr: one
# per round trip), and pgbench's own transactions a second, from FROM to
# TO seconds after the pair starts (default 15 to 25: what a user sees once
# ccxd had 15 s). Prints a Markdown table and the medians, each as a share
# of the hand placement's. CONF adds lines to ccxd's [daemon] section
# (CONF='traffic = no' measures what its traffic counting costs).
#
#   [FROM=15 TO=25] [KINDS="tcp pipe pgbench"] [CONF=...] tools/bench/turns.sh [ROUNDS] [CCXD...]
#   (root; default 3 rounds and this tree's daemon/ccxd: name another ccxd
#   binary, such as an older build's, to run it in turn with this one)
set -eu
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "turns.sh needs root" >&2; exit 1; }
command -v perf >/dev/null || { echo "turns.sh needs perf" >&2; exit 1; }
make -s all >/dev/null
for v in $(env | sed -n 's/^\(CCXD_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
PG=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
KINDS=${KINDS:-tcp pipe pgbench}
if [ -z "$PG" ] || ! command -v pgbench >/dev/null; then
	case " $KINDS " in *" pgbench "*) echo "turns.sh: no PostgreSQL or pgbench here: pgbench left out" >&2 ;; esac
	KINDS=$(echo "$KINDS" | sed 's/pgbench//')
fi
FROM=${FROM:-15}
TO=${TO:-25}
ROUNDS=${1:-3}
shift $(($# < 1 ? $# : 1))
BINARIES=${*:-./daemon/ccxd}
TALK=./tools/helpers/ccxt-talk
WORK=$(mktemp -d /tmp/ccxd-bench.XXXXXX)
chmod 755 "$WORK"
CCXD_PID=
cleanup() {
	pkill -f 'ccxt-talk pingpong' 2>/dev/null || true
	pkill -f 'perf bench sched pipe' 2>/dev/null || true
	pkill -x pgbench 2>/dev/null || true
	[ -z "$CCXD_PID" ] || kill "$CCXD_PID" 2>/dev/null || true
	wait 2>/dev/null || true
	[ ! -d "$WORK/pg" ] || su postgres -s /bin/sh -c "$PG/pg_ctl -D $WORK/pg -m immediate stop" >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

case " $KINDS " in
*" pgbench "*)
	mkdir "$WORK/pg" "$WORK/sock"
	chown postgres "$WORK/pg" "$WORK/sock"
	su postgres -s /bin/sh -c "$PG/initdb -D $WORK/pg -A trust" >/dev/null
	su postgres -s /bin/sh -c "$PG/pg_ctl -D $WORK/pg -l $WORK/pg/server.log -w -o \"-k $WORK/sock -c listen_addresses=''\" start" >/dev/null
	pgbench -i -s 1 -q -h "$WORK/sock" -U postgres postgres >/dev/null 2>&1
	;;
esac

start_ccxd() {
	rm -rf "$WORK/state" "$WORK/run"
	cat > "$WORK/ccxd.conf" <<CONF
[daemon]
socket = $WORK/ccxd.sock
mode = enforce
topology = synthetic:pack:1 l3:2 core:1 pu:1
runtime_dir = $WORK/run
state_dir = $WORK/state
${CONF:-}
CONF
	"$1" --config "$WORK/ccxd.conf" >"$WORK/ccxd.log" 2>&1 &
	CCXD_PID=$!
	for i in $(seq 50); do ./tools/ccxctl --socket "$WORK/ccxd.sock" version >/dev/null 2>&1 && return 0; sleep 0.1; done
	echo "$1 did not answer" >&2
	exit 1
}
stop_ccxd() {
	kill "$CCXD_PID"
	wait "$CCXD_PID" 2>/dev/null || true
	CCXD_PID=
}
syscr() { sed -n 's/^syscr: //p' "/proc/$1/io"; }

# pair KIND [CPU]: starts it (on CPU alone, when given); sets CLIENT and PAIR
pair() {
	pin=
	[ -z "${2:-}" ] || pin="taskset -c $2"
	case $1 in
	tcp) $pin "$TALK" pingpong-tcp 0 $((TO + 2)) >/dev/null 2>&1 & ;;
	pipe) $pin perf bench sched pipe -l 1000000000 >/dev/null 2>&1 & ;;
	pgbench) $pin pgbench -c 1 -S -T $((TO + 2)) -P 1 -h "$WORK/sock" -U postgres postgres \
			>/dev/null 2>"$WORK/progress" & ;;
	esac
	PAIR=$!
	sleep 0.5
	case $1 in
	tcp) CLIENT=$PAIR ;;
	# perf's two processes: the parent and the child it forks
	pipe) CLIENT=$(pgrep -f 'perf bench sched pipe' | sort -n | tail -n 1) ;;
	pgbench)
		CLIENT=$PAIR
		# the backend the postmaster forked for it, pinned as pgbench is
		backend=$(pgrep -f 'postgres: postgres postgres \[local\]' || true)
		[ -z "${2:-}" ] || [ -z "$backend" ] || taskset -pc "$2" "$backend" >/dev/null
		;;
	esac
}
# rate KIND: round trips (transactions) a second from FROM to TO; sleeps till TO
rate() {
	sleep $((FROM - 1))
	if [ "$1" = pgbench ]; then
		sleep $((TO - FROM + 1))
		sed -n 's/^progress: \([0-9.]*\) s, \([0-9.]*\) tps.*/\1 \2/p' "$WORK/progress" |
			awk -v f="$FROM" -v t="$TO" '$1 > f && $1 <= t { s += $2; n++ } END { printf "%d", n ? s / n : 0 }'
		return
	fi
	a=$(syscr "$CLIENT")
	sleep $((TO - FROM))
	b=$(syscr "$CLIENT")
	echo $(( (b - a) / (TO - FROM) ))
}
# measure KIND PLACEMENT: round trips a second from FROM to TO
measure() {
	case $2 in
	alone) pair "$1" ;;
	hand) pair "$1" 0 ;;
	*) start_ccxd "$2"; pair "$1" ;;
	esac
	RATE=$(rate "$1")
	seating=-
	[ -z "$CCXD_PID" ] || seating=$(./tools/ccxctl --socket "$WORK/ccxd.sock" --json status |
		jq -r '[.groups[] | "\(.state) \(.seating // "-")\(if .thinned then " thinned" else "" end)"] | join(", ") | if . == "" then "no group" else . end')
	pkill -f 'ccxt-talk pingpong' 2>/dev/null || true
	pkill -f 'perf bench sched pipe' 2>/dev/null || true
	pkill -x pgbench 2>/dev/null || true
	wait "$PAIR" 2>/dev/null || true
	[ -z "$CCXD_PID" ] || stop_ccxd
	SEATING=$seating
}

PLACEMENTS="alone hand $BINARIES"
echo "| round | pair | placement | round trips/s, $FROM-$TO s | ccxd's group then |"
echo "|---|---|---|---|---|"
: > "$WORK/results"
for round in $(seq "$ROUNDS"); do
	for kind in $KINDS; do
		for p in $PLACEMENTS; do
			measure "$kind" "$p"
			echo "| $round | $kind | $p | $RATE | $SEATING |"
			echo "$kind $p $RATE" >> "$WORK/results"
		done
	done
done
# median KIND PLACEMENT
median() {
	awk -v k="$1" -v p="$2" '$1 == k && $2 == p { print $3 }' "$WORK/results" | sort -n |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
for kind in $KINDS; do
	hand=$(median "$kind" hand)
	for p in $PLACEMENTS; do
		m=$(median "$kind" "$p")
		echo "median of $ROUNDS rounds, $kind, $p: $m round trips/s, $(echo "$m $hand" | awk '{printf "%.2f", $1 / $2}') of the hand placement"
	done
done
