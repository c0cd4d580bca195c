# What ccxd tells systemd, and a socket that systemd hands over.
. "$(dirname "$0")/lib.sh"
LISTEN=$TOP/tools/helpers/notify-listen
NOTES=$WORK/notes

prog=$(make_program ccxt-sd)
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX

[program:ccxt-sd]
ccx = 1
CONF

"$LISTEN" "$WORK/notify" 20 > "$NOTES" &
LISTENER=$!
CHILDREN="$CHILDREN $LISTENER"
wait_for 2 test -S "$WORK/notify"
NOTIFY_SOCKET=$WORK/notify WATCHDOG_USEC=200000 start_ccxd
check "READY=1 once the socket answers" wait_for 2 grep -q 'READY=1' "$NOTES"
check "STATUS= says what ccxd does" wait_for 2 grep -q 'STATUS=.*processes pinned' "$NOTES"
check "WATCHDOG=1 when systemd asks for it" wait_for 2 grep -q 'WATCHDOG=1' "$NOTES"
ctl reload >/dev/null
check "a reload says RELOADING=1 and READY=1 again" sh -c "grep -q 'RELOADING=1' $NOTES && [ \$(grep -c 'READY=1' $NOTES) -ge 2 ]"
stop_ccxd
check "shutdown says STOPPING=1" wait_for 2 grep -q 'STOPPING=1' "$NOTES"

# Socket activation: the listening socket comes from outside.
rm -f "$SOCK"
systemd-socket-activate -l "$SOCK" "$CCXD" --config "$CONF" >"$LOG" 2>&1 &
CCXD_PID=$!
wait_for 3 test -S "$SOCK"
check "a socket-activated ccxd answers on the passed socket" wait_for 5 sh -c "$CCXCTL --socket $SOCK version >/dev/null 2>&1"
check "and logs that it was activated" grep -q 'socket-activated' "$LOG"
spawn "$prog" 60
check "and pins as usual" wait_for 2 cpus_are "$SPAWNED" 1
check "it stops cleanly" stop_ccxd
check "and leaves the passed socket to its owner" test -S "$SOCK"
