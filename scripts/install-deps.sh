#!/usr/bin/env bash
# Installs what memscape needs on Debian/Ubuntu, idempotently and only when missing.
#   scripts/install-deps.sh run    # to build and run the GUI / render headless
#   scripts/install-deps.sh test   # everything the test suite uses (tools that serve as oracles)
set -euo pipefail
mode=${1:-run}

# Debian packages, by purpose.
run_pkgs=(
  pkg-config gcc                       # build
  libvulkan1 mesa-vulkan-drivers       # Vulkan loader + Mesa's software Vulkan (lavapipe)
  libhwloc-dev libudev-dev hwloc       # hwlocality (topology) and lstopo
  libx11-6 libx11-xcb1 libxcursor1 libxrandr2 libxi6 libxkbcommon-x11-0  # winit on X11
  libwayland-client0 libwayland-cursor0 libxkbcommon0  # winit on Wayland (opened at run time)
  xvfb                                 # a display for the windowed self-test / demo
)
test_pkgs=(
  valgrind heaptrack sqlite3 linux-perf # record allocation, reference and sample traces at test time
  graphviz clang llvm g++              # DOT layouts (oracle), LLVM CFGs, C++ recorder tests
  libunwind8                           # faster call stacks in the recorder shim
  golang-go libjemalloc2               # heap profiles made at test time (Go runtime/pprof, jemalloc prof), go tool pprof as oracle
  libc6-dbg binutils                   # separate debug info of libc (build-id tree), objcopy/strip
  zstd bzip2 bc time python3 python3-venv python3-pip
  librsvg2-bin                         # rsvg-convert: rasterizes the SVG export to compare with the PNG
)
pkgs=("${run_pkgs[@]}")
[ "$mode" = test ] && pkgs+=("${test_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "memscape: this system has no apt-get. Install these packages (or your distribution's equivalents) and re-run:" >&2
    printf '  %s\n' "${missing[@]}" >&2
    exit 1
  fi
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "memscape: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "memscape: cargo not found; install Rust (https://rustup.rs), version 1.95 or newer" >&2
  exit 1
fi

# Python oracles (ripser, DREiMac, pyarrow) in a private virtual environment, only for tests.
if [ "$mode" = test ]; then
  venv=${MEMSCAPE_ORACLES_VENV:-target/oracles}
  if [ ! -x "$venv/bin/python3" ]; then
    python3 -m venv "$venv"
  fi
  if ! "$venv/bin/python3" -c "import ripser, dreimac, pyarrow" >/dev/null 2>&1; then
    "$venv/bin/python3" -m pip install -q --disable-pip-version-check ripser dreimac pyarrow
  fi
fi
