# The probe through ccxd: a worker process that never holds up the loop,
# progress streamed to ccxctl, one probe at a time, a client that leaves
# cancels it, and the calibration cached per topology in state_dir.
. "$(dirname "$0")/lib.sh"

TALK=$TOP/tools/helpers/ccxt-talk
STATE=$WORK/state
ONE_CCX="synthetic:pack:1 l3:1 core:2 pu:1"
pst() { ctl --json status | jq -r ".probe.$1"; }   # pst FIELD: the status's probe field
ms_now() { echo $(( $(date +%s%N) / 1000000 )); }

# dry-run: nothing on this machine is moved by this test's daemon.
conf() {
	write_conf <<CONF
[daemon]
socket = $SOCK
topology = $1
mode = dry-run
interval = 200ms
state_dir = $STATE
calibrate = yes
CONF
}

conf "$TWO_CCX"
start_ccxd
check "status answers at once, while the start-up calibration runs" [ "$(pst state)" = calibrating ]
check "the calibration ends with figures in use" wait_for 90 sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq -r .probe.figures.source)\" = calibration ]"
fp=$(pst fingerprint)
check "they are cached in state_dir under the topology's fingerprint" \
	sh -c "[ \"\$(jq -r .fingerprint $STATE/probe.json)\" = '$fp' ] && jq -e '.results.relations | length == 2' $STATE/probe.json >/dev/null"
check "status shows the figures' age and the decision they make" \
	sh -c "$CCXCTL --socket $SOCK --json status | jq -e '.probe.figures.age_s >= 0 and (.probe.decision.note | test(\"shared-cpu [0-9.]+ GiB/s\"))' >/dev/null"
check "ccxctl status prints them" sh -c "$CCXCTL --socket $SOCK status | grep -q '^probe:    figures from the calibration of '"

# A client's probe: progress streams, status keeps answering, a second is refused.
"$CCXCTL" --socket "$SOCK" probe --quick --json >"$WORK/probe.json" 2>"$WORK/progress" &
client=$!
CHILDREN="$CHILDREN $client"
check "a client's probe runs in a worker" wait_for 10 sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq -r .probe.state)\" = probing ]"
worker=$(pst worker_pid)
t0=$(ms_now)
ctl status >/dev/null
t1=$(ms_now)
check "status answers while it runs ($((t1 - t0)) ms)" [ $((t1 - t0)) -lt 2000 ]
check "the worker is a process of its own, not ccxd" sh -c "[ -n '$worker' ] && [ '$worker' != '$CCXD_PID' ] && [ \"\$(cat /proc/$worker/comm)\" = ccxd-probe ]"
# capless PID: it holds no capability in any set, and may gain none
capless() {
	[ "$(grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb):' "/proc/$1/status" | awk '{print $2}' | sort -u)" = 0000000000000000 ] &&
		grep -q '^NoNewPrivs:[[:space:]]*1$' "/proc/$1/status"
}
check "the worker holds no capability, and may gain none" wait_for 2 capless "$worker"
out=$(ctl probe --quick 2>&1)
rc=$?
check "a second probe meanwhile is refused" sh -c "[ $rc -eq 1 ] && echo '$out' | grep -q 'io.ccxd.ProbeRunning'"
wait "$client"
rc=$?
check "the client's probe succeeds" [ "$rc" -eq 0 ]
check "its results are the probe's JSON" jq -e '.mode == "quick" and (.relations | length) == 2 and all(.relations[]; .pipe_gib_s > 0)' "$WORK/probe.json"
check "its progress streamed to the client, step by step" sh -c \
	"grep -q '^probe: \[1/6\] relations: pipe' $WORK/progress && grep -q '^probe: \[6/6\] done' $WORK/progress"
check "its figures are in use now" [ "$(pst figures.source)" = probe ]
check "the worker was reaped" [ ! -e "/proc/$worker" ]

# A client that goes away mid-probe: the worker is killed and reaped.
# worker_files: ccxd's pipes and pidfds; a worker adds one of each
worker_files() { ls -l "/proc/$CCXD_PID/fd" | grep -cE 'pipe:|pidfd'; }
base_fds=$(worker_files)
# The full probe runs long enough; ccxctl itself (not a subshell) is killed.
"$CCXCTL" --socket "$SOCK" probe --matrix >/dev/null 2>&1 &
client=$!
CHILDREN="$CHILDREN $client"
wait_for 10 sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq -r .probe.state)\" = probing ]"
worker=$(pst worker_pid)
worker_fds=$(worker_files)
sig 9 "$client"
wait "$client" 2>/dev/null
check "a client that went away cancels its probe" wait_for 5 sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq -r .probe.state)\" = idle ]"
check "its worker is gone, no zombie left (pid $worker)" wait_for 2 sh -c "[ -n '$worker' ] && [ ! -e /proc/$worker ]"
check "while a probe ran ccxd held its pipe and pidfd" [ "$worker_fds" -eq $((base_fds + 2)) ]
check "it holds neither now" [ "$(worker_files)" -eq "$base_fds" ]
check "ccxd logged the cancellation" grep -q 'went away: cancelling' "$LOG"
check "ccxd still answers" sh -c "$CCXCTL --socket $SOCK version >/dev/null"

# A restart on the same topology takes the cache: no second calibration.
stop_ccxd
start_ccxd
check "after a restart the cached figures are in use" [ "$(pst figures.source)" = cache ]
check "and no calibration ran" sh -c "! grep -q 'calibration started' $LOG && [ \"\$($CCXCTL --socket $SOCK --json status | jq -r .probe.state)\" = idle ]"

# Another topology is another fingerprint: calibrated anew, and cached.
conf "$ONE_CCX"
ctl reload >/dev/null
check "a new topology has a new fingerprint" [ "$(pst fingerprint)" != "$fp" ]
check "and is calibrated anew" wait_for 90 sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq -r .probe.figures.source)\" = calibration ]"
fp2=$(pst fingerprint)
check "whose figures replace the cache" sh -c "[ \"\$(jq -r .fingerprint $STATE/probe.json)\" = '$fp2' ] && jq -e '[.results.relations[].relation] == [\"same-cpu\",\"same-ccx\"]' $STATE/probe.json >/dev/null"
stop_ccxd

# Figures that show no difference between seating together and apart keep
# the automatic policy off, and the group says why.
jq '.results.relations |= map(.pipe_gib_s = 1.0 | .pipe_gib_s_min = 0.9 | .pipe_gib_s_max = 1.1)' \
	"$STATE/probe.json" >"$WORK/flat.json" && cp "$WORK/flat.json" "$STATE/probe.json"
start_ccxd
check "flat figures: no gain, says the decision" \
	sh -c "$CCXCTL --socket $SOCK --json status | jq -e '.probe.figures.source == \"cache\" and .probe.decision.gain == false' >/dev/null"
"$TALK" pipe 20 10 >"$WORK/talk" &
CHILDREN="$CHILDREN $!"
wait_for 2 test -s "$WORK/talk"
writer=$(cut -d' ' -f1 "$WORK/talk")
CHILDREN="$CHILDREN $writer $(cut -d' ' -f2 "$WORK/talk")"
check "the talking pair stays where it is: no-gain" wait_for 10 sh -c \
	"$CCXCTL --socket $SOCK --json status | jq -e '.groups[] | select(.pids | index($writer)) | .state == \"no-gain\"' >/dev/null"
check "its evidence cites the figures" sh -c \
	"$CCXCTL --socket $SOCK --json status | jq -e '.groups[] | select(.pids | index($writer)) | .probe.gain == false and .probe.apart.pipe_gib_s == 1 and (.probe.note | test(\"apart 1.00 GiB/s\"))' >/dev/null"
sig TERM "$writer"
# A pair that takes turns is the exception: what one CPU gains it, its
# wake-ups, is not in the figures, so its own experiment decides.
"$TALK" pingpong-tcp 0 15 >"$WORK/pingpong" 2>/dev/null &
CHILDREN="$CHILDREN $!"
wait_for 2 test -s "$WORK/pingpong"
client=$(cut -d' ' -f1 "$WORK/pingpong")
CHILDREN="$CHILDREN $client $(cut -d' ' -f2 "$WORK/pingpong")"
check "a request/response pair takes turns, and the flat figures do not hold it" wait_for 10 sh -c \
	"$CCXCTL --socket $SOCK --json status | jq -e '.groups[] | select(.pids | index($client)) | .turns and .state != \"no-gain\"' >/dev/null"
echo "# $($CCXCTL --socket $SOCK --json status | jq -c ".groups[] | select(.pids | index($client)) | {state, seating, turns, demand, reason}")"
