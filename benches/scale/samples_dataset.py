#!/usr/bin/env python3
"""The LULESH samples COPIES times over as one Parquet samples dataset, as memscape-engine's
examples/engine-bench.rs `write-samples` writes it: copy 0 by `memscape export --windows 1`,
each further copy with `ms_row` and `time` shifted past the last, 64 copies a file, one time
window a file, the manifest's row count updated. Usage: samples_dataset.py MEMSCAPE COPIES DIR"""
import json, os, subprocess, sys
import pyarrow as pa, pyarrow.compute as pc, pyarrow.parquet as pq

memscape, copies, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
lulesh = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../shared/data/memaxes/lulesh/samples.out")
subprocess.run([memscape, "export", lulesh, "--to", "parquet", "--host", "bench", "--windows", "1", "-o", out], check=True)
files = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(out, "samples")) for f in fs if f.endswith(".parquet")]
assert len(files) == 1, files
first = pq.read_table(files[0])
n = first.num_rows
span = int(pc.max(first["time"]).as_py()) + 1
if copies * span >= 2**64:
    # engine-bench shifts by the largest time, which wraps past u64 at 100 M: by the span instead.
    span = int(pc.max(first["time"]).as_py()) - int(pc.min(first["time"]).as_py()) + 1
part = os.path.dirname(files[0])
base = os.path.dirname(part)
key = os.path.basename(part).split("=")[0]
PER_FILE = 64
c = 1
while c < copies:
    d = os.path.join(base, f"{key}={c}")
    os.makedirs(d, exist_ok=True)
    with pq.ParquetWriter(os.path.join(d, "part-0.parquet"), first.schema, compression="zstd") as w:
        for copy in range(c, min(c + PER_FILE, copies)):
            cols = []
            for name in first.schema.names:
                col = first[name]
                if name == "ms_row":
                    col = pc.add(col, pa.scalar(copy * n, pa.uint64()))
                elif name == "time":
                    col = pc.add(col, pa.scalar(copy * span, first.schema.field("time").type))
                cols.append(col)
            t = pa.Table.from_arrays(cols, schema=first.schema)
            w.write_table(t)
    c += PER_FILE
m = json.load(open(os.path.join(out, "memscape-dataset.json")))
m["hosts"]["bench"]["rows"] = n * copies
json.dump(m, open(os.path.join(out, "memscape-dataset.json"), "w"), indent=2)
print("samples", n * copies)
