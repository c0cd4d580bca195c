# Rule-matched programs are pinned to their CCX, whether they start before or
# after ccxd; unpin, shutdown and children behave as documented.
. "$(dirname "$0")/lib.sh"

early=$(make_program ccxt-early)
late=$(make_program ccxt-late)
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
interval = 200ms

[program:ccxt-early]
ccx = 1

[program:by-path]
exe = $WORK/ccxt-l*
ccx = 1
CONF

spawn "$early" 60
early_pid=$SPAWNED
start_ccxd

check "a program running at start-up is pinned to CCX 1" wait_for 2 cpus_are "$early_pid" 1

spawn "$late" 60
late_pid=$SPAWNED
check "a program started later is pinned to CCX 1 (exe glob)" wait_for 2 cpus_are "$late_pid" 1

# state_of PID FIELD: one field of a process in ccxctl --json status
field_of() {
	ctl --json status | jq -r --argjson pid "$1" ".processes[] | select(.pid == \$pid) | .$2"
}
field_is() { [ "$(field_of "$1" "$2")" = "$3" ]; }

check "status names the rule" field_is "$late_pid" rule by-path
check "status shows the CCX and CPUs" sh -c "[ \"\$(ctl() { $CCXCTL --socket $SOCK \"\$@\"; }; ctl --json status | jq -c '.processes[] | select(.pid == $late_pid) | [.state, .ccx, .cpus, .original_cpus, .comm]')\" = '[\"pinned\",[1],\"1\",\"0-1\",\"ccxt-late\"]' ]"
table=$(ctl status)
check "status prints a table for people" sh -c "echo '$table' | grep -Eq '^$late_pid +ccxt-late +pinned +1 +1 +0-1 +by-path'"

check "unpin restores the original mask" sh -c "$CCXCTL --socket $SOCK unpin $late_pid >/dev/null && [ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$late_pid/status)\" = 0-1 ]"
check "an unpinned process shows as released" field_is "$late_pid" state released

check "pin by hand" sh -c "$CCXCTL --socket $SOCK pin $late_pid 0 >/dev/null"
check "pin by hand lands in the kernel" cpus_are "$late_pid" 0
check "pin of a missing CCX fails" sh -c "! $CCXCTL --socket $SOCK pin $late_pid 7 2>/dev/null"
check "pin of a missing process fails" sh -c "! $CCXCTL --socket $SOCK pin 99999999 0 2>/dev/null"

# A child forked by a pinned process inherits the mask and stays ccxd's;
# a cmdline glob tells apart two runs of the same program.
cp "$(command -v dash)" "$WORK/ccxt-parent"
cp "$(command -v dash)" "$WORK/ccxt-cmd"
child_prog=$(make_program ccxt-child)
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
interval = 200ms

[program:ccxt-early]
ccx = 1

[program:by-path]
exe = $WORK/ccxt-l*
ccx = 1

[program:parent]
exe = */ccxt-parent
ccx = 0

[program:by-cmdline]
exe = */ccxt-cmd
cmdline = * marker-x*
ccx = 0
CONF
check "reload picks up new rules" sh -c "$CCXCTL --socket $SOCK reload >/dev/null"
spawn "$WORK/ccxt-parent" -c "$child_prog 60 & echo \$! > $WORK/child.pid; wait"
parent_pid=$SPAWNED
wait_for 2 test -s "$WORK/child.pid"
child_pid=$(cat "$WORK/child.pid")
CHILDREN="$CHILDREN $child_pid"
check "a parent is pinned by its rule" wait_for 2 cpus_are "$parent_pid" 0
check "its child inherits the parent's CCX" wait_for 2 cpus_are "$child_pid" 0
check "the child is listed as inherited" field_is "$child_pid" inherited_from "$parent_pid"

spawn "$WORK/ccxt-cmd" -c "sleep 60; :" marker-x
marked=$SPAWNED
spawn "$WORK/ccxt-cmd" -c "sleep 60; :" other
unmarked=$SPAWNED
check "a cmdline glob matches its command line" wait_for 2 cpus_are "$marked" 0
sleep 0.2
check "and not another" cpus_are "$unmarked" 0-1

# A program that makes 8 computing threads right after its exec, static and
# dynamic: every thread ends on the rule's CCX, however early it was made.
mkdir "$WORK/static" "$WORK/dynamic"
cp "$TOP/tools/helpers/ccxt-exec" "$WORK/static/ccxt-burst"
cp "$TOP/tools/helpers/ccxt-exec-dynamic" "$WORK/dynamic/ccxt-burst"
cat >> "$CONF" <<CONF

[program:ccxt-burst]
ccx = 1
CONF
check "reload picks up the burst rule" sh -c "$CCXCTL --socket $SOCK reload >/dev/null"
# all_threads_on PID N LIST: PID has N threads, each on LIST
all_threads_on() {
	[ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -eq "$2" ] || return 1
	for t in /proc/"$1"/task/*; do
		[ "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status" 2>/dev/null)" = "$3" ] || return 1
	done
}
for kind in static dynamic; do
	pinned=0
	for i in 1 2 3 4 5; do
		spawn "$WORK/$kind/ccxt-burst" threads
		wait_for 2 all_threads_on "$SPAWNED" 8 1 && pinned=$((pinned + 1))
		[ "$i" -gt 1 ] || original=$(field_of "$SPAWNED" original_cpus)
		sig KILL "$SPAWNED"
		wait "$SPAWNED" 2>/dev/null
	done
	check "a $kind program making 8 threads at once: all 8 pinned, 5 times of 5 (got $pinned)" [ "$pinned" -eq 5 ]
	check "its original is what it had before ccxd pinned it (got '$original')" [ "$original" = 0-1 ]
done
check "status tells how soon after the exec events the pins came" \
	sh -c "$CCXCTL --socket $SOCK --json status | jq -e '.exec_pins.count >= 10 and .exec_pins.p50_usec <= .exec_pins.p90_usec and .exec_pins.p90_usec <= .exec_pins.max_usec' >/dev/null"
check "and says it to people" sh -c "$CCXCTL --socket $SOCK status | grep -q 'at exec: pinned [0-9]* us after the exec event'"
echo "# $($CCXCTL --socket "$SOCK" status | grep 'at exec')"

check "shutdown succeeds" stop_ccxd
for pid in $early_pid $late_pid $parent_pid $child_pid $marked; do
	check "shutdown restores the original mask of $pid" cpus_are "$pid" 0-1
done
