#!/bin/sh
# Level of detail at scale: generate a trace of EVENTS events (streaming, mappable .msc), build
# its index, draw the first full frame (whole trace, 1920x1080) from it, zoomed and panned
# frames, `info` (full pass, then stored), and with EXACT=1 the whole frame exactly (every
# block); wall time, CPU time and peak RSS of each step.
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
    /usr/bin/time -f "$name: %e s wall, %U s user, %S s sys, %M KB peak RSS" "$@"
}
[ -f "$TRACE" ] || step "generate $EVENTS events" "$BIN/examples/synth-trace" "$TRACE" "$EVENTS" 2>&1 | grep -v ' % '
ls -l "$TRACE" | awk '{printf "trace: %.2f GB\n", $5 / 1e9}'
step "index build" "$BIN/memscape" lod build "$TRACE" 2>&1 | grep -v 'building the index'
# What the issue's table asks, through `memscape render` (the index path resolves on the GPU:
# lavapipe here) at 1920x1080: the first full frame with the index present (open included),
# zoomed and panned frames, a deep zoom (exact blocks through the GPU pipeline); `info` twice
# (the full pass that stores the summary, then the stored summary).
R="$BIN/memscape render $TRACE --width 1920 --height 1080 --color thread"
step "first frame, index present (render, 1920x1080)" $R -o "$DIR/whole.png" 2>&1
step "zoomed frame (1/64 of the time)" $R -o "$DIR/zoom.png" \
    --range-time "$((EVENTS / 2))..$((EVENTS / 2 + EVENTS / 64))" 2>&1
step "panned frame (the next 1/64)" $R -o "$DIR/pan.png" \
    --range-time "$((EVENTS / 2 + EVENTS / 64))..$((EVENTS / 2 + EVENTS / 32))" 2>&1
step "deep zoom (1/65536 of the time)" $R -o "$DIR/deep.png" \
    --range-time "$((EVENTS / 2))..$((EVENTS / 2 + EVENTS / 65536))" 2>&1
step "info, first (full pass, summary stored)" "$BIN/memscape" info "$TRACE" >/dev/null
step "info, again (stored summary)" "$BIN/memscape" info "$TRACE" >/dev/null
if [ "${EXACT:-0}" = 1 ]; then
    step "whole frame, exact (every block, CPU)" "$BIN/memscape" lod render "$TRACE" \
        -o "$DIR/exact.png" --size 1920x1080 --path exact 2>&1
fi
