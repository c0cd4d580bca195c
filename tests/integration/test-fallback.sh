# Inside a PID namespace the proc connector ignores LISTEN: ccxd must notice,
# say so, and find programs by scanning /proc instead.
. "$(dirname "$0")/lib.sh"

command -v unshare >/dev/null || { echo "unshare is missing"; exit 77; }
unshare --pid --fork --mount-proc true 2>/dev/null || { echo "cannot create a PID namespace here"; exit 77; }

prog=$(make_program ccxt-ns)
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
interval = 100ms

[program:ccxt-ns]
ccx = 1
CONF

# Everything below runs inside the new PID namespace, as ccxd's neighbours.
cat > "$WORK/inside.sh" <<SH
"$CCXD" --config "$CONF" >"$LOG" 2>&1 &
ccxd_pid=\$!
i=0
until "$CCXCTL" --socket "$SOCK" version >/dev/null 2>&1; do
	i=\$((i + 1)); [ \$i -lt 250 ] || exit 1; sleep 0.02
done
"$prog" 30 &
prog_pid=\$!
i=0
until [ "\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/\$prog_pid/status)" = 1 ]; do
	i=\$((i + 1)); [ \$i -lt 150 ] || break; sleep 0.02
done
echo "cpus=\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/\$prog_pid/status)"
"$CCXCTL" --socket "$SOCK" --json status | jq -r '"source=" + .watcher.source, "note=" + (.watcher.note // "")'
kill -TERM \$ccxd_pid
wait \$ccxd_pid
echo "after=\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/\$prog_pid/status)"
kill \$prog_pid
SH
OUT=$WORK/out
timeout 20 unshare --pid --fork --mount-proc sh "$WORK/inside.sh" >"$OUT" 2>&1
check "in a PID namespace ccxd falls back to polling /proc" grep -qx 'source=polling' "$OUT"
check "and says why in status" grep -q '^note=.*did not acknowledge LISTEN' "$OUT"
check "a rule-matched program is pinned by the /proc scan" grep -qx 'cpus=1' "$OUT"
check "shutdown restores it there too" grep -qx 'after=0-1' "$OUT"
