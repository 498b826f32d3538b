#!/usr/bin/env bash
# Writes one long function of N statement groups to stdout: straight-line phases each with a
# loop, nested branches and an early exit, the shape of big generated parsers and codecs. Its
# CFG after clang -O1 is deep (hundreds of layers) rather than wide like a dispatch switch.
set -euo pipefail
n=${1:-300}
echo "#include <stdint.h>"
echo "int64_t phases(int64_t *mem, int64_t x, int n) {"
echo "  int64_t acc = x;"
for ((k = 0; k < n; k++)); do
  case $((k % 4)) in
    0) echo "  for (int i = 0; i < (n & $((k % 7 + 1))); i++) { if (mem[(i + $k) & 63] > acc) acc += mem[i & 63]; else mem[(i * $k) & 63] = acc; }" ;;
    1) echo "  if (acc & $((1 << (k % 16)))) { acc ^= $k; if (acc < 0) return acc; } else if (acc > $((k * 13))) { acc -= mem[$((k % 64))]; } else { acc = acc * 3 + 1; }" ;;
    2) echo "  while (acc > $((k * 31 + 100))) { acc = (acc >> 1) + (mem[acc & 63] & 7); if (mem[$((k % 64))] == acc) break; }" ;;
    3) echo "  switch ((acc + $k) & 3) { case 0: mem[$((k % 64))] += acc; break; case 1: acc -= $k; break; case 2: if (n > $k) acc = mem[(acc & 63)]; break; default: acc++; }" ;;
  esac
done
echo "  return acc;"
echo "}"
