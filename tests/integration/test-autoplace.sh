# The automatic policy in enforce mode: moves are experiments, kept only
# when the group got faster. Each part names its topology, this machine's two
# CPUs as one CCX or as two, so that it means the same whatever hwloc shows
# here; what depends on the split is tried under both. The experiments'
# rates are /proc's (traffic = no): loading the traffic counters takes a
# sanitized ccxd CPU seconds at its start, which the pairs measured here
# would lose.
. "$(dirname "$0")/lib.sh"

# wchar_rate PID SECONDS: bytes/s the process wrote over that long
wchar_rate() {
	a=$(sed -n 's/^wchar: //p' "/proc/$1/io")
	sleep "$2"
	b=$(sed -n 's/^wchar: //p' "/proc/$1/io")
	echo "$a $b $2" | awk '{printf "%d", ($2 - $1) / $3}'
}
group_state() { group_json "$1" | jq -r '.state'; }
settled() { case "$(group_state "$1")" in kept|reverted) return 0 ;; *) return 1 ;; esac; }

# start_pipeline NAME "PRODUCER" "CONSUMER" [CPU_P CPU_C]: sets P and C
start_pipeline() {
	if [ $# -ge 5 ]; then
		sh -c "taskset -c $4 $2 | taskset -c $5 $3 > /dev/null" &
	else
		sh -c "$2 | $3 > /dev/null" &
	fi
	CHILDREN="$CHILDREN $!"
	sleep 0.3
	P=$(pgrep -n -f "^${2%% *}( |$)")
	C=$(pgrep -n -f "^${3%% *}( |$)")
	CHILDREN="$CHILDREN $P $C"
}
stop_pipeline() { sig TERM "$P" "$C"; sleep 0.2; }

# 1. A move that makes a group slower is reverted: two processes that each
#    burn a CPU, squeezed onto one shared CPU of a CCX of two. Where each CCX
#    has one CPU, such a pair has no CCX with room for it, unless the machine
#    gave it less than a CPU in all: whichever, it is narrowed only as an
#    experiment and its evidence say.
# The file of pids goes first: the background shell truncates it only when
# it runs, and until then the previous pair's pids, long gone, are there.
busy_pair() {
	rm -f "$WORK/busy.pids"
	"$TOP/tools/helpers/ccxt-talk" pipe 0 60 500 > "$WORK/busy.pids" &
	CHILDREN="$CHILDREN $!"
	wait_for 2 test -s "$WORK/busy.pids"
	read -r P C < "$WORK/busy.pids"
	CHILDREN="$CHILDREN $P $C"
}
write_conf <<CONF
[daemon]
traffic = no
socket = $SOCK
topology = $ONE_CCX
interval = 500ms
window = 3
seatings = shared-cpu
CONF
start_ccxd
busy_pair
check "one CCX of two: a group is formed and a move tried" wait_for 10 sh -c "$CCXCTL --socket $SOCK --json status | jq -e '.groups[] | select(.pids | index($P)) | .trials | length > 0' >/dev/null"
check "a move that made the group slower is reverted" wait_for 10 sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq -r '.groups[] | select(.pids | index($P)) | .state')\" = reverted ]"
g=$(group_json "$P")
echo "# evidence: $(echo "$g" | jq -c '{rate_before, trials}')"
# Reverted: the evidence must say that the shared CPU did not beat the rate
# before, whatever its measured gain (a figure, for the benchmarks).
check "its evidence says the seating did not beat the rate before" sh -c "echo '$g' | jq -e '.trials[0].seating == \"shared-cpu\" and .trials[0].beat == false and .rate_before > 0' >/dev/null"
originals_back() { cpus_are "$P" 0-1 && cpus_are "$C" 0-1; }
check "and the original masks are back" originals_back
stop_pipeline
stop_ccxd

sed -i "s/^topology = .*/topology = $TWO_CCX/" "$CONF"
start_ccxd
busy_pair
check "two CCXs of one: the pair is narrowed only by an experiment, or as its evidence says" \
	always 10 placed_as_evidenced "$P" "$C"
echo "# busy pair on two CCXs of one: $(group_json "$P" | jq -c '{state, demand, trials: [.trials[] | {seating, gain, beat}]}')"
stop_pipeline
stop_ccxd

# 2. What won before for the same programs is tried first, even after a
#    restart (state_dir/placements.json).
mkdir -p "$WORK/state"
cat > "$WORK/state/placements.json" <<JSON
{ "version": 1, "seatings": { "$(command -v cat)|$(command -v sha256sum)": "shared-cpu" } }
JSON
write_conf <<CONF
[daemon]
traffic = no
socket = $SOCK
topology = $ONE_CCX
interval = 500ms
window = 2
CONF
start_ccxd
start_pipeline urandom "cat /dev/urandom" "sha256sum"
check "what won before for these programs is tried first" wait_for 10 sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq -r '.groups[] | select(.pids | index($P)) | .trials[0].seating')\" = shared-cpu ]"
programs='.groups[] | select(.pids | index('$P')) | .programs'
check "root sees the group's programs by path" sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq -r '$programs')\" = '$(command -v cat)|$(command -v sha256sum)' ]"
chmod 666 "$SOCK"
check "others see them by name alone (no other user's paths)" \
	sh -c "[ \"\$(runuser -u nobody -- $(for_others "$CCXCTL") --socket $SOCK --json status | jq -r '$programs')\" = 'cat|sha256sum' ]"
stop_pipeline
stop_ccxd

rm -f "$WORK/state/placements.json"

# 3. Each kind of pair ends in its best hand placement, whichever that is: a
#    pair bound by wake-ups (4 KiB ping-pong) runs many times faster on one
#    shared CPU; a pair of busy processes (each burning 500 us per 64 KiB)
#    twice as fast apart. Both effects are far larger than this machine's
#    noise, which a yes | pv pipe's is not (tools/bench/pipelines.sh measures
#    those against their best hand placement, in BENCHMARKS.md).
talk() {   # KIND ARGS...: sets P and C
	rm -f "$WORK/talk.pids"   # not the previous pair's (busy_pair)
	"$TOP/tools/helpers/ccxt-talk" "$@" > "$WORK/talk.pids" &
	CHILDREN="$CHILDREN $!"
	wait_for 2 test -s "$WORK/talk.pids"
	read -r P C < "$WORK/talk.pids"
	CHILDREN="$CHILDREN $P $C"
}
# attempt: ccxd's experiment on a fresh pair of kind, knowing no winner
# from before; sets rate and g, and fails where the checks below would.
attempt() {
	rm -f "$WORK/state/placements.json"
	start_ccxd
	talk $kind
	wait_for 25 settled "$P"
	sleep 0.5
	rate=$(wchar_rate "$P" 2)
	g=$(group_json "$P")
	echo "# ${kind%% *} with ccxd: $((rate / 1048576)) MiB/s, $(echo "$g" | jq -c '{state, seating, trials: [.trials[] | {seating, gain, beat}]}')"
	stop_pipeline
	stop_ccxd
	! echo "$g" | jq -e --arg worse "$worse_seating" '.state == "kept" and .seating == $worse' >/dev/null &&
		[ "$rate" -ge $((best * 7 / 10)) ]
}
attempt_twice() { attempt || attempt; }
for kind in "pingpong 0 60" "pipe 0 60 500"; do
	best=0
	best_seating=
	worse_seating=
	for cpus in "0 1 one-per-core" "0 0 shared-cpu"; do
		set -- $cpus
		talk $kind
		taskset -pc "$1" "$P" >/dev/null
		taskset -pc "$2" "$C" >/dev/null
		sleep 0.5
		rate=$(wchar_rate "$P" 2)
		stop_pipeline
		echo "# ${kind%% *} by hand on CPUs $1 and $2: $((rate / 1048576)) MiB/s"
		if [ "$rate" -gt "$best" ]; then
			worse_seating=$best_seating
			best=$rate
			best_seating=$3
		else
			worse_seating=$3
		fi
	done
	# The two placements differ by 2x (busy pair) to 10x (ping-pong), far
	# beyond this machine's noise of about 15 % between windows. ccxd must
	# never keep the worse one, and must run about as fast as the better one
	# by hand: by keeping it, or, where the scheduler already does as well
	# (two busy processes apart), by leaving the pair as it was. As in
	# test-pipelines.sh, an experiment sees the machine of its own minute (a
	# guest whose host took a CPU for a while can mislead one), so a failed
	# attempt is made once more, on a fresh pair under a fresh ccxd.
	sed -i "s/^topology = .*/topology = $ONE_CCX/" "$CONF"
	attempt_twice
	check "one CCX of two: a ${kind%% *} pair does not stay in its worse placement ($worse_seating)" \
		sh -c "! echo '$g' | jq -e '.state == \"kept\" and .seating == \"$worse_seating\"' >/dev/null"
	check "one CCX of two: and runs as fast as in its best hand placement, $best_seating (within the noise)" \
		[ "$rate" -ge $((best * 7 / 10)) ]
done

# On two one-CPU CCXs a pair can only share a CPU. The busy pair, which needs
# two, is never moved (part 1). The ping-pong pair gets its experiment, and
# the verdict follows the evidence. Whether it beats Linux's own placement is
# not asserted here: with the CPUs free, Linux seats this pair together or
# apart, and the rate before taken in turns right after the shared CPU's
# turn finds it still together.
sed -i "s/^topology = .*/topology = $TWO_CCX/" "$CONF"
rm -f "$WORK/state/placements.json"
start_ccxd
talk pingpong 0 60
wait_for 25 settled "$P"
g=$(group_json "$P")
echo "# pingpong on two CCXs of one: $(echo "$g" | jq -c '{state, seating, trials: [.trials[] | {seating, gain, beat}]}')"
check "two CCXs of one: a ping-pong pair's experiment tries the shared CPU" \
	sh -c "echo '$g' | jq -e '[.trials[].seating] == [\"shared-cpu\"]' >/dev/null"
check "and keeps it only when it beat the rate before" \
	sh -c "echo '$g' | jq -e '(.state == \"kept\" and .seating == \"shared-cpu\" and .trials[0].beat) or (.state == \"reverted\" and (.trials[0].beat | not) and .seating == null)' >/dev/null"
stop_pipeline
stop_ccxd

mask_of() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status"; }

# 4. A child that a seated member forks inherits the member's seat, which
#    was chosen for the member: it gets the member's original back. It is
#    forked during a turn of the experiment; it is no member, so the end of
#    the experiment would not give it back its original.
write_conf <<CONF
[daemon]
traffic = no
socket = $SOCK
topology = $ONE_CCX
interval = 1s
window = 3
seatings = shared-cpu
CONF
start_ccxd
talk pingpong 0 60
# fork_seated: K, a child of P forked while P sat on one CPU.
fork_seated() {
	for try in 1 2 3; do
		wait_for 10 sh -c "[ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$P/status)\" != 0-1 ]" || return 1
		sig USR1 "$P"
		wait_for 2 sh -c "pgrep -n -P $P | grep -vx $C" >/dev/null
		K=$(pgrep -n -P "$P" | grep -vx "$C")   # the newest: one killed before may linger unreaped
		CHILDREN="$CHILDREN $K"
		inherited=$(mask_of "$K")
		[ "$inherited" != 0-1 ] && return 0
		sig TERM "$K"   # the turn ended just before the fork
	done
	return 1
}
check "a member seated on one CPU forks a child, which inherits the seat" fork_seated
echo "# its child $K forked with CPUs $inherited"
check "the child gets the member's original back" \
	wait_for 3 sh -c "[ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$K/status)\" = 0-1 ]"
sig TERM "$K"
stop_pipeline
stop_ccxd

# 5. All the seatings of one experiment go to one CCX, though the load that
#    chose it moves: two one-CPU CCXs, CPU 0 busy when the first seating is
#    chosen, CPU 1 busy from then on.
write_conf <<CONF
[daemon]
traffic = no
socket = $SOCK
interval = 500ms
window = 3
seatings = shared-cpu
topology = $TWO_CCX
CONF
start_ccxd
taskset -c 0 sh -c 'while :; do :; done' &
HOG=$!
CHILDREN="$CHILDREN $HOG"
sleep 1
talk pingpong 0 60
wait_for 10 sh -c "[ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$P/status)\" != 0-1 ]"
first=$(mask_of "$P")
taskset -pc 1 "$HOG" >/dev/null
seats=$first
until settled "$P" || ! kill -0 "$P" 2>/dev/null; do
	m=$(mask_of "$P")
	case " $seats " in *" $m "*) ;; *) seats="$seats $m" ;; esac
	sleep 0.1
done
seats=$(echo "$seats" | tr ' ' '\n' | grep -vx '0-1' | sort -u | tr '\n' ' ')
echo "# first seat on CPU $first with CPU 0 busy; seats in the experiment: $seats($(group_state "$P"))"
check "an experiment's seatings all go to the CCX its first went to" [ "$seats" = "$first " ]
sig TERM "$HOG"
stop_pipeline
stop_ccxd

# 6. The default counting (no traffic key): the counters, where the kernel
#    loads them, in place of /proc's estimates. The busy pair of part 1 is a
#    group whose seat is an experiment, and its members end where the
#    evidence says. Given longer than the parts above: loading the counters
#    takes a sanitized ccxd seconds of CPU at its start.
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $ONE_CCX
interval = 500ms
window = 3
seatings = shared-cpu
CONF
start_ccxd
busy_pair
check "default counting: a group is formed and a move tried" wait_for 20 sh -c "$CCXCTL --socket $SOCK --json status | jq -e '.groups[] | select(.pids | index($P)) | .trials | length > 0' >/dev/null"
check "and it is settled as its evidence says" wait_for 20 settled "$P"
check "where its members are as the evidence says" placed_as_evidenced "$P" "$C"
stop_pipeline
stop_ccxd

# 7. Rules only (automatic = no): a ping-pong pair (which fits one of two
#    one-CPU CCXs) is never grouped nor moved, while a rule's program is
#    pinned; a reload to the default (automatic = yes) hands the pair to the
#    automatic policy again.
ruled=$(make_program ccxt-ruled)
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
interval = 500ms
window = 3
automatic = no

[program:ccxt-ruled]
ccx = 1
CONF
start_ccxd
talk pingpong 0 60
spawn "$ruled" 60
check "rules only: the rule's program is pinned" wait_for 5 cpus_are "$SPAWNED" 1
sleep 2
check "rules only: status says so, and shows no groups after 4 intervals" \
	sh -c "$CCXCTL --socket $SOCK --json status | jq -e '.automatic == false and (has(\"groups\") | not)' >/dev/null &&
	       $CCXCTL --socket $SOCK status | grep -q '^ccxd .*, mode enforce (rules only), '"
pair_untouched() { cpus_are "$P" 0-1 && cpus_are "$C" 0-1; }
check "rules only: the pair keeps the CPUs it had" pair_untouched
sed -i '/^automatic = no$/d' "$CONF"
check "a reload to the default" sh -c "$CCXCTL --socket $SOCK reload >/dev/null"
check "the default: the pair is a group again" wait_for 10 sh -c "$CCXCTL --socket $SOCK --json status | jq -e '.automatic == true and any(.groups[]; .pids | index($P))' >/dev/null"
stop_pipeline
stop_ccxd
