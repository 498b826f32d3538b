#!/usr/bin/env bash
# Writes a C program of N functions, each calling three others chosen by a fixed linear
# congruential sequence (some earlier, so the call graph has cycles, as real recursive code
# does): after `opt -dot-callgraph`, N + 2 nodes and about 3N + N edges (every function is also
# reachable from LLVM's "external node").
set -euo pipefail
n=${1:-2000}
s=12345
echo "int sink;"
for ((k = 0; k < n; k++)); do echo "int f$k(int x);"; done
for ((k = 0; k < n; k++)); do
  calls=""
  for j in 1 2 3; do
    s=$(( (s * 1103515245 + 12345) % 2147483648 ))
    callee=$(( s % n ))
    calls="$calls if (x & $((1 << j))) sink += f$callee(x - $j);"
  done
  echo "int f$k(int x) { if (x <= 0) return $k;$calls return sink + x; }"
done
echo "int main(void) { return f0(30); }"
