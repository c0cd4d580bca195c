# Shared by the lint scripts, which read the code, its documents and the
# objects make built: they need neither root nor a second CPU, so they run
# on every machine and are never skipped.

set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/tap.sh"
WORK=$(mktemp -d /tmp/ccxd-lint.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM
