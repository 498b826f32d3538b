#!/usr/bin/env bash
# Writes a C program of N functions, each calling three others chosen by a fixed linear
# congruential sequence. Like real code it is layered: most calls go to "lower-level" functions
# (higher numbers, the nearer the likelier), one call in twelve goes back up to a nearby caller
# (mutual recursion, as in recursive-descent parsers), so the call graph is cyclic. After `opt -dot-callgraph`: N + 1 nodes and
# about 3N edges.
set -euo pipefail
n=${1:-2000}
s=12345
echo "int sink;"
for ((k = 0; k < n; k++)); do echo "int f$k(int x);"; done
for ((k = 0; k < n; k++)); do
  calls=""
  for j in 1 2 3; do
    s=$(( (s * 1103515245 + 12345) % 2147483648 ))
    if (( (s >> 8) % 12 == 0 || k >= n - 1 )); then
      callee=$(( k - 1 - (s >> 4) % 8 )); (( callee < 0 )) && callee=0
    else
      # Nearer callees are likelier: distance = 1 + (r mod span) with span shrinking by chance.
      span=$(( n - k - 1 )); r=$(( s >> 4 ))
      (( span > 64 && (r & 3) != 0 )) && span=64
      callee=$(( k + 1 + r % span ))
    fi
    calls="$calls if (x & $((1 << j))) sink += f$callee(x - $j);"
  done
  echo "int f$k(int x) { if (x <= 0) return $k;$calls return sink + x; }"
done
echo "int main(void) { return f0(30); }"
