# The metrics in the tools people already run, end to end with Debian's
# packages: ccxd writes metrics_file into a textfile directory,
# prometheus-node-exporter (as nobody, as the packaged one runs as a user
# of its own) serves it, a real Prometheus server scrapes the exporter on
# loopback, and its HTTP API answers queries for ccxd's series: the
# counters, and the gauges of a group of communicating processes.
# limit: 240
. "$(dirname "$0")/lib.sh"
for p in prometheus prometheus-node-exporter curl; do
	command -v "$p" >/dev/null || { echo "$p is not installed (make check installs it)"; exit 77; }
done

TEXTFILE=$WORK/textfile
mkdir -p "$TEXTFILE" "$WORK/tsdb"
chmod 755 "$TEXTFILE"
chown nobody "$WORK/tsdb"
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
interval = 500ms
seatings = shared-cpu
metrics_file = $TEXTFILE/ccxd.prom
CONF
start_ccxd

# free_port: one the kernel has no listener on now.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# A ping-pong pair: a group with traffic, whose experiment measures a gain.
"$TOP/tools/helpers/ccxt-talk" pingpong 0 900 > "$WORK/talk.pids" &   # killed at the end
CHILDREN="$CHILDREN $!"
wait_for 2 test -s "$WORK/talk.pids"
read -r P C < "$WORK/talk.pids"
CHILDREN="$CHILDREN $P $C"
gid() { ctl --json status | jq -r --argjson p "$P" '.groups[]? | select(.pids | index($p)) | .id'; }
grouped() { [ -n "$(gid)" ]; }
check "ccxd forms the pair's group" wait_for 10 grouped
G=$(gid)
check "metrics_file has the group's gauges, by its lowest pid, its programs by file name" wait_for 5 \
	grep -q "^ccxd_group_info{group=\"$G\",programs=\"ccxt-talk|ccxt-talk\",state=\"[a-z-]*\"" "$TEXTFILE/ccxd.prom"
check "and its traffic" grep -Eq "^ccxd_group_bytes_per_second\\{group=\"$G\"\\} [0-9]+$" "$TEXTFILE/ccxd.prom"

EXPORTER_PORT=$(free_port)
setpriv --reuid=nobody --regid=nogroup --clear-groups prometheus-node-exporter --web.listen-address="127.0.0.1:$EXPORTER_PORT" \
	--collector.disable-defaults --collector.textfile --collector.textfile.directory="$TEXTFILE" \
	> "$WORK/exporter.log" 2>&1 &
CHILDREN="$CHILDREN $!"
scraped() { curl -sf "http://127.0.0.1:$EXPORTER_PORT/metrics" > "$WORK/exported" && grep -q "$1" "$WORK/exported"; }
check "node_exporter's textfile collector serves ccxd's metrics, read as nobody" wait_for 10 scraped '^ccxd_pins_total '
check "and reads the file without an error" sh -c "grep -q '^node_textfile_scrape_error 0$' $WORK/exported"

SERVER_PORT=$(free_port)
cat > "$WORK/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$EXPORTER_PORT']
YML
setpriv --reuid=nobody --regid=nogroup --clear-groups prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
	--web.listen-address="127.0.0.1:$SERVER_PORT" > "$WORK/prometheus.log" 2>&1 &
CHILDREN="$CHILDREN $!"
# query PROMQL JQ: Prometheus answers the query, and its result passes JQ.
query() {
	curl -sf -G "http://127.0.0.1:$SERVER_PORT/api/v1/query" --data-urlencode "query=$1" > "$WORK/answer.json" &&
		jq -e "$2" "$WORK/answer.json" >/dev/null
}
check "Prometheus scrapes the exporter and has ccxd's counters" \
	wait_for 60 query 'ccxd_pins_total' '.status == "success" and (.data.result | length) == 1'
check "ccxd_info names the mode and the topology" \
	wait_for 5 query 'ccxd_info' ".data.result[0].metric.mode == \"enforce\" and .data.result[0].metric.topology == \"$TWO_CCX\""
check "the group's series, with its programs and state" \
	wait_for 5 query "ccxd_group_info{group=\"$G\"}" '.data.result[0].metric.programs == "ccxt-talk|ccxt-talk"'
check "once its experiment is measured, its gain" \
	wait_for 60 query "ccxd_group_gain_ratio{group=\"$G\"}" '(.data.result | length) == 1'
# The same gain in both, to the metric's four decimals (a new experiment
# between the two reads is asked again).
same_gain() {
	query "ccxd_group_gain_ratio{group=\"$G\"}" '(.data.result | length) == 1' &&
	awk -v a="$(jq -r '.data.result[0].value[1]' "$WORK/answer.json")" \
	    -v b="$(ctl --json status | jq -r --argjson g "$G" '.groups[] | select(.id == $g) | .gain')" \
	    'BEGIN { d = a - b; exit !(a != "" && b != "" && d < 0.0001 && d > -0.0001) }'
}
check "and the gain Prometheus holds is the one ccxctl status shows" wait_for 10 same_gain
sig KILL "$P" "$C"
stop_ccxd
