#!/usr/bin/env bash
# Peer benchmark for `memscape record` (crates/memscape-recorder + crates/memscape-record):
# the sqlite3 insert / index / update / delete / vacuum workload run plain, under the memscape
# shim, and under `heaptrack --raw`, in one run; wall and CPU times, overheads, file sizes.
#
#   benches/record/bench.sh [ROWS]        (default 60000 rows, as in ../shared/data's sqlite_1M)
#
# Environment: REPEAT (default 5) runs per variant, interleaved; BENCH_SCHED = both (default),
# normal or fifo. "normal" runs under the ordinary scheduler; "fifo" runs every variant (and
# its children: heaptrack's zstd) under `chrt -f 1`, which keeps other processes of a loaded
# machine off the CPU while it runs, i.e. measures what an idle machine would. Per variant the
# best wall time is kept (neighbours add noise, never speed) and the median CPU time (user +
# sys of the process and its waited-for children: heaptrack's includes its zstd).
#
# What each side's time includes: "memscape shim" is the program with the shim preloaded
# writing its raw `.msr` file (varint-coded, uncompressed); "heaptrack --raw" is the heaptrack
# script, the program with libheaptrack_preload writing text into a pipe, and zstd compressing
# it into `.raw.zst` (heaptrack_interpret is not run). `memscape record` (one run at the end)
# adds the conversion to `.msc` and symbolization after the program exits, which heaptrack's
# --raw does not do (its interpret step is a separate command).
#
# Needs the Debian packages heaptrack, sqlite3 and time (/usr/bin/time), bc, and cargo.
# CARGO_TARGET_DIR chooses the build directory (default /work/targets/memscape-record).
set -euo pipefail
rows=${1:-60000}
root=$(cd "$(dirname "$0")/../.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/targets/memscape-record}
work=${BENCH_WORK_DIR:-$(mktemp -d)}
mkdir -p "$work"
for tool in heaptrack sqlite3 /usr/bin/time bc; do
    command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y heaptrack sqlite3 time bc)" >&2; exit 1; }
done

echo "== building the shim (release) and the record and convert examples in $CARGO_TARGET_DIR"
(cd "$root" && cargo build --release -q -p memscape-recorder && cargo build -q -p memscape-record --example record --example convert)
shim="$CARGO_TARGET_DIR/release/libmemscape_recorder.so"
record="$CARGO_TARGET_DIR/debug/examples/record"
convert="$CARGO_TARGET_DIR/debug/examples/convert"

"$root/benches/trace/sqlite_workload.sh" "$rows" > "$work/workload.sql"

run() { # "wall cpu" seconds of a command (stdin from the workload); cpu = user + sys
    rm -f "$work/db.sqlite"
    /usr/bin/time -f "%e %U %S" -o "$work/time.txt" "$@" < "$work/workload.sql" > /dev/null 2> "$work/err.txt"
    awk '{printf "%s %.2f", $1, $2 + $3}' "$work/time.txt"
}
best() { printf '%s\n' "$@" | sort -g | head -1; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
ratio() { echo "scale=2; $1 / $2" | bc -l; }
pct() { echo "scale=0; ($1 - $2) * 100 / $2" | bc -l; }

repeat=${REPEAT:-5}
modes=${BENCH_SCHED:-both}
[ "$modes" = both ] && modes="normal fifo"
if [[ " $modes " == *" fifo "* ]] && ! chrt -f 1 true 2>/dev/null; then
    echo "== chrt -f 1 not permitted here: fifo mode skipped" >&2
    modes=${modes/fifo/}
fi
summary=()
for mode in $modes; do
    prefix=()
    [ "$mode" = fifo ] && prefix=(chrt -f 1)
    declare -a pw=() pc=() mw=() mc=() hw=() hc=()
    for ((r = 1; r <= repeat; r++)); do
        echo "== $mode scheduling, run $r/$repeat: plain sqlite3, memscape shim (stacks 64 deep), heaptrack --raw"
        read -r w c <<< "$(run "${prefix[@]}" sqlite3 "$work/db.sqlite")"; pw+=("$w"); pc+=("$c")
        rm -rf "$work/msr" && mkdir -p "$work/msr"
        read -r w c <<< "$(run "${prefix[@]}" env MEMSCAPE_RECORD_DIR="$work/msr" LD_PRELOAD="$shim" sqlite3 "$work/db.sqlite")"; mw+=("$w"); mc+=("$c")
        rm -f "$work"/ht.*
        read -r w c <<< "$(run "${prefix[@]}" heaptrack --raw -o "$work/ht" sqlite3 "$work/db.sqlite")"; hw+=("$w"); hc+=("$c")
    done
    plain=$(best "${pw[@]}") shim_w=$(best "${mw[@]}") ht_w=$(best "${hw[@]}")
    plain_c=$(median "${pc[@]}") shim_c=$(median "${mc[@]}") ht_c=$(median "${hc[@]}")
    summary+=("" "[$mode scheduling, REPEAT=$repeat, load average $(cut -d' ' -f1-3 /proc/loadavg)]"
        "runs wall (s):  plain ${pw[*]}; shim ${mw[*]}; heaptrack ${hw[*]}"
        "runs cpu (s):   plain ${pc[*]}; shim ${mc[*]}; heaptrack ${hc[*]}"
        "plain sqlite3:      wall ${plain} s  cpu ${plain_c} s"
        "memscape shim:      wall ${shim_w} s (+$(pct "$shim_w" "$plain") %)  cpu ${shim_c} s (+$(pct "$shim_c" "$plain_c") %)"
        "heaptrack --raw:    wall ${ht_w} s (+$(pct "$ht_w" "$plain") %)  cpu ${ht_c} s (+$(pct "$ht_c" "$plain_c") %)"
        "shim / heaptrack:   wall $(ratio "$shim_w" "$ht_w")  wall overhead $(ratio "$(echo "$shim_w - $plain" | bc -l)" "$(echo "$ht_w - $plain" | bc -l)")  cpu $(ratio "$shim_c" "$ht_c")  cpu overhead $(ratio "$(echo "$shim_c - $plain_c" | bc -l)" "$(echo "$ht_c - $plain_c" | bc -l)")")
done
msr_bytes=$(du -cb "$work"/msr/*.msr | tail -1 | cut -f1)
# The last shim recording converted at several time resolutions (same events, same file).
sizes=()
for r in exact 8ns 16ns 32ns 64ns 1us; do
    "$convert" "$(ls "$work"/msr/*.msr | head -1)" "$work/res.msc" --time-resolution "$r" > /dev/null
    sizes+=("$r $(stat -c %s "$work/res.msc")")
done
ht_file=$(ls "$work"/ht.raw* | head -1)
ht_bytes=$(stat -c %s "$ht_file")
echo "== memscape record (recording + conversion to .msc + symbolization), normal scheduling"
rm -f "$work/trace.msc"
read -r rec_w rec_c <<< "$(MEMSCAPE_SHIM="$shim" run "$record" -o "$work/trace.msc" -- sqlite3 "$work/db.sqlite")"
msc_bytes=$(stat -c %s "$work/trace.msc")

echo
echo "rows: $rows"
printf '%s\n' "${summary[@]}"
echo
echo "memscape record (+ .msc):  wall ${rec_w} s  cpu ${rec_c} s (one run, normal scheduling)"
echo "raw .msr bytes:            $msr_bytes"
echo ".msc bytes:                $msc_bytes"
echo "heaptrack $(basename "$ht_file") bytes: $ht_bytes"
echo "size ratio .msc/heaptrack: $(ratio "$msc_bytes" "$ht_bytes") (memscape record's default time resolution)"
echo "one shim recording converted at each time resolution (bytes, ratio to heaptrack's):"
for s in "${sizes[@]}"; do
    read -r r b <<< "$s"
    printf '  %-6s %10d  %s\n' "$r" "$b" "$(ratio "$b" "$ht_bytes")"
done
