# Rules that match on more than the program: its parent, an ancestor, its
# cgroup and systemd unit, on real process trees and a cgroup made by hand.
. "$(dirname "$0")/lib.sh"

field_of() { ctl --json status | jq -r --argjson pid "$1" ".processes[] | select(.pid == \$pid) | .$2"; }

# Shells of their own names: a launcher, a tree's root and a middle link.
for s in ccxt-launch ccxt-root ccxt-mid ccxt-other; do cp "$(command -v dash)" "$WORK/$s"; done
for p in ccxt-target ccxt-deep ccxt-byexe ccxt-forced ccxt-cg ccxt-unit; do make_program "$p" >/dev/null; done

write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
interval = 200ms

[program:ccxt-target]
parent = ccxt-launch
ccx = 1

[program:ccxt-deep]
ancestor = ccxt-root
ccx = 1

[program:ccxt-byexe]
parent = $WORK/ccxt-launch
ccx = 1

[program:ccxt-forced]
parent = ccxt-launch
ccx = 1
force = yes

[program:ccxt-cg]
cgroup = */ccxd-test-*.slice/*
ccx = 1

[program:ccxt-unit]
unit = ccxt-unit-*.scope
ccx = 1
CONF
start_ccxd

# child_of PID: the one child of a launcher, once it has one (within 2 s);
# it joins the processes the cleanup kills.
child_of() {
	CHILD=
	wait_for 2 sh -c "[ -n \"\$(cat /proc/$1/task/*/children 2>/dev/null)\" ]" || return 1
	CHILD=$(cat /proc/"$1"/task/*/children | awk '{print $1}')
	CHILDREN="$CHILDREN $CHILD"
	a_pid "$CHILD"
}

# launch SHELL CMD: SHELL forks a child that executes CMD; the child's pid is in $CHILD
launch() {
	spawn "$WORK/$1" -c "$2 & wait"
	child_of "$SPAWNED" || { not_ok "$1 starts $2" "no child"; return 1; }
}

# --- parent ---
launch ccxt-launch "$WORK/ccxt-target 60"
check "parent =: a program started by its launcher is pinned" wait_for 2 cpus_are "$CHILD" 1
check "and status says which parent matched" sh -c "$CCXCTL --socket $SOCK --json status | jq -r '.processes[] | select(.pid == $CHILD) | .reason' | grep -q 'parent ccxt-launch\\[$SPAWNED\\]'"
spawn "$WORK/ccxt-target" 60
direct=$SPAWNED
launch ccxt-other "$WORK/ccxt-target 60"
other=$CHILD
sleep 0.5
check "parent =: started by the test, the same program is left alone" cpus_are "$direct" 0-1
check "parent =: started by another shell, too" cpus_are "$other" 0-1
check "and is not in status" [ -z "$(field_of "$other" state)" ]

# --- parent by exe ---
launch ccxt-launch "$WORK/ccxt-byexe 60"
check "parent = PATH: matched on the parent's executable" wait_for 2 cpus_are "$CHILD" 1
launch ccxt-other "$WORK/ccxt-byexe 60"
sleep 0.5
check "parent = PATH: another executable does not match" cpus_are "$CHILD" 0-1

# --- ancestor ---
spawn "$WORK/ccxt-root" -c "$WORK/ccxt-mid -c '$WORK/ccxt-deep 60 & wait' & wait"
root=$SPAWNED
if child_of "$root" && mid=$CHILD && child_of "$mid"; then
	deep=$CHILD
	check "ancestor =: a grandchild of the root is pinned" wait_for 2 cpus_are "$deep" 1
	check "and status says which ancestor matched" sh -c "$CCXCTL --socket $SOCK --json status | jq -r '.processes[] | select(.pid == $deep) | .reason' | grep -q 'ancestor ccxt-root\\[$root\\]'"
else
	not_ok "ccxt-root starts a tree of three" "no grandchild"
fi
spawn "$WORK/ccxt-other" -c "$WORK/ccxt-mid -c '$WORK/ccxt-deep 60 & wait' & wait"
if child_of "$SPAWNED" && child_of "$CHILD"; then
	sleep 0.5
	check "ancestor =: a tree without the root is left alone" cpus_are "$CHILD" 0-1
else
	not_ok "ccxt-other starts a tree of three" "no grandchild"
fi

# --- hand-set affinities stay hand-set ---
spawn taskset -c 0 "$WORK/ccxt-launch" -c "$WORK/ccxt-target 60 & wait"
if child_of "$SPAWNED"; then
	hand=$CHILD
	sleep 0.5
	check "parent =: a process started under taskset is left alone" cpus_are "$hand" 0
	check "and status says why" sh -c "$CCXCTL --socket $SOCK --json status | jq -r '.processes[] | select(.pid == $hand) | .reason' | grep -q 'set by someone else'"
fi
spawn taskset -c 0 "$WORK/ccxt-launch" -c "$WORK/ccxt-forced 60 & wait"
if child_of "$SPAWNED"; then
	check "parent = with force = yes takes it all the same" wait_for 2 cpus_are "$CHILD" 1
fi

# --- ccxctl rules ---
rules=$(ctl rules)
line=$(grep -n '^\[program:ccxt-target\]' "$CONF" | cut -d: -f1)
check "ccxctl rules shows what each rule matches on" sh -c "echo '$rules' | grep -Eq '^$CONF:$line +ccxt-target +1 +pin +allow +no +no +comm ccxt-target, parent ccxt-launch\$'"
check "ccxctl rules shows unit and cgroup globs" sh -c "echo '$rules' | grep -q 'comm ccxt-unit, unit ccxt-unit-\\*.scope\$'"
check "ccxctl --json rules has the keys" sh -c "[ \"\$($CCXCTL --socket $SOCK --json rules | jq -r '.rules[1].ancestor, .rules[4].cgroup' | tr '\n' ' ')\" = 'ccxt-root */ccxd-test-*.slice/* ' ]"

# --- cgroup and unit ---
# The hierarchy ccxd reads a process's cgroup from: the unified one, unless
# it shows only "/" and systemd's v1 hierarchy is there (ccxd.conf(5)).
v2=$(sed -n 's/^0:://p' /proc/self/cgroup)
v1=$(sed -n 's/^[0-9]*:name=systemd://p' /proc/self/cgroup)
mount_of() { awk -v t="$1" -v o="$2" '$9 == t && (o == "" || $NF ~ o) { print $5; exit }' /proc/self/mountinfo; }
hier=
if [ -n "$v1" ] && { [ -z "$v2" ] || [ "$v2" = / ]; }; then
	hier=$(mount_of cgroup 'name=systemd')
elif [ -n "$v2" ]; then
	hier=$(mount_of cgroup2 '')
fi
if [ -z "$hier" ] || [ ! -w "$hier" ]; then
	echo "ok - cgroup and unit rules # SKIP no writable cgroup v2 or v1 name=systemd hierarchy here ($(tr '\n' ' ' < /proc/self/cgroup))"
	exit 0
fi
slice=$hier/ccxd-test-$$.slice
ON_EXIT='for d in "$slice"/*.scope "$slice"; do [ -d "$d" ] && { wait_for 2 rmdir "$d" 2>/dev/null || echo "# cannot remove $d"; }; done'
mkdir -p "$slice/ccxt-unit-$$.scope" "$slice/other-$$.scope" || { not_ok "a cgroup made by hand" "mkdir under $hier"; exit 1; }

# in_cgroup DIR PROGRAM: starts PROGRAM inside cgroup DIR, moved there before it executes
in_cgroup() {
	spawn sh -c "echo \$\$ > '$1/cgroup.procs' && exec '$WORK/$2' 60"
}

in_cgroup "$slice/ccxt-unit-$$.scope" ccxt-cg
cg=$SPAWNED
wait_for 2 grep -q "/ccxd-test-$$.slice/ccxt-unit-$$.scope" "/proc/$cg/cgroup"
echo "# /proc/$cg/cgroup: $(tr '\n' ' ' < /proc/$cg/cgroup)"
check "cgroup =: a program in a cgroup made by hand is pinned" wait_for 2 cpus_are "$cg" 1
check "and status names the cgroup" sh -c "$CCXCTL --socket $SOCK --json status | jq -r '.processes[] | select(.pid == $cg) | .reason' | grep -q 'cgroup /ccxd-test-$$.slice/ccxt-unit-$$.scope'"
spawn "$WORK/ccxt-cg" 60
outside=$SPAWNED

in_cgroup "$slice/ccxt-unit-$$.scope" ccxt-unit
unit=$SPAWNED
check "unit =: a program in a scope of that name is pinned" wait_for 2 cpus_are "$unit" 1
check "and status names the unit" sh -c "$CCXCTL --socket $SOCK --json status | jq -r '.processes[] | select(.pid == $unit) | .reason' | grep -q 'unit ccxt-unit-$$.scope'"
in_cgroup "$slice/other-$$.scope" ccxt-unit
other_unit=$SPAWNED
spawn "$WORK/ccxt-unit" 60
no_unit=$SPAWNED
sleep 0.5
check "cgroup =: outside that cgroup the program is left alone" cpus_are "$outside" 0-1
check "unit =: in another scope it is left alone" cpus_are "$other_unit" 0-1
check "unit =: outside any such scope, too" cpus_are "$no_unit" 0-1
