# Shared by the integration scripts: each runs the real ccxd in the foreground
# on a private socket and config, against the real kernel, and cleans up on
# any exit. Prints TAP-style lines that tests/run counts.

set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CCXD=$TOP/daemon/ccxd
CCXCTL=$TOP/tools/ccxctl
# This machine's two CPUs as two one-CPU CCXs, or as one CCX of two: a test
# whose verdict depends on the topology names one of them, so that it means
# the same on a machine whose hwloc shows one L3 and on one that shows two.
TWO_CCX="synthetic:pack:1 l3:2 core:1 pu:1"
ONE_CCX="synthetic:pack:1 l3:1 core:2 pu:1"
# Real machines' topologies, kept with the tests.
TOPOLOGIES=$TOP/tests/data/topologies

# The caller's own settings of ccxd and ccxctl (CCXD_SOCKET, ...) are not
# the tests': only CCXD_TEST_* variables, which are, pass through.
for v in $(env | sed -n 's/^\(CCXD_[A-Za-z0-9_]*\)=.*/\1/p'); do
	case $v in CCXD_TEST_*) ;; *) unset "$v" ;; esac
done

[ "$(id -u)" -eq 0 ] || { echo "integration tests need root"; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "integration tests need 2 CPUs"; exit 77; }

WORK=$(mktemp -d /tmp/ccxd-test.XXXXXX)
chmod 755 "$WORK"
SOCK=$WORK/ccxd.sock
CONF=$WORK/ccxd.conf
LOG=$WORK/ccxd.log
CCXD_PID=
CHILDREN=
ON_EXIT=:    # more cleaning for a script to add

cleanup() {
	for p in $CHILDREN; do sig 9 "$p" 2>/dev/null; done
	[ -n "$CCXD_PID" ] && sig 9 "$CCXD_PID" 2>/dev/null
	wait 2>/dev/null
	eval "$ON_EXIT"
	# A sanitizer build's ccxd reports to its stderr (UBSan ignores
	# log_path): any report fails the script, even one at shutdown.
	if grep -Eq 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$LOG" 2>/dev/null; then
		echo "not ok - ccxd's log holds a sanitizer report"
		grep -E -A 12 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$LOG" | head -n 60 | sed 's/^/# /'
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# jq 1.6 exits 0 from -e when its input is empty (later versions exit 4), so
# a check that pipes a command's output into jq -e would pass when the
# command printed nothing. The checks' jq fails then.
JQ=$(command -v jq)
mkdir -p "$WORK/bin"
cat > "$WORK/bin/jq" <<JQ
#!/bin/sh
case " \$* " in *" -e "*) ;; *) exec "$JQ" "\$@" ;; esac
out=\$("$JQ" "\$@") || { rc=\$?; [ -z "\$out" ] || printf '%s\\n' "\$out"; exit \$rc; }
[ -n "\$out" ] || exit 4
printf '%s\\n' "\$out"
JQ
chmod 755 "$WORK/bin/jq"
PATH=$WORK/bin:$PATH
export PATH

. "$TOP/tests/tap.sh"

# A program with a name of its own, so rules match nothing else on the machine.
make_program() {
	cp "$(command -v sleep)" "$WORK/$1"
	echo "$WORK/$1"
}

# for_others PROGRAM: a copy of PROGRAM that other users can run, printed.
# The tree may sit where only root can enter (a clone in /root, or in a
# mktemp -d), so what a test runs as nobody is copied into $WORK first.
for_others() {
	mkdir -p "$WORK/others" && cp "$1" "$WORK/others/" && echo "$WORK/others/${1##*/}"
}

# cpuset_of CPUS: a cgroup cpuset of those CPUs (v1 or v2), removed with
# its processes at exit, in $CG; confine PID puts a process in it. Returns 1
# where no cpuset controller can be written.
cpuset_of() {
	CG=/sys/fs/cgroup/cpuset/ccxd-test-$$
	if [ -w /sys/fs/cgroup/cpuset/tasks ] && mkdir "$CG" 2>/dev/null; then
		ON_EXIT="$ON_EXIT; for t in \$(cat $CG/tasks 2>/dev/null); do kill -9 \$t; done; sleep 0.1; rmdir $CG"
		echo "$1" > "$CG/cpuset.cpus"
		echo 0 > "$CG/cpuset.mems"
		CG_TASKS=$CG/tasks
	elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpuset /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null &&
	     mkdir "/sys/fs/cgroup/ccxd-test-$$" 2>/dev/null; then
		CG=/sys/fs/cgroup/ccxd-test-$$
		ON_EXIT="$ON_EXIT; for t in \$(cat $CG/cgroup.procs 2>/dev/null); do kill -9 \$t; done; sleep 0.1; rmdir $CG"
		echo "$1" > "$CG/cpuset.cpus"
		CG_TASKS=$CG/cgroup.procs
	else
		return 1
	fi
}
confine() { echo "$1" > "$CG_TASKS"; }

# quick_program NAME: a program that exits at once, as $WORK/NAME: ccxt-exec,
# static and so quick to start. A sanitizer build's is neither (its runtime
# maps gigabytes of shadow memory at each start: thousands of execs take
# minutes), and true stands in for it.
quick_program() {
	if ldd "$TOP/tools/helpers/ccxt-exec" 2>/dev/null | grep -q 'libasan'; then
		cp /bin/true "$WORK/$1"   # not command -v: true is a builtin
	else
		cp "$TOP/tools/helpers/ccxt-exec" "$WORK/$1"
	fi
	echo "$WORK/$1"
}

# spawn CMD...: starts it in the background; its pid is in $SPAWNED
spawn() {
	"$@" &
	SPAWNED=$!
	CHILDREN="$CHILDREN $SPAWNED"
}

# sig SIGNAL PID...: kill(1) for pids the test computed. An empty or
# non-numeric pid, 0 or 1 (kill -STOP 0 stops the test's own process group),
# or the test itself is refused with a message and fails it; the others get
# the signal.
sig() {
	_sig=$1
	_rc=0
	shift
	for _pid in "$@"; do
		if a_pid "$_pid"; then
			kill "-$_sig" "$_pid" 2>/dev/null || _rc=1
		else
			echo "# sig $_sig: refusing pid '$_pid'" >&2
			_rc=1
		fi
	done
	return $_rc
}
# a_pid PID: a number that names one process, not 0, 1 or this test
a_pid() {
	case $1 in ''|*[!0-9]*|0|1) return 1 ;; esac
	[ "$1" -ne $$ ]
}

# l3s_here: how many L3 domains hwloc shows on this machine's online CPUs,
# for a test of topology = system to expect what this machine has.
l3s_here() { hwloc-calc --number-of l3cache all 2>/dev/null || echo 0; }

cpus_of() {
	sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null
}

# wait_for SECONDS COMMAND...: polls every 20 ms
wait_for() {
	deadline=$(( $(date +%s%N) + $1 * 1000000000 ))
	shift
	while ! "$@"; do
		[ "$(date +%s%N)" -lt "$deadline" ] || return 1
		sleep 0.02
	done
}

cpus_are() { [ "$(cpus_of "$1")" = "$2" ]; }

# policy_is PID POLICY: its scheduling policy now (/proc/PID/sched: 0
# SCHED_OTHER, 1 SCHED_FIFO)
policy_is() { [ "$(sed -n 's/^policy[[:space:]]*:[[:space:]]*//p' "/proc/$1/sched" 2>/dev/null)" = "$2" ]; }

# group_json PID: the automatic policy's group that holds it, as JSON
group_json() { ctl --json status | jq -c --argjson pid "$1" '.groups[]? | select(.pids | index($pid))'; }

# placed_as_evidenced P C: the pair P and C is narrowed now only during an
# experiment, or after one whose evidence kept the shared CPU; otherwise
# both have both CPUs. What ccxd may decide for a pair on two one-CPU CCXs.
# Masks that changed while the state was read are looked at next time.
placed_as_evidenced() {
	p=$(cpus_of "$1") c=$(cpus_of "$2")
	g=$(group_json "$1")
	[ "$p $c" = "$(cpus_of "$1") $(cpus_of "$2")" ] || return 0
	case $(echo "$g" | jq -r '.state // "none"') in
	validating) return 0 ;;
	kept) echo "$g" | jq -e '.seating == "shared-cpu" and ([.trials[] | select(.seating == "shared-cpu") | .beat] == [true])' >/dev/null &&
		[ "$p" = "$c" ] && [ "$p" != 0-1 ] ;;
	*) [ "$p" = 0-1 ] && [ "$c" = 0-1 ] ;;
	esac
}

# always SECONDS COMMAND...: it holds every 0.2 s all that time
always() {
	end=$(( $(date +%s) + $1 ))
	shift
	while [ "$(date +%s)" -lt "$end" ]; do
		"$@" || return 1
		sleep 0.2
	done
}

# write_conf: the config from standard input; its [daemon] section gets a
# state_dir and a runtime_dir of the test's own unless it names them.
write_conf() {
	cat > "$CONF"
	grep -q '^state_dir' "$CONF" || sed -i "0,/^\[daemon\]/s||[daemon]\nstate_dir = $WORK/state|" "$CONF"
	grep -q '^runtime_dir' "$CONF" || sed -i "0,/^\[daemon\]/s||[daemon]\nruntime_dir = $WORK/run|" "$CONF"
	# No calibration unless the test asks (calibrate = yes): the probe loads
	# both CPUs for a moment, and its figures would steer the automatic
	# policy of tests that are about something else.
	grep -q '^calibrate' "$CONF" || sed -i "0,/^\[daemon\]/s||[daemon]\ncalibrate = no|" "$CONF"
}

ctl() { "$CCXCTL" --socket "$SOCK" "$@"; }

start_ccxd() {
	"$CCXD" --config "$CONF" --verbose "$@" >"$LOG" 2>&1 &
	CCXD_PID=$!
	wait_for 5 ctl version >/dev/null 2>&1 || { not_ok "ccxd starts" "no answer on $SOCK"; exit 1; }
}

stop_ccxd() {
	[ -n "$CCXD_PID" ] || return 0
	sig TERM "$CCXD_PID"
	wait "$CCXD_PID"
	rc=$?
	CCXD_PID=
	return $rc
}
