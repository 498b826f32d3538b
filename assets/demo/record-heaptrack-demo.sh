#!/usr/bin/env bash
# Records memscape's embedded demo allocation trace: real heaptrack (raw mode, with pointer
# addresses) on sqlite3 running a short insert / index / update / delete workload.
# Needs the Debian packages heaptrack, sqlite3 and zstd.
#
#   assets/demo/record-heaptrack-demo.sh [ROWS]     (default 2000 rows: ~125k events)
#
# Writes assets/demo/sqlite-small.heaptrack.raw.zst next to this script.
set -euo pipefail
rows=${1:-2000}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for tool in heaptrack sqlite3 zstd; do
    command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y $tool)" >&2; exit 1; }
done

# The embedded demo's own workload (no VACUUM, two queries at the end), kept as it was recorded:
# the benchmarks' script is benches/trace/sqlite_workload.sh.
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
    echo "SELECT count(*), sum(length(payload)), avg(score) FROM t;"
    echo "SELECT name FROM t ORDER BY score DESC LIMIT 5;"
} > "$work/workload.sql"

heaptrack --raw -o "$work/trace" sqlite3 "$work/db.sqlite" < "$work/workload.sql" > /dev/null
raw=$(ls "$work"/trace.raw*)
# Recompress hard: the file is embedded in the binary.
case "$raw" in
    *.zst) zstd -dc "$raw" ;;
    *.gz) gzip -dc "$raw" ;;
    *) cat "$raw" ;;
esac > "$work/trace.raw"
events=$(grep -c '^[+-] ' "$work/trace.raw")
zstd -19 -q -f "$work/trace.raw" -o "$here/sqlite-small.heaptrack.raw.zst"
echo "wrote $here/sqlite-small.heaptrack.raw.zst: $events events, $(stat -c %s "$here/sqlite-small.heaptrack.raw.zst") bytes"
