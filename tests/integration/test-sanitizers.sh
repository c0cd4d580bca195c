# With make check SANITIZE=address,undefined: a deliberate signed overflow,
# heap overflow and leak, each in a test of the unit-test harness, must each
# fail that test with a report, or a clean sanitizer run would prove nothing.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
FAULT=$TOP/tools/helpers/ccxt-fault
ldd "$FAULT" 2>/dev/null | grep -q 'libasan' || { echo "not a SANITIZE=address,undefined build"; exit 77; }

WORK=$(mktemp -d /tmp/ccxd-san.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
# The reports go here, not to tests/run's directory: they are expected.
ASAN_OPTIONS="log_path=$WORK/asan:halt_on_error=1:abort_on_error=1:detect_leaks=1"
UBSAN_OPTIONS="log_path=$WORK/ubsan:halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS UBSAN_OPTIONS

# caught FAULT PATTERN: the test fails and a report names the fault
caught() {
	rm -f "$WORK"/asan* "$WORK"/ubsan*
	"$FAULT" "$1" >"$WORK/out" 2>&1
	rc=$?
	# UBSan writes to stderr whatever log_path says; ASan and LSan obey it.
	if [ "$rc" -ne 0 ] && grep -q "^not ok - $1" "$WORK/out" &&
	   cat "$WORK/out" "$WORK"/asan* "$WORK"/ubsan* 2>/dev/null | grep -Eq "$2"; then
		echo "ok - $1 fails its test with a report"
	else
		echo "not ok - $1 fails its test with a report"
		# (without the marker that would make tests/run count it twice)
		sed -e 's/^/# /' -e 's/runtime error:/runtime-error:/' "$WORK/out"
	fi
}
caught signed_overflow 'signed integer overflow'
# UBSan's object-size check may see it before ASan does: either will do.
caught heap_overflow 'heap-buffer-overflow|insufficient space'
caught leak 'detected memory leaks'
