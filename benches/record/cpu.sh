#!/usr/bin/env bash
# CPU time (perf stat task-clock: user + kernel) of the sqlite3 workload recorded by one or more
# builds of the shim, interleaved, median of N runs each; `plain` runs it without a shim.
#
#   benches/record/cpu.sh WORKLOAD.sql N plain /path/a/libmemscape_recorder.so /path/b/...so
#
# WORKLOAD.sql: the file benches/record/bench.sh writes into its BENCH_WORK_DIR. Used to compare
# shim builds step by step on a loaded machine, where CPU time is steadier than wall time.
set -euo pipefail
workload=$1 n=$2
shift 2
work=$(mktemp -d)
declare -A runs
for ((i = 0; i < n; i++)); do
    for v in "$@"; do
        rm -rf "$work/msr" "$work/db.sqlite" && mkdir -p "$work/msr"
        pre=""
        [ "$v" != plain ] && pre=$v
        ms=$(MEMSCAPE_RECORD_DIR="$work/msr" LD_PRELOAD="$pre" perf stat -x, -e task-clock \
            sqlite3 "$work/db.sqlite" < "$workload" 2>&1 >/dev/null | awk -F, '/task-clock/ {printf "%d", $1}')
        runs[$v]="${runs[$v]:-} $ms"
    done
done
for v in "$@"; do
    median=$(printf '%s\n' ${runs[$v]} | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
    echo "$v: median ${median} ms; runs:${runs[$v]}"
done
rm -rf "$work"
