#!/bin/sh
# What the kernel's traffic counters (daemon/sample/traffic.h) cost the processes
# they count: tools/bench/traffic-cost.c says what it runs and prints (a
# Markdown table).
#
#   tools/bench/traffic-cost.sh [SECONDS [PAIRS [no-syscalls]]]   (root; default 0.5 s, 15 pairs)
set -eu
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "traffic-cost.sh needs root" >&2; exit 1; }
make -s tools/bench/traffic-cost >/dev/null
exec tools/bench/traffic-cost "$@"
