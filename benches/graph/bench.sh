#!/usr/bin/env bash
# Peer benchmark: memscape's layered layout against Graphviz `dot -Tplain`, on the same DOT files
# written by LLVM, in one run; crossings of both layouts counted with the same counter
# (memscape_graph::crossings, reading dot's layout back from -Tplain).
#
# Inputs (all produced here, nothing downloaded):
#   * real C: the zstd 1.5.7 sources vendored in the `zstd-sys` crate that memscape already
#     depends on (found in the cargo registry); clang -O1, `opt -passes=dot-cfg`, the three
#     largest functions. (The SQLite amalgamation is not in Debian as a single file.)
#   * CFGs of 1,000+ blocks: generated but realistic functions, compiled the same way:
#     gen_interpreter.sh (a bytecode-dispatch loop: wide CFG) and gen_longfunc.sh (a long
#     sequence of loops and branches: deep CFG).
#   * call graphs: gen_callgraph.sh (thousands of functions, ~8,000 calls, mutual recursion),
#     `opt -dot-callgraph`; and a small one (240 functions) that dot still lays out.
#
# Usage: benches/graph/bench.sh            (DOT_TIMEOUT=seconds caps each dot run, default 900)
# Needs: clang, llvm (opt), graphviz (dot).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-/work/targets/memscape-graph}
dot_timeout=${DOT_TIMEOUT:-900}
interp_ops=${INTERP_OPS:-400}
long_groups=${LONG_GROUPS:-300}
callgraph_functions=${CALLGRAPH_FUNCTIONS:-2650}
small_callgraph_functions=${SMALL_CALLGRAPH_FUNCTIONS:-240}

need() {
    command -v "$1" >/dev/null 2>&1 || { echo "missing '$1': apt-get install -y $2" >&2; exit 1; }
}
need clang clang
need opt llvm
need dot graphviz

(cd "$root" && CARGO_TARGET_DIR="$target" cargo build --release -q -p memscape-graph --example graph_layout)
bin="$target/release/examples/graph_layout"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

cfg_of() { # C file, label -> writes the CFG DOT files of its functions into dir $2
    mkdir -p "$2"
    clang -O1 -g0 -S -emit-llvm -w "${@:3}" "$1" -o "$2.ll"
    (cd "$2" && opt -passes=dot-cfg -disable-output "../$2.ll" 2>/dev/null)
}

zstd=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/zstd-sys-*/zstd/lib 2>/dev/null | head -1 || true)
inputs=()
if [[ -n "$zstd" ]]; then
    for f in decompress/zstd_decompress_block.c compress/zstd_opt.c compress/zstd_lazy.c compress/zstd_compress.c; do
        cfg_of "$zstd/$f" "zstd_$(basename "$f" .c)" -I"$zstd" -I"$zstd/common"
    done
    # The three largest real functions.
    while read -r _ f; do inputs+=("$f"); done < <(
        for f in zstd_*/.*.dot; do echo "$(grep -c 'Node0x.*\[' "$f") $f"; done | sort -rn | head -3)
else
    echo "(zstd-sys sources not found in the cargo registry: real-C CFGs skipped)" >&2
fi

"$here/gen_interpreter.sh" "$interp_ops" > interp.c
cfg_of interp.c interp
inputs+=(interp/.run.dot)
"$here/gen_longfunc.sh" "$long_groups" > longfunc.c
cfg_of longfunc.c longfunc
inputs+=(longfunc/.phases.dot)
# A small tangled call graph dot still lays out, to compare crossings where both finish.
"$here/gen_callgraph.sh" "$small_callgraph_functions" > small_calls.c
clang -O0 -g0 -S -emit-llvm -w small_calls.c -o small_calls.ll
opt -enable-new-pm=0 -dot-callgraph -disable-output small_calls.ll 2>/dev/null
inputs+=(small_calls.ll.callgraph.dot)
"$here/gen_callgraph.sh" "$callgraph_functions" > calls.c
clang -O0 -g0 -S -emit-llvm -w calls.c -o calls.ll
opt -enable-new-pm=0 -dot-callgraph -disable-output calls.ll 2>/dev/null
inputs+=(calls.ll.callgraph.dot)

now() { date +%s.%N; }
printf '%-48s %6s %6s | %10s %10s %10s | %9s %9s %6s | %9s %8s\n' \
    graph nodes edges memscape_ms dot_s speedup cross_ms cross_dot ratio cross_lp lp_ms
for f in "${inputs[@]}"; do
    # memscape: best of 3 in-process layouts, and the whole process (parse + layout) once.
    read -r _ nodes edges layers ours_cross ours_ms < <("$bin" --repeat 3 "$f")
    # The layering used before network simplex (longest path + balancing), for comparison.
    read -r _ _ _ _ lp_cross lp_ms < <(MEMSCAPE_LAYERING=longest_path "$bin" --repeat 3 "$f")
    t0=$(now); "$bin" "$f" > /dev/null; t1=$(now)
    ours_wall=$(echo "$t1 - $t0" | bc -l)
    t0=$(now)
    if timeout "$dot_timeout" dot -Tplain "$f" > "$f.plain" 2>/dev/null; then
        t1=$(now)
        dot_s=$(echo "$t1 - $t0" | bc -l)
        read -r _ _ _ _ dot_cross _ < <("$bin" --plain "$f.plain")
        speed=$(echo "$dot_s / $ours_wall" | bc -l)
        speed=$(printf '%.0fx' "$speed")
        ratio=$(if [[ "$dot_cross" -gt 0 ]]; then printf '%.2f' "$(echo "$ours_cross / $dot_cross" | bc -l)"; else echo "-"; fi)
        dot_s=$(printf '%.2f' "$dot_s")
    else
        dot_s=">$dot_timeout"
        speed=$(printf '>%.0fx' "$(echo "$dot_timeout / $ours_wall" | bc -l)")
        dot_cross="timeout"
        ratio="-"
    fi
    printf '%-48s %6s %6s | %10.1f %10s %10s | %9s %9s %6s | %9s %8.1f\n' \
        "$(basename "$(dirname "$f")")/$(basename "$f")" "$nodes" "$edges" "$ours_ms" "$dot_s" "$speed" "$ours_cross" "$dot_cross" "$ratio" "$lp_cross" "$lp_ms"
done
echo "memscape_ms: best of 3 in-process layouts (network simplex layering, the default); speedup: dot's wall time / memscape's whole process (parse + layout) wall time; cross_lp, lp_ms: memscape with the longest-path layering (MEMSCAPE_LAYERING=longest_path)."
