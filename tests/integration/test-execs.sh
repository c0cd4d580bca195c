# Where ccxd hears of execs: the exec programs, which the kernel filters by
# the rules' names and ccxd's table, or the proc connector, where the
# config asks for it or the kernel refuses the programs. Either way a
# program a rule names is pinned; with the programs, the execs of all others
# never reach ccxd.
. "$(dirname "$0")/lib.sh"
EXEC=$TOP/tools/helpers/ccxt-exec
cp "$EXEC" "$WORK/ccxt-named"
cp "$EXEC" "$WORK/ccxt-stranger"
cp "$EXEC" "$WORK/ccxt-args"
cp "$EXEC" "$WORK/ccxt-later"
cp "$(command -v dash)" "$WORK/ccxt-shell"
mkdir "$WORK/quiet"
cp "$EXEC" "$WORK/quiet/ccxt-shell"   # one that exits at once

# conf EXEC_EVENTS [DAEMON_LINES]: rules for ccxt-named (by name alone),
# ccxt-args (by its command line) and ccxt-shell
conf() {
	write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX
interval = 200ms
exec_events = $1
${2:-}

[program:ccxt-named]
ccx = 1

[program:ccxt-args]
cmdline = */ccxt-args hold
ccx = 1

[program:ccxt-shell]
ccx = 1
CONF
}
execs() { ctl --json status | jq -c '.watcher.execs'; }
execs_field() { ctl --json status | jq -r ".watcher.execs.$1"; }
counter() { ctl --json status | jq -r ".counters.$1"; }
# pinned_at_exec PROGRAM: one exec of it is on CPU 1 within the latency helper's second
pinned_at_exec() { [ "$("$EXEC" latency 1 "$1" 1 hold)" != timeout ]; }
# bpf_fds: how many BPF programs, maps and links ccxd holds
bpf_fds() { ls -l "/proc/$CCXD_PID/fd" 2>/dev/null | grep -c 'anon_inode:bpf'; }
grows() { [ "$(execs_field "$1")" -gt "$2" ]; }
# threads_on PID CPUS N: it has N threads, every one on CPUS
threads_on() {
	[ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -eq "$3" ] || return 1
	for t in "/proc/$1/task/"*; do
		[ "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status" 2>/dev/null)" = "$2" ] || return 1
	done
}
held_pinned() { ctl --json status | jq -e ".processes[] | select(.pid == $1 and .state == \"pinned\")" >/dev/null; }

# 1. exec_events = auto: the exec programs, or the proc connector and the
#    kernel's reason.
conf auto
start_ccxd
S=$(execs)
echo "# exec_events = auto: $S"
SOURCE=$(echo "$S" | jq -r .source)
check "exec_events = auto: the exec programs, or the proc connector with the kernel's refusal" \
	quietly jq -e '(.source == "bpf" and .note == null) or (.source == "connector" and (.note | test("refused|not in the initial PID namespace|cannot open")))' <<EOF
$S
EOF
check "and status says it for people" sh -c "$CCXCTL --socket $SOCK status | grep -q '^execs: '"
check "a program a rule names is pinned at its exec" pinned_at_exec "$WORK/ccxt-named"

# ccxd waits at real-time priority, so that an exec record's wake-up
# preempts a program computing where it lands, and works at its normal
# policy; the kernel stops it past RLIMIT_RTTIME (ccxd(8)). Asleep, it is
# at real time; at work, briefly not: looked at for a while.
check "ccxd waits for its events at real-time priority (SCHED_FIFO)" wait_for 3 policy_is "$CCXD_PID" 1
check "with the kernel's stop for a ccxd that would not sleep there (RLIMIT_RTTIME 100 ms, 200 ms)" \
	grep -qE '^Max realtime timeout +100000 +200000 +us' "/proc/$CCXD_PID/limits"
check "and the log does not say it waits at normal priority" sh -c "! grep -q 'at normal priority' '$LOG'"
check "status says so, with its time slice" \
	quietly jq -e '.scheduling.wait == "real-time" and .scheduling.note == null and (.scheduling.slice_usec == 100 or .scheduling.slice_usec == null)' <<EOF
$(ctl --json status)
EOF
check "and for people" sh -c "$CCXCTL --socket $SOCK status | grep -q 'ccxd waits at real-time priority, time slice '"
# realtime_wait = no, by reload: normal priority throughout, and back.
sed -i 's/^\[daemon\]$/[daemon]\nrealtime_wait = no/' "$CONF"
ctl reload >/dev/null
check "with realtime_wait = no (a reload), ccxd waits at its normal policy" always 1 policy_is "$CCXD_PID" 0
check "and status says why" quietly jq -e '.scheduling.wait == "normal" and .scheduling.note == "realtime_wait = no"' <<EOF
$(ctl --json status)
EOF
check "a program a rule names is still pinned at its exec" pinned_at_exec "$WORK/ccxt-named"
sed -i '/^realtime_wait = no$/d' "$CONF"
ctl reload >/dev/null
check "and with it back, at real time again" wait_for 3 policy_is "$CCXD_PID" 1

if [ "$SOURCE" = bpf ]; then
	enter=$(execs_field at_enter)
	rename=$(execs_field at_rename)
	end=$(execs_field at_end)
	"$EXEC" storm 300 "$WORK/ccxt-stranger"
	check "300 execs of a program no rule names never reach ccxd" \
		sh -c "[ \$($CCXCTL --socket $SOCK --json status | jq '.watcher.execs | .at_enter + .at_rename + .at_end') -eq $((enter + rename + end)) ]"
	check "one named by comm alone comes before the exec is done" \
		sh -c "$EXEC latency 1 $WORK/ccxt-named 1 hold >/dev/null && [ \$($CCXCTL --socket $SOCK --json status | jq '.watcher.execs | .at_enter + .at_rename') -gt $((enter + rename)) ]"
	check "and not again when it is" [ "$(execs_field at_end)" -eq "$end" ]
	# First as the exec begins (Linux 6.10 and later), from the last part
	# of its path: pinned while it runs, and decided there, so that its
	# rename brings no record, unless the pin came late.
	if grep -q 'not as they begin' "$LOG"; then
		check "as the exec begins too # SKIP $(grep -o 'the kernel refused to attach on_prepare.*' "$LOG" | head -n 1)" true
		check "as the exec names the task" [ "$(execs_field at_rename)" -eq $((rename + 1)) ]
	else
		check "as the exec begins" [ "$(execs_field at_enter)" -eq $((enter + 1)) ]
		check "and its rename brings one record at most" [ "$(execs_field at_rename)" -le $((rename + 1)) ]
		# A shell trying each directory of PATH: the first execve fails,
		# the second runs the program, pinned and held.
		spawn env PATH="$WORK/quiet/none:$WORK" "$(command -v dash)" -c 'exec ccxt-named hold'
		check "a program found on the second try of PATH is pinned" wait_for 2 cpus_are "$SPAWNED" 1
		check "and held in ccxd's table" wait_for 2 held_pinned "$SPAWNED"
		sig KILL "$SPAWNED"
		# An execve of a named path that fails, by a process that lives on.
		spawn perl -e 'exec "'"$WORK"'/quiet/none/ccxt-named"; sleep 60'
		check "a process whose execve of a named program failed keeps its CPUs" always 1 cpus_are "$SPAWNED" 0-1
		sig KILL "$SPAWNED"
	fi

	# Decided from the exec's record where its program can have run only
	# with the pin (pinned_first: the exec was still under way, or ended
	# holding the pin), from /proc otherwise: either way a program that
	# makes its threads at once has every one of them where its rule says.
	first=$(execs_field pinned_first)
	for i in 1 2 3; do
		spawn "$WORK/ccxt-named" threads
		check "a named program that makes 8 threads at once has them all on CPU 1 ($i)" \
			wait_for 2 threads_on "$SPAWNED" 1 8
		sig KILL "$SPAWNED"
	done
	echo "# decided from the exec's record: $(($(execs_field pinned_first) - first)) of 3"
	check "pinned_first counts each exec once at most" [ $(($(execs_field pinned_first) - first)) -le 3 ]
	# One that ran and made its threads before ccxd could pin it (ccxd
	# stopped meanwhile): /proc decides, and its threads get the pin too.
	first=$(execs_field pinned_first)
	sig STOP "$CCXD_PID"
	spawn "$WORK/ccxt-named" threads
	check "(while ccxd is stopped, a named program makes its 8 threads)" wait_for 2 threads_on "$SPAWNED" 0-1 8
	sig CONT "$CCXD_PID"
	check "once ccxd goes on, its threads are all on CPU 1" wait_for 2 threads_on "$SPAWNED" 1 8
	check "decided from /proc, not from the record" [ "$(execs_field pinned_first)" -eq "$first" ]
	sig KILL "$SPAWNED"

	# A rule that reads the command line: the record comes when the exec
	# is done, when the command line is there to decide.
	end=$(execs_field at_end)
	spawn "$WORK/ccxt-args" hold
	args=$SPAWNED
	spawn "$WORK/ccxt-args" hold other
	other=$SPAWNED
	check "ones whose rule reads the command line come when the exec is done" wait_for 2 grows at_end $((end + 1))
	check "and the command line decides: the one it names is pinned" wait_for 2 cpus_are "$args" 1
	check "and the other is not" always 1 cpus_are "$other" 0-1
	sig KILL "$args" "$other"

	# A process in ccxd's table is followed through its exec into a
	# program no rule names.
	"$WORK/ccxt-shell" -c "sleep 0.5; exec '$WORK/ccxt-stranger' storm 0 /bin/true; exec sleep 60" &
	shell=$!
	CHILDREN="$CHILDREN $shell"
	check "a pinned process" wait_for 2 cpus_are "$shell" 1
	end=$(execs_field at_end)
	check "is reported when it becomes a program no rule names" wait_for 3 grows at_end "$end"
	sig KILL "$shell"

	# A rule that arrives by reload: its name goes to the kernel's filter.
	sed -i 's/^\[program:ccxt-shell\]/[program:ccxt-later]/' "$CONF"
	ctl reload >/dev/null
	check "after a reload, a program named by the new rule is pinned at its exec" pinned_at_exec "$WORK/ccxt-later"
	rename=$(execs_field at_rename)
	"$EXEC" storm 50 "$WORK/quiet/ccxt-shell"
	check "and the old rule's name is no longer reported" [ "$(execs_field at_rename)" -eq "$rename" ]

	# A glob can name any comm: every exec comes, when it is done.
	printf '\n[program:ccxt-g*]\nccx = 1\n' >> "$CONF"
	ctl reload >/dev/null
	end=$(execs_field at_end)
	"$EXEC" storm 50 "$WORK/ccxt-stranger"
	check "with a rule whose name is a glob, every exec is reported" [ "$(execs_field at_end)" -ge $((end + 50)) ]
	stop_ccxd

	# 2. The ring full: ccxd stopped while 9,000 named programs exec
	#    (more records than the ring holds). It counts the loss and
	#    rescans, and a named survivor started meanwhile is pinned.
	conf auto
	start_ccxd
	lost=$(counter lost_events)
	rescans=$(counter rescans)
	sig STOP "$CCXD_PID"
	storms=
	quick_program ccxt-named >/dev/null
	for i in 1 2 3; do
		"$EXEC" storm 3000 "$WORK/ccxt-named" &
		storms="$storms $!"
	done
	CHILDREN="$CHILDREN $storms"
	wait $storms
	cp "$(command -v sleep)" "$WORK/ccxt-named"
	spawn "$WORK/ccxt-named" 60
	survivor=$SPAWNED
	sig CONT "$CCXD_PID"
	check "records dropped while ccxd slept count as lost events" \
		wait_for 3 sh -c "[ \$($CCXCTL --socket $SOCK --json status | jq .counters.lost_events) -gt $lost ]"
	echo "# dropped records: $(execs_field dropped)"
	check "and ccxd rescans /proc" wait_for 3 sh -c "[ \$($CCXCTL --socket $SOCK --json status | jq .counters.rescans) -gt $rescans ]"
	check "and pins the survivor" wait_for 3 cpus_are "$survivor" 1
	sig KILL "$survivor"
	cp "$EXEC" "$WORK/ccxt-named"
	stop_ccxd
else
	echo "ok - the exec programs' filtering # SKIP the kernel refused them: $(echo "$S" | jq -r .note)"
	stop_ccxd
fi

# 3. exec_events = connector: every exec from the proc connector, and no
#    exec program loaded (nor the sampler's: bpf = no, traffic = no).
conf connector "$(printf 'bpf = no\ntraffic = no')"
start_ccxd
check "exec_events = connector: the proc connector, and why" \
	quietly jq -e '.source == "connector" and .note == "exec_events = connector"' <<EOF
$(execs)
EOF
check "and no BPF program, map or link" [ "$(bpf_fds)" -eq 0 ]
events=$(counter events)
check "a program a rule names is pinned at its exec" pinned_at_exec "$WORK/ccxt-named"
"$EXEC" storm 100 "$WORK/ccxt-stranger"
check "and every exec is an event" [ "$(counter events)" -ge $((events + 101)) ]
sed -i 's/^exec_events = .*/exec_events = auto/' "$CONF"
ctl reload >/dev/null
check "a reload with another exec_events says it waits for the next start" \
	wait_for 2 grep -q 'exec_events changes from connector to auto at the next start' "$LOG"
stop_ccxd

# bpf = no loads no BPF program at all: the exec programs neither.
conf auto "$(printf 'bpf = no\ntraffic = no')"
start_ccxd
check "exec_events = auto with bpf = no: the proc connector, and why" \
	quietly jq -e '.source == "connector" and .note == "bpf = no"' <<EOF
$(execs)
EOF
check "and no BPF program, map or link" [ "$(bpf_fds)" -eq 0 ]
stop_ccxd

# 4. The programs refused: without BPF's capabilities the kernel loads none,
#    and the proc connector stands in.
if setpriv --bounding-set -bpf,-perfmon,-sys_admin true 2>/dev/null; then
	conf auto
	setpriv --bounding-set -bpf,-perfmon,-sys_admin "$CCXD" --config "$CONF" --verbose >"$LOG" 2>&1 &
	CCXD_PID=$!
	wait_for 5 ctl version >/dev/null 2>&1 || { not_ok "ccxd starts without BPF's capabilities" "no answer on $SOCK"; exit 1; }
	check "without BPF's capabilities: the proc connector, and the kernel's refusal" \
		quietly jq -e '.source == "connector" and (.note | test("refused"))' <<EOF
$(execs)
EOF
	check "and the log says it at info level" grep -q 'info: Execs come from the proc connector: ' "$LOG"
	check "a program a rule names is pinned at its exec" pinned_at_exec "$WORK/ccxt-named"
	stop_ccxd
else
	echo "ok - BPF refused # SKIP setpriv here cannot drop capabilities from the bounding set"
fi

# 5. Real time refused (no CAP_SYS_NICE, no RLIMIT_RTPRIO, as for a ccxd
#    of a user's own; the unit's RestrictRealtime= is tested in
#    test-systemd-nspawn): ccxd says so once, waits at normal priority, and
#    still pins at the exec.
if setpriv --bounding-set -sys_nice --inh-caps -sys_nice true 2>/dev/null; then
	conf auto
	prlimit --rtprio=0:0 setpriv --bounding-set -sys_nice --inh-caps -sys_nice \
		"$CCXD" --config "$CONF" --verbose >"$LOG" 2>&1 &
	CCXD_PID=$!
	wait_for 5 ctl version >/dev/null 2>&1 || { not_ok "ccxd starts without CAP_SYS_NICE" "no answer on $SOCK"; exit 1; }
	check "without real time to be had, ccxd says so once" \
		sh -c "[ \$(grep -c 'Waiting for execs at normal priority, .*refused SCHED_FIFO' '$LOG') -eq 1 ]"
	check "and waits at its normal policy" always 1 policy_is "$CCXD_PID" 0
	check "and status says why" quietly jq -e '.scheduling.wait == "normal" and (.scheduling.note | test("refused SCHED_FIFO"))' <<EOF
$(ctl --json status)
EOF
	# Without CAP_SYS_NICE ccxd may set only the affinity of processes
	# holding no capability it lacks (it dropped CAP_BPF and CAP_PERFMON
	# too): such a program.
	check "a program a rule names is pinned at its exec" \
		sh -c "[ \"\$(setpriv --bounding-set -sys_nice,-bpf,-perfmon --inh-caps -sys_nice,-bpf,-perfmon $EXEC latency 1 $WORK/ccxt-named 1 hold)\" != timeout ]"
	stop_ccxd
else
	echo "ok - real time refused # SKIP setpriv here cannot drop capabilities from the bounding set"
fi
