#!/usr/bin/env bash
# Peak memory of `memscape record` on a long recording: N malloc/free pairs over a ring of
# 4,096 live blocks (crates/memscape-record/tests/c/churn.c), 2N events, recorded by the
# `record` example (release; what `memscape record` runs). Prints the launcher's own peak RSS
# (VmHWM: the recorded program's memory is not the recorder's), the wall time and the file
# size, and fails when the peak passes LIMIT_MIB (default 1024: issue 18's bound).
#
#   benches/record/rss.sh [PAIRS]     (default 10000000: 20 M events)
#
# Needs gcc, /usr/bin/time; cargo.
set -euo pipefail
pairs=${1:-10000000}
limit=${LIMIT_MIB:-1024}
root=$(cd "$(dirname "$0")/../.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && cargo build --release -q -p memscape-recorder && cargo build --release -q -p memscape-record --example record)
export MEMSCAPE_SHIM="$CARGO_TARGET_DIR/release/libmemscape_recorder.so"
gcc -O2 -o "$work/churn" "$root/crates/memscape-record/tests/c/churn.c"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f "%e %M" -o "$work/time.txt" "$CARGO_TARGET_DIR/release/examples/record" \
    -o "$work/churn.msc" -- "$work/churn" "$pairs" > "$work/report.json" 2> "$work/err.txt"
read -r wall rss < "$work/time.txt"
events=$(grep -m1 '"events"' "$work/report.json" | grep -o '[0-9]*')
hwm=$(grep -o 'VmHWM:[[:space:]]*[0-9]*' "$work/err.txt" | grep -o '[0-9]*$')
peak=$((hwm / 1024))
echo "$events events: memscape record $wall s, peak RSS $peak MiB (limit $limit MiB), file $(stat -c %s "$work/churn.msc") B; load average after $(cut -d' ' -f1 /proc/loadavg)"
[ "$peak" -le "$limit" ] || { echo "peak RSS $peak MiB over the limit $limit MiB" >&2; exit 1; }
