#!/usr/bin/env bash
# End-to-end peer benchmark of `memscape record` against `heaptrack --raw`, in one run: what
# the user waits for (launch of the recorder to the file written) and the recorder's own peak
# RSS, on two workloads: sqlite3 (benches/trace/sqlite_workload.sh: insert, index, update, delete, vacuum)
# and gcc's cc1plus compiling one header-heavy C++ file (`g++ -O2 -c`, 30 standard headers;
# cc1plus run directly, as both tools record the launched process).
#
#   benches/record/e2e.sh [ROWS]     (sqlite rows, default 60000)
#
# Environment: REPEAT (default 3) runs per variant, interleaved, best wall kept; WORKLOADS
# (default "sqlite cc1plus"); FREE_DEPTH
# (default: the allocations' depth) frames per free stack, to measure what free sites cost;
# BASELINE: another build's `record` example (e.g. main's, copied aside), timed in the same
# interleaved runs with the same shim: before/after in one run at one load.
# memscape's side is the `record` example (what `memscape record` runs, without the GUI
# binary), release build; its peak RSS is the launcher's own VmHWM (the program's RSS is not
# the recorder's). heaptrack's side is the `heaptrack --raw` script: the program with
# libheaptrack_preload plus zstd in a second process; its peak RSS is the largest of its
# processes that is not the program (the zstd and the script), from /usr/bin/time.
#
# Needs heaptrack, sqlite3, g++, /usr/bin/time, bc; cargo.
set -euo pipefail
rows=${1:-60000}
root=$(cd "$(dirname "$0")/../.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && cargo build --release -q -p memscape-recorder && cargo build --release -q -p memscape-record --example record)
export MEMSCAPE_SHIM="$CARGO_TARGET_DIR/release/libmemscape_recorder.so"
record="$CARGO_TARGET_DIR/release/examples/record"
[ -n "${FREE_DEPTH:-}" ] && export MEMSCAPE_FREE_STACK_DEPTH=$FREE_DEPTH

# Workloads: the trace benchmarks' sqlite3 script (one definition for every benchmark).
"$root/benches/trace/sqlite_workload.sh" "$rows" > "$work/workload.sql"
cp "$root/benches/record/heavy.cpp" "$work/heavy.cpp"
cc1plus=$(g++ -print-prog-name=cc1plus)
cc1args=(-quiet -imultiarch x86_64-linux-gnu -D_GNU_SOURCE "$work/heavy.cpp" -quiet -dumpbase heavy.cpp -dumpbase-ext .cpp -mtune=generic -march=x86-64 -O2 -o "$work/heavy.s")

# wall seconds, max RSS KiB of a command (stdin given by $input).
timed() {
    /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" < "$input" > "$work/out.txt" 2> "$work/err.txt"
    cat "$work/time.txt"
}
best() { printf '%s\n' "$@" | sort -g | head -1; }
ratio() { echo "scale=2; $1 / $2" | bc -l; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for load in ${WORKLOADS:-sqlite cc1plus}; do
    if [ $load = sqlite ]; then
        cmd=(sqlite3 "$work/db.sqlite"); input="$work/workload.sql"
    else
        cmd=("$cc1plus" "${cc1args[@]}"); input=/dev/null
    fi
    pw=(); mw=(); hw=(); bw=(); mrss=(); hrss=(); brss=(); msize=0; hsize=0; bsize=0; events=0
    for ((r = 1; r <= ${REPEAT:-3}; r++)); do
        rm -f "$work/db.sqlite"; read -r w _ <<< "$(timed "${cmd[@]}")"; pw+=("$w")
        rm -f "$work/db.sqlite" "$work/m.msc"
        read -r w _ <<< "$(timed "$record" -o "$work/m.msc" -- "${cmd[@]}")"; mw+=("$w")
        mrss+=("$(grep -o 'VmHWM:[[:space:]]*[0-9]*' "$work/err.txt" | grep -o '[0-9]*$')")
        events=$(grep -m1 '"events"' "$work/out.txt" | grep -o '[0-9]*')
        msize=$(stat -c %s "$work/m.msc")
        if [ -n "${BASELINE:-}" ]; then
            rm -f "$work/db.sqlite" "$work/b.msc"
            read -r w _ <<< "$(timed "$BASELINE" -o "$work/b.msc" -- "${cmd[@]}")"; bw+=("$w")
            brss+=("$(grep -o 'VmHWM:[[:space:]]*[0-9]*' "$work/err.txt" | grep -o '[0-9]*$')")
            bsize=$(stat -c %s "$work/b.msc")
        fi
        rm -f "$work/db.sqlite" "$work"/h.*
        read -r w rss <<< "$(timed heaptrack --raw -o "$work/h" "${cmd[@]}")"; hw+=("$w")
        hrss+=("$rss")
        hsize=$(stat -c %s "$work"/h*.raw.zst)
    done
    p=$(best "${pw[@]}"); m=$(best "${mw[@]}"); h=$(best "${hw[@]}")
    mr=$(best "${mrss[@]}")
    echo "$load (load average $(cut -d' ' -f1 /proc/loadavg)): $events events; plain $p s; memscape record $m s; heaptrack --raw $h s; memscape / heaptrack wall $(ratio "$m" "$h")×; file $msize B vs .raw.zst $hsize B ($(ratio "$msize" "$hsize")×); memscape record peak RSS $((mr / 1024)) MiB"
    if [ -n "${BASELINE:-}" ]; then
        b=$(best "${bw[@]}"); br=$(best "${brss[@]}")
        echo "  baseline $BASELINE: $b s, $(ratio "$b" "$h")× heaptrack; file $bsize B ($(ratio "$bsize" "$hsize")×); peak RSS $((br / 1024)) MiB"
    fi
done
