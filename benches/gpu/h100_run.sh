#!/bin/bash
# What produced BENCHMARKS.md's "`memscape bench` on a real GPU" (NVIDIA H100, 2026-11-27), run in
# the repository root of a machine with a GPU but without the Vulkan loader or a Rust toolchain.
# Prepared beforehand on the build machine (x86-64):
#   .gl/  : `apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 libhwloc15 libudev1`
#   .gpu/ : memscape.xz (a stripped release build), t_*.xz (stripped test binaries of
#           crates/memscape-render/tests, `cargo test -p memscape-render --no-run`),
#           sqlite-105000.raw.zst (benches/scale/first_window.sh's trace), timed.py (wall + peak RSS),
#           synth-trace.xz (stripped `cargo build --release -p memscape-lod --example synth-trace`)
# OUT names the folder the tables and images are written to.
ROOT=$PWD
G=$ROOT/.gpu
LOG=$OUT/run.log
exec > >(tee -a "$LOG") 2>&1
t0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - t0 )) s] $*"; }

stamp setup
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
ls /usr/local/nvidia/share/vulkan/icd.d/ /etc/vulkan/icd.d /usr/share/vulkan/icd.d 2>&1 | head
unxz() { python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" "$1" "$2" && chmod +x "$2"; }
mkdir -p /tmp/b
unxz "$G/memscape.xz" /tmp/b/memscape
for f in "$G"/t_*.xz; do n=$(basename "$f" .xz); unxz "$f" "/tmp/b/$n"; done
# The golden test finds its PNGs under the CI clone's manifest dir, where it was built.
mkdir -p /tmp/ci && ln -sfn "$ROOT" /tmp/ci/main
export XDG_RUNTIME_DIR=/tmp/xdg && mkdir -p /tmp/xdg && chmod 700 /tmp/xdg
nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
nproc; uname -r

stamp "sanity: bench --quick on the GPU"
timeout 60 /tmp/b/memscape bench --quick --adapter gpu 2>&1 | tail -14
if [ "${PIPESTATUS[0]}" != 0 ]; then echo "quick bench failed"; fi

stamp "bench: raster/dense maps, morph, tour on the GPU"
timeout 200 /tmp/b/memscape bench --adapter gpu --blocks 1000000,10000000 --sizes 1920x1080,3840x2160 \
  --paths raster,dense --records 100000,1000000 --frames 30 --tour-size 1920x1080 --tour-frames 120 \
  > "$OUT/bench.md" 2> "$OUT/bench.err"
echo "rc=$?"; cat "$OUT/bench.md"; tail -3 "$OUT/bench.err"

stamp "renderer GPU-vs-CPU tests on the GPU"
for t in /tmp/b/t_*; do
  echo "--- $(basename "$t")"
  MEMSCAPE_ADAPTER=gpu timeout 45 "$t" --test-threads=8 2>&1 | grep -E '^test |test result|panicked|differ' | head -40
done > "$OUT/tests.log" 2>&1
grep -E '^---|test result|FAILED|panicked' "$OUT/tests.log"

stamp "render: sqlite3 6.6 M events, alloc view, 3840x2160, GPU"
python3 $G/timed.py /tmp/b/memscape render "$G/sqlite-105000.raw.zst" --view alloc --width 3840 --height 2160 \
  --adapter gpu -o "$OUT/sqlite-4k.png" 2>&1 | tail -5

stamp "lod: a level's cells resolved on the GPU vs on the CPU, 3840x2160 (issue 25)"
# A 30 M-event generated trace (≈ 2.2 GB + 0.5 GB of index; ≈ 1 min here) drawn zoomed out 8x
# and 16x past its time extent, so that its levels draw the 4K frame (at 4K the whole view of
# fewer than ≈ 125 M events is finer than every level and draws exact blocks): the frame's
# wall ("frame N s" on stderr) and its passes (--stats: "alloc_map lod cells", "... add",
# the large blocks' accumulation, the resolve), MEMSCAPE_LOD_RESOLVE=gpu against =cpu.
if [ -f "$G/synth-trace.xz" ]; then
  unxz "$G/synth-trace.xz" /tmp/b/synth-trace
  E=30000000; T=/tmp/lod-$E.msc
  timeout 120 /tmp/b/synth-trace "$T" $E 2>&1 | tail -1
  timeout 200 /tmp/b/memscape lod build "$T" 2>&1 | tail -1
  for zoom in 8 16; do
    for mode in cpu gpu cpu gpu; do
      echo "--- zoomed out ${zoom}x, MEMSCAPE_LOD_RESOLVE=$mode"
      MEMSCAPE_LOD_RESOLVE=$mode timeout 60 /tmp/b/memscape render "$T" --adapter gpu --width 3840 \
        --height 2160 --range-time 0..$((zoom * E)) -o "$OUT/lod-$zoom-$mode.png" --stats \
        > "$OUT/lod-$zoom-$mode.json" 2> "$OUT/lod-$zoom-$mode.err"
      grep -h 'allocation map from' "$OUT/lod-$zoom-$mode.err"
      python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['wall_ms'], [(p['pass'], round(p['gpu_ns']/1e6, 3)) for p in d['passes']])" \
        "$OUT/lod-$zoom-$mode.json" 2>&1 | tail -1
    done
  done
  # Views finer than every level (the whole trace at 4K and 1920x1080: ≈ 15 M blocks in view):
  # the exact blocks by the dense GPU path up to 20 M on hardware (MEMSCAPE_LOD_EXACT_GPU=hardware,
  # the default there) against the CPU sums beyond 2 M (=software, lavapipe's limit).
  for size in 3840x2160 1920x1080; do
    for mode in hardware software hardware software; do
      echo "--- whole trace at $size, MEMSCAPE_LOD_EXACT_GPU=$mode"
      MEMSCAPE_LOD_EXACT_GPU=$mode timeout 120 /tmp/b/memscape render "$T" --adapter gpu \
        --width "${size%x*}" --height "${size#*x}" -o "$OUT/lod-whole-$size-$mode.png" --stats \
        > "$OUT/lod-whole-$size-$mode.json" 2> "$OUT/lod-whole-$size-$mode.err"
      grep -h 'allocation map from' "$OUT/lod-whole-$size-$mode.err"
      python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['wall_ms'], [(p['pass'], round(p['gpu_ns']/1e6, 3)) for p in d['passes']])" \
        "$OUT/lod-whole-$size-$mode.json" 2>&1 | tail -1
    done
  done
  rm -f "$T" "$T".*
fi

stamp "bench: lod path (CPU, and lod-gpu: the same views through alloc_map::lod::prepare on the GPU) at 1 M and 10 M blocks"
timeout 150 /tmp/b/memscape bench --adapter gpu --blocks 1000000,10000000 --sizes 1920x1080,3840x2160 \
  --paths lod --records 0 --no-tour --frames 5 > "$OUT/bench-lod.md" 2> "$OUT/bench-lod.err"
echo "rc=$?"; cat "$OUT/bench-lod.md"
stamp done
