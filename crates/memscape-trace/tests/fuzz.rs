//! Property tests: mutated real samples through every parser (heaptrack raw and processed, CSV,
//! .msc, and the compressed paths). Property: loading returns Ok or Err, never panics; every
//! loaded trace is internally consistent.
//!
//! `cargo test` runs a CI-sized number of cases; the `#[ignore]`d `million_mutations` test runs
//! ~1,000,000 mutations (`cargo test -p memscape-trace --release --test fuzz -- --ignored`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::OnceLock;

use proptest::prelude::*;

/// First bytes kept of each large sample: the parsers are line-local, so a prefix exercises
/// every line kind while keeping cases fast.
const SAMPLE_PREFIX: usize = 24 * 1024;

const CSV_SAMPLE: &[u8] = b"time,op,address,size,thread,site,old_address,usable_size\n\
1,alloc,0x1000,16,main,\"a,b\",,24\n\
2,alloc,0x2000,32,worker,b,,\n\
3,realloc,0x3000,64,main,c,0x1000,\n\
4,free,0x2000,,,,,\n\
5,free,0x3000,,,,,\n\
6,realloc,0x4000,8,main,d,0,\n";

fn samples() -> &'static Vec<Vec<u8>> {
    static SAMPLES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let read = |rel: &str| {
            let mut b = memscape_io::read_input(&common::data(rel)).unwrap();
            b.truncate(SAMPLE_PREFIX);
            b
        };
        let sysroot = read("heaptrack/test_sysroot.raw");
        let sqlite = read("heaptrack/sqlite_1M.raw.zst");
        let david = read("heaptrack/heaptrack.david.18594.gz");
        let msc_of = |bytes: &[u8]| {
            let t = memscape_trace::load_bytes("s", bytes).unwrap();
            memscape_trace::to_msc_bytes(&t, &mut |_| {}).unwrap()
        };
        let msc_sysroot = msc_of(&sysroot);
        let msc_csv = msc_of(CSV_SAMPLE);
        // Raw (mappable) block columns; read from bytes they are copied, not mapped.
        let mappable_csv = {
            let t = memscape_trace::load_bytes("s", CSV_SAMPLE).unwrap();
            let options = memscape_trace::msc::MscOptions {
                mappable: true,
                ..Default::default()
            };
            memscape_trace::msc::to_msc_bytes_with(&t, &options, &mut |_| {}).unwrap()
        };
        let zstd_csv = zstd::encode_all(CSV_SAMPLE, 1).unwrap();
        vec![
            sysroot,
            sqlite,
            david,
            CSV_SAMPLE.to_vec(),
            msc_sysroot,
            msc_csv,
            mappable_csv,
            zstd_csv,
        ]
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Set(usize, u8),
    Insert(usize, u8),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    // Positions are taken modulo the sample length when applied.
    let interesting = prop_oneof![
        any::<u8>(),
        Just(b'\n'),
        Just(b' '),
        Just(b','),
        Just(b'f'),
        Just(b'0'),
        Just(0xff),
        Just(b'+'),
        Just(b'-'),
    ];
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(p, m)| Mutation::Flip(p, m)),
        (any::<usize>(), interesting.clone()).prop_map(|(p, b)| Mutation::Set(p, b)),
        (any::<usize>(), interesting).prop_map(|(p, b)| Mutation::Insert(p, b)),
        (any::<usize>(), 1usize..64).prop_map(|(p, n)| Mutation::Delete(p, n)),
        (any::<usize>(), 1usize..256).prop_map(|(p, n)| Mutation::Duplicate(p, n)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(data: &mut Vec<u8>, m: &Mutation) {
    if data.is_empty() {
        data.push(b'v');
        return;
    }
    let len = data.len();
    match *m {
        Mutation::Flip(p, x) => data[p % len] ^= x,
        Mutation::Set(p, b) => data[p % len] = b,
        Mutation::Insert(p, b) => data.insert(p % (len + 1), b),
        Mutation::Delete(p, n) => {
            let p = p % len;
            data.drain(p..(p + n).min(len));
        }
        Mutation::Duplicate(p, n) => {
            let p = p % len;
            let chunk = data[p..(p + n).min(len)].to_vec();
            data.splice(p..p, chunk);
        }
        Mutation::Truncate(p) => data.truncate(p % len),
    }
}

/// The property: no panic, and a loaded trace is consistent.
fn check(bytes: &[u8]) {
    if let Ok(t) = memscape_trace::load_bytes("mutated", bytes) {
        assert!(t.blocks.is_consistent());
        let b = &t.blocks;
        for i in 0..b.len() {
            assert!(b.alloc_event[i] <= b.free_event[i]);
            assert!(b.free_event[i] <= t.meta.events);
            assert!((b.site[i] as usize) < t.call_tree.len());
        }
        assert!(t.meta.allocs >= t.meta.frees);
        // Downstream analyses must also survive whatever the parser accepted.
        let report = memscape_trace::info::info(&t, &Default::default());
        assert_eq!(report.blocks, b.len() as u64);
        let bins = memscape_trace::bins::Bins::new(&t, memscape_trace::bins::BinBy::Thread);
        let m = memscape_trace::metrics::BinMetrics::compute(&t, &bins);
        let _ = m.sample(
            0,
            memscape_trace::metrics::TimeAxis::WallNs,
            0,
            t.meta.end_time_ns.max(1),
            7,
        );
    }
}

fn run(cases: u32) {
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(sample in 0usize..7, mutations in prop::collection::vec(mutation(), 1..8))| {
        let mut data = samples()[sample].clone();
        for m in &mutations {
            apply(&mut data, m);
        }
        check(&data);
    });
}

#[test]
fn mutated_samples_never_panic() {
    run(20_000);
}

#[test]
#[ignore = "long run: about a million mutations"]
fn million_mutations() {
    // 1 to 7 mutations per case, 4 on average: 250,000 cases ≈ 1,000,000 mutations.
    run(250_000);
}

#[test]
fn unmutated_samples_load() {
    for (i, s) in samples().iter().enumerate() {
        assert!(memscape_trace::load_bytes("s", s).is_ok(), "sample {i}");
    }
}
