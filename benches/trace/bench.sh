#!/usr/bin/env bash
# Peer benchmark for memscape-trace: `memscape info` work against heaptrack's own analysis
# (heaptrack_interpret | heaptrack_print) on the same multi-million-event heaptrack raw trace,
# recorded here from sqlite3 running an insert / index / update / delete workload; plus loading
# the .msc conversion against parsing the text.
#
#   benches/trace/bench.sh [ROWS]        (default 150000 rows: about 2.5 million events)
#
# Needs the Debian packages heaptrack, sqlite3, zstd and time (/usr/bin/time), and cargo.
# Set CARGO_WORKSPACE_DIR to build from another checkout of the workspace, CARGO_TARGET_DIR to
# choose the build directory (default /work/targets/memscape-trace).
set -euo pipefail
rows=${1:-150000}
root=$(cd "$(dirname "$0")/../.." && pwd)
workspace=${CARGO_WORKSPACE_DIR:-$root}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/targets/memscape-trace}
work=${BENCH_WORK_DIR:-$(mktemp -d)}
mkdir -p "$work"
for tool in heaptrack heaptrack_print sqlite3 zstd /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
interpret=/usr/lib/heaptrack/libexec/heaptrack_interpret
[ -x "$interpret" ] || { echo "missing $interpret (apt-get install -y libheaptrack)" >&2; exit 1; }

echo "== building trace-info (release) in $CARGO_TARGET_DIR"
(cd "$workspace" && cargo build --release -q -p memscape-trace --example trace-info)
info="$CARGO_TARGET_DIR/release/examples/trace-info"

raw="$work/sqlite-$rows.raw.zst"
if [ ! -f "$raw" ]; then
    echo "== recording sqlite3 with heaptrack -r ($rows rows)"
    "$root/benches/trace/sqlite_workload.sh" "$rows" > "$work/workload.sql"
    rm -f "$work/db.sqlite"
    heaptrack --raw -o "$work/rec" sqlite3 "$work/db.sqlite" < "$work/workload.sql" > /dev/null
    mv "$work"/rec.raw.zst "$raw"
fi
zstd -dc "$raw" > "$work/trace.raw"
events=$(grep -c '^[+-] ' "$work/trace.raw")
echo "events: $events"

# CPU seconds (user + system), wall seconds and max RSS (KiB) of a command, from GNU time.
# CPU time is the figure compared: on a shared machine wall time mostly measures the neighbours.
measure() {
    /usr/bin/time -f "%U %S %e %M" -o "$work/time.txt" "$@" > "$work/out.txt" 2> "$work/err.txt"
    awk '{printf "%.2f %.2f %d\n", $1 + $2, $3, $4}' "$work/time.txt"
}

echo "== memscape (trace-info: load + info report) on the raw.zst"
read -r ms_s ms_wall ms_kb < <(measure "$info" "$raw")
echo "== heaptrack (zstd -dc | heaptrack_interpret > processed; heaptrack_print processed)"
read -r ht1_s ht1_wall ht1_kb < <(measure sh -c "zstd -dc '$raw' | '$interpret' > '$work/processed.txt'")
read -r ht2_s ht2_wall ht2_kb < <(measure heaptrack_print -f "$work/processed.txt")
grep -E "calls to allocation|peak heap|leaked" "$work/out.txt" || true
ht_s=$(echo "$ht1_s + $ht2_s" | bc -l)
ht_wall=$(echo "$ht1_wall + $ht2_wall" | bc -l)

echo "== .msc load vs text parse"
"$info" --convert "$raw" "$work/trace.msc" > /dev/null
"$info" --convert "$raw" "$work/trace-mapped.msc" --mappable > /dev/null
# In-process, `--repeat N`: mean CPU seconds (user + system, all threads, /proc/self/stat) per
# `load`, and per `load` followed by decoding every block column (what "fully usable" means:
# .msc decodes columns on first use, a text load leaves derived columns such as heaptrack's
# interpolated times to first use as well). Best of three runs.
best_of_runs() { # FILE KEY REPEAT
    for _ in 1 2 3; do "$info" "$1" --time-load --repeat "$3" 2>&1 >/dev/null | awk -v k="$2" '$1 == k {print $2}'; done | sort -g | head -1
}
text_load=$(best_of_runs "$work/trace.raw" repeat_mean_cpu_seconds 10)
text_all=$(best_of_runs "$work/trace.raw" repeat_all_columns_mean_cpu_seconds 10)
text_all_wall=$(best_of_runs "$work/trace.raw" repeat_all_columns_best_wall_seconds 10)
zst_load=$(best_of_runs "$raw" repeat_mean_cpu_seconds 10)
msc_load=$(best_of_runs "$work/trace.msc" repeat_mean_cpu_seconds 10)
msc_all=$(best_of_runs "$work/trace.msc" repeat_all_columns_mean_cpu_seconds 10)
# Mapped loads are a few ms: 50 repeats for the 10 ms CPU clock tick.
map_all=$(best_of_runs "$work/trace-mapped.msc" repeat_all_columns_mean_cpu_seconds 50)
map_all_wall=$(best_of_runs "$work/trace-mapped.msc" repeat_all_columns_best_wall_seconds 50)
# A load under the 10 ms tick reads 0: count it as half a tick over the repeats.
msc_load=$(echo "if ($msc_load < 0.0005) 0.0005 else $msc_load" | bc -l)
map_all=$(echo "if ($map_all < 0.0001) 0.0001 else $map_all" | bc -l)

bytes_per_event=$(echo "$ms_kb * 1024 / $events" | bc -l)
printf '\nresults (%s events, %s)\n' "$events" "$(date -u +%F)"
printf '  memscape info:                 %8.2f s CPU (%.2f s wall)   peak RSS %8d KiB  (%.1f bytes/event, target <= 48)\n' "$ms_s" "$ms_wall" "$ms_kb" "$bytes_per_event"
printf '  heaptrack_interpret + _print:  %8.2f s CPU (%.2f s wall)   (interpret %.2f s, RSS %d KiB; print %.2f s, RSS %d KiB)\n' "$ht_s" "$ht_wall" "$ht1_s" "$ht1_kb" "$ht2_s" "$ht2_kb"
printf '  ratio memscape / heaptrack:    %8.3f     (target <= 0.5)\n' "$(echo "$ms_s / $ht_s" | bc -l)"
printf '  load text raw:                 %8.4f s CPU\n' "$text_load"
printf '  load text raw + all columns:   %8.4f s CPU (best wall %.4f s)\n' "$text_all" "$text_all_wall"
printf '  load raw.zst:                  %8.4f s CPU\n' "$zst_load"
printf '  load .msc:                     %8.4f s CPU   (%d bytes)\n' "$msc_load" "$(stat -c %s "$work/trace.msc")"
printf '  load .msc + decode all columns:%8.4f s CPU\n' "$msc_all"
printf '  load mappable .msc + all columns (mapped, checked): %.4f s CPU (best wall %.4f s, %d bytes)\n' "$map_all" "$map_all_wall" "$(stat -c %s "$work/trace-mapped.msc")"
printf '  speed-up .msc load vs text:    %8.1fx    (lazy: no column decoded yet)\n' "$(echo "$text_load / $msc_load" | bc -l)"
printf '  speed-up .msc load + all columns vs text + all columns: %.1fx\n' "$(echo "$text_all / $msc_all" | bc -l)"
printf '  speed-up mappable .msc vs text, both fully usable: %.1fx CPU, %.1fx wall   (target >= 10)\n' "$(echo "$text_all / $map_all" | bc -l)" "$(echo "$text_all_wall / $map_all_wall" | bc -l)"
