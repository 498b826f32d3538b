#!/bin/sh
# memscape's Rips persistence vs ripser.py (PyPI `ripser`) on the same distance matrices, in
# one run, memscape's classical MDS of 10,000 windows, and its end-to-end `cycles` on 10,000
# and 50,000 windows of a real lackey trace. Prints per input: memscape compute time, ripser
# call time (interpreter start and imports excluded), their ratio, and whether the bar counts
# agree.
#
#   benches/cycles/compare_ripser.sh            # from the repository root
#
# Needs: python3 with `pip install ripser`, gcc, valgrind. Builds the timing driver
# `crates/memscape-cycles/examples/cycles_timing.rs` in release into its own target dir.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
data="$root/../shared/data"
target=${CARGO_TARGET_DIR:-/work/targets/memscape-cycles}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$root" && CARGO_TARGET_DIR="$target" cargo build --quiet --release -p memscape-cycles --example cycles_timing)
timing="$target/release/examples/cycles_timing"

# A real trace: valgrind lackey of the whole 8x8 matmul test program (dynamic loader, libc,
# matmul; 48,507 accesses), the program of crates/memscape-cycles/tests/common/mod.rs.
sed -n '/^pub const MATMUL: &str = r#"/,/^"#;/p' "$root/crates/memscape-cycles/tests/common/mod.rs" \
    | sed '1d;$d' > "$work/matmul.c"
gcc -O0 -g -o "$work/matmul" "$work/matmul.c"
valgrind --tool=lackey --trace-mem=yes --log-file="$work/whole.lackey" "$work/matmul" >/dev/null

run_pair() { # name file dim modulus
    ours=$("$timing" persistence "$2" "$3" "$4")
    theirs=$(python3 - "$2" "$3" "$4" <<'PY'
import sys, time
import numpy as np
from ripser import ripser
path, dim, p = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
vals = np.array([float(t) for t in open(path).read().replace(",", " ").split()])
n = int(round((1 + (1 + 8 * len(vals)) ** 0.5) / 2))
D = np.zeros((n, n)); D[np.tril_indices(n, -1)] = vals; D = D + D.T
ripser(D[:3, :3], maxdim=dim, coeff=p, distance_matrix=True)  # warm-up
t = time.perf_counter()
r = ripser(D, maxdim=dim, coeff=p, distance_matrix=True)
dt = time.perf_counter() - t
print("%.6f %s" % (dt, [len(d) for d in r["dgms"]]))
PY
)
    ours_t=$(echo "$ours" | awk '{print $4}')
    ours_bars=$(echo "$ours" | sed 's/.*bars //')
    theirs_t=$(echo "$theirs" | awk '{print $1}')
    theirs_bars=$(echo "$theirs" | cut -d' ' -f2-)
    ratio=$(python3 -c "print('%.2f' % ($ours_t / $theirs_t))")
    echo "| $1 | H0..H$3 | Z/$4 | $ours_t | $theirs_t | $ratio | $ours_bars | $theirs_bars |"
}

echo "| input | dims | field | memscape s | ripser s | ratio memscape/ripser | bars memscape | bars ripser |"
echo "|---|---|---|---|---|---|---|---|"
run_pair random16 "$data/ripser/random16.lower_distance_matrix" 2 2
run_pair sphere_3_192 "$data/ripser/sphere_3_192.lower_distance_matrix" 1 47
run_pair sphere_3_192 "$data/ripser/sphere_3_192.lower_distance_matrix" 2 2
"$timing" levenshtein "$work/whole.lackey" 0..1500 10 "$work/lev1500.txt"
run_pair "lackey windows (1500 records)" "$work/lev1500.txt" 1 47

echo
echo "classical MDS of the unique windows (w = 10) of the first 10,000 windows:"
"$timing" mds "$work/whole.lackey" 0..10009

echo
echo "level of detail (landmark windows) against the full analysis, bottleneck distance of the H1 barcodes:"
"$timing" lod-error "$work/whole.lackey" 0..10009 --landmarks 4000

echo
echo "end-to-end cycles on the whole-process lackey trace of the matmul program (50,000 windows: the"
echo "default level of detail; --detail full for every window):"
for n in 10000 50000; do
    end=$((n + 9))
    for t in 2 3 ""; do
        echo "windows $n threshold ${t:-enclosing-radius}: $(timeout 600 "$timing" cycles "$work/whole.lackey" "0..$end" ${t:+--threshold $t} || echo 'timed out (600 s)')"
    done
done
