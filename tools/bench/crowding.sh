#!/bin/sh
# A request/response pair, pgbench -c1 -S and its PostgreSQL backend over a
# Unix socket, on this machine split into two one-CPU "CCXs" (topology =
# synthetic:pack:1 l3:2 core:1 pu:1), ccxd in enforce mode from a fresh
# state_dir and its defaults otherwise. The rate is pgbench's own, each
# second (-P 1). Two kinds of run:
#
#   crowd:    ccxd alone. At 40 s, a CPU-bound program is pinned by hand
#             (taskset) to the CPU the pair is on, for the rest of the run
#             (70 s). Prints each round's time series (rate, the pair's
#             CPUs, the group's state) and: the rate before (median of 30
#             to 39 s), how many seconds after the crowding began the pair
#             was moved, and the rate came back to 90 % of it (the median
#             of that second and the 4 after it), and the median of the
#             last 10 s as a share of the rate before.
#   schedule: load that comes and goes, the same schedule under ccxd and
#             under Linux alone, in turns: from 20 to 40 s a CPU-bound
#             program pinned to CPU 0, from 50 to 70 s one pinned to CPU 1,
#             from 80 to 100 s one on each. Prints the transactions from
#             20 to 110 s under each, their medians, and ccxd's share of
#             Linux alone's.
#
#   tools/bench/crowding.sh [crowd|schedule] [ROUNDS]
#   (root; default crowd 3; PostgreSQL's server and pgbench installed)
set -eu
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "crowding.sh needs root" >&2; exit 1; }
PG=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$PG" ] && command -v pgbench >/dev/null || { echo "crowding.sh needs PostgreSQL and pgbench" >&2; exit 1; }
make -s all >/dev/null
for v in $(env | sed -n 's/^\(CCXD_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
KIND=${1:-crowd}
ROUNDS=${2:-3}
WORK=$(mktemp -d /tmp/ccxd-bench.XXXXXX)
chmod 755 "$WORK"
CCXD_PID=
HOGS=
cp tools/helpers/ccxt-exec "$WORK/ccxt-hog"   # under another name: a program that computes
hogs_off() {
	for h in $HOGS; do kill "$h" 2>/dev/null || true; done
	HOGS=
}
cleanup() {
	hogs_off
	pkill -x pgbench 2>/dev/null || true
	[ -z "$CCXD_PID" ] || kill "$CCXD_PID" 2>/dev/null || true
	su postgres -s /bin/sh -c "$PG/pg_ctl -D $WORK/pg -m immediate stop" >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

mkdir "$WORK/pg" "$WORK/sock"
chown postgres "$WORK/pg" "$WORK/sock"
su postgres -s /bin/sh -c "$PG/initdb -D $WORK/pg -A trust" >/dev/null
su postgres -s /bin/sh -c "$PG/pg_ctl -D $WORK/pg -l $WORK/pg/server.log -w -o \"-k $WORK/sock -c listen_addresses=''\" start" >/dev/null
pgbench -i -s 1 -q -h "$WORK/sock" -U postgres postgres >/dev/null 2>&1

start_ccxd() {
	rm -rf "$WORK/state" "$WORK/run"
	cat > "$WORK/ccxd.conf" <<CONF
[daemon]
socket = $WORK/ccxd.sock
topology = synthetic:pack:1 l3:2 core:1 pu:1
runtime_dir = $WORK/run
state_dir = $WORK/state
CONF
	./daemon/ccxd --config "$WORK/ccxd.conf" >"$WORK/ccxd.log" 2>&1 &
	CCXD_PID=$!
	for i in $(seq 50); do ./tools/ccxctl --socket "$WORK/ccxd.sock" version >/dev/null 2>&1 && return 0; sleep 0.1; done
	echo "ccxd did not answer" >&2
	exit 1
}
stop_ccxd() {
	kill "$CCXD_PID"
	wait "$CCXD_PID" 2>/dev/null || true
	CCXD_PID=
}
cpus_of() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null; }
hog_on() {
	taskset -c "$1" "$WORK/ccxt-hog" spin &
	HOGS="$HOGS $!"
}
median() { sort -n | awk '{a[++n] = $1} END {printf "%.10g\n", n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2}'; }
# tps FILE FROM TO: pgbench's rate each second from FROM to TO s, one a line
tps() { sed -n 's/^progress: \([0-9.]*\) s, \([0-9.]*\) tps.*/\1 \2/p' "$1" | awk -v f="$2" -v t="$3" '$1 > f && $1 <= t {print $2}'; }

# bench SECONDS OUT: pgbench in the background, its progress into OUT;
# sets CLIENT and BACKEND
bench() {
	pgbench -c 1 -S -T "$1" -P 1 -h "$WORK/sock" -U postgres postgres >/dev/null 2>"$2" &
	CLIENT=$!
	BACKEND=
	for i in $(seq 50); do
		BACKEND=$(pgrep -f 'postgres: postgres postgres \[local\]' || true)
		[ "$(echo "$BACKEND" | wc -w)" -eq 1 ] && break
		sleep 0.1
	done
}
group_state() {
	./tools/ccxctl --socket "$WORK/ccxd.sock" --json status 2>/dev/null |
		jq -r --argjson pid "$CLIENT" '[.groups[]? | select(.pids | index($pid)) | .state] | first // "none"'
}

crowd_round() {
	r=$1
	start_ccxd
	bench 70 "$WORK/progress.$r"
	t0=$(date +%s)
	: > "$WORK/series.$r"
	pinned=
	while kill -0 "$CLIENT" 2>/dev/null; do
		t=$(( $(date +%s) - t0 ))
		if [ "$t" -ge 40 ] && [ -z "$pinned" ]; then
			pinned=$(cpus_of "$CLIENT")
			case $pinned in 0 | 1) hog_on "$pinned" ;; *) pinned=none ;; esac
		fi
		echo "$t $(cpus_of "$CLIENT") $(cpus_of "$BACKEND") $(group_state)" >> "$WORK/series.$r"
		sleep 1
	done
	hogs_off
	stop_ccxd
	before=$(tps "$WORK/progress.$r" 30 39 | median)
	# the first second from 40 on from which 5 seconds' median is 90 % of before
	back=$(tps "$WORK/progress.$r" 40 70 | awk -v b="$before" '{v[NR] = $1} END {
		for (i = 1; i + 4 <= NR; i++) {
			n = 0; for (k = i; k <= i + 4; k++) w[++n] = v[k]
			for (x = 1; x <= 5; x++) for (y = x + 1; y <= 5; y++) if (w[y] < w[x]) { t = w[x]; w[x] = w[y]; w[y] = t }
			if (w[3] >= 0.9 * b) { print i; exit }
		}
		print "never" }')
	moved=$(awk -v c="$pinned" '$1 >= 40 && $2 != "" && $2 != c { print $1 - 40; exit }' "$WORK/series.$r")
	last=$(tps "$WORK/progress.$r" 60 70 | median)
	echo "$before ${moved:-never} $back $(echo "$last $before" | awk '{printf "%.2f", $1 / $2}') $pinned" > "$WORK/result.$r"
	echo "Round $r: the hog pinned to CPU $pinned at 40 s; second, tps, the client's CPUs, the backend's, the group's state:"
	echo '```'
	sed -n 's/^progress: \([0-9.]*\) s, \([0-9.]*\) tps.*/\1 \2/p' "$WORK/progress.$r" |
		awk 'NR == FNR { seen[$1] = $2 " " $3 " " $4; next }
		     int($1) >= 25 { printf "%d %s %s\n", $1, $2, seen[int($1)] }' "$WORK/series.$r" -
	echo '```'
}

schedule_round() {   # r how
	r=$1
	[ "$2" = ccxd ] && start_ccxd
	bench 115 "$WORK/progress.$2.$r"
	t0=$(date +%s)
	while kill -0 "$CLIENT" 2>/dev/null; do
		t=$(( $(date +%s) - t0 ))
		case $t in
		20) [ -n "$HOGS" ] || hog_on 0 ;;
		40 | 70 | 100) hogs_off ;;
		50) [ -n "$HOGS" ] || hog_on 1 ;;
		80) [ -n "$HOGS" ] || { hog_on 0; hog_on 1; } ;;
		esac
		sleep 0.5
	done
	hogs_off
	[ "$2" = ccxd ] && stop_ccxd
	tps "$WORK/progress.$2.$r" 20 110 | awk '{s += $1} END {printf "%d\n", s}' > "$WORK/total.$2.$r"
}

echo "Machine: $(nproc) CPUs, $(uname -r), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "Command: tools/bench/crowding.sh $KIND $ROUNDS ($(date -u +%Y-%m-%d)); $(pgbench --version)"
echo
case $KIND in
crowd)
	for r in $(seq 1 "$ROUNDS"); do crowd_round "$r"; echo; done
	echo "| round | tps before (30-39 s) | seconds from the crowding to the move | to 90 % of before (5 s median) | last 10 s / before | hog on CPU |"
	echo "|---|---|---|---|---|---|"
	for r in $(seq 1 "$ROUNDS"); do
		set -- $(cat "$WORK/result.$r")
		echo "| $r | $1 | $2 | $3 | $4 | $5 |"
	done
	;;
schedule)
	for r in $(seq 1 "$ROUNDS"); do
		if [ $((r % 2)) -eq 1 ]; then order="ccxd alone"; else order="alone ccxd"; fi
		for how in $order; do schedule_round "$r" "$how"; done
	done
	echo "| round | transactions 20-110 s, ccxd | Linux alone | ccxd / alone |"
	echo "|---|---|---|---|"
	for r in $(seq 1 "$ROUNDS"); do
		c=$(cat "$WORK/total.ccxd.$r") a=$(cat "$WORK/total.alone.$r")
		echo "| $r | $c | $a | $(echo "$c $a" | awk '{printf "%.2f", $1 / $2}') |"
	done
	c=$(cat "$WORK"/total.ccxd.* | median) a=$(cat "$WORK"/total.alone.* | median)
	echo "| median | $c | $a | $(echo "$c $a" | awk '{printf "%.2f", $1 / $2}') |"
	;;
*)
	echo "crowding.sh: crowd or schedule, not '$KIND'" >&2
	exit 2
	;;
esac
