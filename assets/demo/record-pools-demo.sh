#!/usr/bin/env bash
# Records the pool allocator demo (pools.c: five size classes and a fallback heap, declared to
# memscape through memscape.h) with memscape's own recorder. Needs gcc and a built memscape
# (make build).
#
#   assets/demo/record-pools-demo.sh [MEMSCAPE]    (default: target/debug/memscape)
#
# Writes assets/demo/pools.msc next to this script.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
memscape=$(realpath "${1:-$here/../../target/debug/memscape}")
include="$here/../../crates/memscape-recorder/include"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$here" && gcc -O0 -g -I"$include" -fdebug-prefix-map="$here"=. -o "$work/pools" pools.c)
(cd "$work" && "$memscape" record -o pools.msc -- ./pools)
cp "$work/pools.msc" "$here/pools.msc"
echo "wrote $here/pools.msc: $(stat -c %s "$here/pools.msc") bytes"
