# The two pipelines of the placement issue, `yes | pv -q` and
# `cat /dev/urandom | sha256sum`, under ccxd in enforce mode on this
# machine's own topology: once ccxd has settled, each must run at 90 % or
# more of its best hand placement (apart on CPUs 0 and 1, or together on
# CPU 0), automatically.
#
# Pipe throughput on a guest swings between windows of a second, and drifts
# over a minute, by more than the 10 % allowed. So the throughput under ccxd
# and by hand is measured in turns, round by round: ccxd's pipeline is
# stopped (SIGSTOP) while a pipeline pinned by hand from its start, which
# ccxd leaves alone, runs its window. The comparison is of the medians; a
# placement ccxd kept that is the best one by hand passes as such, since
# windows of one placement differ here by up to 25 %.
# Stopped for less than three of ccxd's samples, ccxd's group stays as it
# was (it is released after five quiet ones).
. "$(dirname "$0")/lib.sh"

command -v pv >/dev/null || { echo "# needs pv (tools/install-deps)"; exit 77; }

ROUNDS=6
WINDOW=2

# rate PID: MiB/s the process wrote over WINDOW
rate() {
	a=$(sed -n 's/^wchar: //p' "/proc/$1/io")
	sleep "$WINDOW"
	b=$(sed -n 's/^wchar: //p' "/proc/$1/io")
	echo "$a $b $WINDOW" | awk '{printf "%.0f", ($2 - $1) / $3 / 1048576}'
}
median() { printf '%s\n' "$@" | sort -n | sed -n "$((($# + 1) / 2))p"; }

# start "PRODUCER" "CONSUMER" [CPU_P CPU_C]: sets P and C. Pinned by hand, it
# is pinned from its start (taskset before exec), as a user would.
start() {
	if [ $# -ge 4 ]; then
		sh -c "taskset -c $3 $1 | taskset -c $4 $2 > /dev/null" &
	else
		sh -c "$1 | $2 > /dev/null" &
	fi
	sh_pid=$!
	CHILDREN="$CHILDREN $sh_pid"
	prod=${1%% *}
	cons=${2%% *}
	wait_for 5 sh -c "pgrep -P $sh_pid -x $prod >/dev/null && pgrep -P $sh_pid -x $cons >/dev/null"
	P=$(pgrep -P "$sh_pid" -x "$prod")
	C=$(pgrep -P "$sh_pid" -x "$cons")
	CHILDREN="$CHILDREN $P $C"
}
stop() { kill "$@" 2>/dev/null; sleep 0.2; }

group_json() { ctl --json status | jq -c --argjson pid "$1" '.groups[]? | select(.pids | index($pid))'; }
settled() { group_json "$1" | jq -e '.state == "kept" or .state == "reverted"' >/dev/null; }
# slowly SECONDS COMMAND...: wait_for, polling once a second. Polling every
# 20 ms runs ccxctl and jq 50 times a second: load enough on two CPUs to
# decide which seating of the pipeline is fastest.
slowly() {
	deadline=$(( $(date +%s) + $1 ))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$deadline" ] || return 1
		sleep 1
	done
}
how() { group_json "$1" | jq -r '"group \(.id): \(.state) \(.seating // "-")"'; }

# measure: whether ccxd's pipeline ($AP $AC, as $chosen) ran at 90 % or
# more of the best hand placement, medians of ROUNDS windows for ccxd and
# half as many for each hand placement. The hand placements take every
# other round, so that ccxd's pipeline is never stopped for more than one
# window.
measure() {
	auto= apart= together=
	for round in $(seq "$ROUNDS"); do
		auto="$auto $(rate "$AP")"
		kill -STOP "$AP" "$AC"
		if [ $((round % 2)) -eq 1 ]; then
			start "$producer" "$consumer" 0 1
			sleep 0.3
			apart="$apart $(rate "$P")"
		else
			start "$producer" "$consumer" 0 0
			sleep 0.3
			together="$together $(rate "$P")"
		fi
		stop "$P" "$C"
		kill -CONT "$AP" "$AC"
		sleep 0.3
	done
	a=$(median $auto) s=$(median $apart) t=$(median $together)
	best=$s best_seating=one-per-core
	[ "$t" -gt "$best" ] && best=$t best_seating=shared-cpu
	echo "# $pipeline: ccxd ($chosen):$auto MiB/s; by hand apart:$apart, together:$together"
	echo "# medians: ccxd $a, apart $s, together $t: $(echo "$a $best" | awk '{printf "%.2f", $1 / $2}') of the best"
	# Kept in the very placement that is best by hand (on two CPUs,
	# one-per-core is apart and shared-cpu together), ccxd runs as fast
	# as that by construction, and the figures differ by the noise alone.
	case $chosen in *"kept $best_seating") return 0 ;; esac
	[ $((a * 10)) -ge $((best * 9)) ]
}
# A placement worse by 10 % or more fails both; the second is there for
# windows that the machine disturbed.
measure_twice() { measure || measure; }

write_conf <<CONF
[daemon]
socket = $SOCK
mode = enforce
topology = system
interval = 2s
window = 3
CONF
start_ccxd

for pipeline in "yes|pv -q" "cat /dev/urandom|sha256sum"; do
	producer=${pipeline%%|*}
	consumer=${pipeline#*|}
	start "$producer" "$consumer"
	AP=$P AC=$C
	check "\`$pipeline\`: ccxd settles on a placement" slowly 90 settled "$AP"
	chosen=$(how "$AP")
	check "\`$pipeline\`: with ccxd at >= 90 % of its best hand placement" measure_twice
	now=$(how "$AP")
	check "\`$pipeline\`: its placement held while measured" [ "$now" = "$chosen" ]
	stop "$AP" "$AC"
done
stop_ccxd
