//! The schema the crate README documents is the one the files have, as pyarrow reads them
//! (every table's columns, their Arrow types and nullability); and Parquet files that are not
//! what memscape wrote (another writer's types, not Parquet at all) are clear errors naming the
//! file and the column.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use memscape_parquet::samples::SamplesWriteOptions;
use memscape_parquet::trace::TraceWriteOptions;
use memscape_parquet::{read_trace, write_samples, write_trace};

mod common;
use common::{pyarrow as python, repo};

const SCHEMAS: &str = r#"
import sys, json, os
try:
    import pyarrow.dataset as ds
except ImportError as e:
    sys.stderr.write("MISSING-MODULE: %s (pip package `pyarrow`)\n" % e); sys.exit(3)
out = {}
for root in sys.argv[1:]:
    for table in sorted(os.listdir(root)):
        if not os.path.isdir(os.path.join(root, table)): continue
        d = ds.dataset(os.path.join(root, table), format="parquet", partitioning="hive")
        parts = set(d.partitioning.schema.names)
        out[table] = {f.name: [str(f.type), f.nullable,
                               (f.metadata or {}).get(b"memscape.kind", b"").decode()]
                      for f in d.schema if f.name not in parts}
print(json.dumps(out))
"#;

/// (table, column) → (type, nullable) from the README's schema table.
fn documented() -> BTreeMap<(String, String), (String, bool)> {
    let readme = std::fs::read_to_string(repo().join("crates/memscape-parquet/README.md")).unwrap();
    let (_, schema) = readme
        .split_once("## Layout and schema")
        .expect("README: section `## Layout and schema`");
    let mut out = BTreeMap::new();
    let mut table = String::new();
    for line in schema.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (t, columns, types) = (cells[1], cells[2], cells[3]);
        if t == "table" || columns.starts_with("every attribute") {
            continue;
        }
        if !t.is_empty() {
            table = t.to_owned();
        }
        let names: Vec<&str> = columns.split('`').skip(1).step_by(2).collect();
        let nullable = types.contains("*nullable*");
        let types: Vec<&str> = types
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty() && *t != "*nullable*")
            .collect();
        assert!(
            types.len() == 1 || types.len() == names.len(),
            "README row {line:?}: one type, or one per column"
        );
        for (i, name) in names.iter().enumerate() {
            let ty = types[if types.len() == 1 { 0 } else { i }];
            out.insert(
                (table.clone(), (*name).to_owned()),
                (ty.to_owned(), nullable),
            );
        }
    }
    out
}

#[test]
fn the_readme_schema_is_what_pyarrow_reads() {
    let trace = tempfile::tempdir().unwrap();
    let demo = memscape_trace::load(&repo().join("assets/demo/pools.msc")).unwrap();
    let options = TraceWriteOptions {
        host: "h".into(),
        windows: 2,
    };
    write_trace(&demo, trace.path(), &options).unwrap();
    let samples = tempfile::tempdir().unwrap();
    let lulesh = memscape_samples::load_samples(
        &repo().join("../shared/data/memaxes/lulesh/samples.out"),
        Default::default(),
    )
    .unwrap();
    write_samples(&lulesh, samples.path(), &SamplesWriteOptions::default()).unwrap();

    let read = python(SCHEMAS, &[trace.path(), samples.path()]);
    let mut found = BTreeMap::new();
    for (table, columns) in read.as_object().unwrap() {
        for (name, f) in columns.as_object().unwrap() {
            let (ty, nullable) = (f[0].as_str().unwrap(), f[1].as_bool().unwrap());
            if table == "samples" && !name.starts_with("ms_") {
                // An attribute of the input: its kind in the field metadata.
                let kind = f[2].as_str().unwrap();
                assert!(
                    ["quantitative", "qualitative"].contains(&kind),
                    "{name}: kind {kind:?}"
                );
                assert!(nullable, "attribute {name} must be nullable (null is ??)");
                continue;
            }
            found.insert((table.clone(), name.clone()), (ty.to_owned(), nullable));
        }
    }
    let documented = documented();
    assert!(
        documented.len() > 60,
        "{} documented columns",
        documented.len()
    );
    for (key, doc) in &documented {
        assert_eq!(
            found.get(key),
            Some(doc),
            "README documents {key:?} as {doc:?}"
        );
    }
    for key in found.keys() {
        assert!(
            documented.contains_key(key),
            "{key:?} is in the files but not in the README"
        );
    }
}

const FOREIGN: &str = r#"
import sys
try:
    import pyarrow as pa, pyarrow.parquet as pq
except ImportError as e:
    sys.stderr.write("MISSING-MODULE: %s (pip package `pyarrow`)\n" % e); sys.exit(3)
path, mode = sys.argv[1], sys.argv[2]
t = pq.read_table(path)
if mode == "signed":
    i = t.schema.get_field_index("address")
    t = t.set_column(i, "address", t["address"].cast(pa.int64()))
pq.write_table(t, path, compression=mode if mode != "signed" else "snappy")
print("{}")
"#;

#[test]
fn foreign_or_broken_parquet_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let demo = memscape_trace::load(&repo().join("assets/demo/kvstore.msc")).unwrap();
    let options = TraceWriteOptions {
        host: "h".into(),
        windows: 1,
    };
    write_trace(&demo, dir.path(), &options).unwrap();
    let blocks = memscape_parquet::partition_files(dir.path(), "blocks", Some("h")).unwrap();
    let file = &blocks[0].path;

    // Rewritten by pyarrow with its default codec (snappy), then gzip and lz4: the same trace.
    for codec in ["snappy", "gzip", "lz4"] {
        python(FOREIGN, &[file.as_path(), Path::new(codec)]);
        let back = read_trace(dir.path(), None).unwrap();
        assert_eq!(back.blocks, demo.blocks, "{codec}");
    }

    // Rewritten with a signed address column.
    python(FOREIGN, &[file.as_path(), Path::new("signed")]);
    let err = read_trace(dir.path(), None).unwrap_err().to_string();
    assert!(err.contains(&file.display().to_string()), "{err}");
    assert!(
        err.contains(r#"column "address": expected UInt64, found Int64"#),
        "{err}"
    );

    // Not Parquet at all.
    std::fs::write(file, b"address,size\n1,2\n").unwrap();
    let err = read_trace(dir.path(), None).unwrap_err().to_string();
    assert!(err.contains(&file.display().to_string()), "{err}");
    assert!(err.to_lowercase().contains("parquet"), "{err}");
}
