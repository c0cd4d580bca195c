# The shape of the code: no function of ccxd, ccxctl, the probe or the
# tools over 80 lines (one that long does several things, and each can have
# a name). A function is what starts at the first column with a name and
# its parameters, and ends at the first column's closing brace.
. "$(dirname "$0")/lib.sh"

cd "$TOP" || exit 1
LIMIT=80

# long_functions FILES...: "FILE:LINE NAME (N lines)" for each function
# past LIMIT
long_functions() {
	awk -v limit=$LIMIT '
		FNR == 1 { start = 0 }
		/^[A-Za-z_].*\(/ && !/;[[:space:]]*$/ && !/^(typedef|struct [a-z_]+ \{)/ { if (!start) { start = FNR; head = $0 } }
		/^}/ && start {
			if (FNR - start + 1 > limit) {
				name = head; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
				printf "%s:%d %s (%d lines)\n", FILENAME, start, name, FNR - start + 1
			}
			start = 0
		}' "$@"
}

SOURCES=$(find daemon common probe tools -name '*.c' ! -name '*.bpf.c' | sort)
check "the sources are there to read" [ "$(echo $SOURCES | wc -w)" -gt 50 ]
long=$(long_functions $SOURCES)
check "no function over $LIMIT lines (found: $(echo $long))" [ -z "$long" ]

# It fails where it should: a function of 81 lines.
{
	echo 'static int long_one(void) {'
	i=0; while [ $i -lt 79 ]; do echo '	i++;'; i=$((i + 1)); done
	echo '}'
} >"$WORK/long.c"
check "a function of 81 lines is caught" sh -c "echo '$(long_functions "$WORK/long.c")' | grep -q 'long_one (81 lines)'"
