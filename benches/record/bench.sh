#!/usr/bin/env bash
# Peer benchmark for `memscape record` (crates/memscape-recorder + crates/memscape-record):
# the sqlite3 insert / index / update / delete / vacuum workload run plain, under the memscape
# shim, and under `heaptrack --raw`, in one run; wall-time overheads and file sizes, with ratios.
#
#   benches/record/bench.sh [ROWS]        (default 60000 rows, as in ../shared/data's sqlite_1M)
#
# Each variant runs REPEAT times (default 3), interleaved, and the best wall time is kept: on a
# shared machine the neighbours add noise, never speed.
#
# Needs the Debian packages heaptrack, sqlite3 and time (/usr/bin/time), and cargo.
# CARGO_TARGET_DIR chooses the build directory (default /work/targets/memscape-record).
set -euo pipefail
rows=${1:-60000}
root=$(cd "$(dirname "$0")/../.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/work/targets/memscape-record}
work=${BENCH_WORK_DIR:-$(mktemp -d)}
mkdir -p "$work"
for tool in heaptrack sqlite3 /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y heaptrack sqlite3 time)" >&2; exit 1; }
done

echo "== building the shim (release) and the record example in $CARGO_TARGET_DIR"
(cd "$root" && cargo build --release -q -p memscape-recorder && cargo build -q -p memscape-record --example record)
shim="$CARGO_TARGET_DIR/release/libmemscape_recorder.so"
record="$CARGO_TARGET_DIR/debug/examples/record"

{
    echo "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL, payload BLOB);"
    echo "BEGIN;"
    for ((i = 1; i <= rows; i++)); do
        echo "INSERT INTO t(name, score, payload) VALUES('name-$i-$((i * 7919 % 1000))', $((i % 97)).5, randomblob($((16 + i % 300))));"
    done
    echo "COMMIT;"
    echo "CREATE INDEX t_name ON t(name);"
    echo "CREATE INDEX t_score ON t(score);"
    echo "UPDATE t SET score = score * 2, payload = randomblob(64) WHERE id % 3 = 0;"
    echo "DELETE FROM t WHERE id % 5 = 0;"
    echo "VACUUM;"
    echo "SELECT count(*), sum(length(payload)) FROM t;"
} > "$work/workload.sql"

wall() { # wall seconds of a command (stdin from the workload)
    rm -f "$work/db.sqlite"
    /usr/bin/time -f "%e" -o "$work/time.txt" "$@" < "$work/workload.sql" > /dev/null 2> "$work/err.txt"
    cat "$work/time.txt"
}
best() { printf '%s\n' "$@" | sort -g | head -1; }

repeat=${REPEAT:-3}
plain_runs=() ms_rec_runs=() ht_runs=()
for ((r = 1; r <= repeat; r++)); do
    echo "== run $r/$repeat: plain sqlite3, memscape shim (raw recording, stacks depth 64), heaptrack --raw"
    plain_runs+=("$(wall sqlite3 "$work/db.sqlite")")
    rm -rf "$work/msr" && mkdir -p "$work/msr"
    ms_rec_runs+=("$(MEMSCAPE_RECORD_DIR="$work/msr" LD_PRELOAD="$shim" wall sqlite3 "$work/db.sqlite")")
    rm -f "$work"/ht.*
    ht_runs+=("$(wall heaptrack --raw -o "$work/ht" sqlite3 "$work/db.sqlite")")
done
plain=$(best "${plain_runs[@]}")
ms_rec=$(best "${ms_rec_runs[@]}")
ht=$(best "${ht_runs[@]}")
msr_bytes=$(du -cb "$work"/msr/*.msr | tail -1 | cut -f1)
ht_file=$(ls "$work"/ht.raw* | head -1)
ht_bytes=$(stat -c %s "$ht_file")
echo "== memscape record (recording + conversion to .msc + symbolization)"
rm -f "$work/trace.msc"
ms_all=$(MEMSCAPE_SHIM="$shim" wall "$record" -o "$work/trace.msc" -- sqlite3 "$work/db.sqlite")
msc_bytes=$(stat -c %s "$work/trace.msc")

ratio() { echo "scale=2; $1 / $2" | bc -l; }
over() { echo "scale=2; ($1 - $plain) / $plain * 100" | bc -l; }
echo
echo "rows: $rows"
echo "runs (s): plain ${plain_runs[*]}; shim ${ms_rec_runs[*]}; heaptrack ${ht_runs[*]}"
echo "plain sqlite3:                 ${plain} s"
echo "memscape shim (raw):           ${ms_rec} s  (overhead $(over "$ms_rec") %)"
echo "memscape record (with .msc):   ${ms_all} s  (overhead $(over "$ms_all") %)"
echo "heaptrack --raw:               ${ht} s  (overhead $(over "$ht") %)"
echo "wall ratio shim/heaptrack:     $(ratio "$ms_rec" "$ht")"
echo "wall ratio record/heaptrack:   $(ratio "$ms_all" "$ht")"
echo "raw .msr bytes:                $msr_bytes"
echo ".msc bytes:                    $msc_bytes"
echo "heaptrack $(basename "$ht_file") bytes: $ht_bytes"
echo "size ratio .msc/heaptrack:     $(ratio "$msc_bytes" "$ht_bytes")"
