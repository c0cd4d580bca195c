# Another user's process whose command line would wait for a file that
# never answers: nobody maps a file of a FUSE file system whose reads are
# never answered over the pages of its arguments, and runs under the name
# of a program whose rule reads the command line. ccxd reads command lines
# only where a rule needs one, and off its event loop (daemon/rules/cmdlines.c,
# whose unit test holds a read that blocks): it must answer, pin root's
# program of that rule, start again past that process (its start-up scan
# reads every command line a rule needs), and stop. Linux 4.17 and later
# read no command line from a file mapping, so here the read returns at
# once; the test checks that too. Where /dev/fuse or libfuse3 is missing
# there is no such file system to make, and the test says so.
. "$(dirname "$0")/lib.sh"

FUSE=$TOP/tools/helpers/ccxt-fuse
[ -c /dev/fuse ] || { echo "no /dev/fuse here: no file system that never answers can be made"; exit 77; }
[ -x "$FUSE" ] || { echo "tools/helpers/ccxt-fuse is not built (no libfuse3; make check installs it)"; exit 77; }

MNT=$WORK/fuse
mkdir "$MNT"
"$FUSE" serve "$MNT" >"$WORK/fuse.out" 2>&1 &
SERVER=$!
CHILDREN="$CHILDREN $SERVER"
ON_EXIT="$ON_EXIT; umount -l '$MNT' 2>/dev/null"
wait_for 5 grep -q mounted "$WORK/fuse.out" || { echo "the FUSE file system does not mount here: $(cat "$WORK/fuse.out")"; exit 77; }

cp "$(for_others "$FUSE")" "$WORK/others/ccxt-args"
victim_args() {   # a copy of ccxt-fuse named as the rule's program, as nobody
	rm -f "$WORK/victim.pid"
	runuser -u nobody -- "$WORK/others/ccxt-args" map "$MNT/args" "$(head -c 16384 /dev/zero | tr '\0' x)" >"$WORK/victim.pid" 2>&1 &
	CHILDREN="$CHILDREN $!"
	wait_for 3 test -s "$WORK/victim.pid"
	VICTIM=$(cat "$WORK/victim.pid")
	CHILDREN="$CHILDREN $VICTIM"
}
# Root's programs of the rule's name: one whose command line the rule names
# (its path holds the marker), one whose does not.
mkdir "$WORK/ccxd-marker"
cp "$(command -v sleep)" "$WORK/ccxd-marker/ccxt-args"
root_args=$WORK/ccxd-marker/ccxt-args
other_args=$(make_program ccxt-args)

write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX

[program:ccxt-args]
cmdline = *ccxd-marker*
ccx = 1
CONF
start_ccxd

# ---- 1. a process that maps a file that never answers over its arguments ----
victim_args
check "nobody's process maps its arguments from the file that never answers" sh -c "grep -q ' $MNT/args' /proc/$VICTIM/maps"
# Linux 4.17 and later read no command line from a file mapping (the fix of
# CVE-2018-1120): a reader gets the arguments up to the mapped pages, at once.
t0=$(date +%s%N)
got=$(timeout 5 cat /proc/$VICTIM/cmdline | wc -c)
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "# a reader of its cmdline got $got bytes in $ms ms"
check "the kernel reads no command line from the file: a reader gets what lies before it at once" \
	[ "$ms" -lt 1000 -a "$got" -lt 16384 ]
check "ccxd read the command line a rule needed, off the loop" wait_for 3 sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq .cmdlines.read)\" -ge 1 ]"
check "and no read blocks" sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq .cmdlines.blocked)\" = 0 ]"
t0=$(date +%s%N)
check "ccxd answers meanwhile" quietly ctl status
echo "# status took $(( ($(date +%s%N) - t0) / 1000000 )) ms"
spawn "$root_args" 60
check "and pins root's program of the rule, by its command line" wait_for 3 cpus_are "$SPAWNED" 1
spawn "$other_args" 60
check "and leaves one whose command line the rule does not name" always 1 cpus_are "$SPAWNED" 0-1
check "the process of the file that never answers is left as it is" cpus_are "$VICTIM" 0-1
timeout 10 "$CCXCTL" --socket "$SOCK" explain "$VICTIM" > "$WORK/explained"
rc=$?
check "ccxctl explain of it answers, and the rule's command line does not match it" \
	sh -c "[ $rc -eq 0 ] && grep -Eq ':[0-9]+ +ccxt-args +no: its command line (does not match|is being read)' $WORK/explained"

# ---- 2. ccxd starts past it: the start-up scan reads every command line a rule needs ----
check "ccxd stops while the read waits" stop_ccxd
spawn "$root_args" 60
before_start=$SPAWNED
start_ccxd
check "ccxd starts again, past that process" quietly ctl version
check "and its start-up scan pins root's program" wait_for 3 cpus_are "$before_start" 1

# ---- 3. command lines are read only where a rule needs one ----
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX

[program:by-exe]
exe = */ccxd-marker/ccxt-args
ccx = 1
CONF
quietly ctl reload
read0=$(ctl --json status | jq .cmdlines.read)
spawn "$root_args" 60
check "with a rule by exe alone, its program is pinned" wait_for 3 cpus_are "$SPAWNED" 1
spawn "$other_args" 60
victim_args
check "and no command line is read, of any process" always 2 sh -c "[ \"\$($CCXCTL --socket $SOCK --json status | jq .cmdlines.read)\" = $read0 ]"
check "ccxd stops cleanly" stop_ccxd
