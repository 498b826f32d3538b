#!/usr/bin/env bash
# The GUI's first full window on a multi-million-event heaptrack raw trace of sqlite3 (issue 25),
# beside heaptrack's own analysis of the same file, in one run: `memscape view TRACE
# --screenshot` (release build, lavapipe, under Xvfb: it exits once every pane — allocation map
# with occupancy bars and context view, heap tree — has drawn a full frame) against
# `zstd -dc | heaptrack_interpret > processed; heaptrack_print processed`; wall times, the ratio
# (target <= 3) and memscape's peak RSS (target <= 1.5 GB).
#
#   benches/scale/first_window.sh [ROWS] [DIR]   (default 105000 rows: 6.6 M events, /tmp/memscape-fw)
#
# The trace is recorded with `heaptrack -r` as ../shared/data/README.md says of sqlite_1M, with a
# bigger workload; kept in DIR for the next run (KEEP=0 removes DIR at the end). SKIP_BUILD=1
# uses the binary already built; REPEAT=N runs both sides N times (the best of each is printed).
# BASELINE=/path/to/memscape runs that binary too in each repetition, right after this one (a
# comparison on a shared machine: the same minutes, the same load). Each window's CPU time
# (user + system) is printed beside its wall time: on a loaded machine it varies less.
# Needs heaptrack, libheaptrack, sqlite3, zstd, xvfb-run and GNU time.
set -euo pipefail
rows=${1:-105000}
dir=${2:-/tmp/memscape-fw}
root=$(cd "$(dirname "$0")/../.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
repeat=${REPEAT:-1}
interpret=/usr/lib/heaptrack/libexec/heaptrack_interpret
for tool in heaptrack heaptrack_print sqlite3 zstd xvfb-run /usr/bin/time "$interpret"; do
    command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    (cd "$root" && CARGO_INCREMENTAL=0 cargo build --release -q -p memscape)
fi
bin=$CARGO_TARGET_DIR/release/memscape
mkdir -p "$dir"
[ "${KEEP:-1}" = 1 ] || trap 'rm -rf "$dir"' EXIT
raw=$dir/sqlite-$rows.raw.zst
if [ ! -f "$raw" ]; then
    echo "== recording sqlite3 with heaptrack -r ($rows rows)"
    "$root/benches/trace/sqlite_workload.sh" "$rows" > "$dir/workload.sql"
    rm -f "$dir/db.sqlite"
    heaptrack --raw -o "$dir/rec" sqlite3 "$dir/db.sqlite" < "$dir/workload.sql" > /dev/null
    mv "$dir/rec.raw.zst" "$raw"
    rm -f "$dir/db.sqlite" "$dir/workload.sql"
fi
events=$(zstd -dc "$raw" | grep -c '^[+-] ')
echo "trace: $raw ($events events)"

# Wall seconds and peak RSS (KiB) of a command, from GNU time.
measure() {
    /usr/bin/time -f "%e %M" -o "$dir/time.txt" "$@" > "$dir/out.txt" 2> "$dir/err.txt" || {
        cat "$dir/err.txt" >&2
        return 1
    }
    cat "$dir/time.txt"
}
best_ht=; best_ms=; best_kb=; best_base=
# `memscape view TRACE --screenshot DIR/$2` with binary $1: sets ms (wall s), kb (peak RSS KiB),
# cpu (s).
window() {
    rm -f "$dir/$2"
    # The window's own time from start to the screenshot: Xvfb's start is left out (xvfb-run
    # starts the server, then the program under GNU time).
    xvfb-run -a -s "-screen 0 1920x1080x24" env MEMSCAPE_ADAPTER=cpu \
        /usr/bin/time -f "%e %M %U %S" -o "$dir/inner.txt" "$1" view "$raw" --screenshot "$dir/$2" \
        > "$dir/out.txt" 2> "$dir/err.txt" || { cat "$dir/err.txt" >&2; exit 1; }
    read -r ms kb user sys < "$dir/inner.txt"
    cpu=$(echo "$user + $sys" | bc -l)
}
for ((r = 1; r <= repeat; r++)); do
    read -r ht1 _ < <(measure sh -c "zstd -dc '$raw' | '$interpret' > '$dir/processed.txt'")
    read -r ht2 _ < <(measure heaptrack_print -f "$dir/processed.txt")
    ht=$(echo "$ht1 + $ht2" | bc -l)
    rm -f "$dir/processed.txt"
    window "$bin" shot.png
    echo "run $r: heaptrack_interpret + heaptrack_print ${ht} s; memscape view first full window ${ms} s (CPU ${cpu} s), peak RSS ${kb} KiB"
    if [ -n "${BASELINE:-}" ]; then
        read -r own_ms own_kb own_cpu <<< "$ms $kb $cpu"
        window "$BASELINE" shot-baseline.png
        echo "run $r: baseline $BASELINE first full window ${ms} s (CPU ${cpu} s), peak RSS ${kb} KiB"
        if [ -z "$best_base" ] || [ "$(echo "$ms < $best_base" | bc -l)" = 1 ]; then best_base=$ms; fi
        read -r ms kb cpu <<< "$own_ms $own_kb $own_cpu"
    fi
    if [ -z "$best_ht" ] || [ "$(echo "$ht < $best_ht" | bc -l)" = 1 ]; then best_ht=$ht; fi
    if [ -z "$best_ms" ] || [ "$(echo "$ms < $best_ms" | bc -l)" = 1 ]; then best_ms=$ms; best_kb=$kb; fi
done
printf '\nresults (%s events, %s, best of %d)\n' "$events" "$(date -u '+%F %H:%M')" "$repeat"
printf '  heaptrack_interpret | heaptrack_print: %7.2f s wall\n' "$best_ht"
printf '  memscape view, first full window:      %7.2f s wall   peak RSS %d KiB (%.2f GB; target <= 1.5)\n' \
    "$best_ms" "$best_kb" "$(echo "$best_kb * 1024 / 1000000000" | bc -l)"
printf '  ratio memscape / heaptrack:            %7.2f        (target <= 3)\n' "$(echo "$best_ms / $best_ht" | bc -l)"
if [ -n "$best_base" ]; then
    printf '  baseline, first full window:           %7.2f s wall   ratio %.2f\n' \
        "$best_base" "$(echo "$best_base / $best_ht" | bc -l)"
fi
echo "screenshot: $dir/shot.png"
