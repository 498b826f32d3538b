#!/bin/sh
# Times memscape-heap's heaptree (the example binary, release build) beside the peer tools on the
# same inputs in one run, and prints the ratios:
#   * massif: valgrind's ms_print vs heaptree --peak on shared/data/massif/massif.out.kate
#   * heaptrack: heaptrack_print vs heaptree on shared/data/heaptrack/heaptrack.david.18594.gz
# Usage (from the repo root): sh benches/heap/compare.sh
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DATA="$ROOT/../shared/data"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/work/targets/memscape-heap}"
cargo build -q --release -p memscape-heap --example heaptree
BIN="$CARGO_TARGET_DIR/release/examples/heaptree"
REPS="${REPS:-5}"

best() { # best wall time in seconds of REPS runs of "$@"
    best=""
    i=0
    while [ "$i" -lt "$REPS" ]; do
        s=$(date +%s.%N)
        "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
        e=$(date +%s.%N)
        t=$(echo "$e - $s" | bc -l)
        if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
        i=$((i + 1))
    done
    echo "$best"
}

ratio() { echo "scale=3; $1 / $2" | bc -l; }

K="$DATA/massif/massif.out.kate"
a=$(best ms_print "$K")
b=$(best "$BIN" "$K" --peak)
echo "massif.out.kate: ms_print ${a}s, heaptree --peak ${b}s, ms_print/heaptree = $(ratio "$a" "$b")"

H="$DATA/heaptrack/heaptrack.david.18594.gz"
a=$(best heaptrack_print "$H")
b=$(best "$BIN" "$H" --group site)
echo "heaptrack.david.18594.gz: heaptrack_print ${a}s, heaptree --group site ${b}s, heaptrack_print/heaptree = $(ratio "$a" "$b")"
