# What the exec benchmarks share; sourced from the repository's root.

# bench_init NAME: root, a fresh build, none of the caller's CCXD_*
# variables, and WORK, an empty directory of its own.
bench_init() {
	[ "$(id -u)" -eq 0 ] || { echo "$1 needs root" >&2; exit 1; }
	make -s all >/dev/null
	for v in $(env | sed -n 's/^\(CCXD_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
	WORK=$(mktemp -d /tmp/ccxd-bench.XXXXXX)
}

# kill_pid PID: stops a process of ours and reaps it; never 0, 1 or empty.
kill_pid() {
	case "$1" in '' | *[!0-9]* | 0 | 1) ;; *) kill "$1" 2>/dev/null && wait "$1" 2>/dev/null || true ;; esac
}

# wait_ccxd SOCKET: until the ccxd there answers (10 s at most), and past
# the proc connector's acknowledgement.
wait_ccxd() {
	i=0
	until ./tools/ccxctl --socket "$1" version >/dev/null 2>&1; do
		i=$((i + 1)); [ $i -lt 200 ] || { echo "ccxd did not start" >&2; exit 1; }; sleep 0.05
	done
	sleep 1.2
}

# stop_daemon: the ccxd (or other daemon) in DAEMON_PID, stopped.
stop_daemon() {
	kill_pid "$DAEMON_PID"
	DAEMON_PID=
}

# rule_conf PROGRAM: $WORK/ccxd.conf, where a rule pins PROGRAM to CCX 1
# of two one-CPU CCXs that really exist, ccxd's socket in WORK.
rule_conf() {
	cat > "$WORK/ccxd.conf" <<CONF
[daemon]
socket = $WORK/ccxd.sock
topology = synthetic:pack:1 l3:2 core:1 pu:1

[program:$1]
ccx = 1
CONF
}
