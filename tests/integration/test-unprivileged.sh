# ccxd as the service runs it: not root, holding only the capabilities that
# ccxd.service grants (CAP_SYS_NICE, CAP_NET_ADMIN, CAP_SYS_PTRACE,
# CAP_DAC_READ_SEARCH). It must still pin, and restore, root's processes.
. "$(dirname "$0")/lib.sh"

command -v setpriv >/dev/null || { echo "setpriv is missing"; exit 77; }
CAPS=+sys_nice,+net_admin,+sys_ptrace,+dac_read_search
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
check "and pins a root process matched by name" wait_for 2 cpus_are "$by_comm" 1
check "and one matched by executable (/proc/PID/exe of root's)" wait_for 2 cpus_are "$by_exe" 0
check "root unpins by hand through it" sh -c "$CCXCTL --socket $SOCK unpin $by_comm >/dev/null"
check "and the original comes back" cpus_are "$by_comm" "$before"
check "pinning by hand works too" sh -c "$CCXCTL --socket $SOCK pin $by_comm 1 >/dev/null"
check "it stops cleanly" stop_ccxd
check "restoring what it pinned" sh -c "[ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$by_comm/status)\" = '$before' ] &&
	[ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$by_exe/status)\" = '$before' ]"
