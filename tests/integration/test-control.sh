# ccxctl and the control socket: answers, errors, privilege, reloads.
. "$(dirname "$0")/lib.sh"
SEND=$TOP/tools/helpers/ccxd-send

out=$("$CCXCTL" --socket "$WORK/none.sock" status 2>&1)
rc=$?
check "no daemon: exit status 3, not running" [ "$rc" -eq 3 ]
check "no daemon: one line saying so, and how to start it" \
	sh -c "[ \$(echo '$out' | wc -l) -eq 1 ] && echo '$out' | grep -q 'ccxd is not running: no socket .*systemctl start ccxd.socket'"
: > "$WORK/plain"
"$CCXCTL" --socket "$WORK/plain" status 2>"$WORK/said"
rc=$?
check "a file that is no socket: says so, exit status 1" sh -c "[ $rc -eq 1 ] && grep -q 'is not a socket' $WORK/said"

# The conventions of systemctl and its kin: help, --help, --version, and
# one line for a mistake.
check "--version prints ccxctl's, without ccxd" sh -c "[ \"\$($CCXCTL --socket $WORK/none.sock --version)\" = 'ccxctl $(sed -n 's/^VERSION *:= *//p' "$TOP/Makefile")' ]"
check "help lists the commands" sh -c "$CCXCTL help | grep -q '^  pin PID CCX'"
check "help COMMAND says that command's usage" sh -c "$CCXCTL help pin | grep -q '^Usage: ccxctl \[OPTIONS\] pin PID CCX'"
check "COMMAND --help says the same" sh -c "[ \"\$($CCXCTL pin --help)\" = \"\$($CCXCTL help pin)\" ]"
check "help of a command with options of its own is its own" sh -c "$CCXCTL help probe | grep -q 'ccxctl probe --local'"
"$CCXCTL" bogus 2>"$WORK/said"
rc=$?
check "an unknown command: one line with a hint, exit status 2" \
	sh -c "[ $rc -eq 2 ] && [ \$(wc -l < $WORK/said) -eq 1 ] && grep -qF \"unknown command 'bogus'; 'ccxctl help'\" $WORK/said"
"$CCXCTL" status --bogus 2>"$WORK/said"
rc=$?
check "an unknown option: what getopt says and a hint, exit status 2" \
	sh -c "[ $rc -eq 2 ] && [ \$(wc -l < $WORK/said) -eq 2 ] && grep -qF \"Try 'ccxctl help status'\" $WORK/said"

prog=$(make_program ccxt-prog)
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX

[program:ccxt-prog]
ccx = 1
CONF
check "--check-config accepts a good file" sh -c "[ \"\$($CCXD --check-config $CONF)\" = 'configuration OK' ]"
cp "$CONF" "$WORK/good.conf"

start_ccxd
chmod 666 "$SOCK"

check "version answers" sh -c "$CCXCTL --socket $SOCK version | grep -q '^ccxd '"
check "--json=short: one line of the same JSON" sh -c "
	[ \$($CCXCTL --socket $SOCK --json=short status | wc -l) -eq 1 ] &&
	[ \"\$($CCXCTL --socket $SOCK --json=short rules | jq -c .)\" = \"\$($CCXCTL --socket $SOCK --json rules | jq -c .)\" ]"
check "--json=pretty is --json" sh -c "[ \"\$($CCXCTL --socket $SOCK --json=pretty rules)\" = \"\$($CCXCTL --socket $SOCK --json rules)\" ]"
check "--json of another style: exit status 2" sh -c "$CCXCTL --socket $SOCK --json=wide status 2>/dev/null; [ \$? -eq 2 ]"
check "topology --json has both CCXs" sh -c "[ \"\$($CCXCTL --socket $SOCK --json topology | jq -c '[.ccxs[].cpus]')\" = '[\"0\",\"1\"]' ]"
check "topology prints a table" sh -c "$CCXCTL --socket $SOCK topology | grep -Eq '^1 +1 +1 '"
check "rules --json lists the rule" sh -c "[ \"\$($CCXCTL --socket $SOCK --json rules | jq -c '.rules[0] | [.name, .ccx, .policy]')\" = '[\"ccxt-prog\",[1],\"pin\"]' ]"

# Privilege: anyone admitted may read, only root may change things.
as_nobody() { runuser -u nobody -- "$@"; }
NOBODY_CTL=$(for_others "$CCXCTL")
check "nobody may read status" sh -c "runuser -u nobody -- $NOBODY_CTL --socket $SOCK status >/dev/null"
spawn "$prog" 60
pid=$SPAWNED
wait_for 2 cpus_are "$pid" 1
for cmd in "pin $pid 0" "unpin $pid" "reload" "forget /usr/bin/a"; do
	out=$(as_nobody "$NOBODY_CTL" --socket "$SOCK" $cmd 2>&1)
	rc=$?
	check "nobody is refused '${cmd%% *}'" sh -c "[ $rc -eq 1 ] && echo '$out' | grep -q 'io.ccxd.PermissionDenied'"
done
check "a refused pin changed nothing" cpus_are "$pid" 1
chmod 600 "$SOCK"
out=$(as_nobody "$NOBODY_CTL" --socket "$SOCK" status 2>&1)
rc=$?
chmod 666 "$SOCK"
check "a socket nobody may not open: permission denied, and the group that may" \
	sh -c "[ $rc -eq 1 ] && echo '$out' | grep -q 'permission denied on .*group ccxd (usermod -aG ccxd'"

# Protocol errors are Varlink errors.
reply=$("$SEND" "$SOCK" '{"method":"io.ccxd.Nope"}')
check "unknown method: MethodNotFound" sh -c "echo '$reply' | jq -e '.error == \"org.varlink.service.MethodNotFound\"' >/dev/null"
reply=$("$SEND" "$SOCK" '{"method":"com.example.Nope"}')
check "unknown interface: InterfaceNotFound" sh -c "echo '$reply' | jq -e '.error == \"org.varlink.service.InterfaceNotFound\"' >/dev/null"
reply=$("$SEND" "$SOCK" '{"method":"io.ccxd.Pin","parameters":{"pid":"x","ccx":1}}')
check "bad parameter: InvalidParameter naming it" sh -c "echo '$reply' | jq -e '.error == \"org.varlink.service.InvalidParameter\" and .parameters.parameter == \"pid\"' >/dev/null"
reply=$("$SEND" "$SOCK" '{"method":')
check "invalid JSON: an error, not a crash" sh -c "echo '$reply' | jq -e '.error' >/dev/null && $CCXCTL --socket $SOCK version >/dev/null"
reply=$("$SEND" "$SOCK" '{"method":"org.varlink.service.GetInfo"}')
check "GetInfo lists the interface" sh -c "echo '$reply' | jq -e '.parameters.interfaces | index(\"io.ccxd\")' >/dev/null"

# ccxctl run: a command started on one CCX, by anyone, its exit status its
# own; ccxd leaves it there, even a program a rule names elsewhere.
check "run --ccx 1 starts the command on CCX 1" sh -c "[ \"\$($CCXCTL --socket $SOCK run --ccx 1 -- sh -c 'sed -n s/^Cpus_allowed_list:.//p /proc/self/status' | tr -d '[:space:]')\" = 1 ]"
check "so may nobody, with no privilege" sh -c "[ \"\$(runuser -u nobody -- $NOBODY_CTL --socket $SOCK run --ccx 0 -- sh -c 'sed -n s/^Cpus_allowed_list:.//p /proc/self/status' | tr -d '[:space:]')\" = 0 ]"
check "without --ccx, on one CCX of the two" sh -c "$CCXCTL --socket $SOCK run -- sh -c 'sed -n s/^Cpus_allowed_list:.//p /proc/self/status' | grep -Eqx '[[:space:]]*[01]'"
check "the command's exit status is run's" sh -c "$CCXCTL --socket $SOCK run --ccx 0 -- sh -c 'exit 7'; [ \$? -eq 7 ]"
check "a command that is not there: 127" sh -c "$CCXCTL --socket $SOCK run -- $WORK/none 2>/dev/null; [ \$? -eq 127 ]"
check "a CCX the topology lacks: an error, and nothing runs" sh -c "! $CCXCTL --socket $SOCK run --ccx 5 -- touch $WORK/ran 2>/dev/null && [ ! -e $WORK/ran ]"
check "no command: the usage, exit status 2" sh -c "$CCXCTL --socket $SOCK run --ccx 0 2>/dev/null; [ \$? -eq 2 ]"
"$CCXCTL" --socket "$SOCK" run --ccx 0 -- "$prog" 30 &
CHILDREN="$CHILDREN $!"
launched=$!
# ccxctl first, then, once it has set its affinity, the program.
is_program() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]; }
check "run executes the program" wait_for 5 is_program "$launched" ccxt-prog
check "a program a rule pins to CCX 1, started by run on CCX 0, stays there" always 2 cpus_are "$launched" 0
check "status says it was left alone, its CPUs set by someone else" \
	sh -c "$CCXCTL --socket $SOCK --json status | jq -e --argjson p $launched '.processes[] | select(.pid == \$p) | .reason | test(\"set by someone else\")' >/dev/null"
sig KILL "$launched"

# ccxctl explain PID: each rule's verdict, the placement, the automatic
# policy's view; for root what was read of the process too.
spawn "$prog" 30
named=$SPAWNED
wait_for 2 cpus_are "$named" 1
ctl explain "$named" > "$WORK/explained"
check "explain: the rule that matches decides" grep -Eq "^  $CONF:[0-9]+ +ccxt-prog +matches: decides$" "$WORK/explained"
check "explain: the placement, with its original" grep -q "^placed:   pinned, CPUs 1 (originally 0-1): rule ccxt-prog$" "$WORK/explained"
check "explain: the automatic policy's is not its to place" grep -q "^automatic: not its to place: rule ccxt-prog decides$" "$WORK/explained"
check "explain: root sees its executable" grep -qx "exe:      $prog" "$WORK/explained"
sleep 30 &
CHILDREN="$CHILDREN $!"
stranger=$!
ctl explain "$stranger" > "$WORK/explained"
check "explain: a rule that does not match says which key, in the rule's words" \
	grep -Eq "^  $CONF:[0-9]+ +ccxt-prog +no: its name does not match \[program:ccxt-prog\]$" "$WORK/explained"
check "explain: a process ccxd did not touch" grep -q "^placed:   no: ccxd has not changed its CPUs$" "$WORK/explained"
check "explain --json: the verdicts and no rule that decides" sh -c "
	$CCXCTL --socket $SOCK --json explain $stranger | jq -e '.rule == null and .rules[0].matches == false and .placement == null' >/dev/null"
runuser -u nobody -- "$NOBODY_CTL" --socket "$SOCK" explain "$named" > "$WORK/explained"
check "nobody may ask too, and sees no executable or command line" \
	sh -c "grep -q 'matches: decides' $WORK/explained && ! grep -q '^exe:' $WORK/explained && ! grep -q '^cmdline:' $WORK/explained"
"$CCXCTL" --socket "$SOCK" explain 2 2>"$WORK/said"
rc=$?
check "explain of a kernel thread or no process: an error, exit status 1" sh -c "[ $rc -eq 1 ] && grep -q 'NoSuchProcess' $WORK/said"
sig KILL "$named" "$stranger"

# status --watch: again and again; in place on a terminal, one after
# another elsewhere.
timeout 3 "$CCXCTL" --socket "$SOCK" status --watch=1 > "$WORK/watched"
check "status --watch to a file prints the status again each interval, without terminal codes" \
	sh -c "[ \$(grep -c '^ccxd ' $WORK/watched) -ge 2 ] && ! grep -q \"\$(printf '\\033')\" $WORK/watched"
script -qec "timeout 3 $CCXCTL --socket $SOCK status --watch=1" /dev/null > "$WORK/watched" 2>&1
check "on a terminal it clears the screen before each" sh -c "[ \$(grep -c \"\$(printf '\\033')\\[2J\" $WORK/watched) -ge 2 ]"
timeout 3 "$CCXCTL" --socket "$SOCK" --json=short status --watch=1 > "$WORK/watched"
check "status --watch --json=short: a JSON object a line, nothing else" \
	sh -c "[ \$(wc -l < $WORK/watched) -ge 2 ] && jq -e .version $WORK/watched >/dev/null && [ \$(jq -c .version $WORK/watched | sort -u | wc -l) -eq 1 ]"
check "--watch with another command: exit status 2" sh -c "$CCXCTL --socket $SOCK rules --watch 2>/dev/null; [ \$? -eq 2 ]"
check "--watch of no time: exit status 2" sh -c "$CCXCTL --socket $SOCK status --watch=0 2>/dev/null; [ \$? -eq 2 ]"

# A bad reload keeps the running rules.
cat > "$CONF" <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
mode = sometimes

[program:ccxt-prog]
ccx = 5
bogus = 1
CONF
out=$("$CCXCTL" --socket "$SOCK" reload 2>&1)
rc=$?
check "a bad reload exits non-zero" [ "$rc" -ne 0 ]
check "a bad reload prints every error with FILE:LINE" sh -c "echo '$out' | grep -q '^$CONF:4: ' && echo '$out' | grep -q '^$CONF:8: '"
check "--check-config reports the same errors" sh -c "! $CCXD --check-config $CONF >/dev/null 2>&1 && $CCXD --check-config $CONF 2>&1 | grep -q '^$CONF:4: '"
check "after a bad reload the old rule is still in force" sh -c "[ \"\$($CCXCTL --socket $SOCK --json rules | jq -r '.rules[0].ccx[0]')\" = 1 ]"
sig HUP "$CCXD_PID"
sleep 0.3
check "SIGHUP with a bad file keeps ccxd running" kill -0 "$CCXD_PID"
spawn "$prog" 60
check "after a bad reload new programs still follow the old rule" wait_for 2 cpus_are "$SPAWNED" 1
ccx5=$(cat <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX

[program:ccxt-prog]
ccx = 5
CONF
)
echo "$ccx5" > "$CONF"
check "a rule naming a CCX the topology lacks is an error with its line" sh -c "$CCXD --check-config $CONF 2>&1 | grep -q '^$CONF:6: ccx 5 does not exist'"
echo "bogus = 1" >> "$CONF"
check "and is reported with the file's other errors, at once" sh -c "
	$CCXD --check-config $CONF 2>&1 | grep -q '^$CONF:6: ccx 5 does not exist' &&
	$CCXD --check-config $CONF 2>&1 | grep -q \"^$CONF:7: unknown key 'bogus'\""
echo "$ccx5" > "$CONF"
# Keys that can do nothing: warned of with their line, and the file is good.
cat > "$CONF" <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX

[program:ccxt-prog]
policy = ignore
ccx = 1

[program:ccxt-other]
ccx = 0,1
spill = yes
CONF
$CCXD --check-config "$CONF" >"$WORK/out" 2>"$WORK/said"; said=$?
check "keys that can do nothing: warnings with their line, and the file is good" \
	sh -c "[ $said -eq 0 ] && [ \"\$(cat '$WORK/out')\" = 'configuration OK' ] &&
	       grep -qx '$CONF:7: warning: ccx does nothing: policy = ignore never places the program' '$WORK/said' &&
	       grep -q '^$CONF:9: warning: spill does nothing: ccx lists several CCXs' '$WORK/said' && [ \$(wc -l < '$WORK/said') -eq 2 ]"

cp "$WORK/good.conf" "$CONF"
check "a good reload succeeds" sh -c "$CCXCTL --socket $SOCK reload >/dev/null"
check "ccxd stops cleanly" stop_ccxd
check "the socket file is removed at exit" test ! -e "$SOCK"

# topology = system: the CCXs this machine's hwloc shows, as many L3s as
# it has (one or two here), whatever that is.
write_conf <<CONF
[daemon]
socket = $SOCK
topology = system
mode = off
CONF
start_ccxd
check "topology = system has as many CCXs as hwloc shows L3s here ($(l3s_here))" \
	[ "$(ctl --json topology | jq '.ccxs | length')" -eq "$(l3s_here)" ]
case $(nproc):$(l3s_here) in
2:1) ccxs='0-1' ;;
2:2) ccxs='0,1' ;;
*) ccxs= ;;
esac
if [ -n "$ccxs" ]; then
	check "and both CPUs in them ($ccxs)" [ "$(ctl --json topology | jq -r '[.ccxs[].cpus] | join(",")')" = "$ccxs" ]
else
	echo "ok - and both CPUs in them # SKIP $(nproc) CPUs, $(l3s_here) L3s as hwloc shows"
fi
stop_ccxd
