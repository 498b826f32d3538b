#!/usr/bin/env bash
# Records memscape's embedded demo graph: the control-flow graph of `tokenize` (kvstore.c) as
# LLVM draws it (`opt -passes=dot-cfg`) at four points of an optimization pipeline, one DOT
# graph per snapshot in one file, so that the graph view steps through them and colours what
# each pass changed. Blocks keep their names across passes (-fno-discard-value-names), which is
# how the snapshots' nodes are matched.
# Needs the Debian packages clang, llvm and zstd.
#
#   assets/demo/record-cfg-demo.sh      (writes assets/demo/tokenize-cfg.dot.zst)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for tool in clang opt zstd; do
    command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y clang llvm zstd)" >&2; exit 1; }
done

clang -O0 -Xclang -disable-O0-optnone -fno-discard-value-names -g0 -emit-llvm -S \
    "$here/kvstore.c" -o "$work/s0.ll"
stages=(
    ""                                                  # as clang emits it: every variable in memory
    "mem2reg"                                           # variables promoted to SSA registers
    "mem2reg,instcombine,simplifycfg"                   # combined and simplified
    "mem2reg,instcombine,simplifycfg,loop-rotate,loop-mssa(licm),indvars,simplifycfg,instcombine"
)
: > "$work/tokenize-cfg.dot"
for i in "${!stages[@]}"; do
    mkdir -p "$work/d$i"
    if [ -n "${stages[$i]}" ]; then
        opt -passes="${stages[$i]}" -S "$work/s0.ll" -o "$work/s$i.ll"
    fi
    (cd "$work/d$i" && opt -passes=dot-cfg -disable-output "$work/s$i.ll" 2>/dev/null)
    # Name each snapshot after what its pipeline adds to the previous one.
    names=("clang -O0" "mem2reg" "+ instcombine, simplifycfg" "+ loop-rotate, licm, indvars")
    name=${names[$i]}
    sed "1s/.*/digraph \"tokenize: $name\" {/" "$work/d$i/.tokenize.dot" >> "$work/tokenize-cfg.dot"
done
zstd -19 -q -f "$work/tokenize-cfg.dot" -o "$here/tokenize-cfg.dot.zst"
echo "wrote $here/tokenize-cfg.dot.zst: ${#stages[@]} snapshots, $(stat -c %s "$here/tokenize-cfg.dot.zst") bytes"
