#!/bin/bash
# Fills .gpu/ (ignored) with what benches/gpu/device_run.sh runs on a GPU machine: the stripped
# release memscape and synth-trace, and the stripped GPU-vs-CPU test binaries, xz-compressed (the
# device tool carries at most 64 MiB). REL: a release target dir holding memscape and
# examples/synth-trace; DEV: the dev target dir whose deps/ hold the test binaries (built by
# `make test`, or `cargo test -p memscape-render -p memscape-views --no-run`).
set -euo pipefail
REL=${REL:-target/release}
DEV=${DEV:-target/debug}
rm -rf .gpu && mkdir -p .gpu
pack() { strip -o "/tmp/gpu-pack-$2" "$1" && xz -T2 -6 -c "/tmp/gpu-pack-$2" > ".gpu/$2.xz" && rm "/tmp/gpu-pack-$2"; }
pack "$REL/memscape" memscape
pack "$REL/examples/synth-trace" synth-trace
# The renderer's GPU-vs-CPU tests, and the views' level-of-detail GPU resolve.
# TESTS_LIST picks some of them (names as in tests/).
for t in ${TESTS_LIST:-alloc_map alloc_map_dense alloc_map_golden alloc_map_lod alloc_map_pick \
         alloc_map_subsets cushion_cursors occupancy_bar polar_morph shapes lod_gpu_resolve}; do
  # The newest test binary of that name; the renderer's alloc_map is the small one (the views'
  # alloc_map links the whole views crate).
  f=$(ls -t "$DEV"/deps/"$t"-* | grep -v '\.d$' | while read -r b; do
        if [ "$t" = alloc_map ] && [ "$(stat -c %s "$b")" -gt 40000000 ]; then continue; fi; echo "$b"; done | head -1)
  pack "$f" "t_$t"
done
cp benches/gpu/timed.py .gpu/
du -sh .gpu
