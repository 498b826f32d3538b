#!/usr/bin/env bash
# Writes a bytecode-interpreter function with N opcodes to stdout: the shape of real large
# functions (a dispatch loop over a big switch whose cases hold loops, nested branches and
# early returns), big enough for CFGs of 1,000+ basic blocks after clang -O1.
set -euo pipefail
n=${1:-400}
cat <<'HEAD'
#include <stdint.h>
int64_t run(const uint16_t *code, int64_t *stack, int64_t *mem, int n) {
  int64_t acc = 0; int pc = 0; int sp = 1;
  for (;;) {
    uint16_t op = code[pc++ % n];
    switch (op) {
HEAD
for ((k = 0; k < n; k++)); do
  case $((k % 6)) in
    0) echo "    case $k: acc += stack[sp-1] * $k; if (acc > $((k * 100))) acc -= mem[$((k % 64))]; else if (acc < -$k) acc = mem[(acc + $k) & 63]; break;" ;;
    1) echo "    case $k: for (int i = 0; i < (code[pc % n] & 7); i++) { if (mem[(i + $k) & 63] & 1) mem[(i + $k) & 63] ^= acc + i; else acc -= i; } pc++; break;" ;;
    2) echo "    case $k: if (stack[sp-1] < 0) { sp = sp > 1 ? sp - 1 : 1; acc = -acc; } else if (stack[sp-1] == $k) { if (sp < 255) stack[sp++] = acc; } else { acc >>= 1; } break;" ;;
    3) echo "    case $k: while (acc > $k) { acc = acc / 3 + (mem[acc & 63] & 15); if (acc == $((k + 7))) break; } break;" ;;
    4) echo "    case $k: if (stack[sp-1] == 0) return acc + $k; pc = (pc + code[pc % n]) % n; if (pc == $k) { mem[$((k % 64))]++; } break;" ;;
    5) echo "    case $k: switch (acc & 3) { case 0: acc++; break; case 1: acc *= $k; break; case 2: mem[$((k % 64))] = acc; break; default: if (sp > 1) sp--; } break;" ;;
  esac
done
cat <<'TAIL'
    default: return acc;
    }
  }
}
TAIL
