# Every way the sampler reads active processes, whatever this machine's
# kernel lets ccxd load: asked for by the bpf key, or forced down by taking
# BPF's capabilities away. Each finds a communicating pair, and status and
# the log say which way is in use and why it is not a cheaper one.
. "$(dirname "$0")/lib.sh"
TALK=$TOP/tools/helpers/ccxt-talk

sampling() { ctl --json status | jq -c '.sampling | {source, reading, note}'; }

# run_with BPF [COMMAND...]: ccxd with bpf = BPF, started through COMMAND
# (setpriv, to take capabilities away); sets S to its sampling status.
run_with() {
	bpf=$1
	shift
	write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
mode = dry-run
interval = 300ms
bpf = $bpf
CONF
	"$@" "$CCXD" --config "$CONF" --verbose >"$LOG" 2>&1 &
	CCXD_PID=$!
	wait_for 5 ctl version >/dev/null 2>&1 || { not_ok "ccxd starts with bpf = $bpf" "no answer on $SOCK"; exit 1; }
	S=$(sampling)
	echo "# bpf = $bpf${1:+ under $*}: $S"
}

# finds_a_pair: a pipe pair streaming 32 MiB/s is found as a group
finds_a_pair() {
	rm -f "$WORK/pair.pids"   # not the previous pair's, which the shell may not have truncated yet
	"$TALK" pipe 32 10 > "$WORK/pair.pids" &
	CHILDREN="$CHILDREN $!"
	wait_for 2 test -s "$WORK/pair.pids" || return 1
	read -r P C < "$WORK/pair.pids"
	CHILDREN="$CHILDREN $P $C"
	wait_for 3 sh -c "$CCXCTL --socket $SOCK --json status | jq -e '.groups[] | select((.pids | index($P)) and (.pids | index($C)))' >/dev/null"
	r=$?
	sig TERM "$P" "$C"
	return $r
}
# logged_once: the note, if any, is in the log at info level exactly once
logged_once() {
	note=$(echo "$S" | jq -r '.note // empty')
	if [ -z "$note" ]; then
		! grep -q 'info: Sampling: ' "$LOG"
	else
		[ "$(grep -cF "info: Sampling: $note" "$LOG")" -eq 1 ]
	fi
}

# 1. bpf = no: /proc alone, no BPF program loaded, nothing to explain.
run_with no
check "bpf = no: reads /proc, with nothing to explain" \
	quietly jq -e '.source == "proc" and .reading == "proc" and .note == null' <<EOF
$S
EOF
# bpf_fds: how many BPF programs, maps and links ccxd holds
bpf_fds() { ls -l "/proc/$CCXD_PID/fd" 2>/dev/null | grep -c 'anon_inode:bpf'; }
check "and holds no BPF program, map or link" [ "$(bpf_fds)" -eq 0 ]
check "and finds a pipe pair" finds_a_pair
stop_ccxd

# 2. bpf = auto: the batch, or one iterator each, or /proc, and why not
#    more; the reason is logged once.
run_with auto
auto=$(echo "$S" | jq -r .reading)
check "bpf = auto: the batch with nothing to explain, or a reason" \
	quietly jq -e '(.reading == "batch" and .note == null) or (.reading != "batch" and (.note | length) > 0)' <<EOF
$S
EOF
check "and the log says the reason once, at info level" logged_once
check "and status shows the reading" sh -c "ctl() { \"$CCXCTL\" --socket \"$SOCK\" \"\$@\"; }; ctl status | grep -q '^sampling: .* active ones read '"
check "and finds a pipe pair" finds_a_pair
# A reload cannot change it: the iterators were loaded, or not, at the start.
sed -i 's/^bpf = .*/bpf = no/' "$CONF"
ctl reload >/dev/null
check "a reload with another bpf says it waits for the next start" \
	wait_for 2 grep -q 'bpf changes from auto to no at the next start' "$LOG"
check "and keeps reading as before" [ "$(sampling | jq -r .reading)" = "$auto" ]
stop_ccxd

# 3. bpf = per-process: never the batch.
run_with per-process
check "bpf = per-process: one iterator each, or /proc with a reason" \
	quietly jq -e '(.reading == "per-process" and .note == null) or (.reading == "proc" and (.note | length) > 0)' <<EOF
$S
EOF
check "and holds BPF programs exactly when it reads through them" \
	sh -c "[ \$(ls -l /proc/$CCXD_PID/fd | grep -c 'anon_inode:bpf') $([ "$(echo "$S" | jq -r .reading)" = proc ] && echo '-eq' || echo '-gt') 0 ]"
check "and what auto gave, short of the batch" [ "$(echo "$S" | jq -r .reading)" = "$([ "$auto" = batch ] && echo per-process || echo "$auto")" ]
check "and finds a pipe pair" finds_a_pair
stop_ccxd

# 4. BPF refused: without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN the kernel
#    loads no BPF program for ccxd, which reads /proc and says why.
if setpriv --bounding-set -bpf,-perfmon,-sys_admin true 2>/dev/null; then
	run_with auto setpriv --bounding-set -bpf,-perfmon,-sys_admin
	check "without BPF's capabilities: /proc, and the kernel's refusal as the reason" \
		quietly jq -e '.reading == "proc" and (.note | test("no BPF task iterators \\(Operation not permitted\\)"))' <<EOF
$S
EOF
	check "and the log says it once, at info level" logged_once
	check "and finds a pipe pair" finds_a_pair
	stop_ccxd
else
	echo "ok - BPF refused # SKIP setpriv here cannot drop capabilities from the bounding set"
fi
