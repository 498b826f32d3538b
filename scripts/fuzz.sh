#!/usr/bin/env bash
# Coverage-guided fuzzing of every memscape parser (libFuzzer through libfuzzer-sys, stable
# toolchain, sanitizer-coverage flags), one target after another, never two at once.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET[:SECONDS]…]     default 60 s, every target
#
# Run it under `nice -n 19` on a shared machine. Two invocations may run at once (on two
# cores): the build is shared, results.tsv is appended line by line.
#
# Seeds: the real files in ../shared/data and the embedded demo (assets/demo), cut to their
# first 16 KiB (scripts/fuzz-seeds.sh writes them to fuzz/seeds/<target>/, not committed).
# The corpus grows in fuzz/corpus/<target>/ and is kept between runs (also not committed), so
# a campaign can run in slices. Limits: inputs up to 64 KiB (FUZZ_MAX_LEN), 10 s per input (a hang), 1 GiB
# per allocation and 2 GiB RSS (out of memory). Crashes land in fuzz/artifacts/<target>/; the
# per-target summary (executions, coverage, crashes, hangs, OOMs) is appended to
# fuzz/results.tsv and printed at the end. Not part of CI: a benchmark-like run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
cd "$root/fuzz"
all_targets=(heaptrack alloc_csv msc msc_mapped msr massif reference_trace samples_csv perf_script
    hwloc_xml memaxes_hardware igv_xml dot bgv ripser filter_profile pprof heap_text dhat decompress tour)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

export CARGO_TARGET_DIR=${FUZZ_TARGET_DIR:-$root/fuzz/target}
# libFuzzer's instrumentation on stable Rust: the sancov module pass with inline 8-bit
# counters, a PC table and comparison tracing (what cargo-fuzz passes, minus the nightly-only
# sanitizer flags).
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=3 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# An explicit --target keeps these flags off build scripts and proc macros (host code, not
# linked with libFuzzer).
triple=$(rustc -vV | sed -n 's/^host: //p')
# Only the targets asked for (tour links memscape-views, with wgpu and Arrow: a long build).
bins=()
for spec in "${targets[@]}"; do bins+=(--bin "${spec%%:*}"); done
cargo build --release "${bins[@]}" --target "$triple" >&2
[ -d seeds ] || "$root/scripts/fuzz-seeds.sh" >&2

results=$root/fuzz/results.tsv
[ -f "$results" ] || printf 'date\ttarget\tseconds\texecutions\texec_per_s\tcoverage\tfeatures\tcorpus\tcrashes\thangs\tooms\n' >"$results"
for spec in "${targets[@]}"; do
    t=${spec%%:*}
    seconds_t=$seconds
    [ "$t" = "$spec" ] || seconds_t=${spec#*:}
    mkdir -p "corpus/$t" "artifacts/$t" "seeds/$t"
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    set +e
    "$CARGO_TARGET_DIR/$triple/release/$t" "corpus/$t" "seeds/$t" \
        -max_total_time="$seconds_t" -max_len="${FUZZ_MAX_LEN:-65536}" -timeout=10 \
        -rss_limit_mb=2048 -malloc_limit_mb=1024 \
        -artifact_prefix="artifacts/$t/" -print_final_stats=1 \
        -close_fd_mask=3 >"$log" 2>&1
    rc=$?
    set -e
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
    corp=$(grep -o 'corp: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
    crashes=$(find "artifacts/$t" -name 'crash-*' | wc -l)
    hangs=$(find "artifacts/$t" -name 'timeout-*' -o -name 'slow-unit-*' | wc -l)
    ooms=$(find "artifacts/$t" -name 'oom-*' | wc -l)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$seconds_t" \
        "${execs:-0}" "${speed:-0}" "${cov:-0}" "${ft:-0}" "${corp:-0}" "$crashes" "$hangs" "$ooms" >>"$results"
    echo "$t: ${execs:-0} executions, cov ${cov:-0}, ft ${ft:-0}, crashes $crashes, hangs $hangs, ooms $ooms (exit $rc)"
    if [ "$rc" -ne 0 ]; then
        tail -40 "$log" >&2
    fi
    rm -f "$log"
done

# Totals over every slice recorded in results.tsv (the RELIABILITY.md table).
echo
echo "| target | executions | coverage (cov / ft) | corpus | crashes | hangs (> 10 s) | OOM (> 1 GiB alloc / 2 GiB RSS) |"
echo "|---|---|---|---|---|---|---|"
awk -F'\t' 'NR > 1 {
    if (!($2 in ex)) order[n++] = $2
    ex[$2] += $4; if ($6 > cov[$2]) cov[$2] = $6; if ($7 > ft[$2]) ft[$2] = $7
    corp[$2] = $8; cr[$2] = $9; hg[$2] = $10; om[$2] = $11; total += $4
} END {
    for (i = 0; i < n; i++) { t = order[i]
        printf "| `%s` | %d | %d / %d | %d | %d | %d | %d |\n", t, ex[t], cov[t], ft[t], corp[t], cr[t], hg[t], om[t] }
    printf "| **total** | **%d** | | | | | |\n", total
}' "$results"
