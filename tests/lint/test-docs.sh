# docs/protocol.md describes the control protocol for clients written without
# ccxctl: it must name every method and error that common/protocol.h defines,
# and no method or error that the daemon does not have.
. "$(dirname "$0")/lib.sh"

HEADER=$TOP/common/protocol.h
DOC=$TOP/docs/protocol.md

# The interface's name, and every CCXD_METHOD_*, VARLINK_METHOD_*,
# CCXD_ERROR_* and VARLINK_ERROR_* as a full name: CCXD_INTERFACE ".Pin" is
# io.ccxd.Pin.
interface=$(sed -n 's/^#define[[:space:]]\{1,\}CCXD_INTERFACE[[:space:]]\{1,\}"\([^"]*\)".*/\1/p' "$HEADER")
defined=$(sed -n 's/^#define[[:space:]]\{1,\}\(CCXD\|VARLINK\)_\(METHOD\|ERROR\)_[A-Z_]*[[:space:]]\{1,\}\(.*\)$/\3/p' "$HEADER" |
	sed -e "s/^CCXD_INTERFACE[[:space:]]*\"/\"$interface/" -e 's/^"\([^"]*\)".*/\1/' | sort -u)
# Names in the document: io.ccxd.X, and org.varlink.service.X (org.varlink
# names a member with a capital, its interfaces without).
named=$(grep -oE 'io\.ccxd\.[A-Za-z0-9_]+|org\.varlink(\.[a-z0-9_]+)*\.[A-Z][A-Za-z0-9_]*' "$DOC" 2>/dev/null | sort -u)

check "the interface's name is io.ccxd" [ "$interface" = io.ccxd ]
check "common/protocol.h defines methods and errors" sh -c "[ \$(echo '$defined' | wc -w) -ge 10 ]"
check "every name defined is a full one" sh -c "! echo '$defined' | grep -qvE '^(io\.ccxd|org\.varlink\.service)\.[A-Z][A-Za-z]+\$'"
check "docs/protocol.md exists" [ -s "$DOC" ]
for name in $defined; do
	check "docs/protocol.md names $name" sh -c "echo '$named' | grep -qx '$name'"
done
for name in $named; do
	check "common/protocol.h defines $name, which docs/protocol.md names" sh -c "echo '$defined' | grep -qx '$name'"
done

# docs/design.md's map of the code: "Where the code lives" names every file
# of common/, probe/ and daemon/ (without .c or .h), each under its folder,
# and nothing that is not there.
DESIGN=$TOP/docs/design.md
cd "$TOP" || exit 1
section() { sed -n "/^$1\$/,/^## /p" "$DESIGN"; }
# subsection TITLE: from its heading to the next one of any level
subsection() { sed -n "/^$1\$/,/^#/p" "$DESIGN" | sed '1!{/^#/d}'; }
# The folder lines: "- **DIR/**...: `a` (...), `b`", continued on the
# lines indented below; printed as DIR/a, DIR/b.
section '## Where the code lives' | awk '
	/^- \*\*/ { dir = $2; gsub(/\*|:/, "", dir); sub(/\/$/, "", dir) }
	/^[^- ]/ { dir = "" }
	dir != "" { line = $0; sub(/^- \*\*[^*]*\*\*/, "", line)
		while (match(line, /`[^`]*`/)) {
			name = substr(line, RSTART + 1, RLENGTH - 2); line = substr(line, RSTART + RLENGTH)
			if (name !~ /[ \/]/ && name !~ /^(sched_setaffinity|\/proc)$/) print dir "/" name
		}
	}' | sort -u >"$WORK/named"
find common probe daemon -name '*.[ch]' | sed 's/\.[ch]$//' | sort -u >"$WORK/files"
check "docs/design.md names the files of the code" [ "$(wc -l <"$WORK/named")" -gt 50 ]
check "every file of common/, probe/ and daemon/ is in docs/design.md (missing: $(comm -13 "$WORK/named" "$WORK/files" | tr '\n' ' '))" \
	[ -z "$(comm -13 "$WORK/named" "$WORK/files")" ]
check "docs/design.md names no file that is not there (gone: $(comm -23 "$WORK/named" "$WORK/files" | tr '\n' ' '))" \
	[ -z "$(comm -23 "$WORK/named" "$WORK/files")" ]

# "Who may do what": each line's files are exactly those whose code (comments
# aside) does it. The claims this test can check, and the grep for each:
pattern_of() {
	case $1 in
	'calls `sched_setaffinity`') echo 'sched_setaffinity[[:space:]]*\(' ;;
	'sets its own scheduling (`sched_setattr`)') echo 'sched_set(attr|scheduler|param)|setpriority[[:space:]]*\(' ;;
	'includes `actuator.h`') echo '#include "actuator\.h"' ;;
	'includes `placements-table.h`') echo '#include "placements-table\.h"' ;;
	'includes `sampler.h` in `daemon/sample/` or `daemon/policy/`') echo '#include "sampler\.h"' ;;
	'builds a path under `/proc`') echo '"%s/proc[/"]' ;;
	'builds a path under `/sys`') echo '"%s/sys/' ;;
	'opens a BPF object') echo 'bpf_object__open' ;;
	'calls `sd_notify`') echo 'sd_notify[a-z]*[[:space:]]*\(' ;;
	esac
}
scope_of() {
	case $1 in
	*'in `daemon/sample/` or `daemon/policy/`') find daemon/sample daemon/policy -name '*.[ch]' ;;
	*) find common probe daemon -name '*.[ch]' ! -name '*.bpf.c' ;;
	esac
}
# doers CLAIM: the files that do it, one line, sorted
doers() {
	for f in $(scope_of "$1" | sort); do
		sed -e 's|/\*.*\*/||g' -e '/\/\*/,/\*\//d' "$f" | grep -qE "$(pattern_of "$1")" && echo "$f"
	done | tr '\n' ' ' | sed 's/ $//'
}
subsection '### Who may do what' | sed -n 's/^- \(.*\): \(`.*`\)$/\1|\2/p' >"$WORK/claims"
check "docs/design.md says who may do what" [ "$(wc -l <"$WORK/claims")" -ge 8 ]
while IFS='|' read -r claim files; do
	said=$(echo "$files" | grep -oE '`[^`]*`' | tr -d '`' | sort | tr '\n' ' ' | sed 's/ $//')
	if [ -z "$(pattern_of "$claim")" ]; then
		check "test-docs knows how to check \"$claim\"" false
		continue
	fi
	found=$(doers "$claim")
	check "design.md: $claim: $said (the code: $found)" [ "$said" = "$found" ]
done <"$WORK/claims"

# The overview, which opens docs/design.md: short enough to read first; every
# path it names is there; every function it names is defined, in the file
# named right after it where one is ("`f()` (`daemon/x/y.c`)"); and its table
# of layers names each folder of daemon/, and nothing else.
section '## Overview' | sed '$d' >"$WORK/overview"
check "docs/design.md opens with an overview of at most 150 lines (has $(wc -l <"$WORK/overview"))" \
	sh -c "[ -s '$WORK/overview' ] && [ \$(wc -l <'$WORK/overview') -le 150 ]"
paths=$(grep -oE '`(daemon|common|probe)/[^`]*`' "$WORK/overview" | tr -d '`' | sort -u)
check "the overview names paths of the code" [ "$(echo $paths | wc -w)" -ge 15 ]
for f in $paths; do
	check "the overview's $f is there" [ -e "$f" ]
done
# defined NAME [FILE]: NAME( at the start of a line of FILE, or of any source
defined() {
	if [ -n "${2:-}" ]; then grep -qE "^[a-z].*[ *]$1\(" "$2"; else grep -rqE "^[a-z].*[ *]$1\(" --include='*.c' daemon common probe; fi
}
grep -oE '`[a-z_]+\(\)`( \(`[a-z/._-]+`)?' "$WORK/overview" | sort -u >"$WORK/functions"
check "the overview names functions of the code" [ "$(wc -l <"$WORK/functions")" -ge 15 ]
while read -r fn where; do
	fn=$(echo "$fn" | tr -d '`()'); where=$(echo "$where" | tr -d '`()')
	check "the overview's $fn() is defined${where:+ in $where}" defined "$fn" "$where"
done <"$WORK/functions"
sed -n 's/^| `\(daemon\/[a-z]*\)\/` |.*/\1/p' "$WORK/overview" | sort >"$WORK/layers"
find daemon -mindepth 1 -maxdepth 1 -type d | sort >"$WORK/folders"
check "the overview's layers are the folders of daemon/ (missing: $(comm -13 "$WORK/layers" "$WORK/folders" | tr '\n' ' '); gone: $(comm -23 "$WORK/layers" "$WORK/folders" | tr '\n' ' '))" \
	cmp -s "$WORK/layers" "$WORK/folders"
# And it fails where it should: a function that is not there, or not where
# it is said to be, and a folder that the table does not name.
not() { ! "$@"; }
check "a function the code does not define is caught" not defined ruler_seat_everyone
check "a function named with a file that does not define it is caught" not defined ruler_exec daemon/policy/rules.c
sed '$d' "$WORK/layers" >"$WORK/layers-short"
check "a folder missing from the table is caught" sh -c "! cmp -s '$WORK/layers-short' '$WORK/folders'"

# "Where each part is tested": each file of daemon/ without a unit test of
# its name is listed, and every test the list names is there.
subsection '### Where each part is tested' >"$WORK/tested"
awk '/^- / { sub(/:( .*)?$/, ""); print }' "$WORK/tested" | grep -oE '`[a-z-]+`' | tr -d '`' | sort -u >"$WORK/listed"
for f in $(find daemon -name '*.c' ! -name '*.bpf.c'); do
	n=${f##*/}; n=${n%.c}
	[ -e "tests/unit/test-$n.c" ] || echo "$n"
done | sort -u >"$WORK/untested"
check "docs/design.md lists the files without a unit test of their name (missing: $(comm -13 "$WORK/listed" "$WORK/untested" | tr '\n' ' '))" \
	sh -c "[ -s '$WORK/untested' ] && [ -z \"\$(comm -13 '$WORK/listed' '$WORK/untested')\" ]"
for t in $(grep -oE '`test-[a-z-]+\.(c|sh)`' "$WORK/tested" | tr -d '`' | sort -u); do
	check "the test $t that docs/design.md names is there" sh -c "[ -e tests/unit/$t ] || [ -e tests/integration/$t ]"
done
grep -vx "$(head -n 1 "$WORK/untested")" "$WORK/listed" >"$WORK/listed-short"
check "a file missing from that list is caught" sh -c "[ -n \"\$(comm -13 '$WORK/listed-short' '$WORK/untested')\" ]"

# Every decision the journal carries as CCXD_DECISION= is one that ccxd(8)
# lists: what a rule, a hand and the automatic policy log (log_decision()'s
# .decision, and log_group()'s, the automatic policy's).
sed -e 's|/\*.*\*/||g' $(find daemon -name '*.c' ! -name '*.bpf.c') |
	grep -oE '\.decision = "[a-z-]+"|log_group\([a-z]+, "[a-z-]+"' | grep -oE '"[a-z-]+"' | tr -d '"' | sort -u >"$WORK/decisions"
sed -n '/^\.B CCXD_DECISION$/,/^\.PP$/p' man/ccxd.8 | sed -n 's/^\.BR\{0,1\} \([a-z-]*\).*/\1/p' | sort -u >"$WORK/man-decisions"
check "the journal's decisions are found in the code ($(echo $(cat "$WORK/decisions")))" [ "$(wc -l <"$WORK/decisions")" -ge 8 ]
check "ccxd(8) lists every CCXD_DECISION the code logs (missing: $(comm -23 "$WORK/decisions" "$WORK/man-decisions" | tr '\n' ' '))" \
	[ -z "$(comm -23 "$WORK/decisions" "$WORK/man-decisions")" ]
check "and none that it does not (gone: $(comm -13 "$WORK/decisions" "$WORK/man-decisions" | tr '\n' ' '))" \
	[ -z "$(comm -13 "$WORK/decisions" "$WORK/man-decisions")" ]

# ccxctl(1)'s JSON OUTPUT names every field of the JSON that ccxctl --json
# prints: every key the code adds to a JSON object (json_object_object_add
# with a literal key) in the files that build ccxctl's output, less those
# that never reach it. A key counts as named where it is a whole word of
# bold text in that section (".B key", "\fBkey\fR", ".B groups[].key").
JSON_SOURCES="daemon/reports/*.c common/protocol.c daemon/prober/*.c probe/*.c tools/*.c"
grep -ohE 'json_object_object_add\([a-z_>-]+, "[a-z_0-9]+"' $JSON_SOURCES |
	grep -oE '"[a-z_0-9]+"' | tr -d '"' | sort -u >"$WORK/json-keys"
# The keys that ccxctl --json never prints:
# - the Varlink envelope of every call and reply (common/protocol.c,
#   daemon/reports/control.c): method, parameters, more, continues;
# - error replies' parameters, which ccxctl prints to stderr as text:
#   message, errors (Reload's), parameter (InvalidParameter's);
# - org.varlink.service.GetInfo's reply, no command of ccxctl's:
#   vendor, product, url, interfaces;
# - the Probe call's parameter quick, and the progress replies that
#   ccxctl draws on stderr: progress, phase, step;
# - measured_usec: of the probe cache in state_dir (daemon/prober/prober.c).
cat >"$WORK/json-exempt" <<'KEYS'
method
parameters
more
continues
message
errors
parameter
vendor
product
url
interfaces
quick
progress
phase
step
measured_usec
KEYS
sort -u "$WORK/json-exempt" -o "$WORK/json-exempt"
comm -23 "$WORK/json-keys" "$WORK/json-exempt" >"$WORK/json-fields"
sed -n '/^\.SH JSON OUTPUT$/,/^\.SH /p' man/ccxctl.1 | sed '1d;$d' >"$WORK/json-section"
# Bold text: the arguments of .B, .BR, .RB, .BI and .IB, and \fB...\fR.
{
	sed -n 's/^\.\(B\|BR\|RB\|BI\|IB\) //p' "$WORK/json-section"
	grep -o '\\fB[^\\]*' "$WORK/json-section" | sed 's/^\\fB//'
} | grep -oE '[a-z_0-9]+' | sort -u >"$WORK/json-named"
check "the code's JSON keys are found ($(wc -l <"$WORK/json-fields") fields for ccxctl(1))" \
	[ "$(wc -l <"$WORK/json-fields")" -ge 150 ]
check "ccxctl(1) documents every JSON field (missing: $(comm -23 "$WORK/json-fields" "$WORK/json-named" | tr '\n' ' '))" \
	[ -z "$(comm -23 "$WORK/json-fields" "$WORK/json-named")" ]
