#!/usr/bin/env bash
# The GUI's first full window of a big `.msc` with its level-of-detail index present (issue 25,
# wave 18): `memscape view TRACE --screenshot` under Xvfb on lavapipe, its log's timestamps read
# as seconds from the command's start: the window (`GUI renders`), the panes opened on the
# trace's first blocks (`panes open on the first blocks read`; none on a binary without it), the
# first map frame drawn from the index after them (the first full window: every pane final or
# saying how far the read is), the whole trace's scene (the `allocation-map scene` line with
# BLOCKS blocks) and the final window (`ready frame 1`: every pane final), with GNU time's wall,
# CPU and peak RSS. One line per run.
#
#   benches/scale/first_window_msc.sh BIN TRACE BLOCKS TAG   (the log and PNG as TAG.log, TAG.png)
#
# Make TRACE with `target/debug/examples/synth-trace TRACE 20000000` (10,005,466 blocks) and its
# index with `memscape lod build TRACE`; run a baseline binary and this one alternately.
set -euo pipefail
bin=$1 trace=$2 blocks=$3 tag=$4
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp/memscape-runtime-$(id -u)} MEMSCAPE_ADAPTER=cpu
mkdir -p "$XDG_RUNTIME_DIR"
start=$(date +%s.%N)
load=$(cut -d' ' -f1 /proc/loadavg)
RUST_LOG=warn,memscape=debug,memscape_views=debug,memscape::frames=off /usr/bin/time \
    -f "%e s %U+%S s %M KB" xvfb-run -a -s "-screen 0 1600x1000x24" "$bin" view "$trace" \
    --screenshot "$tag.png" >"$tag.log" 2>&1
python3 - "$start" "$tag" "$load" "$blocks" <<'PY'
import sys, datetime
start, tag, load, blocks = float(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
def at(line):
    stamp = line.split()[0].rstrip('Z')[:26]
    when = datetime.datetime.strptime(stamp, '%Y-%m-%dT%H:%M:%S.%f')
    return round(when.replace(tzinfo=datetime.timezone.utc).timestamp() - start, 2)
lines = open(tag + '.log').read().splitlines()
def first(pred):
    return next((at(l) for l in lines if pred(l)), None)
window = first(lambda l: 'GUI renders' in l)
opened = first(lambda l: 'panes open on the first blocks read' in l)
seen, index_frame = opened is None, None
for l in lines:
    seen = seen or 'panes open on the first' in l
    if seen and 'source="index"' in l:
        index_frame = at(l)
        break
whole = first(lambda l: 'allocation-map scene' in l and f'blocks={blocks}' in l)
ready = first(lambda l: 'ready frame 1' in l)
print(f"{tag}: load {load} window {window} first-part panes {opened} first index frame "
      f"{index_frame} whole scene {whole} final ready {ready} | {lines[-1]}")
PY
