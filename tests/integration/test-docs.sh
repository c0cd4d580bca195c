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
