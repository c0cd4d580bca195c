# ccxctl and the control socket: answers, errors, privilege, reloads.
. "$(dirname "$0")/lib.sh"
SEND=$TOP/tools/helpers/ccxd-send

out=$("$CCXCTL" --socket "$WORK/none.sock" status 2>&1)
rc=$?
check "no daemon: exit status 1" [ "$rc" -eq 1 ]
check "no daemon: one line saying so" sh -c "[ \$(echo '$out' | wc -l) -eq 1 ] && echo '$out' | grep -q 'ccxd is not running'"

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
for cmd in "pin $pid 0" "unpin $pid" "reload"; do
	out=$(as_nobody "$NOBODY_CTL" --socket "$SOCK" $cmd 2>&1)
	rc=$?
	check "nobody is refused '${cmd%% *}'" sh -c "[ $rc -eq 1 ] && echo '$out' | grep -q 'io.ccxd.PermissionDenied'"
done
check "a refused pin changed nothing" cpus_are "$pid" 1

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
