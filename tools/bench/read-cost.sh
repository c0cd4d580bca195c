#!/bin/sh
# What reading one active process costs the sampler, /proc against its BPF
# task iterators (tools/bench/read-cost.c), on the 20 processes of 10
# tools/helpers/ccxt-talk pairs streaming through pipes and Unix sockets.
# Prints a Markdown table, in microseconds of CPU time per process. stat is
# read with /proc and with the iterators of each process: it tells which
# processes are active. The batch iterator reads all 20 in one read, with
# what stat would tell, as the sampler reads those active at the previous
# sample; and again with stat's figures alone, as it reads idle ones.
# /proc's status is one thread's, as these have one.
#
#   tools/bench/read-cost.sh        (root)
set -eu
cd "$(dirname "$0")/../.."
[ "$(id -u)" -eq 0 ] || { echo "read-cost.sh needs root" >&2; exit 1; }
make -s all tools/bench/read-cost >/dev/null
WORK=$(mktemp -d /tmp/ccxd-bench.XXXXXX)
cleanup() {
	pkill -f "ccxt-talk .* 600" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

for i in $(seq 10); do
	kind=pipe
	[ $((i % 2)) -eq 0 ] && kind=unix
	tools/helpers/ccxt-talk "$kind" 1 600 >> "$WORK/pids" &
done
sleep 1
# shellcheck disable=SC2046
tools/bench/read-cost $(cat "$WORK/pids") > "$WORK/out"
get() { sed -n "s/^$1 //p" "$WORK/out"; }
echo "| stat | /proc: io | status | fd listing | /proc in all, stat included | BPF: files (with the figures of a single thread) | threads (of a process with several) | BPF in all, one thread, stat included | several | BPF batch, one thread, stat's figures included | BPF batch, stat's figures alone |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
echo "| $(get proc_stat) | $(get proc_io) | $(get proc_status) | $(get proc_fds) |" \
     "$(echo "$(get proc_stat) $(get proc_io) $(get proc_status) $(get proc_fds)" | awk '{printf "%.1f", $1 + $2 + $3 + $4}') |" \
     "$(get bpf_files) | $(get bpf_threads) |" \
     "$(echo "$(get proc_stat) $(get bpf_files)" | awk '{printf "%.1f", $1 + $2}') |" \
     "$(echo "$(get proc_stat) $(get bpf_threads) $(get bpf_files)" | awk '{printf "%.1f", $1 + $2 + $3}') |" \
     "$(get bpf_batch) | $(get bpf_batch_stat) |"
