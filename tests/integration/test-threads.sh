# Groups of threads: a process with several busy threads is a group of its
# own, seated on one CCX with a CPU for each busy thread, and judged by its
# read/write bytes; one whose progress cannot be measured is not moved; a
# pipeline of them larger than any CCX is split; a single process larger
# than any CCX is left alone; and where the kernel's cache-aware balancing
# is on, one process's threads are left to it.
. "$(dirname "$0")/lib.sh"
THREADS=$TOP/tools/helpers/ccxt-threads

group_of() {   # PID: the group holding it, as JSON
	ctl --json status | jq -c --argjson pid "$1" '.groups[]? | select(.pids | index($pid))'
}
# group_has PID JQ: there is a group holding PID, and it satisfies JQ (jq 1.6
# answers true to no input at all: the group must be there first).
group_has() {
	g=$(group_of "$1")
	[ -n "$g" ] && echo "$g" | jq -e "$2" >/dev/null
}
no_group() { [ -z "$(group_of "$1")" ]; }
# threads MODE N SECONDS: the helper at the lowest priority, so that it only
# takes CPU nobody else wants; its threads still wait to run, which is what
# makes them busy. Sets T.
threads() {
	nice -n 19 "$THREADS" "--$1" "$2" "$3" &
	T=$!
	CHILDREN="$CHILDREN $T"
}

write_conf <<CONF
[daemon]
socket = $SOCK
topology = xml:$TOPOLOGIES/amd-ryzen7-1800x.xml
mode = dry-run
interval = 500ms
CONF
start_ccxd

# 1. Three threads writing to /dev/null: a group of one process, a threads
#    channel, and in dry-run a core each inside one CCX of the 1800X
#    (L3#0 = 0-3,8-11, L3#1 = 4-7,12-15).
threads io 3 8
check "a process with three busy threads is a group of its own" \
	wait_for 4 group_has "$T" ".pids == [$T] and .state == \"dry-run\""
echo "# $(group_of "$T" | jq -c '{state, ccx, cpus, seating, demand, bytes_per_s}')"
check "its channel is its threads, with its write bytes as the rate" \
	group_has "$T" ".channels[0].kind == \"threads\" and .channels[0].from == $T and .channels[0].busy_threads == 3 and .bytes_per_s > 1048576"
check "it needs a CPU for each busy thread" group_has "$T" '.demand >= 3'
check "dry-run seats it on one CCX, a core for each thread" \
	group_has "$T" '.seating == "one-per-core" and (.cpus == "0-2,8-10" or .cpus == "4-6,12-14")'
check "the status table shows its threads" sh -c "$CCXCTL --socket $SOCK status | grep -q 'threads $T x3'"
sig TERM "$T"

# 2. Threads that only compute: busy, but nothing to judge a move by.
threads spin 2 5
check "busy threads that do no I/O are a group with no rate, not moved" \
	wait_for 4 group_has "$T" '.state == "no-rate" and .ccx == null and .cpus == null'
sig TERM "$T"

# 3. One busy thread is no group, nor are threads that sleep.
threads io 1 4
"$THREADS" 3 4 &
S=$!
CHILDREN="$CHILDREN $S"
sleep 2
check "a process with one busy thread is no group" no_group "$T"
check "nor is one whose threads sleep" no_group "$S"
sig TERM "$T" "$S"

# 4. A pipeline of three stages with three busy threads each needs 9 CPUs, a
#    CCX of the 1800X has 8: it is split along its weaker pipe into a pair
#    and a stage alone (a group of its threads), each on a CCX of its own.
nice -n 19 sh -c "$THREADS --pipe 3 8 < /dev/zero | $THREADS --pipe 3 8 | $THREADS --pipe 3 8 > /dev/null" &
CHILDREN="$CHILDREN $!"
sleep 0.3
set -- $(pgrep -f "^$THREADS --pipe" | sort -n)
CHILDREN="$CHILDREN $*"
# split_seated: the three stages are in two groups, each split from the
# whole, decided in dry-run, within a CCX's 8 CPUs, on different CCXs.
split_seated() {
	ctl --json status | jq -e --argjson a "$1" --argjson b "$2" --argjson c "$3" '
		[.groups[] | select(.pids | (index($a) or index($b) or index($c)))] as $g
		| ($g | length) == 2 and ([$g[].pids[]] | sort) == ([$a, $b, $c] | sort)
		and all($g[]; .split and .state == "dry-run" and .demand <= 8)
		and ($g | map(.ccx) | unique | length) == 2' >/dev/null
}
check "a pipeline larger than a CCX is split in two, one piece on each CCX" wait_for 6 split_seated "$@"
echo "# $(ctl --json status | jq -c '[.groups[] | {pids, ccx, cpus, demand, split, channels: [.channels[].kind]}]')"
sig TERM "$@"
stop_ccxd

# 5. Enforce on this machine split into two one-CPU "CCXs": two busy threads
#    fit neither, and one process cannot be split: it is left alone.
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
interval = 500ms
window = 2
CONF
start_ccxd
threads io 2 6
before=$(cpus_of "$T")
check "a thread group larger than any CCX is left alone (no-room)" wait_for 4 group_has "$T" '.state == "no-room"'
check "with its affinity untouched" [ "$(cpus_of "$T")" = "$before" ]
sig TERM "$T"
check "ccxd stops" stop_ccxd

# 6. Where the kernel's cache-aware balancing is on, one process's busy
#    threads are the kernel's, and separate processes that talk are still
#    ccxd's. ccxd runs in a mount namespace of its own, whose debugfs is a
#    fixture tree that says the balancing is on (or off), with the running
#    system's topology (the only one whose /sys counts).
unshare -m true 2>/dev/null || { echo "ok - the kernel's share # SKIP no mount namespaces here"; exit 0; }
# start_balanced ENABLED: ccxd, with llc_balancing/enabled saying ENABLED.
start_balanced() {
	write_conf <<CONF
[daemon]
socket = $SOCK
interval = 500ms
window = 2
CONF
	mkdir -p "$WORK/debug/sched/llc_balancing"
	echo "$1" >"$WORK/debug/sched/llc_balancing/enabled"
	unshare -m sh -c "mount --bind '$WORK/debug' /sys/kernel/debug && exec '$CCXD' --config '$CONF' --verbose" >"$LOG" 2>&1 &
	CCXD_PID=$!
	wait_for 5 ctl version >/dev/null 2>&1 || { not_ok "ccxd starts in a mount namespace" "no answer on $SOCK"; exit 1; }
}
start_balanced 1
check "ccxd reads the balancing as on from the fixture" sh -c "$CCXCTL --socket $SOCK --json status | jq -e '.llc_balancing == true' >/dev/null"
threads io 2 8
before=$(cpus_of "$T")
check "one process's busy threads are left to the kernel (by-kernel)" wait_for 4 group_has "$T" '.state == "by-kernel" and .ccx == null'
check "and status says why" group_has "$T" '.reason | test("cache-aware balancing")'
check "with its affinity untouched" [ "$(cpus_of "$T")" = "$before" ]
sig TERM "$T"
sh -c 'yes | pv -q -L 8m >/dev/null' &
pair=$!
CHILDREN="$CHILDREN $pair"
wait_for 3 pgrep -P "$pair" -x pv >/dev/null
P=$(pgrep -P "$pair" -x pv)
CHILDREN="$CHILDREN $(pgrep -P "$pair")"
check "a pair of processes is still ccxd's" wait_for 6 group_has "$P" '.state != "by-kernel" and (.pids | length) == 2'
sig TERM $(pgrep -P "$pair") "$pair"
stop_ccxd
start_balanced 0
check "off, ccxd reads it as off" sh -c "$CCXCTL --socket $SOCK --json status | jq -e '.llc_balancing == false' >/dev/null"
threads io 2 6
check "and one process's busy threads are ccxd's again" wait_for 4 group_has "$T" '.state != "by-kernel"'
sig TERM "$T"
check "ccxd stops" stop_ccxd
