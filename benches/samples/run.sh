#!/bin/sh
# Criterion bench of memscape-samples on 1,000,000 synthetic samples drawn from the LULESH
# distribution: mapping, aggregation, selection, metrics and clustering.
# There is no peer tool to time beside it: MemAxes is a Qt GUI without a batch mode and is not
# packaged; the issue's target (clustering 1 M samples along time, w = 1000, Δ = 250, under 2 s)
# is printed as a ratio instead.
set -eu
cd "$(dirname "$0")/../.."
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/work/targets/memscape-samples}" \
  cargo bench -p memscape-samples --bench samples -- --noplot 2>&1 | tee /tmp/memscape-samples-bench.txt
awk '/cluster_time_w1000_d250_l2_imbalance/ {f=1} f && /time:/ {
  gsub(/\[|\]/, ""); v=$(NF-3); u=$(NF-2);
  s = (u=="ms") ? v/1000 : (u=="µs" || u=="us") ? v/1e6 : v;
  printf "clustering 1M samples: %.3f s; target 2 s; ratio target/measured = %.1fx\n", s, 2/s; exit }' \
  /tmp/memscape-samples-bench.txt
