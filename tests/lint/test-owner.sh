# The rooms of daemon/ and who may do what in them. Each folder says at its
# door (README.md) what it holds and, on its "Uses:" line, the folders whose
# headers its files may include; the includes are checked against it.
# Then the one owner of affinities: daemon/placements/ carries out every
# decision to set or restore an affinity (docs/design.md), the pin at exec
# included, and is the only caller of the actuator; only the actuator calls
# the kernel. Elsewhere an entry of the table is read through const
# pointers, and placements-table.h, which hands out writable ones, is the
# folder's own. (The daemon and what it links. The probe worker places its
# own threads as it makes them, pthread_attr_setaffinity_np(); the helpers
# and benchmarks under tools/ set their own affinities.)
. "$(dirname "$0")/lib.sh"

cd "$TOP" || exit 1
SOURCES=$(find daemon common probe -name '*.[ch]' ! -name '*.bpf.c' | sort)

# who PATTERN: the files whose code (comments aside) matches PATTERN
who() {
	for f in $SOURCES; do
		sed -e 's|/\*.*\*/||g' -e '/\/\*/,/\*\//d' "$f" | grep -qE "$1" && echo "$f"
	done
}
only() { [ "$(echo $1)" = "$2" ]; }

check "the sources are there to read" sh -c "[ $(echo $SOURCES | wc -w) -gt 50 ]"

# The folders: at most five files at the top of daemon/; a door in each
# folder, its purpose first, then what it uses.
FOLDERS=$(find daemon -mindepth 1 -maxdepth 1 -type d | sort)
check "at most five files at the top of daemon/ (found: $(find daemon -maxdepth 1 -name '*.[ch]' | wc -l))" \
	[ "$(find daemon -maxdepth 1 -name '*.[ch]' | wc -l)" -le 5 ]
for d in $FOLDERS; do
	check "$d/README.md says what lives there and what it uses" \
		sh -c "[ \"\$(sed -n 3p $d/README.md)\" ] && grep -q '^Uses: ' $d/README.md"
done
# header_dirs: "NAME.h FOLDER" for every header of the daemon, FOLDER as a
# "Uses:" line names it (daemon/ for the top)
for h in $(find daemon -name '*.h'); do
	d=${h%/*}
	case $d in daemon) echo "${h##*/} daemon/" ;; *) d=${d#daemon/}; echo "${h##*/} ${d%%/*}/" ;; esac
done >"$WORK/header-dirs"
# trespass FILES...: "FILE includes HEADER of FOLDER/" for each include that
# its folder's door does not allow (the top of daemon/ may use them all)
trespass() {
	for f in "$@"; do
		rel=${f#"${ROOT:-.}"/}
		room=${rel#daemon/}; room=${room%%/*}
		case $rel in daemon/*/*) ;; *) continue ;; esac
		uses=$(sed -n 's/^Uses: //p' "${ROOT:-.}/daemon/$room/README.md" 2>/dev/null | grep -o '`[^`]*`' | tr -d '`')
		sed -n 's/^#include "\([^"]*\)"/\1/p' "$f" | while read -r inc; do
			dir=$(awk -v h="${inc##*/}" '$1 == h { print $2; exit }' "$WORK/header-dirs")
			[ -n "$dir" ] && [ "$dir" != "$room/" ] || continue
			case " $(echo $uses) " in *" $dir "*) ;; *) echo "$rel includes $inc of $dir" ;; esac
		done
	done
}
outside=$(trespass $(find daemon -mindepth 2 -name '*.[ch]'))
check "each folder includes only what its door allows (found: $(echo $outside))" [ -z "$outside" ]

includes=$(who '#include "actuator\.h"')
check "only daemon/placements/ includes actuator.h (found: $(echo $includes))" \
	sh -c "[ -n '$includes' ] && ! echo '$includes' | tr ' ' '\n' | grep -v '^daemon/placements/'"
setters=$(who '(sched_setaffinity|pthread_setaffinity_np)[[:space:]]*\(')
check "only actuator.c calls sched_setaffinity (found: $(echo $setters))" only "$setters" "daemon/placements/actuator.c"
table=$(who '#include "placements-table\.h"')
check "only daemon/placements/ takes entries to change (found: $(echo $table))" \
	sh -c "[ -n '$table' ] && ! echo '$table' | tr ' ' '\n' | grep -v '^daemon/placements/'"
check "placements.h hands out entries as const only" \
	sh -c "! grep -E '^struct placement \*|[(,] *struct placement \*' daemon/placements/placements.h"

# The sample's data (sample.h) stands apart from the sampler that makes it:
# the sampler's parts and the policies read the data, and only the sampler
# itself, and those that drive it, include sampler.h; and the data's
# header includes none of the daemon's.
sampler_parts() { who '#include "sampler\.h"' | grep -E '(^|/)daemon/(sample|policy)/'; }
sampler_users=$(sampler_parts)
check "in daemon/sample/ and daemon/policy/ only sampler.c includes sampler.h (found: $(echo $sampler_users))" \
	only "$sampler_users" "daemon/sample/sampler.c"
check "sample.h includes none of the daemon's headers (procfs.h alone, of common/)" \
	sh -c "! grep '#include \"' daemon/sample/sample.h | grep -v '\"procfs\.h\"'"

# The words of status take a group's few fields, not the automatic policy
# that calls them.
check "reasons.h does not include autoplace.h" sh -c "! grep -q '#include \"autoplace\.h\"' daemon/automatic/reasons.h"

# The policies are pure: their objects call no function of the daemon's
# but their own, the sample's data (sample.o) and the CPU sets' (cpulist.o).
# nm reads what the build made, so a call hidden by a macro counts too.
# called_outside OBJECTS...: "OBJECT: SYMBOL" for each call out of bounds
called_outside() {
	for o in $(find daemon ! -path 'daemon/policy/*' -name '*.o') common/*.o probe/*.o; do
		case $o in daemon/sample/sample.o | common/cpulist.o) ;; *) nm --defined-only -g "$o" ;; esac
	done 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDBR]/ { print $3 }' | sort -u >"$WORK/defined"
	for o in "$@"; do
		nm -u "$o" | awk '{ print $2 }' | sort -u | comm -12 - "$WORK/defined" | sed "s|^|$o: |"
	done
}
check "the policies' objects are built" sh -c "ls daemon/policy/*.o >/dev/null"
outside=$(called_outside daemon/policy/*.o)
check "no policy calls the daemon outside daemon/policy/ and the sample's data (found: $(echo $outside))" \
	[ -z "$outside" ]

# No include circle between two modules anywhere (the daemon, common/,
# probe/, ccxctl): a module is a source and its header, and a header with no
# source of its own (placements-table.h, execs-records.h, codec-internal.h)
# belongs to the module its name begins with. tsort finds a loop in the
# graph of which module includes which.
CODE=$(find daemon common probe tools -maxdepth 2 -name '*.[ch]' ! -name '*.bpf.c' ! -path 'tools/helpers/*' ! -path 'tools/bench/*')
for f in $CODE; do
	case $f in *.c) n=${f##*/}; echo "${n%.c}" ;; esac
done | sort -u >"$WORK/modules"
for f in $CODE; do
	n=${f##*/}
	sed -n 's/^#include "\([^"]*\)"/\1/p' "$f" | sed "s|^|${n%.[ch]} |"
done | awk -v modules="$WORK/modules" '
	BEGIN { while ((getline m < modules) > 0) is[m] = 1 }
	function module(n) { sub(/^.*\//, "", n); sub(/\.h$/, "", n); while (!(n in is) && n ~ /-/) sub(/-[^-]*$/, "", n); return n }
	{ a = module($1); b = module($2); if (a != b && (b in is)) print a, b }' | sort -u >"$WORK/includes"
check "the includes of the modules are read" [ "$(wc -l <"$WORK/includes")" -gt 100 ]
loop_of() { tsort "$1" 2>&1 >/dev/null | sed -n 's/^tsort: \([^:]*\)$/\1/p' | tr '\n' ' '; }
check "no include cycle between two modules (found: $(loop_of "$WORK/includes"))" \
	sh -c "tsort '$WORK/includes' >/dev/null 2>&1"

# The status (status.h) is a snapshot of plain data: the methods and the
# metrics that report it read copies, and const views of data alone, so
# that a report cannot reach back through it into the live tables, the
# policies or the probe. methods.c changes things through the manager's
# verbs, and includes manager.h for them; status.h and metrics.c do not.
reach_back() {
	who '#include "(autoplace|placements|placer|prober|ruler|sampler)\.h"' |
		grep -E '(^|/)daemon/reports/(status\.h|status-json\.[ch]|methods\.c|metrics\.c)$'
	who '#include "manager\.h"' | grep -E '(^|/)daemon/reports/(status\.h|status-json\.[ch]|metrics\.c)$'
}
reachers=$(reach_back)
check "status.h, status-json, methods.c and metrics.c include no header of the live parts (found: $(echo $reachers))" \
	only "$reachers" ""

# The check fails where it should: a copy of ruler.c that calls the actuator.
mkdir -p "$WORK/daemon/rules"
cp daemon/rules/ruler.c "$WORK/daemon/rules/ruler.c"
printf '#include "actuator.h"\nstatic int again(pid_t p, const cpu_set_t *c) { return sched_setaffinity(p, sizeof(*c), c); }\n' \
	>> "$WORK/daemon/rules/ruler.c"
SOURCES="$WORK/daemon/rules/ruler.c"
check "a ruler.c that includes actuator.h is caught" sh -c "[ -n '$(who '#include "actuator\.h"')' ]"
check "a ruler.c that calls sched_setaffinity is caught" \
	sh -c "[ -n '$(who '(sched_setaffinity|pthread_setaffinity_np)[[:space:]]*\(')' ]"
# And a part of the sampler that includes the sampler again.
mkdir -p "$WORK/daemon/sample" "$WORK/daemon/reports"
cp daemon/sample/channels.h "$WORK/daemon/sample/channels.h"
echo '#include "sampler.h"' >> "$WORK/daemon/sample/channels.h"
SOURCES="$WORK/daemon/sample/channels.h"
check "a channels.h that includes sampler.h is caught" sh -c "[ -n '$(sampler_parts)' ]"
# A policy that calls the daemon, and a sample.h that includes channels.h.
printf 'int placements_count(void *p);\nint policy_bad(void *p) { return placements_count(p); }\n' |
	cc -x c -c -o "$WORK/policy-bad.o" -
check "a policy that calls placements is caught" sh -c "[ -n '$(called_outside "$WORK/policy-bad.o")' ]"
{ cat "$WORK/includes"; echo "room autoplace"; echo "autoplace room"; } >"$WORK/includes-loop"
check "an include cycle is caught" sh -c "! tsort '$WORK/includes-loop' >/dev/null 2>&1"
# And a methods.c that includes the automatic policy.
cp daemon/reports/methods.c "$WORK/daemon/reports/methods.c"
echo '#include "autoplace.h"' >> "$WORK/daemon/reports/methods.c"
SOURCES="$WORK/daemon/reports/methods.c"
check "a methods.c that includes autoplace.h is caught" sh -c "[ -n '$(reach_back)' ]"
# A table of placements that includes the ruler, which its door forbids;
# and a folder whose door lost its "Uses:" line.
mkdir -p "$WORK/daemon/placements"
cp daemon/placements/README.md daemon/placements/placements.c "$WORK/daemon/placements/"
echo '#include "ruler.h"' >> "$WORK/daemon/placements/placements.c"
check "a placements.c that includes ruler.h is caught" \
	sh -c "[ -n '$(ROOT=$WORK trespass "$WORK/daemon/placements/placements.c")' ]"
cp daemon/rules/README.md "$WORK/daemon/rules/README.md"
sed -i '/^Uses: /d' "$WORK/daemon/rules/README.md"
check "a ruler.c whose door lost its Uses: line is caught" \
	sh -c "[ -n '$(ROOT=$WORK trespass "$WORK/daemon/rules/ruler.c")' ]"
