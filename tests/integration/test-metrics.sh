# ccxctl metrics, io.ccxd.GetMetrics and metrics_file: Prometheus text that
# follows what the daemon does.
. "$(dirname "$0")/lib.sh"
SEND=$TOP/tools/helpers/ccxd-send
PROM=$WORK/textfile/ccxd.prom
mkdir -p "$WORK/textfile"

prog=$(make_program ccxt-metrics)
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
interval = 100ms
metrics_file = $PROM

[program:ccxt-metrics]
ccx = 1
CONF
start_ccxd
chmod 666 "$SOCK"

# value NAME: the sample's value in ccxctl metrics
value() { ctl metrics | awk -v n="$1" '$1 == n { print $2 }'; }

spawn "$prog" 60
check "a rule-matched program is pinned" wait_for 2 cpus_are "$SPAWNED" 1
check "metrics count it as pinned" wait_for 2 sh -c "$CCXCTL --socket $SOCK metrics | grep -qx 'ccxd_processes{state=\"pinned\"} 1'"
check "and count the pin" [ "$(value ccxd_pins_total)" -ge 1 ]
check "every metric has HELP and TYPE" sh -c "
	$CCXCTL --socket $SOCK metrics > $WORK/m.txt &&
	for n in \$(grep -v '^#' $WORK/m.txt | sed 's/[{ ].*//' | sort -u); do
		grep -q \"^# HELP \$n \" $WORK/m.txt && grep -Eq \"^# TYPE \$n (counter|gauge)\$\" $WORK/m.txt || exit 1
	done"
check "nobody may read the metrics" sh -c "runuser -u nobody -- $(for_others "$CCXCTL") --socket $SOCK metrics | grep -q '^ccxd_pins_total '"
"$SEND" "$SOCK" '{"method":"io.ccxd.GetMetrics"}' > "$WORK/reply.json"
check "GetMetrics answers {\"text\": ...}" quietly jq -e '.parameters.text | startswith("# HELP ")' "$WORK/reply.json"
check "--json prints the reply" sh -c "$CCXCTL --socket $SOCK --json metrics | jq -e '.text | contains(\"ccxd_reloads_total 0\")' >/dev/null"

check "metrics_file is written every interval" wait_for 2 grep -qx 'ccxd_processes{state="pinned"} 1' "$PROM"
check "readable by node_exporter's user" sh -c "[ \$(stat -c %a $PROM) = 644 ]"
check "with no temporary file left beside it" sh -c "[ \$(ls $WORK/textfile | wc -l) -eq 1 ]"
ctl reload >/dev/null
check "it follows the daemon: a reload is counted there" wait_for 2 grep -qx 'ccxd_reloads_total 1' "$PROM"

# A directory that goes away: one warning, and the file comes back with it.
rm -rf "$WORK/textfile"
check "a missing directory is logged once" wait_for 2 sh -c "[ \$(grep -c 'Failed to write $PROM' $LOG) -eq 1 ]"
sleep 0.3
check "not every interval" [ "$(grep -c "Failed to write $PROM" "$LOG")" -eq 1 ]
mkdir "$WORK/textfile"
check "and the file is written again once it can be" wait_for 2 test -s "$PROM"
check "which is logged too" grep -q "Writing $PROM again" "$LOG"
