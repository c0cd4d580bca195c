#!/bin/sh
# Nothing lost across kill -9: the original affinities ccxd owes are in its
# runtime directory, and a restarted ccxd takes its processes back with them,
# so that unpin and shutdown still restore the true originals.
. "$(dirname "$0")/lib.sh"

held=$(make_program ccxt-held)
other=$(make_program ccxt-other)
conf() {
	write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
interval = 200ms
$1

[program:ccxt-held]
ccx = 1
force = yes
CONF
}
conf ""
LEDGER=$WORK/run/originals.json

field_of() {
	ctl --json status | jq -r --argjson pid "$1" ".processes[] | select(.pid == \$pid) | .$2"
}
field_is() { [ "$(field_of "$1" "$2")" = "$3" ]; }
in_ledger() {
	jq -e --argjson pid "$1" ".processes[] | select(.pid == \$pid and .original == \"$2\" and .cpus == \"$3\")" \
		"$LEDGER" >/dev/null 2>&1
}
counter_is() { [ "$(ctl --json status | jq -r ".counters.$1")" = "$2" ]; }
crash_ccxd() {
	sig 9 "$CCXD_PID"
	wait "$CCXD_PID" 2>/dev/null
	CCXD_PID=
}

# Started under taskset -c 0: its true original is CPU 0, and force = yes
# lets the rule move it to CPU 1 all the same.
spawn taskset -c 0 "$held" 120
pinned=$SPAWNED
spawn taskset -c 0 "$held" 120
kept=$SPAWNED
start_ccxd
check "the rule pins a process started under taskset -c 0" wait_for 2 cpus_are "$pinned" 1
check "the ledger holds its original (0) and its CPUs (1)" wait_for 2 in_ledger "$pinned" 0 1
check "the ledger file is private to ccxd" sh -c "[ \"\$(stat -c %a '$LEDGER')\" = 600 ]"

# Pinned by hand, then moved by somebody else while ccxd is down: not ccxd's
# any more.
spawn "$other" 120
moved=$SPAWNED
check "pin by hand" sh -c "$CCXCTL --socket $SOCK pin $moved 1 >/dev/null"
check "the ledger holds the hand pin" wait_for 2 in_ledger "$moved" 0-1 1

crash_ccxd
check "the ledger outlives kill -9" in_ledger "$pinned" 0 1
sig 9 "$kept"      # exits while ccxd is down: nothing owed to it
taskset -pc 0 "$moved" >/dev/null
start_ccxd
check "a restarted ccxd takes its pinned process back" field_is "$pinned" state pinned
check "with the original it had before ccxd first touched it" field_is "$pinned" original_cpus 0
check "and says so in the log" grep -q "Took back 1 process that ccxd had placed" "$LOG"
check "the counter shows one process taken back" counter_is readopted 1
check "a process moved by somebody else while ccxd was down is left alone" \
	sh -c "[ -z \"\$($CCXCTL --socket $SOCK --json status | jq -r '.processes[] | select(.pid == $moved) | .pid')\" ] && [ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$moved/status)\" = 0 ]"
check "the ledger forgets the process that exited" wait_for 2 sh -c "! jq -e '.processes[] | select(.pid == $kept)' '$LEDGER' >/dev/null"
check "unpin after the restart restores the true original (0)" \
	sh -c "$CCXCTL --socket $SOCK unpin $pinned >/dev/null && [ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$pinned/status)\" = 0 ]"
check "an unpinned process is in the ledger as released" wait_for 2 sh -c "jq -e '.processes[] | select(.pid == $pinned and .owner == \"released\")' '$LEDGER' >/dev/null"

# Shutdown after a crash and a restart gives back the true original too.
spawn taskset -c 0 "$held" 120
second=$SPAWNED
check "a second process is pinned" wait_for 2 cpus_are "$second" 1
wait_for 2 in_ledger "$second" 0 1
crash_ccxd
start_ccxd
check "a restarted ccxd takes it back" field_is "$second" original_cpus 0
check "while the process unpinned by hand stays released, on its own CPU" \
	sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq -r '.processes[] | select(.pid == $pinned) | .state')\" = released ] &&
		[ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$pinned/status)\" = 0 ]"
check "ccxd shuts down cleanly" stop_ccxd
check "shutdown restores its true original (0)" cpus_are "$second" 0
check "after a clean shutdown the ledger holds only the released process" \
	sh -c "[ \"\$(jq -c '[.processes[] | [.pid, .owner]]' '$LEDGER')\" = '[[$pinned,\"released\"]]' ]"

# A rule removed while ccxd was down: its process goes back to its original.
spawn taskset -c 0 "$held" 120
third=$SPAWNED
start_ccxd
check "a third process is pinned" wait_for 2 cpus_are "$third" 1
check "and across a clean restart the released one is still left alone" \
	sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq -r '.processes[] | select(.pid == $pinned) | .state')\" = released ] &&
		[ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$pinned/status)\" = 0 ]"
wait_for 2 in_ledger "$third" 0 1
crash_ccxd
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
interval = 200ms
CONF
start_ccxd
check "its rule gone, a restarted ccxd gives back the original" wait_for 2 cpus_are "$third" 0
check "and keeps nothing of it" sh -c "[ -z \"\$($CCXCTL --socket $SOCK --json status | jq -r '.processes[] | select(.pid == $third) | .pid')\" ]"
stop_ccxd

# restore_on_exit = no: the placement stays, and so does what is owed.
conf "restore_on_exit = no"
start_ccxd
check "with restore_on_exit = no a process is pinned" wait_for 2 cpus_are "$third" 1
stop_ccxd
check "after shutdown it keeps its placement" cpus_are "$third" 1
check "and the ledger keeps its original for the next start" in_ledger "$third" 0 1
conf ""
start_ccxd
check "the next start takes it back" field_is "$third" original_cpus 0
stop_ccxd
check "whose shutdown restores the true original" cpus_are "$third" 0

# The automatic policy's placements are measured afresh after a restart: a
# member it had moved goes back to its original. (The entry is the one the
# policy writes; the process is real and where the entry says.)
spawn taskset -c 1 "$other" 120
auto=$SPAWNED
start_time=$(awk '{ sub(/.*\) /, ""); split($0, f, " "); print f[20] }' "/proc/$auto/stat")
mkdir -p "$WORK/run"
cat > "$LEDGER" <<JSON
{ "version": 1, "processes": [ { "pid": $auto, "start_time": $start_time, "comm": "ccxt-other",
  "owner": "auto", "original": "0-1", "cpus": "1" } ] }
JSON
start_ccxd
check "a restart gives the automatic policy's member its original back" wait_for 2 cpus_are "$auto" 0-1
check "and the ledger no longer lists it" wait_for 2 sh -c "! jq -e '.processes[] | select(.pid == $auto)' '$LEDGER' >/dev/null"
stop_ccxd

# The same entry with another start time names another process: untouched.
taskset -pc 1 "$auto" >/dev/null
cat > "$LEDGER" <<JSON
{ "version": 1, "processes": [ { "pid": $auto, "start_time": $((start_time + 1)), "comm": "ccxt-other",
  "owner": "auto", "original": "0-1", "cpus": "1" } ] }
JSON
start_ccxd
check "an entry whose start time does not match (pid reuse) is not applied" cpus_are "$auto" 1
stop_ccxd

# A broken ledger is reported and replaced; ccxd runs on.
printf '{"version": 1, "processes": [{"pid": "x"' > "$LEDGER"
start_ccxd
check "a broken ledger is reported with what is wrong" wait_for 2 grep -q "Ignoring $LEDGER: not JSON" "$LOG"
spawn taskset -c 0 "$held" 120
fourth=$SPAWNED
check "and ccxd pins as before" wait_for 2 cpus_are "$fourth" 1
check "writing a fresh ledger" wait_for 2 in_ledger "$fourth" 0 1
stop_ccxd
check "shutdown restores it" cpus_are "$fourth" 0
