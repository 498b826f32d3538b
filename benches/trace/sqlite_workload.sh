#!/usr/bin/env bash
# The sqlite3 workload the trace benchmarks record (as ../shared/data/README.md says of
# sqlite_1M): ROWS inserts in one transaction, two indexes, an update, a delete, a vacuum and a
# query; SQL on standard output.
#
#   benches/trace/sqlite_workload.sh ROWS > workload.sql
set -euo pipefail
rows=${1:?rows}
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
