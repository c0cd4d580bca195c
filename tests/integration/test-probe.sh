# ccxctl probe: the plan of other machines' topologies, and real measurements
# on this one, without a daemon.
. "$(dirname "$0")/lib.sh"

PROBE="$CCXCTL probe"
XML_1800X=$TOPOLOGIES/amd-ryzen7-1800x.xml
holds() { jq -e "$@" >/dev/null; }   # holds FILTER FILE: the filter is true of the file

out=$($CCXCTL --socket "$SOCK" probe --quick 2>&1)
rc=$?
check "without --local and no ccxd: exit status 3, not running" [ "$rc" -eq 3 ]
check "without --local and no ccxd: one line pointing to --local" \
	sh -c "[ \$(printf '%s\n' '$out' | wc -l) -eq 1 ] && printf '%s' '$out' | grep -q 'ccxd is not running.*--local'"
$PROBE --local --bogus >/dev/null 2>&1
check "an unknown option is a usage error" [ $? -eq 2 ]

# The quick calibration: relations only, exactly the ones this machine's plan has.
start=$(date +%s%N)
$PROBE --local --quick --json >"$WORK/quick.json" 2>"$WORK/quick.err"
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "--local --quick --json succeeds" [ "$rc" -eq 0 ]
check "--quick takes under 3 s (${ms} ms)" [ "$ms" -lt 3000 ]
$PROBE --plan --json >"$WORK/plan.json"
check "measured relations are the plan's" sh -c \
	"[ \"\$(jq -c '[.relations[] | select(.cpus) | [.relation, .cpus]]' $WORK/plan.json)\" = \
	   \"\$(jq -c '[.relations[] | [.relation, .cpus]]' $WORK/quick.json)\" ]"
check "every relation has throughput, latency and spreads" holds \
	'(.relations | length) > 0 and all(.relations[]; .pipe_gib_s > 0 and .pipe_small_mib_s > 0 and .latency_ns > 0
	  and .pipe_gib_s_min <= .pipe_gib_s and .pipe_gib_s <= .pipe_gib_s_max and .latency_ratio >= 1)' \
	"$WORK/quick.json"
check "a quick run measures no codec" holds '.mode == "quick" and .codec == []' "$WORK/quick.json"
# What this machine has, as hwloc shows it: its two CPUs under one L3, or
# one L3 each.
case $(nproc):$(l3s_here) in
2:1) check "2 CPUs, one L3 as hwloc shows: same CPU and same CCX" \
	sh -c "[ \"\$(jq -c '[.relations[].relation]' $WORK/quick.json)\" = '[\"same-cpu\",\"same-ccx\"]' ]" ;;
2:2) check "2 CPUs, an L3 each as hwloc shows: same CPU and another CCX" \
	sh -c "[ \"\$(jq -c '[.relations[].relation]' $WORK/quick.json)\" = '[\"same-cpu\",\"cross-ccx\"]' ]" ;;
*) echo "ok - the relations of this machine's own topology # SKIP $(nproc) CPUs, $(l3s_here) L3 as hwloc shows: the checks below name theirs" ;;
esac
check "progress as plain lines when stderr is not a terminal" grep -q '^probe: \[1/6\] relations: pipe' "$WORK/quick.err"

# What was saved prints again, the same.
$PROBE --input "$WORK/quick.json" --json >"$WORK/again.json"
check "--input FILE --json gives back the same JSON" cmp -s "$WORK/quick.json" "$WORK/again.json"
check "--input FILE prints the relations table" sh -c \
	"$PROBE --input $WORK/quick.json | grep -Eq '^RELATION +CPUS +PIPE GiB/s'"
echo '{"version": 1}' >"$WORK/bad.json"
$PROBE --input "$WORK/bad.json" >/dev/null 2>&1
check "--input of something else is an error" [ $? -eq 1 ]

# The matrix and its heatmap.
$PROBE --local --quick --svg "$WORK/heat.svg" --json >"$WORK/matrix.json" 2>/dev/null
check "--svg runs the matrix" holds '.matrix.cpus | length == ('"$(nproc)"')' "$WORK/matrix.json"
n=$(jq '.matrix.cpus | length' "$WORK/matrix.json")
check "the heatmap is an SVG document" sh -c "head -n 1 $WORK/heat.svg | grep -q '^<?xml' && tail -n 1 $WORK/heat.svg | grep -q '^</svg>'"
check "the heatmap has a cell per CPU pair" [ "$(grep -c '<rect x=[^>]*fill="#[0-9a-f]*"><title>' "$WORK/heat.svg")" -eq $((n * n)) ]
check "the heatmap has a legend" grep -q 'latency, ns' "$WORK/heat.svg"
if command -v xmllint >/dev/null; then
	check "the heatmap is well-formed XML" xmllint --noout "$WORK/heat.svg"
fi

# Both ways of seeing two CPUs, whatever hwloc shows here: two one-CPU CCXs,
# and one CCX of two cores. Each is measurable here.
$PROBE --local --quick --json --topology "$TWO_CCX" >"$WORK/split.json" 2>/dev/null
check "two one-CPU CCXs: same CPU and different CCX" sh -c \
	"[ \"\$(jq -c '[.relations[] | [.relation, .cpus]]' $WORK/split.json)\" = '[[\"same-cpu\",[0,0]],[\"cross-ccx\",[0,1]]]' ]"
$PROBE --local --quick --json --topology "$ONE_CCX" >"$WORK/one.json" 2>/dev/null
check "one CCX of two cores: same CPU and same CCX" sh -c \
	"[ \"\$(jq -c '[.relations[] | [.relation, .cpus]]' $WORK/one.json)\" = '[[\"same-cpu\",[0,0]],[\"same-ccx\",[0,1]]]' ]"

# The reference codec masks (docs/reference-figures.md), in Linux numbering.
check "--plan of the 1800X: the reference masks" sh -c \
	"[ \"\$($PROBE --plan --json --topology xml:$XML_1800X | jq -c '[.codec[] | .mask]')\" = \
	   '[\"0x0303\",\"0x000f\",\"0x0f0f\",\"0x1111\",\"0x0033\",\"0xffff\"]' ]"
check "--plan prints masks and CPU lists" sh -c \
	"$PROBE --plan --topology xml:$XML_1800X | grep -Eq '^cross-ccx-one-per-core +0x0033 +0-1,4-5 '"
check "--plan names the relation pairs" sh -c \
	"$PROBE --plan --topology xml:$XML_1800X | grep -Eq '^SMT siblings +0,8 '"
out=$($PROBE --local --quick --topology "xml:$XML_1800X" 2>&1)
rc=$?
check "--local refuses another machine's topology" sh -c "[ $rc -eq 1 ] && echo '$out' | grep -q 'cannot be measured here'"
