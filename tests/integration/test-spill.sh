# A rule's pin when other work crowds its CCX, on two one-CPU CCXs, with
# the defaults of crowded_wait, crowded_samples and window: a program that
# computes, pinned by a rule to CCX 1, and a program a hand pins to CPU 1.
#   1. spill = no (the default): the pin holds, crowded or not;
#   2. spill = yes: the program may use CCX 0 as well while CCX 1 is
#      crowded, and comes back to CCX 1 alone once it has room, with the
#      reasons, the journal and the counters;
#   3. a process it forks while spilled comes back with it;
#   4. a spill never widens a cgroup cpuset.
# interval = 500ms only makes it quicker: the thresholds count samples.
. "$(dirname "$0")/lib.sh"
cp "$TOP/tools/helpers/ccxt-exec" "$WORK/ccxt-hard"
cp "$TOP/tools/helpers/ccxt-exec" "$WORK/ccxt-spills"
cp "$TOP/tools/helpers/ccxt-exec" "$WORK/ccxt-forks"
cp "$TOP/tools/helpers/ccxt-exec" "$WORK/ccxt-hog"   # under another name: no rule's

write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
interval = 500ms

[program:ccxt-hard]
ccx = 1

[program:ccxt-spills]
ccx = 1
spill = yes

[program:ccxt-forks]
ccx = 1
spill = yes
CONF
start_ccxd

check "ctl rules shows which rules may spill" \
	sh -c "'$CCXCTL' --socket '$SOCK' rules | grep -qE 'ccxt-spills +1 +pin +allow +no +yes'"
reason() { ctl --json status | jq -r --argjson pid "$1" '.processes[] | select(.pid == $pid) | .reason'; }
counter() { ctl --json status | jq -r ".counters.$1"; }
hog() {
	taskset -c 1 "$WORK/ccxt-hog" spin &
	HOG=$!
	CHILDREN="$CHILDREN $HOG"
}

# 1. The default: a hard pin.
spawn "$WORK/ccxt-hard" spin
P=$SPAWNED
check "a program that computes is pinned to CCX 1 by its rule" wait_for 5 cpus_are "$P" 1
sleep 2   # its first samples pinned: alone
hog
check "crowded by a program pinned to its CPU, a rule without spill keeps it there" always 5 cpus_are "$P" 1
check "and nothing spilled" quietly jq -e '.counters.spills == 0' <<EOF
$(ctl --json status)
EOF
sig KILL "$P" "$HOG"

# 2. spill = yes
spawn "$WORK/ccxt-spills" spin
P=$SPAWNED
check "a program whose rule may spill is pinned to CCX 1 alike" wait_for 5 cpus_are "$P" 1
check "and stays there while it is alone" always 3 cpus_are "$P" 1
hog
check "crowded, it may use the nearest CCX with room as well" wait_for 10 cpus_are "$P" 0-1
r=$(reason "$P")
echo "# spilled: $r"
check "the reason says why, with the figures" sh -c "echo '$r' | grep -qE \
'^rule ccxt-spills: spilled to CCX 0: waited [0-9]+ % of the time on CCX 1 \\([0-9]+ % once pinned\\); CCX 0 had [0-9.]+ CPUs free$'"
check "so does the journal" grep -qE "Spilled ccxt-spills\\[$P\\] to CPUs 0-1: rule ccxt-spills: spilled" "$LOG"
check "status counts it" wait_for 2 sh -c "[ \"\$('$CCXCTL' --socket '$SOCK' --json status | jq .counters.spills)\" = 1 ]"
check "ctl status says so" sh -c "'$CCXCTL' --socket '$SOCK' status | grep -q '^spills: *1 to another CCX'"
check "the program pinned by hand keeps its CPU" cpus_are "$HOG" 1
check "while CCX 1 stays crowded, the program keeps both" always 3 cpus_are "$P" 0-1
sig KILL "$HOG"
check "once CCX 1 has room again, it comes back" wait_for 10 cpus_are "$P" 1
r=$(reason "$P")
echo "# back: $r"
check "the reason says so" sh -c "echo '$r' | grep -qE '^rule ccxt-spills: back on CCX 1 alone, which has [0-9.]+ CPUs free again$'"
check "status counts the return" quietly jq -e '.counters.spill_returns == 1' <<EOF
$(ctl --json status)
EOF
check "and it stays there" always 3 cpus_are "$P" 1
hog
check "crowded again, it spills again" wait_for 10 cpus_are "$P" 0-1
sig KILL "$HOG"
check "and comes back again" wait_for 10 cpus_are "$P" 1
# Back twice, it waits twice as long (8 samples) before it may spill again:
# crowded on and off, a program moves now and then, not at every turn.
hog
check "crowded at once again, it stays a while: its spills are spaced out" \
	wait_for 5 sh -c "'$CCXCTL' --socket '$SOCK' --json status | jq -r '.processes[] | select(.pid == $P) | .reason' | grep -q 'stays a while longer, having come back lately'"
check "and spills once that while is over" wait_for 10 cpus_are "$P" 0-1
check "status counts three spills" quietly jq -e '.counters.spills == 3' <<EOF
$(ctl --json status)
EOF
sig KILL "$HOG"
check "and it comes back" wait_for 10 cpus_are "$P" 1
sig KILL "$P"

# 3. What a spilled program forks follows it back.
spawn "$WORK/ccxt-forks" forking
P=$SPAWNED
check "a program that forks is pinned to CCX 1 by its rule" wait_for 5 cpus_are "$P" 1
sleep 2   # its first samples pinned: alone
hog
check "crowded, it spills" wait_for 10 cpus_are "$P" 0-1
sig USR1 "$P"
wait_for 5 sh -c "pgrep -P '$P' >/dev/null"
C=$(pgrep -P "$P" | head -n 1)
CHILDREN="$CHILDREN $C"
check "the process it forks meanwhile has its CPUs" wait_for 5 cpus_are "$C" 0-1
sig KILL "$HOG"
check "once CCX 1 has room, the program comes back" wait_for 10 cpus_are "$P" 1
check "and so does the process it forked" wait_for 5 cpus_are "$C" 1
r=$(reason "$C")
echo "# the forked process: $r"
check "whose reason says why" sh -c "echo '$r' | grep -qE '^rule ccxt-forks: back with ccxt-forks\\[$P\\], which it forked from: CPUs 1$'"

# 4. A spill never widens a cgroup cpuset: a program whose cpuset holds its
#    own CCX alone stays there, crowded or not, and nothing is counted.
#    The program of 3. (kept for the check after ccxd's stop) is stopped
#    meanwhile: computing on CCX 1 too, it would spill in its place.
if cpuset_of 1; then
	sig STOP "$P"
	spawn "$WORK/ccxt-spills" spin
	Q=$SPAWNED
	confine "$Q"
	check "a program confined to CPU 1 by its cpuset is pinned by its rule" wait_for 5 cpus_are "$Q" 1
	sleep 2   # its first samples pinned: alone
	hog
	check "crowded, it does not spill past its cpuset" wait_for 10 sh -c \
		"'$CCXCTL' --socket '$SOCK' --json status | jq -r '.processes[] | select(.pid == $Q) | .reason' | grep -q 'and no other CCX had room: stays'"
	# What ccxd set, not what the kernel let through: that would be CPU 1
	# for a spill to 0-1 too.
	check "and ccxd never widened it" always 3 sh -c \
		"[ \"\$('$CCXCTL' --socket '$SOCK' --json status | jq -r '.processes[] | select(.pid == $Q) | .cpus')\" = 1 ]"
	sig KILL "$Q" "$HOG"
	sig CONT "$P"
else
	echo "ok - a spill never widens a cgroup cpuset # SKIP no writable cgroup cpuset controller here"
fi

check "ccxd stops cleanly" stop_ccxd
check "the program has its original affinity again" cpus_are "$P" 0-1
check "and so has the process it forked" cpus_are "$C" 0-1
