# Policies and modes: force, spread, compact with ccx = auto, ignore,
# dry-run on a big machine's topology, comm changes.
. "$(dirname "$0")/lib.sh"

threads_of() { ls "/proc/$1/task"; }
thread_cpus() { for t in $(threads_of "$1"); do sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/task/$t/status"; done | sort | uniq -c | awk '{print $2 "x" $1}' | tr '\n' ' '; }
field_of() { ctl --json status | jq -r --argjson pid "$1" ".processes[] | select(.pid == \$pid) | .$2"; }
field_is() { [ "$(field_of "$1" "$2")" = "$3" ]; }

narrowed=$(make_program ccxt-narrow)
forced=$(make_program ccxt-forced)
cp "$TOP/tools/helpers/ccxt-threads" "$WORK/ccxt-spread"
cp "$TOP/tools/helpers/ccxt-threads" "$WORK/ccxt-spread2"
cp "$TOP/tools/helpers/ccxt-threads" "$WORK/ccxt-spread3"
compact=$(make_program ccxt-compact)
ignored=$(make_program ccxt-ignored)
cp "$(command -v dash)" "$WORK/ccxt-shell"
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX

[program:ccxt-narrow]
ccx = 1

[program:ccxt-forced]
ccx = 1
force = yes

[program:ccxt-spread*]
ccx = 0,1
policy = spread

[program:ccxt-compact]
policy = compact

[program:ccxt-shell]
ccx = 1

[program:ccxt-ignored]
policy = ignore

[program:ccxt-renamed]
ccx = 0

[program:ccxt-auto]
policy = auto
CONF

# Affinity set by hand is left alone unless force = yes.
spawn taskset -c 0 "$narrowed" 60
n_pid=$SPAWNED
spawn taskset -c 0 "$forced" 60
f_pid=$SPAWNED
start_ccxd
check "force = yes takes a process whose affinity was set by hand" wait_for 2 cpus_are "$f_pid" 1
check "force = yes keeps the hand-set mask as the original" field_is "$f_pid" original_cpus 0
check "without force such a process is left alone" cpus_are "$n_pid" 0
check "and status says why" sh -c "$CCXCTL --socket $SOCK --json status | jq -r '.processes[] | select(.pid == $n_pid) | .reason' | grep -q 'set by someone else'"

# spread: threads take the rule's CCXs in turn, including threads made later.
spawn "$WORK/ccxt-spread" 4 60
s_pid=$SPAWNED
check "spread: four threads, two on each CCX" wait_for 2 sh -c "[ \"\$(for t in \$(ls /proc/$s_pid/task); do sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$s_pid/task/\$t/status; done | sort | uniq -c | awk '{print \$1}' | tr '\n' ' ')\" = '2 2 ' ]"
spawn "$WORK/ccxt-spread2" 4 60 300
s2_pid=$SPAWNED
sleep 1.2
check "spread: threads created after the pin alternate too" sh -c "[ \"\$(for t in \$(ls /proc/$s2_pid/task); do sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$s2_pid/task/\$t/status; done | sort | uniq -c | awk '{print \$1}' | tr '\n' ' ')\" = '2 2 ' ]"
# Thread ids start again from low after kernel.pid_max: threads made then,
# with tids below those placed before, take their turn too.
if [ -w /proc/sys/kernel/ns_last_pid ]; then
	spawn "$WORK/ccxt-spread3" 4 60 1000
	s3_pid=$SPAWNED
	wait_for 1 sh -c "! grep -q '^Cpus_allowed_list:[[:space:]]*0-1\$' /proc/$s3_pid/status"   # placed
	echo 300 > /proc/sys/kernel/ns_last_pid
	sleep 3.5
	tids=$(ls /proc/$s3_pid/task | sort -n | tr '\n' ' ')
	echo "# threads of a spread process made after the wrap: $tids"
	check "spread: threads made after tids wrapped around, below those placed, alternate too" sh -c \
		"[ \$(echo $tids | tr ' ' '\n' | awk '\$1 < $s3_pid' | wc -l) -eq 3 ] && [ \"\$(for t in $tids; do sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$s3_pid/task/\$t/status; done | sort | uniq -c | awk '{print \$1}' | tr '\n' ' ')\" = '2 2 ' ]"
else
	echo "# not checked: threads after a wrap of tids (/proc/sys/kernel/ns_last_pid is not writable here)"
fi

# compact with ccx = auto balances what ccxd placed on each CCX: the forced
# process on CCX 1; the spread ones, on both, count on neither.
spawn "$compact" 60
c1=$SPAWNED
wait_for 2 field_is "$c1" state pinned
check "compact, ccx = auto: a process lands on the CCX with fewer placed there" cpus_are "$c1" 0
spawn "$compact" 60
c2=$SPAWNED
wait_for 2 field_is "$c2" state pinned
spawn "$compact" 60
c3=$SPAWNED
wait_for 2 field_is "$c3" state pinned
check "compact, ccx = auto: with one each, the next takes the first CCX, and the one after the other" \
	sh -c "[ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$c2/status) \$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$c3/status)\" = '0 1' ]"

# ignore: a child of a pinned shell that runs an ignored program gets its mask back.
spawn "$WORK/ccxt-shell" -c "sleep 0.5; $ignored 60 & echo \$! > $WORK/ignored.pid; wait"
sh_pid=$SPAWNED
check "a matched shell is pinned" wait_for 2 cpus_are "$sh_pid" 1
wait_for 3 test -s "$WORK/ignored.pid"
i_pid=$(cat "$WORK/ignored.pid")
CHILDREN="$CHILDREN $i_pid"
check "policy = ignore gives an inherited mask back" wait_for 2 cpus_are "$i_pid" 0-1
check "and shows the process as ignored" field_is "$i_pid" state ignored

# policy = auto leaves the process to the automatic policy, as if no rule
# named it: not in the rules' table, not pinned.
auto_prog=$(make_program ccxt-auto)
spawn "$auto_prog" 60
a_pid=$SPAWNED
sleep 0.5
check "policy = auto leaves a process to the automatic policy" sh -c "[ -z \"\$($CCXCTL --socket $SOCK --json status | jq -c --argjson pid $a_pid '.processes[] | select(.pid == \$pid)')\" ] && [ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$a_pid/status)\" = 0-1 ]"

# A process that renames itself into a rule is pinned on the comm event.
spawn sh -c 'sleep 0.3; printf ccxt-renamed > /proc/$$/comm; sleep 60'
r_pid=$SPAWNED
check "a comm change that matches a rule pins the process" wait_for 3 cpus_are "$r_pid" 0

check "ccxd stops" stop_ccxd
check "spread threads get their original masks back" sh -c "[ \"\$(for t in \$(ls /proc/$s_pid/task); do sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$s_pid/task/\$t/status; done | sort -u)\" = 0-1 ]"
check "a forced process gets its hand-set mask back" cpus_are "$f_pid" 0

# dry-run with a real 16-CPU topology: decisions reported, nothing pinned.
XML=$TOPOLOGIES/amd-ryzen7-1800x.xml
write_conf <<CONF
[daemon]
socket = $SOCK
topology = xml:$XML
mode = dry-run

[program:ccxt-narrow]
ccx = 1
force = yes

[program:ccxt-compact]
ccx = 0
smt = avoid
CONF
spawn "$compact" 60
d_pid=$SPAWNED
start_ccxd
check "dry-run: CCX 1 of a Ryzen 7 1800X is CPUs 4-7,12-15" wait_for 2 field_is "$n_pid" cpus 4-7,12-15
check "dry-run: the state says so" field_is "$n_pid" state dry-run
check "dry-run: smt = avoid takes one CPU per core" wait_for 2 field_is "$d_pid" cpus 0-3
check "dry-run: nothing is pinned" sh -c "[ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$n_pid/status)\" = 0 ] && [ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$d_pid/status)\" = 0-1 ]"
check "dry-run: ccxd stops" stop_ccxd
