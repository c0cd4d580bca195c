# What becomes of a kept seat when the machine or the group changes. A
# ping-pong pair is kept on one CPU (the only seating allowed, so that it
# is known). Under the defaults of crowded_wait, crowded_samples and
# recheck:
#   1-2. two one-CPU CCXs: a program a hand pins to the pair's CPU crowds
#        it: the pair moves to the CCX with room, and goes back to its own
#        placement where none has room, with the reason and the figures;
#   3.   one CCX of two CPUs: the pair becomes two busy processes; its rate
#        falls far, its seat is checked again at once, and its own
#        placement wins.
# And with recheck = 3s, a seat still best is checked again, and kept: a
# TCP pair, whose hundreds of thousands of calls a second are counted one
# in 16 while it is kept (where the kernel counts sockets), and each while
# it is checked again. Last, what a person sees of a kept group: its gain
# in ccxctl status, its seating in ccxctl learned (and forgotten), and
# ccxctl recommend's rules, which pin it once pasted into a drop-in.
. "$(dirname "$0")/lib.sh"
cp "$TOP/tools/helpers/ccxt-exec" "$WORK/ccxt-hog"   # under another name: a program that computes

write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
interval = 500ms
seatings = shared-cpu
CONF
start_ccxd

group_state() { group_json "$1" | jq -r '.state'; }
settled() { case "$(group_state "$1")" in kept|reverted) return 0 ;; *) return 1 ;; esac; }
talk() {   # KIND ARGS...: sets P and C
	rm -f "$WORK/talk.pids"
	"$TOP/tools/helpers/ccxt-talk" "$@" > "$WORK/talk.pids" &
	CHILDREN="$CHILDREN $!"
	wait_for 2 test -s "$WORK/talk.pids"
	read -r P C < "$WORK/talk.pids"
	CHILDREN="$CHILDREN $P $C"
}
# kept_pair [KIND]: a ping-pong pair (through pipes, or ccxt-talk's KIND)
# that ccxd kept on one CPU, in P and C. Its experiment is a measurement: a
# pair that came out reverted is tried anew.
kept_pair() {
	for try in 1 2 3; do
		talk "${1:-pingpong}" 0 900   # killed at the end of its part: long enough however slow the machine
		wait_for 40 settled "$P"
		[ "$(group_state "$P")" = kept ] && return 0
		echo "# try $try: $(group_json "$P" | jq -c '{state, trials: [.trials[] | {seating, gain, beat}]}')"
		sig KILL "$P" "$C"
		sleep 2.5   # the group ends, its members gone
	done
	return 1
}
has() { group_json "$P" | jq -e "$1" >/dev/null; }

if ! kept_pair; then
	not_ok "a ping-pong pair is kept on one CPU" "reverted three times: $(group_json "$P" | jq -c .)"
	exit 1
fi
HOME_CPU=$(cpus_of "$P")
OTHER=$((1 - HOME_CPU))
check "a ping-pong pair is kept on one CPU ($HOME_CPU)" sh -c "[ '$HOME_CPU' = 0 ] || [ '$HOME_CPU' = 1 ]"
seated_share() { has '.waited_seated != null'; }
check "how much its members wait for a CPU by themselves there is measured" wait_for 5 seated_share
echo "# kept, alone: $(group_json "$P" | jq -c '{waited, waited_seated}')"
check "and it stays there" always 3 cpus_are "$P" "$HOME_CPU"

# 1. A program pinned by hand to the pair's CPU: the pair waits, and the
#    other CCX has room.
taskset -c "$HOME_CPU" "$WORK/ccxt-hog" spin &
HOG=$!
CHILDREN="$CHILDREN $HOG"
moved() { cpus_are "$P" "$OTHER" && cpus_are "$C" "$OTHER"; }
check "crowded by a program pinned to its CPU, the pair moves to the other CCX" wait_for 10 moved
g=$(group_json "$P")
echo "# moved: $(echo "$g" | jq -c '{state, ccx, waited, reason}')"
check "still kept, with the same seating" sh -c "echo '$g' | jq -e '.state == \"kept\" and .seating == \"shared-cpu\" and .ccx == $OTHER' >/dev/null"
check "and the reason says why, with the figures" \
	sh -c "echo '$g' | jq -e '.reason | test(\"moved: waited [0-9]+ % of the time on CCX $HOME_CPU \\\\([0-9]+ % once placed\\\\); CCX $OTHER had [0-9.]+ CPUs free\")' >/dev/null"
check "so does the journal" grep -qE "Group [0-9]+ \\(.*\\): moved: waited [0-9]+ % of the time on CCX $HOME_CPU" "$LOG"
check "status counts the move" quietly jq -e '.sampling.crowded_moves == 1' <<EOF
$(ctl --json status)
EOF
check "the program pinned by hand keeps its CPU" cpus_are "$HOG" "$HOME_CPU"
check "and the pair stays on the CCX with room" always 3 moved

# 2. Crowded there too, with no CCX left with room: the pair goes back to
#    its own placement, and is tried again later.
taskset -c "$OTHER" "$WORK/ccxt-hog" spin &
HOG2=$!
CHILDREN="$CHILDREN $HOG2"
back() { cpus_are "$P" 0-1 && cpus_are "$C" 0-1 && has '.state == "crowded"'; }
check "with every CCX crowded, the pair is put back where it was (crowded)" wait_for 10 back
g=$(group_json "$P")
echo "# put back: $(echo "$g" | jq -c '{state, ccx, reason}')"
check "and the reason says why" \
	sh -c "echo '$g' | jq -e '.reason | test(\"^put back: its CCX grew crowded \\\\(waited [0-9]+ % of the time on CCX $OTHER \\\\([0-9]+ % once placed\\\\), and no other CCX had [0-9.]+ CPUs free\\\\) \\\\(tried again in [0-9]+ samples\\\\)\")' >/dev/null"
check "so does the journal" grep -qE "crowded: waited [0-9]+ % of the time on CCX $OTHER \\([0-9]+ % once placed\\), and no other CCX had" "$LOG"
check "and it stays put back while crowded" always 3 back
sig KILL "$HOG" "$HOG2"
sig KILL "$P" "$C"
sleep 2.5   # the group ends, its members gone

stop_ccxd

# 3. The pair becomes two busy processes (SIGUSR2: the writer streams, both
#    burn CPU per message), which run twice as fast apart: the shared CPU
#    is no longer the best seat. One CCX of both CPUs, so that two busy
#    processes are still a group it has room for.
sed -i "s/^topology = .*/topology = $ONE_CCX/" "$CONF"
start_ccxd
rechecks=$(ctl --json status | jq .sampling.rechecks)
if ! kept_pair; then
	not_ok "a ping-pong pair is kept on one CPU, again" "reverted three times: $(group_json "$P" | jq -c .)"
	exit 1
fi
reference() { has '.kept_bytes_per_cpu_s > 0'; }
check "what a change in the pair is measured against is taken once kept" wait_for 10 reference
sig USR2 "$P"
apart() { has '.state == "reverted" and .ccx == null' && cpus_are "$P" 0-1 && cpus_are "$C" 0-1; }
check "a kept pair that becomes two busy processes is checked again, and given back its own placement" \
	wait_for 15 apart
echo "# after: $(group_json "$P" | jq -c '{state, reason, trials: [.trials[] | {seating, gain, beat}]}')"
check "at once, since its bytes per CPU-second fell by more than half" \
	grep -qE "Group [0-9]+ \\(.*\\): checking shared-cpu on CCX [01] against its own placement again: its bytes per CPU-second moved to half or double" "$LOG"
check "status counts the re-check" sh -c "[ \$($CCXCTL --socket $SOCK --json status | jq .sampling.rechecks) -gt $rechecks ]"
sig KILL "$P" "$C"
sleep 2.5

# 4. recheck = 3s: a seat that is still the best is checked again, and
#    kept. A TCP pair, counted thinly while kept.
sed -i 's/^\[daemon\]$/[daemon]\nrecheck = 3s/' "$CONF"
ctl reload >/dev/null
if ! kept_pair pingpong-tcp; then
	not_ok "a TCP ping-pong pair is kept on one CPU" "reverted three times: $(group_json "$P" | jq -c .)"
	exit 1
fi
sockets_counted=no
ctl --json status | jq -e '.sampling.counted | test("sockets")' >/dev/null && sockets_counted=yes
if [ "$sockets_counted" = yes ]; then
	check "kept, its calls are counted one in 16" wait_for 3 has '.thinned == true'
	check "ccxctl status says so" sh -c "$CCXCTL --socket $SOCK status | grep -q ': kept on CCX .* (its calls counted 1 in 16)$'"
fi
echo "# kept: $(group_json "$P" | jq -c '{state, thinned, channels: [.channels[] | {kind, messages_per_s}]}')"
rechecking() { has '.state == "validating" and (.reason | test("^kept on CCX 0 \\(shared-cpu\\), checking again whether it is faster there than where its members would run by themselves$"))'; }
check "with recheck = 3s, a kept seat is checked again after 3 s, and status says so" wait_for 8 rechecking
check "while it is checked again, each of its calls is counted" has '.state != "validating" or .thinned == false'
check "and the journal says why" grep -qE "checking shared-cpu on CCX 0 against its own placement again: kept that long" "$LOG"
check "still the best, it is kept again" wait_for 15 has '.state == "kept" and .seating == "shared-cpu"'
if [ "$sockets_counted" = yes ]; then
	check "and counted one call in 16 again" wait_for 3 has '.thinned == true'
else
	echo "# the kernel does not count sockets here: nothing is thinned"
	check "where the kernel does not count sockets, no call is left out" has '.thinned == false'
fi

# 5. What a person sees of it: the gain in plain ccxctl status, the seating
#    learned for its programs (and forgotten by hand), and the kept group
#    as rules to paste into a drop-in, which pin the pair where it was kept.
EXE=$(readlink "/proc/$P/exe")
gid=$(group_json "$P" | jq -r .id)
check "ccxctl status shows the kept group's gain, and its noise" \
	sh -c "$CCXCTL --socket $SOCK status | grep -Eq '^$gid .* kept .* [+-][0-9]+% \\(noise [0-9]+%\\) '"
check "ccxctl learned lists the seating that won for its programs" \
	sh -c "$CCXCTL --socket $SOCK --json learned | jq -e --arg k '$EXE|$EXE' '.learned | map(select(.programs == \$k and .seating == \"shared-cpu\")) | length == 1' >/dev/null"
recommended() { ctl recommend > "$WORK/kept.conf" && grep -q '^\[program:' "$WORK/kept.conf"; }
check "ccxctl recommend prints the kept group as rules" wait_for 10 recommended
check "one rule for the program both members run, on the CCX it was kept on" sh -c "
	[ \$(grep -c '^\[program:' $WORK/kept.conf) -eq 1 ] && grep -qx 'exe = $EXE' $WORK/kept.conf && grep -qx 'ccx = 0' $WORK/kept.conf"
mkdir -p "$CONF.d"
cp "$WORK/kept.conf" "$CONF.d/kept.conf"
check "the rules pasted into a drop-in are a good configuration" sh -c "$CCXD --check-config $CONF | grep -qx 'configuration OK'"
CCX0=$(ctl --json topology | jq -r '.ccxs[0].cpus')
check "and once reloaded, they pin both members to that CCX ($CCX0)" sh -c "
	$CCXCTL --socket $SOCK reload >/dev/null &&
	$CCXCTL --socket $SOCK --json status | jq -e --argjson p $P --argjson c $C \
		'[.processes[] | select((.pid == \$p or .pid == \$c) and .rule == \"ccxt-talk\" and .cpus == \"$CCX0\")] | length == 2' >/dev/null"
check "ccxctl forget forgets what was learned for the programs" sh -c "
	$CCXCTL --socket $SOCK forget '$EXE|$EXE' | grep -qxF 'forgot $EXE|$EXE' &&
	! $CCXCTL --socket $SOCK --json learned | jq -e --arg k '$EXE|$EXE' '.learned[] | select(.programs == \$k)' >/dev/null"
check "a second time there is nothing to forget: an error" sh -c "! $CCXCTL --socket $SOCK forget '$EXE|$EXE' 2>/dev/null"
sig KILL "$P" "$C"
stop_ccxd
