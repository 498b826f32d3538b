#!/bin/bash
# The real-GPU checks of a session lent a GPU machine (NVIDIA H100/H200, no Vulkan loader, no Rust
# toolchain), run in the repository root there; what BENCHMARKS.md's "… on a real GPU" sections
# cite. Prepared beforehand on the build machine (x86-64) by benches/gpu/prepare.sh:
#   .gl/  : the Vulkan/GL loaders (`apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1
#           libglx0 libgles2 libhwloc15 libudev1`)
#   .gpu/ : memscape.xz (stripped release build), synth-trace.xz (stripped release example of
#           memscape-lod), t_*.xz (stripped GPU-vs-CPU test binaries), timed.py
# STAGES picks what runs (default: tests dense lod render); also dense-thresholds, lod-gpu (with
# each frame's GPU passes and the work the level's large blocks give the block pass), lod-passes
# (the 4K lod-gpu frames again with the cells added by their own pass, as before wave 26, and with
# other raster-list thresholds of the dense path), and lod-base (the lod-gpu rows with blocks
# uploaded every frame, MEMSCAPE_LOD_KEEP_BLOCKS=0).
# TESTS: which t_* binaries the tests stage runs (default: all of .gpu/).
# OUT names the folder the tables and logs are written to.
ROOT=$PWD
G=$ROOT/.gpu
STAGES=${STAGES:-tests dense lod render}
LOG=$OUT/run.log
exec > >(tee -a "$LOG") 2>&1
t0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - t0 )) s] $*"; }
has() { [[ " $STAGES " == *" $1 "* ]]; }

stamp setup
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
unxz() { python3 -c "import lzma,sys; open(sys.argv[2],'wb').write(lzma.open(sys.argv[1]).read())" "$1" "$2" && chmod +x "$2"; }
mkdir -p /tmp/b
# `wait` with no operand would also wait for the tee above (bash ≥ 5.1): wait for these pids.
pids=(); for f in "$G"/*.xz; do n=$(basename "$f" .xz); unxz "$f" "/tmp/b/$n" & pids+=($!); done
wait "${pids[@]}"
# The golden tests find their PNGs under the CI clone's manifest dir, where they were built.
mkdir -p /tmp/ci && ln -sfn "$ROOT" /tmp/ci/main
export XDG_RUNTIME_DIR=/tmp/xdg && mkdir -p /tmp/xdg && chmod 700 /tmp/xdg
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
echo "cores $(nproc), kernel $(uname -r)"
timeout 30 /tmp/b/memscape bench --quick --adapter gpu 2>&1 | grep -E '^(device|backend)' | head -3

if has tests; then
  stamp "GPU-vs-CPU tests on the GPU (MEMSCAPE_ADAPTER=gpu), in parallel"
  pids=()
  for t in ${TESTS:-/tmp/b/t_*}; do
    ( MEMSCAPE_ADAPTER=gpu timeout 120 "$t" --test-threads=4 > "$OUT/$(basename "$t").log" 2>&1
      echo "$(basename "$t") rc=$?" ) & pids+=($!)
  done
  wait "${pids[@]}"
  for t in ${TESTS:-/tmp/b/t_*}; do
    n=$(basename "$t"); echo "--- $n: $(grep -h 'test result' "$OUT/$n.log" | tail -1)"
    grep -hE '^test .*FAILED|panicked|differ|beyond' "$OUT/$n.log" | head -8
  done
  cat "$OUT"/t_*.log > "$OUT/tests.log"; rm -f "$OUT"/t_*.log
fi

if has dense; then
  stamp "bench: the dense path at 1 M and 10 M blocks, 1920x1080 and 3840x2160; morph of 1 M records"
  timeout 120 /tmp/b/memscape bench --adapter gpu --blocks 1000000,10000000 --sizes 1920x1080,3840x2160 \
    --paths dense --records 1000000 --frames 20 --no-tour > "$OUT/bench-dense.md" 2> /tmp/bench-dense.err
  echo "rc=$?"; grep -E '^\|' "$OUT/bench-dense.md"; tail -2 /tmp/bench-dense.err
fi

if has dense-thresholds; then
  stamp "the dense path's raster-list thresholds (MEMSCAPE_DENSE_MIN_COLUMNS / _MAX_ROWS): 10 M blocks at 3840x2160"
  for v in 16/16 4/16 2/16 1/16 2/64 16/16; do
    echo "--- MEMSCAPE_DENSE_MIN_COLUMNS=${v%/*} MEMSCAPE_DENSE_MAX_ROWS=${v#*/}"
    MEMSCAPE_DENSE_MIN_COLUMNS=${v%/*} MEMSCAPE_DENSE_MAX_ROWS=${v#*/} timeout 60 /tmp/b/memscape bench \
      --adapter gpu --blocks 10000000 --sizes 3840x2160 --paths dense --records 0 --no-tour --frames 10 \
      2> /dev/null | grep -E '^\| alloc_map'
  done
fi

if has lod-gpu; then
  stamp "bench: lod-gpu alone at 10 M blocks (whole, zoomed out 8x, zoomed in)"
  timeout 120 /tmp/b/memscape bench --adapter gpu --blocks 10000000 --sizes 1920x1080,3840x2160 \
    --paths lod-gpu --records 0 --no-tour --frames 10 --scratch /tmp > "$OUT/bench-lod-gpu.md" 2> /tmp/bench-lod-gpu.err
  # The table, then per row its GPU passes (p50 each) and the large blocks' split ("- " lines).
  echo "rc=$?"; grep -E '^(\||- )' "$OUT/bench-lod-gpu.md"; tail -2 /tmp/bench-lod-gpu.err
fi

if has lod-passes; then
  # Each run generates the 10 M-block trace and its index again (≈ 35 s on 16 cores).
  stamp "bench: lod-gpu at 3840x2160, the level-drawn frame's passes: cells added by the resolve (default) or by their own pass (MEMSCAPE_LOD_CELLS_ADD=pass); raster-list thresholds"
  for v in default pass cols1 rows64; do
    case $v in
      default) env=();;
      pass) env=(MEMSCAPE_LOD_CELLS_ADD=pass);;
      cols1) env=(MEMSCAPE_DENSE_MIN_COLUMNS=1);;
      rows64) env=(MEMSCAPE_DENSE_MAX_ROWS=64);;
    esac
    echo "--- $v ${env[*]}"
    env "${env[@]}" timeout 120 /tmp/b/memscape bench --adapter gpu --blocks 10000000 --sizes 3840x2160 \
      --paths lod-gpu --records 0 --no-tour --frames 10 --scratch /tmp 2> /dev/null | grep -E '8×'
  done
fi

if has lod; then
  stamp "bench: lod (CPU) and lod-gpu (alloc_map::lod::prepare) at 10 M blocks: whole, zoomed out 8x (level-drawn), zoomed in"
  timeout 240 /tmp/b/memscape bench --adapter gpu --blocks 10000000 --sizes 1920x1080,3840x2160 \
    --paths lod --records 0 --no-tour --frames 5 --scratch /tmp > "$OUT/bench-lod.md" 2> /tmp/bench-lod.err
  echo "rc=$?"; grep -E '^\|' "$OUT/bench-lod.md"; tail -2 /tmp/bench-lod.err
fi

if has lod-base; then
  stamp "bench: lod-gpu at 10 M blocks, blocks gathered and uploaded every frame (MEMSCAPE_LOD_KEEP_BLOCKS=0: the baseline of the host p50 column)"
  MEMSCAPE_LOD_KEEP_BLOCKS=0 timeout 240 /tmp/b/memscape bench --adapter gpu --blocks 10000000 --sizes 1920x1080,3840x2160 \
    --paths lod-gpu --records 0 --no-tour --frames 10 --scratch /tmp > "$OUT/bench-lod-base.md" 2> /tmp/bench-lod-base.err
  echo "rc=$?"; grep -E '^\|' "$OUT/bench-lod-base.md"; tail -2 /tmp/bench-lod-base.err
fi

if has render; then
  stamp "render: a 20 M-event generated trace, index built, the whole view and zoomed out 8x at 3840x2160 (--stats: passes' GPU time)"
  E=20000000; T=/tmp/lod-$E.msc
  python3 "$G/timed.py" timeout 100 /tmp/b/synth-trace "$T" $E 2>&1 | tail -1
  python3 "$G/timed.py" timeout 120 /tmp/b/memscape lod build "$T" 2>&1 | tail -1
  for zoom in 1 8; do
    for mode in gpu cpu; do
      echo "--- zoomed out ${zoom}x, MEMSCAPE_LOD_RESOLVE=$mode"
      MEMSCAPE_LOD_RESOLVE=$mode timeout 60 /tmp/b/memscape render "$T" --adapter gpu --width 3840 \
        --height 2160 --range-time 0..$((zoom * E)) -o "$OUT/lod-$zoom-$mode.png" --stats \
        > /tmp/lod-$zoom-$mode.json 2> /tmp/lod-$zoom-$mode.err
      grep -h 'allocation map from\|frame ' /tmp/lod-$zoom-$mode.err | head -3
      python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['wall_ms'], [(p['pass'], round(p['gpu_ns']/1e6, 3)) for p in d['passes']])" \
        /tmp/lod-$zoom-$mode.json 2>&1 | tail -1
    done
  done
  rm -f "$T" "$T".*
  # At most 8 files come back: the logs, the tables and the GPU-resolved pictures.
  rm -f "$OUT"/lod-*-cpu.png
fi
stamp done
