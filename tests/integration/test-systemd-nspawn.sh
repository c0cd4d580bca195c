# ccxd under a real systemd: Debian 12 booted with systemd-nspawn over a
# cached debootstrap'd rootfs (an overlay keeps the cache clean), ccxd
# installed into it with make install, then run, reloaded, watched and
# stopped as the service its units describe. Inside the container the proc
# connector is unavailable (PID namespace): ccxd's /proc polling is what
# finds programs there.
#
# A rule that names a systemd unit (unit =) pins a program started in
# that unit, and not its twin outside it.
#
# x3d_mode = cache on a driver file of the container's own (a tmpfs over its
# /sys/bus/platform/drivers): set as root before the sandboxed ccxd starts,
# put back after it stops, and after a kill -9.
#
# The rootfs is cached in $CCXD_TEST_NSPAWN_CACHE (default /var/cache/ccxd-test);
# building it takes about a minute and needs the Debian mirror. The test
# skips when it cannot run here. make check-systemd runs it alone.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/container.sh"

# Installed the way a user would, into the container's root.
(cd "$TOP" && make -s install DESTDIR="$ROOT" PREFIX=/usr >"$WORK/install.log" 2>&1) ||
	{ not_ok "make install into the container" "$(cat "$WORK/install.log")"; exit 1; }
missing=$(chroot "$ROOT" ldd /usr/sbin/ccxd /usr/bin/ccxctl | awk '/not found/ { print $1 }')
[ -z "$missing" ] || { not_ok "the rootfs has ccxd's libraries" "missing $missing: add their packages to PACKAGES"; exit 1; }
ok "make install DESTDIR=rootfs"

cp "$ROOT/bin/sleep" "$ROOT/usr/local/bin/ccxt-nspawn"
cp "$ROOT/bin/sleep" "$ROOT/usr/local/bin/ccxt-unit"
CONFIG="[daemon]
topology = $TWO_CCX
interval = 100ms
metrics_file = /run/ccxd/ccxd.prom

[program:ccxt-nspawn]
ccx = 1

[program:ccxt-unit]
unit = ccxt-unit-*.service
ccx = 0"
echo "$CONFIG" > "$ROOT/etc/ccxd.conf"
# The shipped 20 s would make the watchdog test slow; the mechanism is the same.
mkdir -p "$ROOT/etc/systemd/system/ccxd.service.d"
printf '[Service]\nWatchdogSec=2s\n' > "$ROOT/etc/systemd/system/ccxd.service.d/test-watchdog.conf"

boot_container

# ---- units, user, start ---------------------------------------------------------

out=$(ns systemd-analyze verify /usr/lib/systemd/system/ccxd.service /usr/lib/systemd/system/ccxd.socket 2>&1)
check "systemd-analyze verify finds nothing to say about the units" [ -z "$out" ]
[ -z "$out" ] || echo "$out" | sed 's/^/# /'
# What a package's postinst does (make install does it with no DESTDIR).
ns systemd-sysusers >/dev/null 2>&1
check "systemd-sysusers makes user ccxd" sh -c "nsenter -t $LEADER -a getent passwd ccxd </dev/null >/dev/null"

check "systemctl start ccxd returns" ns systemctl start ccxd
check "and ccxd is active" [ "$(ns systemctl is-active ccxd)" = active ]
check "ccxd.socket came up with it" [ "$(ns systemctl is-active ccxd.socket)" = active ]
status=$(ns systemctl show -p StatusText --value ccxd)
check "systemd shows ccxd's STATUS= (notify protocol): $status" sh -c "echo '$status' | grep -q 'processes pinned'"
MAINPID=$(ns systemctl show -p MainPID --value ccxd)
check "it runs as user ccxd, not root" [ "$(ns stat -c %U "/proc/$MAINPID")" = ccxd ]
check "at nice -5, as its unit says" [ "$(ns cat "/proc/$MAINPID/stat" | sed 's/.*) //' | cut -d' ' -f17)" = -5 ]
# slice_of PID: its time slice in ns (/proc/PID/sched, se.slice)
slice_of() { ns cat "/proc/$1/sched" | sed -n 's/^se\.slice[[:space:]]*:[[:space:]]*//p'; }
# (A real-time task's se.slice is not shown: ccxd says its own.)
slice=$(ns ccxctl --json status | jq -r .scheduling.slice_usec)
if [ "$(uname -r | awk -F. '{print $1 * 100 + $2}')" -ge 612 ]; then
	check "with the shortest time slice, which the unit lets it ask for ($slice us)" [ "$slice" = 100 ]
	check "and nothing in the journal about the default slice" \
		sh -c "! nsenter -t $LEADER -a journalctl -u ccxd -b </dev/null | grep -q 'default time slice'"
else
	check "on a kernel without slices of a task's own, the journal says so" \
		sh -c "nsenter -t $LEADER -a journalctl -u ccxd -b </dev/null | grep -q 'default time slice'"
fi
# policy_of PID: its scheduling policy (0 SCHED_OTHER, 1 SCHED_FIFO)
policy_of() { ns cat "/proc/$1/sched" | sed -n 's/^policy[[:space:]]*:[[:space:]]*//p'; }
waits_at_fifo() { [ "$(policy_of "$MAINPID")" = 1 ]; }
check "it waits for its events at real-time priority (SCHED_FIFO), which the unit allows" wait_for 3 waits_at_fifo
check "with the unit's LimitRTTIME= (100 ms, 200 ms)" \
	sh -c "nsenter -t $LEADER -a cat /proc/$MAINPID/limits </dev/null | grep -qE '^Max realtime timeout +100000 +200000 +us'"
check "and nothing in the journal about waiting at normal priority" \
	sh -c "! nsenter -t $LEADER -a journalctl -u ccxd -b </dev/null | grep -q 'at normal priority'"
check "ccxctl status answers" sh -c "nsenter -t $LEADER -a ccxctl status </dev/null | grep -q '^ccxd '"
check "on the socket that systemd passed" sh -c "nsenter -t $LEADER -a journalctl -u ccxd -b </dev/null | grep -q 'socket-activated'"

# ---- the /proc fallback pins inside the container ---------------------------------

pid_in_container=$(ns sh -c '/usr/local/bin/ccxt-nspawn 300 >/dev/null 2>&1 & echo $!')
ccpus() { ns sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status"; }
ccpus_are() { [ "$(ccpus "$1")" = "$2" ]; }
check "a rule-matched program is pinned in the container" wait_for 5 ccpus_are "$pid_in_container" 1
ns ccxctl --json status > "$WORK/status.json"
check "by the /proc polling fallback" quietly jq -e '.watcher.source == "polling"' "$WORK/status.json"
check "and no exec programs, whose pids would be the host's" \
	quietly jq -e '.watcher.execs.source == "connector" and (.watcher.execs.note | test("initial PID namespace"))' "$WORK/status.json"
check "the unit as installed lets the sampler load its BPF task iterators" quietly jq -e '.sampling.source == "bpf"' "$WORK/status.json"
check "ccxctl metrics says so too" sh -c "nsenter -t $LEADER -a ccxctl metrics </dev/null | grep -qx 'ccxd_processes{state=\"pinned\"} 1'"
check "metrics_file is written under the sandbox" wait_for 3 sh -c "nsenter -t $LEADER -a cat /run/ccxd/ccxd.prom </dev/null | grep -qx 'ccxd_polling 1'"

# ---- what the unit gives: BPF, then none of its capabilities; /proc; the probe ----

# The CAP_PERFMON (38) and CAP_BPF (39) bits of a capability set in hex.
no_bpf_caps() { [ $(( 0x$1 & 0xc000000000 )) -eq 0 ]; }
cap_of() { ns sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status"; }
check "the traffic counters are loaded, or status says why not" quietly jq -e \
	'.sampling.counted != "none" or (.sampling.counted_note | type == "string")' "$WORK/status.json"
echo "# counted by the kernel: $(jq -r '"\(.sampling.counted) (\(.sampling.counted_note))"' "$WORK/status.json")"
check "ccxd dropped CAP_BPF and CAP_PERFMON once its programs were loaded" \
	quietly jq -e '.bpf_capabilities == "dropped"' "$WORK/status.json"
check "from its effective, permitted and ambient sets" sh -c "
	for set in CapEff CapPrm CapAmb; do
		v=\$(nsenter -t $LEADER -a sed -n \"s/^\$set:[[:space:]]*//p\" /proc/$MAINPID/status </dev/null)
		[ -n \"\$v\" ] && [ \$(( 0x\$v & 0xc000000000 )) -eq 0 ] || exit 1
	done"
check "keeping the others (CAP_SYS_NICE)" sh -c "[ \$(( 0x$(cap_of "$MAINPID" CapEff) & 0x800000 )) -ne 0 ]"
# A process that uses CPU is read through an iterator made for it now,
# after the drop.
busy=$(ns sh -c 'timeout 20 sh -c "while :; do :; done" >/dev/null 2>&1 & echo $!')
read_through_bpf() {
	ns ccxctl --json status | jq -e --argjson pid "$busy" '.sampling.source == "bpf" and .sampling.reading != "proc" and
		.sampling.processes_active > 0' >/dev/null
}
check "a busy process is read through BPF after the drop" wait_for 5 read_through_bpf
check "with no iterator refused" sh -c "! nsenter -t $LEADER -a journalctl -u ccxd -b </dev/null | grep -q 'through BPF iterators failed\\|batch iterator failed'"
a_pid "$busy" && ns sh -c "kill $busy" 2>/dev/null
# The whole of /proc in the service's mount namespace: each CCX's load,
# and the last pid given out.
service_sees() { ns nsenter -t "$MAINPID" -m sh -c "$1"; }
check "the service sees /proc/stat" service_sees 'head -n 1 /proc/stat | grep -q "^cpu "'
check "and /proc/sys/kernel/ns_last_pid" service_sees 'test -r /proc/sys/kernel/ns_last_pid'
check "as ProcSubset=pid would not let it" sh -c "! nsenter -t $LEADER -a nsenter -t $MAINPID -m findmnt -no OPTIONS /proc </dev/null | grep -q subset=pid"
ccx_load_read() { ns ccxctl --json status | jq -e '.sampling.ccx_load | length == 2' >/dev/null; }
check "status has each CCX's load, from /proc/stat" wait_for 3 ccx_load_read

figures_from() { [ "$(ns ccxctl --json status | jq -r .probe.figures.source)" = "$1" ]; }
check "the start-up calibration gives figures" wait_for 60 figures_from calibration
ns sh -c 'ccxctl probe --quick --json >/run/probe.json 2>/dev/null; echo $? >/run/probe.rc' &
client=$!
probing() { worker=$(ns ccxctl --json status | jq -r '.probe.worker_pid // empty'); a_pid "$worker"; }
# capless: no capability in the sets a process uses (the bounding set
# needs CAP_SETPCAP to shrink, which ccxd has not), none to gain.
capless() {
	for set in CapInh CapPrm CapEff CapAmb; do [ "$(cap_of "$1" "$set")" = 0000000000000000 ] || return 1; done
	[ "$(cap_of "$1" NoNewPrivs)" = 1 ]
}
if wait_for 10 probing; then
	check "the probe's worker ($worker) holds no capability, and may gain none" capless "$worker"
	worker_slice=$(slice_of "$worker")
	check "and starts with the kernel's own time slice, not ccxd's ($worker_slice ns)" \
		sh -c "[ -n '$worker_slice' ] && [ '$worker_slice' != 100000 ]"
	check "and under SCHED_OTHER, not at ccxd's real-time priority" [ "$(policy_of "$worker")" = 0 ]
else
	not_ok "ccxctl probe runs a worker" "no worker_pid in status"
fi
wait_for 60 sh -c "! kill -0 $client 2>/dev/null"
wait "$client" 2>/dev/null
check "ccxctl probe succeeds under the unit" [ "$(ns cat /run/probe.rc)" = 0 ]
check "with results, now the figures in use" sh -c "nsenter -t $LEADER -a cat /run/probe.json </dev/null |
	jq -e '.mode == \"quick\" and all(.relations[]; .pipe_gib_s > 0)' >/dev/null" 
check "which status shows" figures_from probe

# ---- the journal ----------------------------------------------------------------

journal_has_pin() {
	ns journalctl -u ccxd -b -o json CCXD_DECISION=pin > "$WORK/pin.json" 2>/dev/null &&
		jq -e --arg pid "$pid_in_container" 'select(.CCXD_PID == $pid)' "$WORK/pin.json" >/dev/null
}
check "journald holds the pin with CCXD_DECISION=pin" wait_for 5 journal_has_pin
entry=$(jq -c --arg pid "$pid_in_container" 'select(.CCXD_PID == $pid)' "$WORK/pin.json" | head -n 1)
check "and CCXD_PID, CCXD_COMM, CCXD_CCX, CCXD_RULE" sh -c "echo '$entry' | jq -e '
	.CCXD_COMM == \"ccxt-nspawn\" and .CCXD_CCX == \"1\" and .CCXD_RULE == \"ccxt-nspawn\"' >/dev/null"
check "sent natively (not through stderr), at level info" sh -c "echo '$entry' | jq -e '
	._TRANSPORT == \"journal\" and .PRIORITY == \"6\" and .SYSLOG_IDENTIFIER == \"ccxd\"' >/dev/null"

# ---- a rule by systemd unit ---------------------------------------------------------

# The same program in a service whose unit the rule names, and outside
# any: only the first is the rule's.
ns systemd-run --unit=ccxt-unit-a.service /usr/local/bin/ccxt-unit 300 >/dev/null 2>&1
in_unit=$(ns systemctl show -p MainPID --value ccxt-unit-a.service)
outside_unit=$(ns sh -c '/usr/local/bin/ccxt-unit 300 >/dev/null 2>&1 & echo $!')
if a_pid "$in_unit" && a_pid "$outside_unit"; then
	check "a program in the unit its rule names (unit = ccxt-unit-*.service) is pinned" \
		wait_for 5 ccpus_are "$in_unit" 0
	in_unit_reason() {
		ns ccxctl --json status | jq -e --argjson pid "$in_unit" \
			'.processes[] | select(.pid == $pid) | .reason | contains("unit ccxt-unit-a.service")' >/dev/null
	}
	check "and its reason names the unit" in_unit_reason
	outside_cpus=$(ccpus "$outside_unit")
	check "the same program in no such unit is left alone ($outside_cpus)" always 1 ccpus_are "$outside_unit" "$outside_cpus"
	check "and is in no rule's record" sh -c "nsenter -t $LEADER -a ccxctl --json status </dev/null |
		jq -e '[.processes[] | select(.pid == $outside_unit)] | length == 0' >/dev/null"
else
	not_ok "systemd-run starts ccxt-unit-a.service, and a twin outside it" "pids '$in_unit' and '$outside_unit'"
fi
ns systemctl stop ccxt-unit-a.service >/dev/null 2>&1
a_pid "$outside_unit" && ns sh -c "kill $outside_unit"

# ---- reload ---------------------------------------------------------------------

check "systemctl reload ccxd works" ns systemctl reload ccxd
check "and ccxd says it reloaded" sh -c "nsenter -t $LEADER -a journalctl -u ccxd -b </dev/null | grep -q 'Reloaded /etc/ccxd.conf'"
printf '%s\nbogus = 1\n' "$CONFIG" > "$ROOT/etc/ccxd.conf"
bogus_line=$(($(printf '%s\n' "$CONFIG" | wc -l) + 1))
check "a broken config makes systemctl reload fail" sh -c "! nsenter -t $LEADER -a systemctl reload ccxd </dev/null 2>/dev/null"
check "while ccxd keeps running" sh -c "[ \"\$(nsenter -t $LEADER -a systemctl is-active ccxd </dev/null)\" = active ] &&
	[ \"\$(nsenter -t $LEADER -a systemctl show -p MainPID --value ccxd </dev/null)\" = $MAINPID ]"
check "the journal says what is wrong" sh -c "nsenter -t $LEADER -a journalctl -u ccxd -b -p err </dev/null | grep -q \"/etc/ccxd.conf:$bogus_line: unknown key 'bogus'\""
check "and the old rules still hold" ccpus_are "$pid_in_container" 1
echo "$CONFIG" > "$ROOT/etc/ccxd.conf"

# ---- stop, socket activation, watchdog --------------------------------------------

original=$(cpus_of $$)
check "systemctl stop ccxd" sh -c "nsenter -t $LEADER -a systemctl stop ccxd </dev/null 2>/dev/null"
check "restores the affinity it changed ($original)" ccpus_are "$pid_in_container" "$original"
check "the socket stays, listening" [ "$(ns systemctl is-active ccxd.socket)" = active ]
check "a ccxctl call starts ccxd through it" sh -c "nsenter -t $LEADER -a ccxctl version </dev/null | grep -q '^ccxd '"
check "which is active again" [ "$(ns systemctl is-active ccxd)" = active ]
check "and pins the program again" wait_for 5 ccpus_are "$pid_in_container" 1

MAINPID=$(ns systemctl show -p MainPID --value ccxd)
check "the original it owes is in /run/ccxd, across restarts" wait_for 3 sh -c "nsenter -t $LEADER -a cat /run/ccxd/originals.json </dev/null |
	jq -e '.processes[] | select(.pid == $pid_in_container and .original == \"$original\")' >/dev/null"
# A pid from inside the container: 0 (no main process) would stop this
# test's own process group, which nsenter's shell shares.
check "ccxd has a main pid to stop ($MAINPID)" a_pid "$MAINPID"
a_pid "$MAINPID" && ns sh -c "kill -STOP $MAINPID"
restarted() {
	pid=$(ns systemctl show -p MainPID --value ccxd)
	[ "$pid" != 0 ] && [ "$pid" != "$MAINPID" ] && [ "$(ns systemctl is-active ccxd)" = active ]
}
check "the watchdog restarts a hung ccxd" wait_for 15 restarted
check "and the journal says why" sh -c "nsenter -t $LEADER -a journalctl -u ccxd -b </dev/null | grep -q 'Watchdog timeout'"
check "the restarted ccxd answers" sh -c "nsenter -t $LEADER -a ccxctl status </dev/null | grep -q '^ccxd '"
check "and took back the program the killed one had pinned, with its true original" sh -c "nsenter -t $LEADER -a ccxctl --json status </dev/null |
	jq -e '.counters.readopted == 1 and (.processes[] | select(.pid == $pid_in_container) | .state == \"pinned\" and .original_cpus == \"$original\")' >/dev/null"

# ---- decisions by hand, in the journal ----------------------------------------------

other=$(ns sh -c 'sleep 300 >/dev/null 2>&1 & echo $!')
check "root pins by hand through the socket" sh -c "nsenter -t $LEADER -a ccxctl pin $other 0 </dev/null >/dev/null"
check "and unpins" sh -c "nsenter -t $LEADER -a ccxctl unpin $other </dev/null >/dev/null"
journal_has_release() {
	ns journalctl -u ccxd -b -o json CCXD_DECISION=release > "$WORK/release.json" 2>/dev/null &&
		jq -e --arg pid "$other" 'select(.CCXD_PID == $pid and .CCXD_COMM == "sleep" and .CCXD_RULE == null)' \
			"$WORK/release.json" >/dev/null
}
check "journald holds the release, with no rule" wait_for 5 journal_has_release
check "and the pin by hand, on CCX 0" sh -c "nsenter -t $LEADER -a journalctl -u ccxd -b -o json CCXD_DECISION=pin CCXD_PID=$other </dev/null |
	jq -e 'select(.CCXD_CCX == \"0\")' >/dev/null"

# ---- the X3D mode, set and put back as root around the sandboxed ccxd -------------------

# amd_x3d_vcache as an X3D part has it: a file of root's, 0644, "frequency".
# A tmpfs over the container's /sys/bus/platform/drivers, in its own mount
# namespace, holds it; the service's sandbox sees it read-only, as it sees
# the real /sys. The topology is the machine's, which x3d_mode needs, and
# with no rules it fits any machine.
X3D_DIR=/sys/bus/platform/drivers/amd_x3d_vcache/AMDI0101:00
X3D=$X3D_DIR/amd_x3d_mode
x3d_is() { [ "$(ns cat "$X3D")" = "$1" ]; }
recorded_is() { [ "$(ns cat /run/ccxd/x3d-mode 2>/dev/null)" = "$1" ]; }
# The lines about the X3D mode in ccxd's journal, each after the uid that
# logged it: 0 for the unit's commands, ccxd's own for the daemon.
x3d_log() {
	ns journalctl -u ccxd -b -o json | jq -r 'select(.MESSAGE | test("X3D mode")) | "\(._UID) \(.MESSAGE)"'
}
# x3d_logged UID TEXT COUNT: that many lines of uid's with TEXT
x3d_logged() { [ "$(x3d_log | grep -cF "$1 X3D mode (amd_x3d_vcache) $2")" = "$3" ]; }
ccxd_wrote_nothing() {
	! ns journalctl -u ccxd -b | grep -q 'Failed to set the X3D mode\|Failed to put the X3D mode back' &&
		[ -z "$(x3d_log | grep -v '^0 ')" ]
}

ns systemctl stop ccxd >/dev/null 2>&1
if ns sh -c "mount -t tmpfs -o mode=0755 ccxd-test-x3d /sys/bus/platform/drivers && mkdir -p $X3D_DIR &&
	printf 'frequency\n' > $X3D && chmod 0644 $X3D"; then
	printf '[daemon]\ninterval = 100ms\nx3d_mode = cache\n' > "$ROOT/etc/ccxd.conf"
	check "with x3d_mode = cache, systemctl start ccxd" ns systemctl start ccxd
	check "sets the mode to cache" x3d_is cache
	check "as root, before ccxd (ExecStartPre)" wait_for 5 x3d_logged 0 "set to cache" 1
	check "recording the mode found, frequency, in /run/ccxd/x3d-mode" recorded_is frequency
	check "ccxctl topology shows the mode" sh -c "nsenter -t $LEADER -a ccxctl topology </dev/null | grep -q 'amd_x3d_vcache in cache mode'"
	check "and ccxctl status" sh -c "nsenter -t $LEADER -a ccxctl --json status </dev/null | jq -e '.x3d_mode == \"cache\"' >/dev/null"

	MAINPID=$(ns systemctl show -p MainPID --value ccxd)
	check "ccxd has a main pid to kill ($MAINPID)" a_pid "$MAINPID"
	if a_pid "$MAINPID"; then
		ns sh -c "kill -9 $MAINPID"
		check "a ccxd killed with SIGKILL is restarted" wait_for 15 restarted
		check "after ExecStopPost put frequency back, as root" wait_for 5 x3d_logged 0 "put back to frequency" 1
		check "and ExecStartPre set cache again" x3d_is cache
		check "with frequency still the mode recorded, not the one ccxd had set" recorded_is frequency
	fi
	check "systemctl stop ccxd" sh -c "nsenter -t $LEADER -a systemctl stop ccxd </dev/null 2>/dev/null"
	check "puts the mode back to frequency" x3d_is frequency
	check "and forgets the record" sh -c "! nsenter -t $LEADER -a test -e /run/ccxd/x3d-mode </dev/null"
	check "ccxd itself neither failed to write the mode nor wrote it" ccxd_wrote_nothing
	ns umount /sys/bus/platform/drivers
	echo "$CONFIG" > "$ROOT/etc/ccxd.conf"
else
	echo "ok - x3d_mode under the unit # SKIP cannot mount a tmpfs over the container's /sys/bus/platform/drivers"
fi

# ---- the drop-in of ccxd(8) that turns BPF off ---------------------------------------

NO_BPF=$ROOT/etc/systemd/system/ccxd.service.d/no-bpf.conf
printf '[Service]\nCapabilityBoundingSet=~CAP_BPF CAP_PERFMON\nAmbientCapabilities=~CAP_BPF CAP_PERFMON\nSystemCallFilter=~bpf\n' > "$NO_BPF"
ns systemctl daemon-reload
out=$(ns systemd-analyze verify /usr/lib/systemd/system/ccxd.service 2>&1)
check "systemd-analyze verify finds nothing to say with the drop-in that turns BPF off" [ -z "$out" ]
[ -z "$out" ] || echo "$out" | sed 's/^/# /'
bounding=$(ns systemctl show -p CapabilityBoundingSet --value ccxd)
ambient=$(ns systemctl show -p AmbientCapabilities --value ccxd)
check "which takes CAP_BPF and CAP_PERFMON out of both sets ($ambient)" sh -c "
	echo '$bounding $ambient' | grep -vq 'cap_bpf\|cap_perfmon' && echo '$ambient' | grep -q cap_sys_nice"
check "systemctl restart ccxd with it" ns systemctl restart ccxd
MAINPID=$(ns systemctl show -p MainPID --value ccxd)
check "ccxd holds no BPF capability, not even in its bounding set" no_bpf_caps "$(cap_of "$MAINPID" CapBnd)"
sampling_from_proc() {
	ns ccxctl --json status > "$WORK/status.json" &&
		jq -e '.sampling.source == "proc" and .bpf_capabilities == "none"' "$WORK/status.json" >/dev/null
}
check "and samples from /proc (sampling.source = proc, bpf_capabilities none)" wait_for 3 sampling_from_proc
check "with status saying why" quietly jq -e '.sampling.note | test("no BPF task iterators")' "$WORK/status.json"
rm -f "$NO_BPF"
ns systemctl daemon-reload

# ---- a kernel (here: a filter) that refuses the short slice ---------------------------

NO_SLICE=$ROOT/etc/systemd/system/ccxd.service.d/no-slice.conf
printf '[Service]\nSystemCallFilter=~sched_setattr\n' > "$NO_SLICE"
ns systemctl daemon-reload
check "systemctl restart ccxd where sched_setattr is refused" ns systemctl restart ccxd
MAINPID=$(ns systemctl show -p MainPID --value ccxd)
default_slice=$(slice_of "$MAINPID")
check "ccxd runs, with the kernel's default slice ($default_slice ns)" sh -c "
	[ \"\$(nsenter -t $LEADER -a systemctl is-active ccxd </dev/null)\" = active ] && [ -n '$default_slice' ] &&
	[ '$default_slice' != 100000 ]"
check "and says so once in the journal" sh -c "[ \$(nsenter -t $LEADER -a journalctl -u ccxd -b _PID=$MAINPID </dev/null |
	grep -c 'default time slice') -eq 1 ]"
check "and that it waits at normal priority, once" sh -c "[ \$(nsenter -t $LEADER -a journalctl -u ccxd -b _PID=$MAINPID </dev/null |
	grep -c 'Waiting for execs at normal priority') -eq 1 ]"
check "as it does" [ "$(policy_of "$MAINPID")" = 0 ]
rm -f "$NO_SLICE"
ns systemctl daemon-reload

# ---- ccxd killed in the middle of a flood: nothing stays narrowed ---------------------
# Rule-matched programs that live on, a pair the automatic policy seated,
# and a flood of rule-matched execs (a copy of the static ccxt-exec named as
# the rule's program exits at once); then SIGKILL. Restarted, ccxd takes
# back (or gives back) everything the killed one placed, so that its own
# stop puts every original back; failed for good (its start limit reached),
# ccxd-restore.service gives them back.
mkdir -p "$ROOT/usr/local/lib/flood"
cp "$TOP/tools/helpers/ccxt-exec" "$ROOT/usr/local/bin/ccxt-exec"
cp "$TOP/tools/helpers/ccxt-exec" "$ROOT/usr/local/lib/flood/ccxt-nspawn"
cp "$TOP/tools/helpers/ccxt-talk" "$ROOT/usr/local/bin/ccxt-talk"
# narrowed: the container's processes whose affinity is not the original,
# as "pid:cpus" (none: nothing printed)
narrowed() {
	ns sh -c 'for s in /proc/[0-9]*/status; do
		c=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" "$s" 2>/dev/null)
		[ -n "$c" ] && [ "$c" != "'"$original"'" ] && echo "${s#/proc/}:$c:$(cat ${s%/status}/comm)"
	done; true' | sed 's|/status||' | tr '\n' ' '
}
nothing_narrowed() { [ -z "$(narrowed)" ]; }
# set_up_and_kill: the programs, the pair, the flood, and SIGKILL in it
set_up_and_kill() {
	ns sh -c 'for i in 1 2 3; do /usr/local/bin/ccxt-nspawn 600 >/dev/null 2>&1 & done'
	ns sh -c '/usr/local/bin/ccxt-talk pingpong 0 600 >/run/talk.pids 2>/dev/null &'
	wait_for 5 sh -c "nsenter -t $LEADER -a test -s /run/talk.pids </dev/null"
	read -r TP TC <<PIDS
$(ns cat /run/talk.pids)
PIDS
	seated() { ns ccxctl --json status | jq -e --argjson p "$TP" '.groups[] | select(.pids | index($p)) | .ccx != null' >/dev/null; }
	check "$1: the automatic policy seats a pair" wait_for 20 seated
	ns sh -c 'for i in 1 2 3 4; do timeout 60 /usr/local/bin/ccxt-exec storm 1000000 /usr/local/lib/flood/ccxt-nspawn >/dev/null 2>&1 & done'
	sleep 2
	echo "# $1: narrowed before the kill: $(narrowed)"
	MAINPID=$(ns systemctl show -p MainPID --value ccxd)
	check "$1: ccxd has a main pid to kill ($MAINPID)" a_pid "$MAINPID"
	a_pid "$MAINPID" && ns sh -c "kill -KILL $MAINPID"
}
# with_comm NAME...: the container's processes of those names (no procps there)
with_comm() {
	ns sh -c 'for d in /proc/[0-9]*; do c=$(cat $d/comm 2>/dev/null); for n in '"$*"'; do
		[ "$c" = "$n" ] && echo "${d#/proc/}"; done; done; true'
}
end_flood() {
	ns sh -c "kill -KILL $(with_comm ccxt-exec ccxt-talk ccxt-nspawn | tr '\n' ' ') 2>/dev/null; true"
}

set_up_and_kill "restarted"
check "restarted: systemd starts ccxd again" wait_for 15 restarted
check "restarted: and the flood goes on meanwhile" test -n "$(with_comm ccxt-exec)"
sleep 2   # the restarted ccxd in the flood
ns sh -c "kill -KILL $(with_comm ccxt-exec | tr '\n' ' ') 2>/dev/null; true"
check "restarted: ccxd's stop puts back every original, the killed one's pins included" \
	sh -c "nsenter -t $LEADER -a systemctl stop ccxd </dev/null"
check "restarted: nothing in the container stays narrowed" wait_for 3 nothing_narrowed
[ -z "$(narrowed)" ] || echo "# narrowed after the stop: $(narrowed)"
end_flood

# Failed for good: one start in a minute, so the restart after the kill is
# refused (start-limit-hit) and OnFailure= runs ccxd-restore.service.
LIMIT=$ROOT/etc/systemd/system/ccxd.service.d/test-start-limit.conf
printf '[Unit]\nStartLimitIntervalSec=120\nStartLimitBurst=1\n' > "$LIMIT"
ns systemctl daemon-reload
ns systemctl reset-failed ccxd
check "failed for good: systemctl start ccxd" ns systemctl start ccxd
set_up_and_kill "failed for good"
check "failed for good: the unit fails, its start limit reached" \
	wait_for 15 sh -c "[ \"\$(nsenter -t $LEADER -a systemctl is-failed ccxd </dev/null)\" = failed ]"
echo "# failed for good: $(ns systemctl show -p Result -p ActiveState ccxd | tr '\n' ' ')"
check "failed for good: ccxd-restore.service gave the originals back" wait_for 10 sh -c \
	"nsenter -t $LEADER -a journalctl -u ccxd-restore -b </dev/null | grep -Eq 'Gave [0-9]+ process'"
echo "# $(ns journalctl -u ccxd-restore -b | grep -E 'Gave [0-9]+ process' | tail -n 1)"
check "failed for good: nothing in the container stays narrowed, the flood still running" wait_for 3 nothing_narrowed
[ -z "$(narrowed)" ] || { echo "# narrowed after ccxd-restore: $(narrowed)"; ns journalctl -u ccxd-restore -b | sed 's/^/# /'; ns journalctl -u ccxd -b | tail -n 15 | sed 's/^/# /'; }
end_flood
rm -f "$LIMIT"
ns systemctl daemon-reload
ns systemctl reset-failed ccxd
