# Rule drop-ins: FILE.d/*.conf read after FILE, picked up, changed and
# dropped by a reload, each error with its own file.
. "$(dirname "$0")/lib.sh"

for p in ccxt-base ccxt-dropped ccxt-hup; do make_program "$p" >/dev/null; done
write_conf <<CONF
[daemon]
socket = $SOCK
topology = $TWO_CCX

[program:ccxt-base]
ccx = 1
CONF
DROPINS=$CONF.d

spawn "$WORK/ccxt-base" 60
base=$SPAWNED
spawn "$WORK/ccxt-dropped" 60
dropped=$SPAWNED
start_ccxd
check "without a drop-in directory the file's rules are in force" wait_for 2 cpus_are "$base" 1
check "and a program no rule names is left alone" cpus_are "$dropped" 0-1

# A drop-in added, then ccxctl reload.
mkdir "$DROPINS"
cat > "$DROPINS/50-dropped.conf" <<CONF
; a package's rule
[program:ccxt-dropped]
ccx = 1
CONF
check "ccxctl reload reads a new drop-in" sh -c "$CCXCTL --socket $SOCK reload | grep -q '^reloaded: 2 rules'"
check "its rule pins a program already running" wait_for 2 cpus_are "$dropped" 1
check "ccxctl rules names the drop-in and the line" sh -c "$CCXCTL --socket $SOCK rules | grep -Eq '^$DROPINS/50-dropped.conf:2 +ccxt-dropped +1 '"
check "ccxctl --json rules gives each rule's file" sh -c "[ \"\$($CCXCTL --socket $SOCK --json rules | jq -r '[.rules[].file] | join(\" \")')\" = '$CONF $DROPINS/50-dropped.conf' ]"
check "and the files read" sh -c "[ \"\$($CCXCTL --socket $SOCK --json rules | jq -r '.files | join(\" \")')\" = '$CONF $DROPINS/50-dropped.conf' ]"

# Another, then SIGHUP.
printf '[program:ccxt-hup]\nccx = 1\n' > "$DROPINS/60-hup.conf"
sig HUP "$CCXD_PID"
spawn "$WORK/ccxt-hup" 60
hup=$SPAWNED
check "SIGHUP reads a new drop-in too" wait_for 2 cpus_are "$hup" 1

# Errors name their own file, and the running rules stay.
cat > "$DROPINS/70-bad.conf" <<CONF
[program:ccxt-bad]
policy = sometimes

[daemon]
mode = off
[program:ccxt-base]
CONF
"$CCXCTL" --socket "$SOCK" reload > "$WORK/reload.out" 2>&1
rc=$?
check "a bad drop-in fails the reload" [ "$rc" -ne 0 ]
check "with its own FILE:LINE" grep -q "^$DROPINS/70-bad.conf:2: invalid value 'sometimes' for policy" "$WORK/reload.out"
check "a [daemon] section belongs in the main file" grep -q "^$DROPINS/70-bad.conf:4: \\[daemon\\] belongs in $CONF" "$WORK/reload.out"
check "a program named in two files is an error" grep -q "^$DROPINS/70-bad.conf:6: duplicate section \\[program:ccxt-base\\] (first at $CONF:" "$WORK/reload.out"
check "--check-config reports the same" sh -c "$CCXD --check-config $CONF 2>&1 | grep -q '^$DROPINS/70-bad.conf:2: '"
check "after a bad reload the drop-ins' rules are still in force" sh -c "[ \"\$($CCXCTL --socket $SOCK --json rules | jq -r '.rules | length')\" = 3 ]"
rm "$DROPINS/70-bad.conf"

# A drop-in removed: its program gets its original back.
rm "$DROPINS/50-dropped.conf"
check "a reload after a drop-in is removed" sh -c "$CCXCTL --socket $SOCK reload | grep -q '^reloaded: 2 rules'"
check "its program gets its original affinity back" wait_for 2 cpus_are "$dropped" 0-1
check "and the log says so, a release" grep -q "Gave ccxt-dropped\[$dropped\] its CPUs 0-1 back: its rule is gone" "$LOG"
check "the other drop-in's program stays" cpus_are "$hup" 1
check "ccxctl rules no longer lists it" sh -c "! $CCXCTL --socket $SOCK rules | grep -q ccxt-dropped"

# A FIFO as a drop-in is an error with its path, at once: not a start or a
# reload that waits for a writer.
mkfifo "$DROPINS/80-fifo.conf"
timeout 20 "$CCXD" --check-config "$CONF" > "$WORK/fifo.out" 2>&1
rc=$?
check "--check-config with a FIFO as a drop-in fails at once" sh -c "[ $rc -ne 0 ] && [ $rc -ne 124 ]"
check "naming it: not a regular file" grep -q "^$DROPINS/80-fifo.conf: not a regular file" "$WORK/fifo.out"
timeout 20 "$CCXCTL" --socket "$SOCK" reload > "$WORK/fifo.out" 2>&1
check "a reload says the same, and the rules in force stay" sh -c "grep -q '80-fifo.conf: not a regular file' $WORK/fifo.out && [ \"\$($CCXCTL --socket $SOCK --json rules | jq -r '.rules | length')\" = 2 ]"
rm "$DROPINS/80-fifo.conf"

# A drop-in directory others may write to gives whoever they are ccxd's
# rules: said, and read all the same.
check "a drop-in directory only root writes to is not warned of" sh -c "! $CCXD --check-config $CONF 2>&1 | grep -q 'may be written'"
chmod o+w "$DROPINS"
check "one anyone may write to is" sh -c "$CCXD --check-config $CONF 2>&1 | grep -q '^ccxd: warning: $DROPINS may be written by users other than root'"
check "and its rules are read" sh -c "$CCXD --check-config $CONF 2>&1 | grep -q 'configuration OK'"
chmod o-w "$DROPINS"
