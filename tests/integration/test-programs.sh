# Real programs from Debian's packages, under ccxd in dry-run on a
# two-socket EPYC 7742 (32 CCXs of 4 cores, 8 CPUs each): the groups ccxd
# forms must be those the programs make by talking, within 3 sampling
# intervals, and held while they run.
#
#   1. PostgreSQL on a Unix socket: pgbench -c1 and its backend; pgbench -c4
#      and its four backends
#   2. nginx serving a static file over loopback TCP to ab -k
#   3. perf bench sched pipe: a ping-pong pair with 4-byte messages
#   4. hackbench -p: two groups of 20 senders and 20 receivers each (each
#      group shown by ccxd with 90 % of its members at least: a process
#      that got no turn on a CPU for an interval did not talk in it)
#   5. cat /dev/urandom | head | zstd -1 | lz4: four stages, with the rate
#      of each link
#   6. a busy cat whose only pipe leads to a process that never reads it
#
# With the default configuration first: what the kernel counts, and the
# rest estimated from /proc. Then, where that estimated the pipes (a kernel
# that refuses the pipe programs, as some do even to root), 4 with pipes
# counted at their system calls' exit (traffic = syscalls); where it
# counted them, 5 and 6 again with nothing counted (traffic = no).
#
# What flows is measured apart from ccxd (the programs' own reports,
# /proc/PID/io) and printed next to what ccxd shows, and on a failure
# ccxd's group table too. A workload whose program is missing is skipped.
#
# Every load runs at nice 10, the servers too: the test must not take the
# CPUs from whatever else the machine runs, and what it checks does not
# depend on how fast the programs go.
. "$(dirname "$0")/lib.sh"

# Three intervals of 500 ms, and the time to read ccxd's answer.
INTERVAL=500ms
WITHIN=2
# How long a group must stay as it is, looked at every 0.2 s.
HOLD=5

write_conf <<CONF
[daemon]
socket = $SOCK
topology = xml:$TOPOLOGIES/amd-epyc-7742-2s.xml
mode = dry-run
interval = $INTERVAL
CONF
start_ccxd
# restart_counting TRAFFIC: ccxd again, with traffic = TRAFFIC
restart_counting() {
	check "ccxd stops, to start again with traffic = $1" stop_ccxd
	sed -i '/^traffic = /d' "$CONF"
	echo "traffic = $1" >> "$CONF"
	start_ccxd
}
PIPES_COUNTED=$(ctl --json status | jq -r '.sampling.counted | test("pipes")')

# ---- what ccxd shows ----------------------------------------------------

# group_pids PID: the sorted pids of the group holding PID, or nothing
group_pids() {
	ctl --json status | jq -c --argjson pid "$1" '.groups[]? | select(.pids | index($pid)) | .pids | sort'
}
# sorted PID...: the pids as a JSON array in ascending order
sorted() { printf '%s\n' "$@" | sort -n | jq -cs .; }
# group_is PID...: one group holds exactly these processes. What it saw
# last is in SAW, for the verdict: a group that changed for a moment may
# be back by the time ccxd is asked again.
group_is() {
	SAW="the group of $1: $(group_pids "$1")"
	[ "$SAW" = "the group of $1: $(sorted "$@")" ]
}
# in_no_group PID
in_no_group() {
	SAW="the group of $1: $(group_pids "$1")"
	[ "$SAW" = "the group of $1: " ]
}
# has_channel KIND A B: the group holding A has a KIND channel between A
# and B, either way
has_channel() {
	ctl --json status | jq -e --arg kind "$1" --argjson a "$2" --argjson b "$3" '
		.groups[] | select(.pids | index($a)) | .channels
		| any(.[]; .kind == $kind and ((.from == $a and .to == $b) or (.from == $b and .to == $a)))' >/dev/null
}

# shown PID...: what ccxd shows of the groups that hold any of these
# processes, and its group table, for a verdict to be read against.
shown() {
	seen=$(ctl --json status | jq -c --arg pids "$*" '
		($pids | split(" ") | map(select(length > 0) | tonumber)) as $p
		| [.groups[]? | select(any(.pids[]; . as $x | $p | index($x)))
		   | {pids, state, ccx, bytes_per_s: (.bytes_per_s | floor), wakeups_per_s: (.wakeups_per_s // 0 | floor)}
		   + (if .messages_per_s then {messages_per_s: (.messages_per_s | floor)} else {} end)
		   + {channels: [.channels[] | "\(.kind) \(.from)>\(.to) \(.bytes_per_s | floor)"
		                 + (if .messages_per_s then " \(.messages_per_s | floor)/s" else "" end)]}]')
	if [ "$seen" = "[]" ] && [ $# -le 8 ]; then
		echo "# ccxd shows no group holding any of" $*
	elif [ "$seen" = "[]" ]; then
		echo "# ccxd shows no group holding any of these $# processes"
	else
		echo "# ccxd shows: $seen"
	fi
	echo "# sampling: $(ctl --json status | jq -c '.sampling | del(.note)')"
	ctl status | sed -n '/^GROUP/,$p; /^No communicating groups/p' | cut -c 1-400 | sed 's/^/# /'
}
# expect NAME PIDS COMMAND...: check, and on a failure what ccxd showed of
# the processes in PIDS (a list in one word).
expect() {
	expect_name=$1
	expect_pids=$2
	shift 2
	SAW=
	if "$@"; then
		ok "$expect_name"
	else
		not_ok "$expect_name" "failed: $*"
		[ -z "$SAW" ] || echo "# when it failed, $SAW"
		shown $expect_pids
	fi
}
# skip NAME WHY
skip() { echo "ok - $1 # SKIP $2"; }

# ---- what flows, measured apart from ccxd -------------------------------

now_ns() { date +%s%N; }
# io_sum FIELD PID...: the sum of a field of /proc/PID/io over the processes
io_sum() {
	io_field=$1
	shift
	for p in "$@"; do sed -n "s/^$io_field: //p" "/proc/$p/io" 2>/dev/null; done | awk '{s += $1} END {printf "%.0f", s}'
}
# io_rate FIELD SECONDS PID...: that sum's growth per second over SECONDS
io_rate() {
	io_f=$1 io_w=$2
	shift 2
	io_a=$(io_sum "$io_f" "$@") io_t0=$(now_ns)
	sleep "$io_w"
	io_b=$(io_sum "$io_f" "$@") io_t1=$(now_ns)
	echo "$io_a $io_b $io_t0 $io_t1" | awk '{printf "%.0f", ($2 - $1) / (($4 - $3) / 1e9)}'
}
mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB/s", b / 1048576}'; }

# children_of PID: its children, one line each
children_of() { pgrep -P "$1" | sort -n; }
# stop_all PID...: SIGTERM, then SIGKILL to whatever is left after 5 s.
# Stopped, they leave CHILDREN: the kernel gives their pids to others.
stop_all() {
	sig TERM "$@" 2>/dev/null
	wait_for 5 none_alive "$@" || sig KILL "$@" 2>/dev/null
	kept=
	for c in $CHILDREN; do
		case " $(echo $*) " in *" $c "*) ;; *) kept="$kept $c" ;; esac
	done
	CHILDREN=$kept
}
# none_alive PID...: all gone, or zombies that wait for the test to reap them
none_alive() {
	for p in "$@"; do
		case $(sed 's/.*) \(.\).*/\1/' "/proc/$p/stat" 2>/dev/null) in ''|Z) ;; *) return 1 ;; esac
	done
	return 0
}

# ---- 1. PostgreSQL --------------------------------------------------------

# The newest PostgreSQL's programs (Debian keeps them out of PATH).
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
PGDIR=$WORK/pg
PM=
# $NOBODY CMD...: PostgreSQL refuses to run as root. setpriv executes the
# command in place, so $! is the program itself.
NOBODY="setpriv --reuid=$(id -u nobody) --regid=$(id -g nobody) --clear-groups env HOME=$PGDIR"
pg_stop() {
	[ -n "$PM" ] || return 0
	$NOBODY timeout 30 "$PGBIN/pg_ctl" -D "$PGDIR/data" -m immediate -w stop >/dev/null 2>&1
	# Whatever pg_ctl could not stop, while its pid is still the postmaster's.
	if a_pid "$PM" && [ "$(cat "/proc/$PM/comm" 2>/dev/null)" = postgres ]; then
		sig KILL $(pgrep -P "$PM") "$PM" 2>/dev/null
	fi
	PM=
}
ON_EXIT="$ON_EXIT; pg_stop"
# backends: the postmaster's children serving a client on the socket
backends() { pgrep -P "$PM" -f '\[local\]' | sort -n; }
backends_are() { [ "$(backends | wc -l)" -eq "$1" ]; }
# pgbench_run NAME OPTIONS...: pgbench, select-only, for long enough; its
# progress each second (tps) goes to $WORK/NAME.out. Sets PGB and BACKENDS.
pgbench_run() {
	out=$WORK/$1.out
	shift
	spawn nice -n 10 $NOBODY "$PGBIN/pgbench" -h "$PGDIR" -U postgres -n -S -P 1 -T 60 "$@" postgres >"$out" 2>&1
	PGB=$SPAWNED
}
# tps NAME: pgbench's median tps over the seconds it reported
tps() { sed -n 's/^progress: .* s, \([0-9.]*\) tps.*/\1/p' "$WORK/$1.out" | sort -n | awk '{v[NR] = $1} END {print (NR ? v[int((NR + 1) / 2)] : "none")}'; }

pg_start() {
	mkdir -p "$PGDIR"
	chown nobody "$PGDIR"
	$NOBODY timeout 120 "$PGBIN/initdb" -D "$PGDIR/data" -U postgres -A trust --no-sync >"$PGDIR/initdb.log" 2>&1 || return 1
	# Only on a Unix socket of its own: nothing on the machine's ports.
	nice -n 10 $NOBODY timeout 60 "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w -t 30 \
		-o "-c listen_addresses='' -c unix_socket_directories=$PGDIR -c fsync=off" start >/dev/null 2>&1 || return 1
	PM=$(head -n 1 "$PGDIR/data/postmaster.pid")
	a_pid "$PM" || return 1
	$NOBODY timeout 120 "$PGBIN/pgbench" -h "$PGDIR" -U postgres -i -q postgres >"$PGDIR/init.log" 2>&1
}

if [ -z "$PGBIN" ] || ! command -v setpriv >/dev/null; then
	skip "PostgreSQL: pgbench and its backends" "needs postgresql (tools/install-deps)"
elif ! pg_start; then
	not_ok "PostgreSQL starts on a Unix socket in the test's directory" "$(tail -n 5 "$PGDIR"/*.log 2>/dev/null)"
else
	# pgbench's every transaction is a query and its answer on the socket,
	# about 130 bytes in all, sent with send() and recv(), not write()
	# and read(): a connection carries a few MiB/s at most and thousands
	# of messages a second. The client and its backend are a pair; the
	# postmaster and the server's other processes, which take no part,
	# are in no group.
	pgbench_run pgbench1 -c 1 -j 1
	wait_for 10 backends_are 1
	B=$(backends)
	expect "pgbench -c1: pgbench and its backend are one group within 3 intervals" "$PGB $B $PM" \
		wait_for $WITHIN group_is "$PGB" $B
	expect "pgbench -c1: and stay one while it runs" "$PGB $B $PM" \
		always $HOLD group_is "$PGB" $B
	expect "pgbench -c1: over a Unix socket" "$PGB $B" wait_for 2 has_channel unix "$PGB" "$B"
	echo "# pgbench -c1: $(tps pgbench1) transactions/s (pgbench's median), each a query and its answer"
	stop_all "$PGB"
	wait_for 10 backends_are 0

	# Four clients on two threads: one pgbench holds all four connections,
	# so the five are one connected whole. Its demand, at most the two
	# CPUs of this machine and a tenth of a CPU for each of five members,
	# fits a CCX of 8 CPUs: ccxd has no reason to cut it, and must show
	# one group of pgbench and its four backends.
	pgbench_run pgbench4 -c 4 -j 2
	wait_for 10 backends_are 4
	B=$(backends)
	expect "pgbench -c4 -j2: pgbench and its 4 backends are one group within 3 intervals" "$PGB $B $PM" \
		wait_for $WITHIN group_is "$PGB" $B
	expect "pgbench -c4 -j2: and stay one while it runs" "$PGB $B $PM" \
		always $HOLD group_is "$PGB" $B
	all_unix() { for b in $B; do has_channel unix "$PGB" "$b" || return 1; done; }
	expect "pgbench -c4 -j2: each backend on a Unix socket to pgbench" "$PGB $B" wait_for 2 all_unix
	echo "# pgbench -c4 -j2: $(tps pgbench4) transactions/s (pgbench's median), each a query and its answer"
	stop_all "$PGB"
	wait_for 10 backends_are 0
	pg_stop
fi

# ---- 2. nginx and ab ------------------------------------------------------

NGDIR=$WORK/nginx
NGINX_PID=
nginx_stop() {
	[ -n "$NGINX_PID" ] || return 0
	a_pid "$NGINX_PID" && stop_all $(pgrep -P "$NGINX_PID") "$NGINX_PID"
	NGINX_PID=
}
ON_EXIT="$ON_EXIT; nginx_stop"
# free_port: a loopback TCP port nothing listens on (/proc/net/tcp, in hex)
free_port() {
	for port in $(seq 18080 18180); do
		hex=$(printf '%04X' "$port")
		grep -q ":$hex [0-9A-F:]* 0A " /proc/net/tcp /proc/net/tcp6 2>/dev/null || { echo "$port"; return 0; }
	done
	return 1
}

if ! command -v nginx >/dev/null || ! command -v ab >/dev/null; then
	skip "nginx and ab: the workers serving ab" "needs nginx-light and apache2-utils (tools/install-deps)"
elif ! PORT=$(free_port); then
	skip "nginx and ab: the workers serving ab" "no free port in 18080-18180"
else
	mkdir -p "$NGDIR/html" "$NGDIR/tmp"
	head -c 8192 /dev/urandom | base64 > "$NGDIR/html/index.html"
	# nginx's defaults otherwise, keepalive included: 1000 requests a
	# connection, so at this rate ab's connections are new every fraction
	# of a second, as they are in front of a busy server.
	cat > "$NGDIR/nginx.conf" <<NGINX
worker_processes 2;
pid $NGDIR/nginx.pid;
error_log $NGDIR/error.log;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $NGDIR/tmp/body;
	proxy_temp_path $NGDIR/tmp/proxy;
	fastcgi_temp_path $NGDIR/tmp/fastcgi;
	uwsgi_temp_path $NGDIR/tmp/uwsgi;
	scgi_temp_path $NGDIR/tmp/scgi;
	server {
		listen 127.0.0.1:$PORT;
		root $NGDIR/html;
	}
}
NGINX
	# Daemonized, so that nginx is not the test's child: its master stops
	# its workers, which must not outlive a master killed first.
	nice -n 10 timeout 30 nginx -p "$NGDIR" -c "$NGDIR/nginx.conf" -e "$NGDIR/error.log" >"$NGDIR/start.log" 2>&1
	wait_for 5 test -s "$NGDIR/nginx.pid"
	NGINX_PID=$(cat "$NGDIR/nginx.pid" 2>/dev/null)
	workers_up() { [ "$(children_of "$NGINX_PID" | wc -l)" -eq 2 ]; }
	if ! a_pid "$NGINX_PID" || ! wait_for 5 workers_up; then
		not_ok "nginx starts on 127.0.0.1:$PORT" "$(cat "$NGDIR/start.log" "$NGDIR/error.log" 2>/dev/null | tail -n 5)"
	else
		W=$(children_of "$NGINX_PID")
		spawn nice -n 10 ab -k -c 4 -t 60 -n 100000000 "http://127.0.0.1:$PORT/index.html" >"$WORK/ab.out" 2>&1
		AB=$SPAWNED
		# ab's group: ab and the workers serving it (one or both: the
		# kernel hands its connections to whichever accepts first), and
		# no one else, the master included, which only starts workers.
		ab_with_workers() {
			g=$(group_pids "$AB")
			SAW="the group of ab ($AB): $g"
			[ -n "$g" ] && echo "$g" | jq -e --argjson ab "$AB" --argjson w "$(sorted $W)" '
				(map(select(. != $ab)) | length > 0 and all(.[]; . as $p | $w | index($p)))' >/dev/null
		}
		expect "nginx: ab and the worker(s) serving it are one group within 3 intervals" "$AB $W $NGINX_PID" \
			wait_for $WITHIN ab_with_workers
		expect "nginx: and stay one while ab runs" "$AB $W $NGINX_PID" always $HOLD ab_with_workers
		tcp_to_worker() { for w in $W; do has_channel tcp "$AB" "$w" && return 0; done; return 1; }
		expect "nginx: over loopback TCP" "$AB $W" wait_for 2 tcp_to_worker
		# The workers share the master's socketpairs, which carry no data
		# while they serve: they are no group of their own.
		workers_only_with_ab() {
			for w in $W; do
				g=$(group_pids "$w")
				SAW="the group of worker $w: $g"
				[ -z "$g" ] || echo "$g" | jq -e --argjson ab "$AB" 'index($ab)' >/dev/null || return 1
			done
		}
		expect "nginx: the workers are in no group without their client" "$AB $W $NGINX_PID" \
			always 2 workers_only_with_ab
		# ab prints what it measured when interrupted, not when terminated.
		sig INT "$AB"
		wait_for 5 none_alive "$AB"
		stop_all "$AB"
		wait "$AB" 2>/dev/null
		echo "# nginx: ab: $(sed -n 's/^Requests per second: *\([0-9.]*\).*/\1 requests\/s/p' "$WORK/ab.out")," \
			"$(sed -n 's/^Transfer rate: *\([0-9.]*\) .*/\1 KiB\/s received/p' "$WORK/ab.out")"
	fi
	nginx_stop
fi

# ---- 3. perf bench sched pipe ---------------------------------------------

# A perf that runs here: Debian's /usr/bin/perf, or where that is a wrapper
# that wants the running kernel's own version, any perf_VERSION beside it:
# sched pipe needs nothing of the kernel that one version has and another
# lacks.
perf_bin() {
	for p in perf /usr/bin/perf_*; do
		command -v "$p" >/dev/null || continue
		timeout 10 "$p" bench sched pipe -l 10 >/dev/null 2>&1 && { echo "$p"; return 0; }
	done
	return 1
}
if ! PERF=$(perf_bin); then
	skip "perf bench sched pipe: the ping-pong pair" "needs linux-perf (tools/install-deps)"
else
	# Two processes pass a 4-byte message back and forth over two pipes:
	# a few hundred KiB/s, tens of thousands of wake-ups a second. Which
	# CCX they share decides how long each round trip takes; the bytes are
	# too few to tell that, the messages are not.
	spawn nice -n 10 "$PERF" bench sched pipe -l 100000000 >"$WORK/perf.out" 2>&1
	PP=$SPAWNED
	wait_for 5 sh -c "[ -n \"\$(pgrep -P $PP)\" ]"
	PC=$(children_of "$PP")
	CHILDREN="$CHILDREN $PC"
	expect "perf bench sched pipe: the pair is one group within 3 intervals" "$PP $PC" \
		wait_for $WITHIN group_is "$PP" $PC
	expect "perf bench sched pipe: and stays one while it runs" "$PP $PC" always $HOLD group_is "$PP" $PC
	expect "perf bench sched pipe: over a pipe" "$PP $PC" wait_for 2 has_channel pipe "$PP" "$PC"
	# Each round trip is one read of each side (syscr).
	echo "# perf bench sched pipe: $(io_rate syscr 2 "$PC") round trips/s, $(io_rate rchar 2 "$PP" "$PC") bytes/s read by the pair"
	stop_all "$PP" $PC
fi

# ---- 4. hackbench -----------------------------------------------------------

# hackbench_groups MAIN: one line for each of its groups, the pids of its
# senders and receivers. The processes of a group share the pipes they
# talk through (each receiver's, which every sender of the group writes);
# those the main process holds too (its start-up handshake) join nothing.
hackbench_groups() {
	main_pipes=$(ls -l "/proc/$1/fd" 2>/dev/null | sed -n 's/.*-> pipe:\[\([0-9]*\)\]$/\1/p' | tr '\n' ' ')
	for p in $(children_of "$1"); do
		ls -l "/proc/$p/fd" 2>/dev/null | sed -n "s/.*-> pipe:\[\([0-9]*\)\]\$/$p \1/p"
	done | awk -v main="$main_pipes" '
		BEGIN { n = split(main, m, " "); for (i = 1; i <= n; i++) skip[m[i]] = 1 }
		function find(x) { while (parent[x] != x) x = parent[x]; return x }
		{ if (!($1 in parent)) parent[$1] = $1
		  if ($2 in skip) next
		  if ($2 in first) parent[find($1)] = find(first[$2]); else first[$2] = $1 }
		END { for (p in parent) members[find(p)] = members[find(p)] " " p
		      for (r in members) print members[r] }' |
		while read -r line; do printf '%s\n' $line | sort -n | tr '\n' ' '; echo; done
}
# hackbench_test HOW: the two groups, as counted or estimated (HOW, words
# for the checks' names).
hackbench_test() {
	# 2 groups of 20 senders and 20 receivers: each sender writes 100-byte
	# messages to every receiver of its group, never to the other group.
	# Each group is one connected whole that talks all the time, though
	# each of its 400 sender-receiver pairs carries little; its demand,
	# at most a tenth of a CPU for each of 40 members and the machine's
	# two CPUs, fits a CCX of 8 CPUs. So ccxd must show two groups of 40,
	# one for each, and the main process, which only waits, in none.
	spawn nice -n 10 hackbench -p -g 2 -f 20 -l 100000000 >"$WORK/hackbench.out" 2>&1
	HB=$SPAWNED
	hb_up() { [ "$(children_of "$HB" | wc -l)" -eq 80 ]; }
	wait_for 10 hb_up
	HBC=$(children_of "$HB")
	CHILDREN="$CHILDREN $HBC"
	hackbench_groups "$HB" > "$WORK/hackbench.groups"
	G1=$(sed -n 1p "$WORK/hackbench.groups") G2=$(sed -n 2p "$WORK/hackbench.groups")
	check "hackbench ($1): its children are two groups of 40 by the pipes they hold" \
		sh -c "[ $(wc -l < "$WORK/hackbench.groups") -eq 2 ] && [ $(echo $G1 | wc -w) -eq 40 ] && [ $(echo $G2 | wc -w) -eq 40 ]"
	# A group of ccxd's that holds 36 of the 40 or more (90 %), and none of
	# the other: 80 busy processes on this machine's CPUs leave one now and
	# then without a turn on a CPU for a whole interval, and a process
	# that did not run did not talk.
	mostly() {
		SAW="the groups of ccxd: $(ctl --json status | jq -c '[.groups[]?.pids]')"
		ctl --json status | jq -e --argjson g "$(sorted "$@")" '
			any(.groups[]?; (.pids | all(.[]; . as $p | $g | index($p))) and (.pids | length) >= 36)' >/dev/null
	}
	both_groups() { mostly $G1 && mostly $G2 && in_no_group "$HB"; }
	expect "hackbench ($1): each of its groups is one group (90 % of it at least) within 3 intervals" "$HB $HBC" \
		wait_for $WITHIN both_groups
	expect "hackbench ($1): and stays one while it runs" "$HB $HBC" always $HOLD both_groups
	# A sender and a receiver of a group: the receiver's pipe.
	pipes_within() {
		ctl --json status | jq -e --argjson g "$(sorted "$@")" '
			.groups[] | select(.pids | index($g[0])) | .channels
			| any(.[]; .kind == "pipe" and (.from as $f | $g | index($f)) and (.to as $t | $g | index($t)))' >/dev/null
	}
	both_piped() { pipes_within $G1 && pipes_within $G2; }
	expect "hackbench ($1): over pipes, each between two processes of one of its groups" "$G1 $G2" wait_for 2 both_piped
	# Each write is one message (syscw), and its bytes.
	echo "# hackbench ($1): $(io_rate syscw 2 $HBC) messages/s, $(mib "$(io_rate wchar 2 $HBC)") written by its 80 processes"
	stop_all "$HB" $HBC
	wait "$HB" 2>/dev/null
}
if ! command -v hackbench >/dev/null; then
	skip "hackbench -p: its groups" "needs rt-tests (tools/install-deps)"
elif [ "$PIPES_COUNTED" = true ]; then
	hackbench_test "default"
else
	# Estimated from /proc, a sender's writes are shared out over the 20
	# receivers' pipes it holds and a receiver's reads come from 20
	# senders: each of the 400 pairs shows a four-hundredth of the
	# group's traffic, under the rates that make a pair talk. Counted at
	# each call, each pair has its own messages.
	skip "hackbench ($(ctl --json status | jq -r .sampling.counted) counted by default): its groups" \
		"$(ctl --json status | jq -r '.sampling.counted_note'); with pipes estimated each of its 400 pairs carries too little to count: see traffic = syscalls below"
fi

# ---- 5. A four-stage pipeline ---------------------------------------------

# pipeline HOW: the pipeline, its figures counted or estimated (HOW, words
# for the checks' names).
pipeline() {
	if ! command -v zstd >/dev/null || ! command -v lz4 >/dev/null; then
		skip "cat | head | zstd | lz4 ($1): one group" "needs zstd and lz4 (tools/install-deps)"
	else
		# Random bytes, which neither compressor can shrink: every link
		# carries the same stream, at the pace of the slowest stage.
		spawn nice -n 10 sh -c 'cat /dev/urandom | head -c 1T | zstd -q -1 | lz4 -q > /dev/null'
		PSH=$SPAWNED
		# Each stage by its name: a child forked but not yet exec'd is
		# still called sh.
		stages_up() { for _stage in cat head zstd lz4; do pgrep -P "$PSH" -x "$_stage" >/dev/null || return 1; done; }
		wait_for 5 stages_up
		CAT=$(pgrep -P "$PSH" -x cat) HEAD=$(pgrep -P "$PSH" -x head)
		ZSTD=$(pgrep -P "$PSH" -x zstd) LZ4=$(pgrep -P "$PSH" -x lz4)
		STAGES="$CAT $HEAD $ZSTD $LZ4"
		CHILDREN="$CHILDREN $STAGES"
		expect "cat | head | zstd | lz4 ($1): the four stages are one group within 3 intervals" "$STAGES" \
			wait_for $WITHIN group_is $STAGES
		expect "cat | head | zstd | lz4 ($1): and stay one while it runs" "$STAGES" always $HOLD group_is $STAGES
		links() { has_channel pipe "$CAT" "$HEAD" && has_channel pipe "$HEAD" "$ZSTD" && has_channel pipe "$ZSTD" "$LZ4"; }
		expect "cat | head | zstd | lz4 ($1): each link is a pipe" "$STAGES" wait_for 2 links

		# link_rates: over 4 s, for each link, ccxd's rate (the mean of what it
		# showed every 0.5 s, nothing where it showed no such channel) and
		# what its writer wrote into the pipe (wchar), in bytes/s, a line each
		# in $WORK/links.
		link_rates() {
			w0="$(io_sum wchar "$CAT") $(io_sum wchar "$HEAD") $(io_sum wchar "$ZSTD")"
			t0=$(now_ns)
			: > "$WORK/links.json"
			for i in 1 2 3 4 5 6 7 8; do
				sleep 0.5
				ctl --json status | jq -c --argjson p "$CAT" '[.groups[]? | select(.pids | index($p)) | .channels[]]' >> "$WORK/links.json"
			done
			w1="$(io_sum wchar "$CAT") $(io_sum wchar "$HEAD") $(io_sum wchar "$ZSTD")"
			t1=$(now_ns)
			: > "$WORK/links"
			set -- "$CAT" "$HEAD" "$HEAD" "$ZSTD" "$ZSTD" "$LZ4"
			n=1
			for name in "cat>head" "head>zstd" "zstd>lz4"; do
				flows=$(echo "$w0 $w1 $t0 $t1" | awk -v n="$n" '{printf "%.0f", ($(n + 3) - $n) / (($8 - $7) / 1e9)}')
				seen=$(jq -s --argjson a "$1" --argjson b "$2" '
					[.[] | map(select(.kind == "pipe" and .from == $a and .to == $b)) | .[0].bytes_per_s // 0]
					| if length > 0 then add / length | floor else 0 end' "$WORK/links.json")
				echo "$name $seen $flows" >> "$WORK/links"
				echo "# $name: ccxd $(mib "$seen"), flowing $(mib "$flows")"
				shift 2
				n=$((n + 1))
			done
		}
		link_rates
		rates_flow() { awk '{if (!($3 > 0 && $2 >= $3 * 0.8 && $2 <= $3 * 1.2)) bad = 1} END {exit bad}' "$WORK/links"; }
		rates_alike() { awk 'NR == 1 || $2 < min {min = $2} $2 > max {max = $2} END {exit !(max > 0 && min >= max * 0.8)}' "$WORK/links"; }
		expect "cat | head | zstd | lz4 ($1): each link's rate within 20 % of what flows through it" "$STAGES" rates_flow
		# The stream does not shrink on its way: neither must its rate.
		expect "cat | head | zstd | lz4 ($1): the links' rates within 20 % of each other" "$STAGES" rates_alike
		stop_all $STAGES "$PSH"
		wait "$PSH" 2>/dev/null
	fi
}

# ---- 6. A pipe that nobody reads ------------------------------------------

# cat copies /dev/zero to /dev/null as fast as it can; its only pipe is its
# stderr, to a process that never reads it, and through which nothing
# passes. cat's bytes are not that pipe's: cat is in no group. Once with
# a reader asleep, once with one that is busy (and so as active as cat,
# at the lowest priority) but never reads.
# idle_pipe HOW: both, the figures counted or estimated.
idle_pipe() {
	for reader in "sleep 1000" "a busy loop"; do
		case $reader in
		sleep*) spawn sh -c 'nice -n 10 cat /dev/zero 2>&1 >/dev/null | sleep 1000' ;;
		*) spawn sh -c "nice -n 10 cat /dev/zero 2>&1 >/dev/null | nice -n 19 sh -c 'while :; do :; done'" ;;
		esac
		ISH=$SPAWNED
		# cat by its name: its child runs nice first, and sh before that.
		wait_for 5 sh -c "pgrep -P $ISH -x cat >/dev/null && [ \$(pgrep -P $ISH | wc -l) -eq 2 ]"
		IC=$(pgrep -P "$ISH" -x cat)
		IR=$(pgrep -P "$ISH" | grep -vx "$IC")
		CHILDREN="$CHILDREN $IC $IR"
		expect "cat /dev/zero 2>&1 >/dev/null | $reader, which never reads ($1): cat is in no group (3 intervals and $HOLD s)" "$IC $IR" \
			always $((WITHIN + HOLD)) in_no_group "$IC"
		echo "# cat: $(mib "$(io_rate wchar 1 "$IC")") to /dev/null, nothing into the pipe"
		stop_all "$IC" "$IR" "$ISH"
		wait "$ISH" 2>/dev/null
	done
}

pipeline "default"
idle_pipe "default"

if [ "$PIPES_COUNTED" = true ]; then
	# The same two where ccxd counts nothing in the kernel: its estimates
	# from /proc must tell the same.
	restart_counting no
	pipeline "estimated"
	idle_pipe "estimated"
elif command -v hackbench >/dev/null; then
	restart_counting syscalls
	hackbench_test "counted at the system calls"
fi

check "ccxd stops" stop_ccxd
