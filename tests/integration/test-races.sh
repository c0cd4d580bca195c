#!/bin/sh
# Races with the processes ccxd places: threads made while it sets their
# affinity, processes and threads that exit between discovery and pinning,
# and pids reused behind its back.
. "$(dirname "$0")/lib.sh"

RACE=$TOP/tools/helpers/ccxt-race
cp "$RACE" "$WORK/ccxt-churn"
quick_program ccxt-quick >/dev/null
victim=$(make_program ccxt-victim)
ruled=$(make_program ccxt-ruled)
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
interval = 200ms

[program:ccxt-churn]
ccx = 1

[program:ccxt-quick]
ccx = 1

[program:ccxt-ruled]
ccx = 1
CONF
start_ccxd

counter() { ctl --json status | jq -r ".counters.$1"; }
listed() { [ -n "$(ctl --json status | jq -r --argjson pid "$1" '.processes[] | select(.pid == $pid) | .pid')" ]; }
# every_thread_on PID LIST: each thread that still exists has LIST
every_thread_on() {
	for status in /proc/"$1"/task/*/status; do
		cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$status" 2>/dev/null)
		[ -z "$cpus" ] || [ "$cpus" = "$2" ] || { echo "# thread ${status%/status}: $cpus, not $2"; return 1; }
	done
}
highest_tid() { ls "/proc/$1/task" | sort -n | tail -n 1; }

# --- threads made while pinning ---------------------------------------------
# Eight workers each make and join short threads without pause; every pin
# by hand must leave every thread on the new CPU, including those made by
# workers not yet placed while ccxd worked.
spawn "$WORK/ccxt-churn" churn 8 60
churn=$SPAWNED
check "a churning process is pinned by its rule" wait_for 2 every_thread_on "$churn" 1
first_tid=$(highest_tid "$churn")
wrong=0
for i in $(seq 1 30); do
	ccx=$((i % 2))
	ctl pin "$churn" "$ccx" >/dev/null || wrong=$((wrong + 1))
	every_thread_on "$churn" "$ccx" || wrong=$((wrong + 1))
done
check "30 pins while threads come and go: every thread has the new CPU each time" [ "$wrong" -eq 0 ]
made=$(( $(highest_tid "$churn") - first_tid ))
echo "# the process made about $made threads meanwhile"
check "threads really were made meanwhile (at least 100)" [ "$made" -ge 100 ]
check "no pin failed" [ "$(counter pin_failures)" = 0 ]
sig TERM "$churn"

# --- processes that exit between discovery and pinning -------------------
# 2,000 rule-matched programs that exit as soon as they start: most are gone
# before ccxd reads them, some while it pins them.
pins=$(counter pins)
check "2,000 rule-matched programs that exit at once ran" "$TOP/tools/helpers/ccxt-exec" storm 2000 "$WORK/ccxt-quick"
check "ccxd answers after 2,000 matched programs that exit at once" quietly ctl version
echo "# $(( $(counter pins) - pins )) of them were pinned before they exited"
check "an exit before or during the pin is no failure" [ "$(counter pin_failures)" = 0 ]
check "and none of them stays in the process table" \
	wait_for 2 sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq '[.processes[] | select(.comm == \"ccxt-quick\")] | length')\" = 0 ]"
check "nothing was logged as failing" sh -c "! grep -q 'Failed' '$LOG'"

# --- pids reused --------------------------------------------------------------
# ccxt-race at PID runs a program as exactly that pid (clone3 set_tid): the
# kernel reuses the pid of a process ccxd knows while ccxd is stopped, and
# ccxd must tell the new process from the old one.
reuse() {   # reuse PID PROGRAM...: PID is free now; the new process gets it
	pid=$1
	shift
	spawn "$RACE" at "$pid" "$@"
	CHILDREN="$CHILDREN $pid"
	wait_for 2 test -e "/proc/$pid" || return 1
	wait_for 2 sh -c "[ \"\$(cat /proc/$pid/comm)\" != ccxt-race ]"
}

# A process pinned by hand exits; a stranger gets its pid.
spawn "$victim" 120
old=$SPAWNED
ctl pin "$old" 1 >/dev/null
sig STOP "$CCXD_PID"
sig 9 "$old"
wait "$old" 2>/dev/null
if ! reuse "$old" taskset -c 0 "$victim" 120; then
	echo "ok - pid reuse # SKIP the kernel did not hand out pid $old again (clone3 set_tid)"
	exit 0
fi
sig CONT "$CCXD_PID"
check "unpin of a reused pid refuses: the stranger was never pinned" sh -c "! $CCXCTL --socket $SOCK unpin $old 2>/dev/null"
check "and the stranger keeps its own affinity" cpus_are "$old" 0
check "status does not show the stranger as pinned" sh -c "! ( ctl() { $CCXCTL --socket $SOCK \"\$@\"; }; ctl --json status | jq -e '.processes[] | select(.pid == $old and .state == \"pinned\")' >/dev/null )"

# A process pinned by a rule exits; a stranger gets its pid; ccxd shuts down
# and must not restore the old process's original onto it.
spawn "$ruled" 120
old2=$SPAWNED
check "a rule-matched process is pinned" wait_for 2 cpus_are "$old2" 1
sig STOP "$CCXD_PID"
sig 9 "$old2"
wait "$old2" 2>/dev/null
reuse "$old2" taskset -c 0 "$victim" 120
sig CONT "$CCXD_PID"
sleep 0.5
check "the stranger with the pinned process's pid is left alone" cpus_are "$old2" 0
check "and is not listed" sh -c "! ( ctl() { $CCXCTL --socket $SOCK \"\$@\"; }; ctl --json status | jq -e '.processes[] | select(.pid == $old2)' >/dev/null )"

# The same across kill -9: the ledger names the old process; the stranger
# under that pid has the very CPU ccxd gave it, only its start time differs.
spawn "$ruled" 120
old3=$SPAWNED
check "another rule-matched process is pinned" wait_for 2 cpus_are "$old3" 1
wait_for 2 grep -q "\"pid\": $old3" "$WORK/run/originals.json"
sig 9 "$CCXD_PID"
wait "$CCXD_PID" 2>/dev/null
CCXD_PID=
sig 9 "$old3"
wait "$old3" 2>/dev/null
reuse "$old3" taskset -c 1 "$victim" 120
start_ccxd
check "a restarted ccxd does not take the stranger for its process" [ "$(counter readopted)" = 0 ]
check "nor lists it" sh -c "! ( ctl() { $CCXCTL --socket $SOCK \"\$@\"; }; ctl --json status | jq -e '.processes[] | select(.pid == $old3)' >/dev/null )"
check "ccxd shuts down cleanly" stop_ccxd
check "and leaves the strangers as they were" sh -c "[ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$old3/status)\" = 1 ] && [ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$old2/status)\" = 0 ]"
