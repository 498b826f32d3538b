#!/bin/sh
# Level of detail at scale: generate a trace of EVENTS events (streaming, mappable .msc), build
# its index, draw the first full frame (whole trace, 1920x1080) from it, a zoomed frame, and the
# same whole frame exactly (every block); wall time and peak RSS of each step.
#
#   benches/scale/lod.sh [EVENTS] [DIR]      (default 100000000 events in /tmp/memscape-scale)
#
# Needs about 73 bytes of disk per event for the trace and ~45 per block for the index; DIR is
# removed at the end unless KEEP=1.
set -eu
EVENTS=${1:-100000000}
DIR=${2:-/tmp/memscape-scale}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    cargo build --release -q -p memscape-lod --example synth-trace
    cargo build --release -q -p memscape
fi
BIN=$CARGO_TARGET_DIR/release
mkdir -p "$DIR"
TRACE=$DIR/synth-$EVENTS.msc
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$DIR"' EXIT
step() {
    name=$1; shift
    /usr/bin/time -f "$name: %e s wall, %U s user, %M KB peak RSS" "$@"
}
[ -f "$TRACE" ] || step "generate $EVENTS events" "$BIN/examples/synth-trace" "$TRACE" "$EVENTS" 2>&1 | grep -v ' % '
ls -l "$TRACE" | awk '{printf "trace: %.2f GB\n", $5 / 1e9}'
step "index build" "$BIN/memscape" lod build "$TRACE" 2>&1 | grep -v 'building the index'
step "first frame (index present)" "$BIN/memscape" lod render "$TRACE" -o "$DIR/whole.png" 2>&1
step "zoomed frame (1/64 of the time)" "$BIN/memscape" lod render "$TRACE" -o "$DIR/zoom.png" \
    --window "$((EVENTS / 2)):$((EVENTS / 2 + EVENTS / 64)),*" 2>&1
step "whole frame, exact" "$BIN/memscape" lod render "$TRACE" -o "$DIR/exact.png" --path exact 2>&1
