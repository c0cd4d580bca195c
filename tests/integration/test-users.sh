# Whose processes one user's traffic may move. Any user can talk to another
# user's process (a service on loopback) and so join it to a group of
# theirs; ccxd then moves no process of another user narrower than its
# CCX, moves root's with others' only by a rule, and moves none on one
# party's traffic alone (SECURITY.md). ccxt-talk's ends are made other
# users' after they connect: the client nobody, the server root or daemon.
# interval = 500ms only makes it quicker: the thresholds count samples.
. "$(dirname "$0")/lib.sh"
TALK=$TOP/tools/helpers/ccxt-talk
NOBODY_UID=$(id -u nobody)
DAEMON_UID=$(id -u daemon)

conf() {   # TOPOLOGY
	write_conf <<CONF
[daemon]
socket = $SOCK
topology = $1
interval = 500ms
CONF
}
# talk CLIENT_UID SERVER_UID KIND: a pair, client P and server C
talk() {
	rm -f "$WORK/talk.pids"
	CCXT_TALK_UID=$1 CCXT_TALK_PEER_UID=$2 "$TALK" "$3" "${4:-0}" 120 >"$WORK/talk.pids" 2>/dev/null &
	CHILDREN="$CHILDREN $!"
	wait_for 2 test -s "$WORK/talk.pids"
	read -r P C <"$WORK/talk.pids"
	CHILDREN="$CHILDREN $P $C"
	wait_for 2 sh -c "[ \"\$(stat -c %u /proc/$P)\" = '$1' ] && [ \"\$(stat -c %u /proc/$C)\" = '$2' ]"
}
stop_talk() { sig KILL "$P" "$C"; sleep 2.5; }   # the group ends, its members gone
has() { group_json "$P" | jq -e "$1" >/dev/null 2>&1; }
both_cpus() { cpus_are "$P" "$1" && cpus_are "$C" "$1"; }

# ---- 1. nobody's client, root's server, one CCX of two CPUs ----
conf "$ONE_CCX"
start_ccxd
talk "$NOBODY_UID" 0 pingpong-tcp
check "nobody's client and root's server are one group" wait_for 10 has '.pids | length == 2'
check "of root's and another user's" wait_for 5 has '.users == "with-root"'
check "which is not moved (other-users), and says why" \
	wait_for 5 has '.state == "other-users" and (.reason | test("root.s processes move with other users. by a rule alone"))'
check "root's server keeps every CPU all along" always 8 cpus_are "$C" 0-1
check "and so does nobody's client" cpus_are "$P" 0-1
stop_talk

# ---- 2. nobody's client, daemon's server: a whole CCX at most ----
talk "$NOBODY_UID" "$DAEMON_UID" pingpong-tcp
check "nobody's client and daemon's server are one group of several users" wait_for 10 has '.users == "several"'
check "whose experiment tries the whole CCX, and that alone" wait_for 20 has '[.trials[].seating] == ["whole-ccx"]'
# whole_ccx PID: on both CPUs of the one CCX; says what it had otherwise
whole_ccx() {
	c=$(cpus_of "$1")
	[ "$c" = 0-1 ] || { echo "# $1 had CPUs '$c': $(group_json "$P" | jq -c '{state, seating, cpus, reason}')"; return 1; }
}
check "daemon's server is never narrowed below its CCX" always 5 whole_ccx "$C"
g=$(group_json "$P")
echo "# several users on one CCX of two: $(echo "$g" | jq -c '{state, reason, trials: [.trials[] | {seating, gain}]}')"
stop_talk

# ---- 3. a stream that one party alone sends: not moved ----
talk "$NOBODY_UID" "$DAEMON_UID" tcp 64
check "a stream from nobody to daemon's process is one group" wait_for 10 has '.pids | length == 2'
check "that is not moved: one party's traffic alone" \
	wait_for 5 has '.users == "one-sided" and .state == "other-users" and (.reason | test("not each sent to another"))'
check "and daemon's process keeps every CPU" always 4 cpus_are "$C" 0-1
stop_talk
stop_ccxd

# ---- 4. two one-CPU CCXs: several users' pair is seated on a whole CCX ----
# Whether that seating is kept is the measurement's to say: a ping-pong over
# TCP gains from one CPU on some machines and loses on others.
conf "$TWO_CCX"
start_ccxd
talk "$NOBODY_UID" "$DAEMON_UID" pingpong-tcp
# seated_whole: on trial on one CCX, the same one CPU for both
seated_whole() {
	has '.state == "validating" and .seating == "whole-ccx" and .users == "several"' &&
		[ "$(cpus_of "$P")" = "$(cpus_of "$C")" ] && [ "$(cpus_of "$C")" != 0-1 ]
}
check "nobody's client and daemon's server are seated together on a whole CCX, on trial" wait_for 40 seated_whole
check "the whole CCX and that alone is tried" has '[.trials[].seating] | unique == ["whole-ccx"]'
check "then kept exactly when it beat its rate before" wait_for 40 \
	has '(.state == "kept" or .state == "reverted") and ((.state == "kept") == .trials[-1].beat)'
if has '.state == "kept"'; then
	check "kept: on the whole CCX, the same CPU for both" sh -c \
		"[ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$P/status)\" = \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$C/status)\" ]"
	check "with the seating whole-ccx" has '.seating == "whole-ccx"'
fi
echo "# several users on two one-CPU CCXs: $(group_json "$P" | jq -c '{state, trials: [.trials[] | {seating, gain, beat}]}')"
stop_talk

# ---- 5. one user's pair: the seatings as before ----
talk "$NOBODY_UID" "$NOBODY_UID" pingpong-tcp
check "one user's pair tries the seatings inside a CCX" wait_for 30 has '.users == "one" and (.trials | length) >= 1 and .trials[0].seating != "whole-ccx"'
echo "# one user's pair: $(group_json "$P" | jq -c '{users, state, trials: [.trials[] | {seating, gain, beat}]}')"
stop_talk
check "ccxd stops cleanly" stop_ccxd
