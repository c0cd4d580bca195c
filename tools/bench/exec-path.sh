#!/bin/sh
# The path of a pin at exec, link by link, from the kernel's own trace: for
# each exec of a program a rule names, when the exec programs' record asked
# for ccxd's wake-up (the ring's wake-up is deferred work, an irq_work the
# CPU raises by an interrupt to itself), when that work ran and woke ccxd,
# when ccxd got the CPU, when its wait returned, and its
# sched_setaffinity() (the record tells the affinity and start time, and
# the pidfd is opened after). Prints the median and p90 of each time from
# the execve, and of each link, over EXECS execs.
#
#   tools/bench/exec-path.sh [EXECS] [KIND] [CCXD]
#       (root; default 200 dynamic-spin-busy ./daemon/ccxd; KIND as in
#       exec-pin.sh: static or dynamic, hold or spin, "-busy" with two
#       other programs computing all along)
#
# Every traced event costs a little, and so every link reads somewhat
# longer than it is; exec-pin.sh measures the whole without them. ccxd runs
# as its unit starts it (nice -5, waiting at real-time priority), with
# [program:ccxt-bench] ccx = 1 on two one-CPU CCXs.
set -eu
cd "$(dirname "$0")/../.."
N=${1:-200}
KIND=${2:-dynamic-spin-busy}
CCXD=${3:-./daemon/ccxd}
. tools/bench/lib.sh
bench_init exec-path.sh

TRACE=/sys/kernel/tracing
INSTANCE=$TRACE/instances/ccxd-exec-path
DAEMON_PID= HOGS=
cleanup() {
	for h in $HOGS; do kill_pid "$h"; done
	kill_pid "$DAEMON_PID"
	[ -d "$INSTANCE" ] && { echo 0 > "$INSTANCE/events/enable"; rmdir "$INSTANCE"; }
	echo 0 > $TRACE/events/syscalls/sys_enter_sched_setaffinity/enable 2>/dev/null || true
	[ -f "$WORK/trace_clock" ] && cat "$WORK/trace_clock" > $TRACE/trace_clock
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

linkage=${KIND%%-*} mode=${KIND#*-}; mode=${mode%-busy}
mkdir "$WORK/bin"
cp "tools/helpers/ccxt-exec$([ "$linkage" = dynamic ] && echo -dynamic)" "$WORK/bin/ccxt-bench"
cp tools/helpers/ccxt-exec "$WORK/ccxt-hog"
rule_conf ccxt-bench
nice -n -5 "$CCXD" --config "$WORK/ccxd.conf" >/dev/null 2>"$WORK/ccxd.log" &
DAEMON_PID=$!
wait_ccxd "$WORK/ccxd.sock"
case $KIND in *-busy) for i in 1 2; do "$WORK/ccxt-hog" spin & HOGS="$HOGS $!"; done; sleep 0.2 ;; esac

# ccxt-exec reads its sched_setaffinity() calls from the main buffer; the
# path goes to an instance of its own.
[ -d $TRACE/events ] || mount -t tracefs tracefs $TRACE
sed -n 's/.*\[\([a-z0-9_-]*\)\].*/\1/p' $TRACE/trace_clock > "$WORK/trace_clock"
echo mono > $TRACE/trace_clock
echo 1 > $TRACE/events/syscalls/sys_enter_sched_setaffinity/enable
cat $TRACE/trace_pipe >/dev/null & drain=$!; sleep 0.2; kill_pid $drain
mkdir "$INSTANCE"
echo mono > "$INSTANCE/trace_clock"
echo 16384 > "$INSTANCE/buffer_size_kb"
# enable EVENT [FILTER]: where the kernel has it
enable() {
	[ -d "$INSTANCE/events/$1" ] || { echo "# no event $1 here" >&2; return 0; }
	[ -z "${2:-}" ] || echo "$2" > "$INSTANCE/events/$1/filter"
	echo 1 > "$INSTANCE/events/$1/enable"
}
enable syscalls/sys_enter_execve
enable ipi/ipi_send_cpu
enable irq_vectors/irq_work_entry
enable sched/sched_wakeup "pid == $DAEMON_PID"
enable sched/sched_switch "next_pid == $DAEMON_PID"
for e in sys_exit_poll sys_exit_epoll_wait sys_enter_sched_setaffinity; do
	enable "syscalls/$e" "common_pid == $DAEMON_PID"
done
tools/helpers/ccxt-exec latency "$N" "$WORK/bin/ccxt-bench" 1 "$mode" $TRACE/trace_pipe > "$WORK/latency"
echo 0 > "$INSTANCE/events/enable"
cp "$INSTANCE/trace" "$WORK/trace"

echo "Machine: $(nproc) CPUs, $(uname -r), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "Command: tools/bench/exec-path.sh $N $KIND ($(date -u +%Y-%m-%d)); the execve to ccxd's sched_setaffinity(), traced: $(sort -n "$WORK/latency" | awk '{a[++n] = $1} END {printf "p50 %s, p90 %s us", a[int(n / 2) + 1], a[int(n * 0.9) + 1]}')"
echo
# Each exec: the first of each event after the one before it, in order.
awk -v ccxd="$DAEMON_PID" '
function pid_of(line) { match(line, /-[0-9]+ +\[[0-9]+\]/); return substr(line, RSTART + 1, RLENGTH) + 0 }
function at(k) { if (!(k in t)) t[k] = ts }
function flush() { if (n_ex && ("setaffinity" in t)) { for (k in t) d[k, n_ok] = t[k]; n_ok++ } delete t }
{
	ts = ""; ev = ""
	for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { ts = substr($i, 1, length($i) - 1) * 1e6; ev = $(i + 1); break }
	if (ts == "") next
	p = pid_of($0)
	if (ev ~ /^sys_execve\(/ && p != ccxd) { flush(); n_ex++; at("execve"); next }
	if (!n_ex) next
	if (ev == "ipi_send_cpu:" && $0 ~ /bpf_ringbuf_notify/) at("record")
	else if (ev == "irq_work_entry:" && ("record" in t)) at("irq_work")
	else if (ev == "sched_wakeup:" && ("record" in t)) at("woken")
	else if (ev == "sched_switch:" && ("woken" in t)) at("running")
	else if (p == ccxd && ev ~ /^sys_(poll|epoll_wait)$/ && ("running" in t)) at("wait_returns")
	else if (p == ccxd && ev ~ /^sys_sched_setaffinity\(/ && ("wait_returns" in t)) at("setaffinity")
}
function pct(key, from, q,    m, v, i, j, x) {
	m = 0
	for (i = 0; i < n_ok; i++) if (((key, i) in d) && ((from, i) in d)) v[m++] = d[key, i] - d[from, i]
	for (i = 1; i < m; i++) { x = v[i]; for (j = i - 1; j >= 0 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
	return m ? sprintf("%.1f", v[int(m * q)]) : "-"
}
END {
	flush()
	split("execve record irq_work woken running wait_returns setaffinity", step, " ")
	split("the execve|the record asks for the wake-up (the exec programs: as the exec begins, or at task_rename)|the irq_work runs (an interrupt the CPU sent itself)|ccxd woken|ccxd gets the CPU|its wait returns|sched_setaffinity()", what, "|")
	printf "%d execs of %d traced whole.\n\n", n_ok, n_ex
	print "| step | from the execve, p50 | p90 | from the step before, p50 | p90 |"
	print "|---|---|---|---|---|"
	for (s = 2; s <= 7; s++)
		printf "| %s | %s | %s | %s | %s |\n", what[s], pct(step[s], "execve", 0.5), pct(step[s], "execve", 0.9),
			pct(step[s], step[s - 1], 0.5), pct(step[s], step[s - 1], 0.9)
}' "$WORK/trace"
