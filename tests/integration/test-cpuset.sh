# A process confined to a cgroup cpuset is never given a CPU outside it.
. "$(dirname "$0")/lib.sh"

cpuset_of 0 || { echo "no writable cgroup cpuset controller (v1 or v2) here"; exit 77; }

excluded=$(make_program ccxt-cpuset1)
auto=$(make_program ccxt-cpusetA)
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX

[program:ccxt-cpuset1]
ccx = 1

[program:ccxt-cpusetA]
ccx = auto
policy = compact
CONF
field_of() { ctl --json status | jq -r --argjson pid "$1" ".processes[] | select(.pid == \$pid) | .$2"; }

# Confined before ccxd sees them: started, moved, then ccxd starts.
spawn "$excluded" 60
e_pid=$SPAWNED
confine "$e_pid"
spawn "$auto" 60
a_pid=$SPAWNED
confine "$a_pid"
start_ccxd
sleep 0.3
check "a CCX outside the cpuset is not given" cpus_are "$e_pid" 0
check "status says the cpuset excludes it" sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq -r '.processes[] | select(.pid == $e_pid) | .state')\" = skipped ] && $CCXCTL --socket $SOCK --json status | jq -r '.processes[] | select(.pid == $e_pid) | .reason' | grep -q 'cpuset 0 excludes CCX 1'"
check "ccx = auto picks a CCX inside the cpuset" sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq -r '.processes[] | select(.pid == $a_pid) | .state + \" \" + .cpus')\" = 'pinned 0' ]"
check "pin by hand onto an excluded CCX is refused" sh -c "! $CCXCTL --socket $SOCK pin $e_pid 1 2>/dev/null"
check "and changes nothing" cpus_are "$e_pid" 0
check "ccxd stops" stop_ccxd
check "the confined process keeps its cpuset" cpus_are "$a_pid" 0
