# The automatic policy's eyes: communicating processes found as groups, with
# the rates that really flow, and seated on one CCX of a real topology.
. "$(dirname "$0")/lib.sh"
TALK=$TOP/tools/helpers/ccxt-talk

group_of() {   # PID: the group holding it, as JSON
	ctl --json status | jq -c --argjson pid "$1" '.groups[]? | select(.pids | index($pid))'
}
# rate_near PID MIB: the group's traffic within 25 % of MIB MiB/s
rate_near() {
	g=$(group_of "$1")
	[ -n "$g" ] && echo "$g" | jq -e --argjson mib "$2" \
		'.bytes_per_s > $mib * 1048576 * 0.75 and .bytes_per_s < $mib * 1048576 * 1.25' >/dev/null
}

write_conf <<CONF
[daemon]
socket = $SOCK
topology = xml:$TOPOLOGIES/amd-ryzen7-1800x.xml
mode = dry-run
interval = 700ms
CONF
start_ccxd

sh -c 'yes | pv -q -L 64m > /dev/null' &
CHILDREN="$CHILDREN $!"
sleep 0.2
yes_pid=$(pgrep -n -x yes)
pv_pid=$(pgrep -n -x pv)
CHILDREN="$CHILDREN $yes_pid $pv_pid"
check "yes | pv -q -L 64m is found as one group within 3 intervals" \
	wait_for 2 sh -c "$CCXCTL --socket $SOCK --json status | jq -e '.groups[] | select((.pids | index($yes_pid)) and (.pids | index($pv_pid)))' >/dev/null"
check "with the rate that flows (64 MiB/s)" wait_for 2 rate_near "$yes_pid" 64
g=$(group_of "$yes_pid")
# One physical core each, both cores in one CCX (L3#0 = 0-3,8-11, L3#1 = 4-7,12-15).
check "dry-run seats both ends inside one CCX of a Ryzen 7 1800X" \
	sh -c "echo '$g' | jq -e '.state == \"dry-run\" and .seating == \"one-per-core\" and (.cpus == \"0-1,8-9\" or .cpus == \"4-5,12-13\")' >/dev/null"
check "the channel is a pipe from yes to pv" \
	sh -c "echo '$g' | jq -e '.channels[0].kind == \"pipe\" and .channels[0].from == $yes_pid and .channels[0].to == $pv_pid' >/dev/null"
# pv -L sleeps between its bursts: each end wakes many times a second.
check "its members show their CPU, wake-ups and context switches" wait_for 3 sh -c "$CCXCTL --socket $SOCK --json status | jq -e '
	.groups[] | select(.pids | index($yes_pid)) | (.members | length) == 2 and .wakeups_per_s > 10 and
	.switches_per_s >= .wakeups_per_s and all(.members[]; .cpu > 0 and .wakeups_per_s > 0)' >/dev/null"
sig TERM "$yes_pid" "$pv_pid"

# A light stream: at 4 MiB/s each end uses a few ms of CPU a second, less
# than a clock tick on a fast machine, and wakes a hundred times or more,
# on any machine. It is in its group, with its pipe, at every sample but
# the first two (the baseline, then the first look at its ends), each
# looked at once an interval: 14 of 16 looks at least.
sh -c 'yes | pv -q -L 4m > /dev/null' &
CHILDREN="$CHILDREN $!"
sleep 0.2
yes_pid=$(pgrep -n -x yes)
pv_pid=$(pgrep -n -x pv)
CHILDREN="$CHILDREN $yes_pid $pv_pid"
piped() {
	ctl --json status | jq -e --argjson a "$yes_pid" --argjson b "$pv_pid" \
		'any(.groups[]?; (.pids | index($a)) and (.pids | index($b)) and any(.channels[]; .kind == "pipe"))' >/dev/null
}
looks=0
for i in $(seq 16); do
	sleep 0.7
	piped && looks=$((looks + 1))
done
check "yes | pv -q -L 4m, at a few ms of CPU a second, is in its group at $looks of 16 looks (14 at least)" [ "$looks" -ge 14 ]
sig TERM "$yes_pid" "$pv_pid"

for kind in unix tcp; do
	"$TALK" "$kind" 32 20 > "$WORK/$kind.pids" &
	CHILDREN="$CHILDREN $!"
	wait_for 2 test -s "$WORK/$kind.pids"
	set -- $(cat "$WORK/$kind.pids")
	CHILDREN="$CHILDREN $1 $2"
	check "a $kind pair is found as a group" wait_for 3 sh -c "[ -n \"\$($CCXCTL --socket $SOCK --json status | jq -c --argjson pid $1 '.groups[]? | select(.pids | index(\$pid))')\" ]"
	check "with the rate that flows (32 MiB/s)" wait_for 2 rate_near "$1" 32
	# A group's channels are those of the last sample, which a loaded
	# machine may take without the pair: looked at again for a while.
	check "over a $kind channel" wait_for 2 sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq -r --argjson pid $1 '.groups[] | select(.pids | index(\$pid)) | .channels[0].kind')\" = $kind ]"
	sig TERM "$1" "$2"
done

idle=$(make_program ccxt-idle)
spawn "$idle" 60
check "an idle process is in no group" sh -c "[ -z \"\$($CCXCTL --socket $SOCK --json status | jq -c --argjson pid $SPAWNED '.groups[]? | select(.pids | index(\$pid))')\" ]"
check "the status table shows groups" sh -c "$CCXCTL --socket $SOCK status | grep -q '^GROUP'"
check "ccxd stops" stop_ccxd
