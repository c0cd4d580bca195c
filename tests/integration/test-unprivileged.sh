# ccxd as the service runs it: not root, holding only the capabilities that
# ccxd.service grants (CAP_SYS_NICE, CAP_NET_ADMIN, CAP_SYS_PTRACE,
# CAP_DAC_READ_SEARCH, and CAP_BPF and CAP_PERFMON, which it drops once its
# BPF programs are loaded). It must still pin, and restore, root's processes.
. "$(dirname "$0")/lib.sh"

command -v setpriv >/dev/null || { echo "setpriv is missing"; exit 77; }
CAPS=+sys_nice,+net_admin,+sys_ptrace,+dac_read_search,+bpf,+perfmon
# Grep the unit, so that this test follows what the service really grants.
for cap in $(sed -n 's/^CapabilityBoundingSet=//p' "$TOP/systemd/ccxd.service"); do
	c=$(echo "${cap#CAP_}" | tr 'A-Z' 'a-z')
	case ",$CAPS," in *",+$c,"*) ;; *) echo "ccxd.service grants $cap, which this test does not"; exit 1 ;; esac
done

RUN=$WORK/run
mkdir "$RUN"
chown nobody "$RUN"
comm_prog=$(make_program ccxt-unpriv)
exe_prog=$(make_program ccxt-unpriv-exe)
write_conf <<CONF
[daemon]
socket = $RUN/ccxd.sock
topology = $TWO_CCX

[program:ccxt-unpriv]
ccx = 1

[program:by-exe]
exe = */ccxt-unpriv-exe
ccx = 0
CONF
SOCK=$RUN/ccxd.sock

spawn "$comm_prog" 60
by_comm=$SPAWNED
spawn "$exe_prog" 60
by_exe=$SPAWNED
before=$(cpus_of "$by_comm")

setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps="$CAPS" --ambient-caps="$CAPS" \
	--bounding-set=-all,"$CAPS" "$CCXD" --config "$CONF" --verbose >"$LOG" 2>&1 &
CCXD_PID=$!
wait_for 5 ctl version >/dev/null 2>&1 || { not_ok "ccxd starts as nobody" "no answer on $SOCK"; exit 1; }
check "ccxd runs as nobody" [ "$(stat -c %U "/proc/$CCXD_PID")" = nobody ]
# What this kernel does with CAP_BPF and CAP_PERFMON once the programs are
# loaded: dropped (Linux 6.5 and later), or kept where every bpf() call
# wants them; none where the bounding set here lacks them.
ctl --json status > "$WORK/status.json"
bpf_caps=$(jq -r .bpf_capabilities "$WORK/status.json")
eff=$(sed -n 's/^CapEff:[[:space:]]*//p' "/proc/$CCXD_PID/status")
prm=$(sed -n 's/^CapPrm:[[:space:]]*//p' "/proc/$CCXD_PID/status")
case $bpf_caps in
dropped)
	check "ccxd dropped CAP_BPF and CAP_PERFMON after loading ($eff)" \
		[ $(( (0x$eff | 0x$prm) & 0xc000000000 )) -eq 0 ]
	check "keeping CAP_SYS_NICE" [ $(( 0x$eff & 0x800000 )) -ne 0 ] ;;
kept) check "ccxd keeps CAP_BPF and CAP_PERFMON, and says why" grep -q "Keeping CAP_BPF and CAP_PERFMON" "$LOG" ;;
*) check "status says whether the BPF capabilities were dropped ($bpf_caps)" [ "$bpf_caps" = none ] ;;
esac
if jq -e '.sampling.source == "bpf"' "$WORK/status.json" >/dev/null; then
	timeout 20 sh -c 'while :; do :; done' &
	busy=$!
	CHILDREN="$CHILDREN $busy"
	read_through_bpf() {
		ctl --json status | jq -e '.sampling.source == "bpf" and .sampling.processes_active > 0' >/dev/null
	}
	check "a busy process is then read through BPF" wait_for 5 read_through_bpf
	check "with no iterator refused" sh -c "! grep -q 'through BPF iterators failed' $LOG"
	sig TERM "$busy" 2>/dev/null   # timeout passes it on to the loop
fi
check "and pins a root process matched by name" wait_for 2 cpus_are "$by_comm" 1
check "and one matched by executable (/proc/PID/exe of root's)" wait_for 2 cpus_are "$by_exe" 0
check "root unpins by hand through it" sh -c "$CCXCTL --socket $SOCK unpin $by_comm >/dev/null"
check "and the original comes back" cpus_are "$by_comm" "$before"
check "pinning by hand works too" sh -c "$CCXCTL --socket $SOCK pin $by_comm 1 >/dev/null"
# The exec programs after the drop (on the host, where they load): a reload
# writes the rules' names into their map, and an exec is reported by them.
if [ "$bpf_caps" = dropped ] && jq -e '.watcher.execs.source == "bpf"' "$WORK/status.json" >/dev/null; then
	check "a reload after the drop works" sh -c "$CCXCTL --socket $SOCK reload >/dev/null"
	spawn "$comm_prog" 60
	late=$SPAWNED
	check "and a program started after it is pinned" wait_for 2 cpus_are "$late" 1
	check "reported by the exec programs, their maps written without CAP_BPF" sh -c "$CCXCTL --socket $SOCK --json status |
		jq -e '.watcher.execs.at_rename + .watcher.execs.at_end > 0 and .watcher.execs.maps_full == 0' >/dev/null"
fi
check "it stops cleanly" stop_ccxd
check "restoring what it pinned" sh -c "[ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$by_comm/status)\" = '$before' ] &&
	[ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$by_exe/status)\" = '$before' ]"
