//! Criterion benchmarks of the trace pipeline on the shared 1M-event heaptrack raw trace:
//! text parse, .msc load (and decoding every column), info report, bin metrics; and the CSV
//! importer on a synthetic 1,000,000-row CSV trace (quoted call sites).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use memscape_trace::bins::{BinBy, Bins, SizeClasses};
use memscape_trace::info::{InfoOptions, info};
use memscape_trace::metrics::BinMetrics;
use memscape_trace::model::BlockColumn;

fn sample() -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/heaptrack/sqlite_1M.raw.zst");
    memscape_io::read_input(&path).expect("shared/data/heaptrack/sqlite_1M.raw.zst")
}

/// 500,000 allocations and their frees, interleaved, as a CSV trace whose `site` column is
/// quoted (`"cache_insert (kvstore.c:84)"`) like a tool writing C++ names would.
fn csv_trace() -> Vec<u8> {
    let mut out = String::from("time,op,address,size,thread,site\n");
    let mut live: Vec<u64> = Vec::new();
    for i in 0..1_000_000u64 {
        let t = i * 7;
        if i % 2 == 0 || live.is_empty() {
            let addr = 0x5555_0000_0000 + (i << 6);
            let site = i % 97;
            out.push_str(&format!(
                "{t},alloc,{addr:#x},{},{},\"f{site}<int, double> (a.cc:{site})\"\n",
                16 + (i % 512),
                i % 4
            ));
            live.push(addr);
        } else {
            let at = (i as usize * 31) % live.len();
            let addr = live.swap_remove(at);
            out.push_str(&format!("{t},free,{addr:#x},,{},\n", i % 4));
        }
    }
    out.into_bytes()
}

fn benches(c: &mut Criterion) {
    let text = sample();
    let trace = memscape_trace::load_bytes("sqlite_1M.raw", &text).unwrap();
    let msc = memscape_trace::to_msc_bytes(&trace, &mut |_| {}).unwrap();
    let mut g = c.benchmark_group("sqlite_1M");
    g.sample_size(10);
    g.bench_function("parse_heaptrack_raw_text", |b| {
        b.iter(|| memscape_trace::load_bytes("sqlite_1M.raw", &text).unwrap())
    });
    // Version 3: the load checks the file and decodes the call tree and strings; block columns
    // decode on first use.
    g.bench_function("decode_msc", |b| {
        b.iter(|| memscape_trace::from_msc_bytes("sqlite_1M.msc", &msc).unwrap())
    });
    g.bench_function("decode_msc_all_columns", |b| {
        b.iter(|| {
            let t = memscape_trace::from_msc_bytes("sqlite_1M.msc", &msc).unwrap();
            t.blocks.prefetch(&BlockColumn::ALL);
            t
        })
    });
    g.bench_function("decode_msc_and_info", |b| {
        b.iter(|| {
            let t = memscape_trace::from_msc_bytes("sqlite_1M.msc", &msc).unwrap();
            info(&t, &InfoOptions::default())
        })
    });
    // The floor of any load into the model: allocating and writing the block columns (a
    // clone is one memcpy per column into fresh memory).
    g.bench_function("clone_block_columns", |b| b.iter(|| trace.blocks.clone()));
    g.bench_function("info_report", |b| {
        b.iter(|| info(&trace, &InfoOptions::default()))
    });
    let bins = Bins::new(&trace, BinBy::SizeClass(SizeClasses::PowerOfTwo));
    g.bench_function("bin_metrics_pow2", |b| {
        b.iter(|| BinMetrics::compute(&trace, &bins))
    });
    let csv = csv_trace();
    g.bench_function("parse_csv_1M_rows", |b| {
        b.iter(|| memscape_trace::load_bytes("synthetic.csv", &csv).unwrap())
    });
    g.finish();
}

criterion_group!(trace_benches, benches);
criterion_main!(trace_benches);
