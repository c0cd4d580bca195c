# The kernel answers every LISTEN to the proc connector by broadcasting an
# acknowledgement to all its listeners. A ccxd in a PID namespace (a
# container), whose own LISTEN is ignored, must not take another daemon's
# acknowledgement for its own: it would wait for events that never come for
# its processes, and never fall back to scanning /proc.
. "$(dirname "$0")/lib.sh"

command -v unshare >/dev/null || { echo "unshare is missing"; exit 77; }
unshare --pid --fork --mount-proc true 2>/dev/null || { echo "cannot create a PID namespace here"; exit 77; }

prog=$(make_program ccxt-ack)
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
interval = 100ms

[program:ccxt-ack]
ccx = 1
CONF
cat > "$WORK/host.conf" <<CONF
[daemon]
socket = $WORK/host.sock
CONF

# Outside: daemons that start, LISTEN, and stop, for two seconds and more.
cat > "$WORK/others.sh" <<SH
i=0
while [ \$i -lt 20 ]; do
	timeout 0.1 "$CCXD" --config "$WORK/host.conf" >/dev/null 2>&1
	i=\$((i + 1))
done
SH
# Inside: ccxd starting while they do.
cat > "$WORK/inside.sh" <<SH
"$CCXD" --config "$CONF" >"$LOG" 2>&1 &
ccxd_pid=\$!
# Past the second ccxd waits for its acknowledgement: then a program can
# only be found by events (none come here) or by polling.
sleep 1.5
"$prog" 30 &
prog_pid=\$!
i=0
until [ "\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/\$prog_pid/status)" = 1 ]; do
	i=\$((i + 1)); [ \$i -lt 100 ] || break; sleep 0.02
done
echo "cpus=\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/\$prog_pid/status)"
"$CCXCTL" --socket "$SOCK" --json status | jq -r '"source=" + .watcher.source'
kill -TERM \$ccxd_pid
wait \$ccxd_pid
kill \$prog_pid
SH
sh "$WORK/others.sh" &
others=$!
timeout 20 unshare --pid --fork --mount-proc sh "$WORK/inside.sh" >"$WORK/out" 2>&1
# Let the last of them end: one killed halfway would leave its files behind.
wait "$others"
check "with other daemons' acknowledgements about, ccxd in a PID namespace still polls" grep -qx 'source=polling' "$WORK/out"
check "and pins a rule-matched program" grep -qx 'cpus=1' "$WORK/out"
