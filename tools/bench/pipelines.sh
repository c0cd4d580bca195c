#!/bin/sh
# The two pipelines of the placement issue, in one run: unpinned, each hand
# placement (apart on CPUs 0 and 1, together on CPU 0), and under ccxd
# (enforce, this machine's own topology, its default seatings), once the
# automatic policy has settled. Throughput is the producer's write rate
# (/proc/PID/io wchar) over SECONDS. Prints a Markdown table.
#
#   tools/bench/pipelines.sh [SECONDS]      (root; default 5)
set -eu
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "pipelines.sh needs root" >&2; exit 1; }
make -s all >/dev/null
SECONDS_EACH=${1:-5}
WORK=$(mktemp -d /tmp/ccxd-bench.XXXXXX)
DAEMON=
cleanup() {
	pkill -x yes 2>/dev/null || true
	pkill -f "^cat /dev/urandom" 2>/dev/null || true
	[ -n "$DAEMON" ] && kill "$DAEMON" 2>/dev/null
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

rate() {   # PID: MiB/s written over SECONDS_EACH
	a=$(sed -n 's/^wchar: //p' "/proc/$1/io")
	sleep "$SECONDS_EACH"
	b=$(sed -n 's/^wchar: //p' "/proc/$1/io")
	echo "$a $b $SECONDS_EACH" | awk '{printf "%.0f", ($2 - $1) / $3 / 1048576}'
}

run() {   # PRODUCER CONSUMER [CPU_P CPU_C]: MiB/s
	sh -c "$1 | $2 > /dev/null" &
	sleep 0.5
	p=$(pgrep -n -f "^${1%% *}( |$)")
	c=$(pgrep -n -f "^${2%% *}( |$)")
	if [ $# -ge 4 ]; then
		taskset -pc "$3" "$p" >/dev/null
		taskset -pc "$4" "$c" >/dev/null
		sleep 0.5
	fi
	if [ -n "$DAEMON" ]; then
		i=0
		until ./tools/ccxctl --socket "$WORK/ccxd.sock" --json status |
			jq -e --argjson pid "$p" '.groups[]? | select(.pids | index($pid)) | .state == "kept" or .state == "reverted"' >/dev/null 2>&1; do
			i=$((i + 1)); [ $i -lt 60 ] || break; sleep 0.5
		done
		./tools/ccxctl --socket "$WORK/ccxd.sock" --json status |
			jq -r --argjson pid "$p" '.groups[]? | select(.pids | index($pid)) | "\(.state) \(.seating // "-")"' \
			> "$WORK/choice"
		sleep 1
	fi
	r=$(rate "$p")
	kill "$p" "$c" 2>/dev/null || true
	sleep 0.3
	echo "$r"
}

cat > "$WORK/ccxd.conf" <<CONF
[daemon]
socket = $WORK/ccxd.sock
state_dir = $WORK/state
calibrate = no
interval = 1s
CONF

echo "Machine: $(nproc) CPUs, $(uname -r); command: tools/bench/pipelines.sh $SECONDS_EACH ($(date -u +%Y-%m-%d))"
echo
echo "| pipeline | unpinned MiB/s | apart (0, 1) | together (0, 0) | ccxd | ccxd's choice | ccxd / best hand |"
echo "|---|---|---|---|---|---|---|"
for pipeline in "yes|pv -q" "cat /dev/urandom|sha256sum"; do
	prod=${pipeline%%|*}
	cons=${pipeline#*|}
	unpinned=$(run "$prod" "$cons")
	apart=$(run "$prod" "$cons" 0 1)
	together=$(run "$prod" "$cons" 0 0)
	./daemon/ccxd --config "$WORK/ccxd.conf" 2>/dev/null &
	DAEMON=$!
	sleep 1
	: > "$WORK/choice"
	auto=$(run "$prod" "$cons")
	state=$(cat "$WORK/choice")
	kill "$DAEMON"
	wait "$DAEMON" 2>/dev/null || true
	DAEMON=
	best=$apart
	[ "$together" -gt "$best" ] && best=$together
	echo "| \`$prod | $cons\` | $unpinned | $apart | $together | $auto | $state | $(echo "$auto $best" | awk '{printf "%.2f", $1 / $2}') |"
done
