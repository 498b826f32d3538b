//! Parquet datasets of real traces and samples: read back by memscape (round trip, every
//! column) and by pyarrow as the independent oracle (Hive partitions, counts, sums, schemas).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_parquet::samples::SamplesWriteOptions;
use memscape_parquet::trace::TraceWriteOptions;
use memscape_parquet::{
    read_samples, read_samples_head, read_trace, read_trace_head, write_samples, write_trace,
};
use memscape_trace::Trace;

mod common;
use common::{pyarrow, repo, shared_data};

const TRACE_ORACLE: &str = r#"
import sys, json
try:
    import pyarrow.dataset as ds
    import pyarrow.compute as pc
except ImportError as e:
    sys.stderr.write("MISSING-MODULE: %s (pip package `pyarrow`)\n" % e); sys.exit(3)
root = sys.argv[1]
out = {}
blocks = ds.dataset(root + "/blocks", format="parquet", partitioning="hive").to_table()
events = ds.dataset(root + "/events", format="parquet", partitioning="hive").to_table()
sites = ds.dataset(root + "/call_sites", format="parquet", partitioning="hive").to_table()
threads = ds.dataset(root + "/threads", format="parquet", partitioning="hive").to_table()
procs = ds.dataset(root + "/processes", format="parquet", partitioning="hive").to_table()
out["blocks"] = blocks.num_rows
out["events"] = events.num_rows
out["requested"] = pc.sum(blocks["requested_size"]).as_py() or 0
out["hosts"] = sorted(set(blocks["host"].to_pylist()))
out["windows"] = len(set(blocks["window"].to_pylist()))
out["allocs"] = pc.sum(pc.equal(events["kind"], 0)).as_py()
out["frees"] = pc.sum(pc.equal(events["kind"], 1)).as_py()
# Heap at the end from the events alone: + on alloc, − on free (mappings left out).
heap = 0
for k, s, f in zip(events["kind"].to_pylist(), events["size"].to_pylist(), events["flags"].to_pylist()):
    if f & 8: continue
    heap += s if k == 0 else -s
out["end_heap"] = heap
# Events are numbered 0..n-1 without gaps or repeats among block events, each file in order.
ev = sorted(events["event"].to_pylist())
out["events_unique"] = len(set(ev)) == len(ev)
out["sites"] = sites.num_rows
out["threads"] = threads.num_rows
out["processes"] = procs.num_rows
out["process_partitions"] = sorted(set(blocks["process"].to_pylist()))
out["pools"] = ds.dataset(root + "/pools", format="parquet", partitioning="hive").to_table().num_rows
out["schema"] = {f.name: str(f.type) for f in blocks.schema}
# Block with the largest request: its site's function through the call_sites table.
i = pc.index(blocks["requested_size"], pc.max(blocks["requested_size"])).as_py()
site = blocks["site"][i].as_py()
fn = sites.filter(pc.equal(sites["node"], site))["function"].to_pylist()
out["largest"] = [blocks["requested_size"][i].as_py(), fn[0] if fn else None]
print(json.dumps(out))
"#;

fn check_trace(trace: &Trace, label: &str) {
    let dir = tempfile::tempdir().unwrap();
    let options = TraceWriteOptions {
        host: String::from("node-a"),
        windows: 5,
    };
    let summary = write_trace(trace, dir.path(), &options).unwrap();
    assert_eq!(summary.rows, trace.blocks.len() as u64, "{label}");

    // Round trip: every block column, the call tree's frames by their text, threads, meta.
    let back = read_trace(dir.path(), None).unwrap();
    let (a, b) = (&trace.blocks, &back.blocks);
    assert_eq!(a, b, "{label}: blocks differ after the round trip");
    assert_eq!(trace.call_tree.parent, back.call_tree.parent, "{label}");
    for n in 0..trace.call_tree.len() as u32 {
        assert_eq!(
            trace.describe_frame(n),
            back.describe_frame(n),
            "{label}: node {n}"
        );
    }
    let names = |t: &Trace| {
        (0..t.threads.len() as u32)
            .map(|i| t.thread_name(i).to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(trace), names(&back), "{label}: threads");
    let mut meta = trace.meta.clone();
    meta.source = back.meta.source.clone();
    assert_eq!(meta, back.meta, "{label}: meta");
    assert_eq!(trace.processes, back.processes, "{label}: processes");
    assert_eq!(
        trace.thread_process, back.thread_process,
        "{label}: threads' processes"
    );
    assert_eq!(trace.pools, back.pools, "{label}: pools");

    // pyarrow reads the same dataset.
    let py = pyarrow(TRACE_ORACLE, &[dir.path().to_str().unwrap()]);
    let n = trace.blocks.len() as u64;
    assert_eq!(py["blocks"], n, "{label}");
    let requested: u64 = trace.blocks.requested_size.iter().sum();
    assert_eq!(py["requested"], requested, "{label}");
    assert_eq!(py["hosts"], serde_json::json!(["node-a"]), "{label}");
    assert!(py["windows"].as_u64().unwrap() >= 1, "{label}");
    let freed = trace.blocks.flags.iter().filter(|&&f| f & 1 == 0).count() as u64;
    assert_eq!(py["allocs"], n, "{label}");
    assert_eq!(py["frees"], freed, "{label}");
    assert_eq!(py["events"], n + freed, "{label}");
    assert_eq!(py["events_unique"], true, "{label}");
    // Heap bytes at the end: what the trace's metadata says (never-freed, non-mapping blocks).
    let end_heap: u64 = (0..trace.blocks.len())
        .filter(|&i| trace.blocks.flags[i] & 1 != 0 && trace.blocks.flags[i] & 8 == 0)
        .map(|i| trace.blocks.requested_size[i])
        .sum();
    assert_eq!(py["end_heap"], end_heap, "{label}");
    assert_eq!(py["sites"], trace.call_tree.len() as u64, "{label}");
    assert_eq!(py["threads"], trace.threads.len() as u64, "{label}");
    assert_eq!(py["processes"], trace.processes.len() as u64, "{label}");
    let with_blocks: std::collections::BTreeSet<u32> =
        trace.blocks.process.iter().copied().collect();
    assert_eq!(
        py["process_partitions"],
        serde_json::json!(with_blocks),
        "{label}"
    );
    assert_eq!(py["pools"], trace.pools.len() as u64, "{label}");
    assert_eq!(py["schema"]["address"], "uint64", "{label}");
    assert_eq!(py["schema"]["flags"], "uint8", "{label}");
    let largest = (0..trace.blocks.len())
        .max_by_key(|&i| (trace.blocks.requested_size[i], std::cmp::Reverse(i)))
        .unwrap();
    let site = trace.blocks.site[largest];
    let function = trace
        .strings
        .get(trace.call_tree.frames[site as usize].function);
    assert_eq!(
        py["largest"][0], trace.blocks.requested_size[largest],
        "{label}"
    );
    assert_eq!(py["largest"][1], function, "{label}");
}

#[test]
fn recorded_trace_round_trips_and_pyarrow_reads_it() {
    let trace = memscape_trace::load(&repo().join("assets/demo/kvstore.msc")).unwrap();
    assert!(trace.blocks.len() > 1000);
    check_trace(&trace, "kvstore.msc");
}

#[test]
fn pool_demo_round_trips_with_pools_and_free_sites() {
    let trace = memscape_trace::load(&repo().join("assets/demo/pools.msc")).unwrap();
    assert!(!trace.pools.is_empty());
    assert!(trace.blocks.free_site.iter().any(|&s| s != 0));
    check_trace(&trace, "pools.msc");
}

/// The recorded trace cut into three processes (each block's process by its thread), so that
/// blocks land in several `process=P` partitions.
#[test]
fn several_processes_land_in_their_partitions() {
    use memscape_trace::process::Process;
    let trace = memscape_trace::load(&repo().join("assets/demo/kvstore.msc")).unwrap();
    let threads = trace.threads.len() as u32;
    let thread_process: Vec<u32> = (0..threads).map(|t| t % 3).collect();
    let mut blocks = trace.blocks.clone();
    let process: Vec<u32> = blocks.thread.iter().map(|&t| t % 3).collect();
    blocks.process = process.into();
    let parts = memscape_trace::TraceParts {
        meta: Some(trace.meta.clone()),
        blocks,
        strings: trace.strings.iter().map(str::to_owned).collect(),
        call_parent: trace.call_tree.parent.clone(),
        frames: trace.call_tree.frames.clone(),
        threads: trace.threads.clone(),
        thread_process,
        processes: (0..3)
            .map(|p| Process {
                pid: 100 + p,
                parent_pid: if p == 0 { 1 } else { 100 },
                command_line: format!("kvstore --shard {p}"),
                ..Process::default()
            })
            .collect(),
        pools: Vec::new(),
        warnings: Default::default(),
    };
    let trace = Trace::from_parts(parts).unwrap();
    assert!(trace.blocks.process.contains(&2));
    check_trace(&trace, "kvstore in three processes");
}

#[test]
fn heaptrack_traces_round_trip_and_pyarrow_reads_them() {
    for name in ["sqlite_1M.raw.zst", "heaptrack.david.18594.gz"] {
        let trace = memscape_trace::load(&shared_data().join("heaptrack").join(name)).unwrap();
        check_trace(&trace, name);
    }
}

const SAMPLES_ORACLE: &str = r#"
import sys, json
try:
    import pyarrow.dataset as ds
    import pyarrow.compute as pc
except ImportError as e:
    sys.stderr.write("MISSING-MODULE: %s (pip package `pyarrow`)\n" % e); sys.exit(3)
t = ds.dataset(sys.argv[1] + "/samples", format="parquet", partitioning="hive").to_table()
out = {"rows": t.num_rows, "latency": pc.sum(t["ms_latency"]).as_py(),
       "latency_attr": pc.sum(t["latency"]).as_py(),
       "windows": len(set(t["window"].to_pylist())),
       "hosts": sorted(set(t["host"].to_pylist())),
       "null_lines": t["ms_source_line"].null_count,
       "kinds": {f.name: (f.metadata or {}).get(b"memscape.kind", b"").decode() for f in t.schema},
       "variables": {}}
for v, lat in zip(t["variable"].to_pylist(), t["ms_latency"].to_pylist()):
    if v is None: continue
    out["variables"][v] = out["variables"].get(v, 0) + lat
rows = sorted(t["ms_row"].to_pylist())
out["rows_ok"] = rows == list(range(len(rows)))
print(json.dumps(out))
"#;

#[test]
fn lulesh_samples_round_trip_and_pyarrow_reads_them() {
    let path = shared_data().join("memaxes/lulesh/samples.out");
    let samples = memscape_samples::load_samples(&path, Default::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let options = SamplesWriteOptions {
        host: String::from("rank0"),
        windows: 8,
    };
    write_samples(&samples, dir.path(), &options).unwrap();
    let back = read_samples(dir.path(), None).unwrap();
    assert_eq!(back.len(), samples.len());
    assert_eq!(back.latency, samples.latency);
    assert_eq!(back.cpu, samples.cpu);
    assert_eq!(back.level, samples.level);
    assert_eq!(back.data_node, samples.data_node);
    assert_eq!(back.row_line, samples.row_line);
    assert_eq!(back.symbols, samples.symbols);
    assert_eq!(back.symbol, samples.symbol);
    assert_eq!(back.source_lines, samples.source_lines);
    assert_eq!(back.source_line, samples.source_line);
    assert_eq!(back.column_names(), samples.column_names());
    for (a, b) in samples.columns.iter().zip(&back.columns) {
        assert_eq!(a.kind, b.kind, "{}", a.name);
        assert_eq!(a.unknown, b.unknown, "{}", a.name);
        for i in 0..samples.len() {
            assert_eq!(a.label(i), b.label(i), "{} row {i}", a.name);
            assert_eq!(
                a.value(i).is_some(),
                b.value(i).is_some(),
                "{} row {i}",
                a.name
            );
        }
    }

    let py = pyarrow(SAMPLES_ORACLE, &[dir.path().to_str().unwrap()]);
    assert_eq!(py["rows"], samples.len() as u64);
    let total: u64 = samples.latency.iter().sum();
    assert_eq!(py["latency"], total);
    assert_eq!(py["latency_attr"], total);
    assert_eq!(py["hosts"], serde_json::json!(["rank0"]));
    assert_eq!(py["rows_ok"], true);
    assert!(
        py["windows"].as_u64().unwrap() > 1,
        "time windows: {}",
        py["windows"]
    );
    let unknown_lines = samples
        .source_line
        .iter()
        .filter(|&&c| c == memscape_samples::NONE)
        .count();
    assert_eq!(py["null_lines"], unknown_lines as u64);
    assert_eq!(py["kinds"]["latency"], "quantitative");
    assert_eq!(py["kinds"]["variable"], "qualitative");
    // Per-variable latency: pyarrow's grouping against the native top offenders by symbol.
    let top = memscape_samples::top_offenders(
        &samples,
        memscape_samples::OffenderKey::Symbol,
        None,
        usize::MAX,
    );
    assert!(!top.is_empty());
    for o in &top {
        assert_eq!(py["variables"][&o.name], o.cycles, "{}", o.name);
    }
}

#[test]
fn hosts_add_up_and_bad_datasets_are_errors() {
    let trace = memscape_trace::load(&repo().join("assets/demo/kvstore.msc")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for host in ["a", "b"] {
        let options = TraceWriteOptions {
            host: host.into(),
            windows: 3,
        };
        write_trace(&trace, dir.path(), &options).unwrap();
    }
    // Two hosts: one must be named.
    let err = read_trace(dir.path(), None).unwrap_err().to_string();
    assert!(err.contains("several hosts"), "{err}");
    let b = read_trace(dir.path(), Some("b")).unwrap();
    assert_eq!(b.blocks, trace.blocks);
    assert!(read_trace(dir.path(), Some("c")).is_err());
    // Samples cannot go into a trace dataset.
    let samples = memscape_samples::load_samples(
        &shared_data().join("memaxes/lulesh/samples.out"),
        Default::default(),
    )
    .unwrap();
    let err = write_samples(&samples, dir.path(), &SamplesWriteOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("Trace"), "{err}");
    // A bad host name is refused before anything is written.
    let options = TraceWriteOptions {
        host: "../x".into(),
        windows: 1,
    };
    assert!(write_trace(&trace, dir.path(), &options).is_err());

    // A missing partition: the manifest's row count no longer matches.
    let part = memscape_parquet::partition_files(dir.path(), "blocks", Some("a")).unwrap();
    std::fs::remove_file(&part[0].path).unwrap();
    let err = read_trace(dir.path(), Some("a")).unwrap_err().to_string();
    assert!(err.contains("the files hold"), "{err}");
    // A truncated file names itself.
    let part = memscape_parquet::partition_files(dir.path(), "blocks", Some("b")).unwrap();
    let bytes = std::fs::read(&part[0].path).unwrap();
    std::fs::write(&part[0].path, &bytes[..bytes.len() / 2]).unwrap();
    let err = read_trace(dir.path(), Some("b")).unwrap_err().to_string();
    assert!(err.contains("part-0.parquet"), "{err}");
    // A corrupt manifest.
    std::fs::write(dir.path().join(memscape_parquet::MANIFEST), "{").unwrap();
    let err = read_trace(dir.path(), Some("b")).unwrap_err().to_string();
    assert!(err.contains("bad manifest"), "{err}");
}

/// A bounded read (what the GUI keeps of a dataset whose views the query engine draws) holds
/// the count of the whole host and its first rows, each equal to the sample of the input at
/// its line; a limit above the count reads every sample, as `read_samples` does.
#[test]
fn a_bounded_read_holds_the_first_rows_and_the_whole_count() {
    let path = shared_data().join("memaxes/lulesh/samples.out");
    let samples = memscape_samples::load_samples(&path, Default::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let options = SamplesWriteOptions {
        host: String::from("rank0"),
        windows: 4,
    };
    write_samples(&samples, dir.path(), &options).unwrap();
    let head = read_samples_head(dir.path(), None, 1000).unwrap();
    assert_eq!(head.total, samples.len() as u64);
    assert_eq!(head.samples.len(), 1000);
    let by_line: std::collections::HashMap<u64, usize> = samples
        .row_line
        .iter()
        .enumerate()
        .map(|(i, &l)| (l, i))
        .collect();
    let name = |labels: &[String], code: u32| labels.get(code as usize).cloned();
    for i in 0..head.samples.len() {
        let j = by_line[&head.samples.row_line[i]];
        assert_eq!(head.samples.latency[i], samples.latency[j]);
        assert_eq!(head.samples.cpu[i], samples.cpu[j]);
        assert_eq!(head.samples.level[i], samples.level[j]);
        assert_eq!(
            name(&head.samples.source_lines, head.samples.source_line[i]),
            name(&samples.source_lines, samples.source_line[j])
        );
        assert_eq!(
            name(&head.samples.symbols, head.samples.symbol[i]),
            name(&samples.symbols, samples.symbol[j])
        );
    }
    let whole = read_samples_head(dir.path(), None, samples.len()).unwrap();
    let read = read_samples(dir.path(), None).unwrap();
    assert_eq!(whole.total, samples.len() as u64);
    assert_eq!(whole.samples.latency, read.latency);
    assert_eq!(whole.samples.row_line, read.row_line);
}

/// A bounded read of a trace dataset (what the GUI keeps when its map and heap views draw from
/// the query engine) holds the first allocated blocks, each equal to the input's block of the
/// same id, the whole trace's meta and count, and decodes far fewer rows than the dataset holds;
/// a limit at or above the count reads every block, as `read_trace` does.
#[test]
fn a_bounded_trace_read_holds_the_first_blocks_and_stops_there() {
    let trace = memscape_trace::load(&shared_data().join("heaptrack/sqlite_1M.raw.zst")).unwrap();
    let n = trace.blocks.len();
    assert!(n > 20_000, "{n} blocks");
    let dir = tempfile::tempdir().unwrap();
    let options = TraceWriteOptions {
        windows: 32,
        ..Default::default()
    };
    write_trace(&trace, dir.path(), &options).unwrap();
    let limit = n / 10;
    let head = read_trace_head(dir.path(), None, limit).unwrap();
    assert_eq!(head.total, n as u64);
    assert_eq!(head.trace.blocks.len(), limit);
    assert_eq!(head.trace.meta.events, trace.meta.events);
    assert_eq!(head.trace.meta.peak_live_bytes, trace.meta.peak_live_bytes);
    let (a, b) = (&head.trace.blocks, &trace.blocks);
    for i in 0..limit {
        assert_eq!(
            (a.address[i], a.size[i], a.alloc_event[i], a.free_event[i]),
            (b.address[i], b.size[i], b.alloc_event[i], b.free_event[i]),
            "block {i}"
        );
        assert_eq!(
            (a.thread[i], a.site[i]),
            (b.thread[i], b.site[i]),
            "block {i}"
        );
    }
    // The read stopped: not every row was decoded (a few windows past the head's end at most).
    assert!(
        head.rows_read < (n as u64) / 2,
        "{} of {n} rows decoded for a head of {limit}",
        head.rows_read
    );
    let whole = read_trace_head(dir.path(), None, n).unwrap();
    let read = read_trace(dir.path(), None).unwrap();
    assert_eq!(whole.rows_read, n as u64);
    assert_eq!(whole.trace.blocks.address, read.blocks.address);
    assert_eq!(whole.trace.blocks.free_event, read.blocks.free_event);
}
