//! `.msc` round trips and corruption, regions, bins and metrics on crafted and real traces.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::data;
use memscape_trace::bins::{BinBy, Bins, SizeClasses};
use memscape_trace::metrics::{BinMetrics, TimeAxis, fragmentation};
use memscape_trace::regions::find_regions;
use memscape_trace::{
    LoadError, TraceFormat, from_msc_bytes, load, load_bytes, read_msc, to_msc_bytes, write_msc,
};

fn assert_same(a: &memscape_trace::Trace, b: &memscape_trace::Trace) {
    assert_eq!(a.blocks, b.blocks);
    assert_eq!(a.call_tree.parent, b.call_tree.parent);
    assert_eq!(a.call_tree.frames, b.call_tree.frames);
    assert_eq!(a.strings, b.strings);
    assert_eq!(a.threads, b.threads);
    assert_eq!(a.warnings, b.warnings);
    let (mut ma, mut mb) = (a.meta.clone(), b.meta.clone());
    ma.format = TraceFormat::Msc;
    ma.source.clear();
    mb.source.clear();
    assert_eq!(ma, mb);
}

#[test]
fn msc_round_trips_real_traces() {
    let dir = tempfile::tempdir().unwrap();
    for rel in [
        "heaptrack/sqlite_1M.raw.zst",
        "heaptrack/heaptrack.david.18594.gz",
        "heaptrack/test_sysroot.raw",
    ] {
        let t = load(&data(rel)).unwrap();
        let out = dir.path().join("t.msc");
        write_msc(&t, &out).unwrap();
        let back = read_msc(&out).unwrap();
        assert_eq!(back.meta.format, TraceFormat::Msc);
        assert_same(&t, &back);
        // Detection from content also finds it.
        let again = load(&out).unwrap();
        assert_same(&t, &again);
    }
}

#[test]
fn msc_keeps_warnings_and_threads() {
    let t = load_bytes(
        "w.csv",
        b"time,op,address,size,thread,site\n1,alloc,0x10,8,a,s\n2,free,0x99,,,\n3,free,0x99,,,\n",
    )
    .unwrap();
    let back = from_msc_bytes("w.msc", &to_msc_bytes(&t, &mut |_| {}).unwrap()).unwrap();
    assert_same(&t, &back);
    assert_eq!(back.warnings.count("unknown_free"), 2);
}

#[test]
fn corrupt_msc_is_an_error_naming_the_offset() {
    let t = load(&data("heaptrack/test_sysroot.raw")).unwrap();
    let good = to_msc_bytes(&t, &mut |_| {}).unwrap();
    let mut bad_version = good.clone();
    bad_version[8] = 9;
    let e = from_msc_bytes("v.msc", &bad_version).unwrap_err();
    assert!(matches!(e, LoadError::Corrupt { .. }));
    assert!(
        e.to_string()
            .starts_with("v.msc@8: corrupt .msc file: expected format version 5"),
        "{e}"
    );
    // A directory claiming a gigantic element count: error, no allocation of that size.
    let mut huge = good.clone();
    huge[16 + 8..16 + 16].copy_from_slice(&(1u64 << 60).to_le_bytes());
    assert!(matches!(
        from_msc_bytes("h.msc", &huge),
        Err(LoadError::Corrupt { .. })
    ));
    // Metadata that disagrees with the blocks (as a bit flip in the JSON would make it).
    let mut t2 = t.clone();
    t2.meta.frees = t2.meta.allocs + 1;
    let forged = to_msc_bytes(&t2, &mut |_| {}).unwrap();
    let e = from_msc_bytes("m.msc", &forged).unwrap_err();
    assert!(e.to_string().contains("metadata counts"), "{e}");
    // Cut short.
    assert!(matches!(
        from_msc_bytes("c.msc", &good[..good.len() - 10]),
        Err(LoadError::Corrupt { .. })
    ));
}

/// Three blocks in a 100-byte extent: [1000,1010) [1020,1030) [1060,1100).
const GAPS: &[u8] = b"time,op,address,size\n\
    10,alloc,1000,10\n\
    20,alloc,1020,10\n\
    30,alloc,1060,40\n\
    40,free,1020,\n\
    50,free,1000,\n";

#[test]
fn metrics_follow_gaps_exactly() {
    let t = load_bytes("gaps.csv", GAPS).unwrap();
    let bins = Bins::new(
        &t,
        BinBy::Region {
            gap_threshold: 1 << 20,
        },
    );
    assert_eq!(bins.bins.len(), 1);
    assert_eq!(
        (bins.bins[0].extent_start, bins.bins[0].extent_end),
        (1000, 1100)
    );
    let m = BinMetrics::compute(&t, &bins);
    let s = &m.series[0];
    assert_eq!(s.occupancy[..], [10, 20, 60, 50, 40]);
    assert_eq!(s.live_blocks[..], [1, 2, 3, 2, 1]);
    // After each event: free gaps and the largest of them.
    // 1: [10,100)=90. 2: [10,20),[30,100)=70. 3: [10,20),[30,60)=30.
    // 4: [10,60)=50. 5: [0,60)=60.
    let gaps: Vec<u64> = (0..s.len()).map(|r| m.largest_free_gap(0, r)).collect();
    let free: Vec<u64> = (0..s.len()).map(|r| m.total_free(0, r)).collect();
    assert_eq!(gaps, [90, 70, 30, 50, 60]);
    assert_eq!(free, [90, 80, 40, 50, 60]);
    assert!((fragmentation(30, 40) - 0.25).abs() < 1e-12);
    assert_eq!(fragmentation(0, 0), 0.0);

    // Sampling over events 0..5 in 5 columns: one event per column.
    let by_event = m.sample(0, TimeAxis::EventIndex, 0, 5, 5);
    assert_eq!(by_event.occupancy[..], s.occupancy[..]);
    assert_eq!(by_event.events, vec![1; 5]);
    assert!((by_event.fragmentation[2] - 0.25).abs() < 1e-12);
    // Over wall time 0..60 in 2 columns: [0,30) holds events at 10 and 20, [30,60) the rest.
    let by_time = m.sample(0, TimeAxis::WallNs, 0, 60, 2);
    assert_eq!(by_time.events, vec![2, 3]);
    assert_eq!(by_time.occupancy, vec![20, 40]);
    assert_eq!(by_time.occupancy_max, vec![20, 60]);
    // Degenerate requests give empty samples, not panics.
    assert!(m.sample(0, TimeAxis::WallNs, 5, 5, 10).start.is_empty());
    assert!(m.sample(7, TimeAxis::WallNs, 0, 5, 10).start.is_empty());
}

#[test]
fn waste_uses_usable_sizes() {
    let t = load_bytes(
        "u.csv",
        b"time,op,address,size,usable_size\n1,alloc,0x100,10,16\n2,alloc,0x200,20,\n3,free,0x100,\n",
    )
    .unwrap();
    assert_eq!(t.blocks.size, vec![16, 20]);
    let bins = Bins::new(&t, BinBy::Thread);
    let m = BinMetrics::compute(&t, &bins);
    assert_eq!(m.series[0].waste[..], [6, 6, 0]);
}

#[test]
fn regions_split_at_the_gap_threshold() {
    let t = load_bytes(
        "r.csv",
        b"time,op,address,size\n1,alloc,0x1000,16\n2,alloc,0x1100,16\n3,alloc,0x900000,16\n4,free,0x1000,\n",
    )
    .unwrap();
    let r = find_regions(&t, 1 << 20);
    assert_eq!(r.regions.len(), 2);
    assert_eq!((r.regions[0].start, r.regions[0].end), (0x1000, 0x1110));
    assert_eq!(r.regions[0].peak_bytes, 32);
    assert_eq!(r.block_region, vec![0, 0, 1]);
    assert_eq!(r.axis_position(0x900008), Some(0x110 + 8));
    assert_eq!(r.axis_len(), 0x110 + 16);
    assert_eq!(r.axis_position(0x5000), None);
    // A threshold above the gap merges them.
    assert_eq!(find_regions(&t, 0x1000_0000).regions.len(), 1);
}

#[test]
fn size_class_bins_partition_all_blocks() {
    let t = load(&data("heaptrack/sqlite_1M.raw.zst")).unwrap();
    let bins = Bins::new(&t, BinBy::SizeClass(SizeClasses::PowerOfTwo));
    assert_eq!(
        bins.bins.iter().map(|b| b.blocks).sum::<u64>(),
        t.blocks.len() as u64
    );
    let user = Bins::new(
        &t,
        BinBy::SizeClass(SizeClasses::Boundaries(vec![64, 16, 4096])),
    );
    assert_eq!(user.bins.len(), 4);
    assert_eq!(user.bins[0].label, "0–15 B");
    for (i, &bin) in user.block_bin.iter().enumerate() {
        let s = t.blocks.requested_size[i];
        let expected = [16, 64, 4096].iter().filter(|&&b| b <= s).count() as u32;
        assert_eq!(bin, expected);
    }
    // Over the real trace, metrics end where the loader's live bytes end.
    let m = BinMetrics::compute(&t, &bins);
    let end: u64 = m.series.iter().filter_map(|s| s.occupancy.last()).sum();
    assert_eq!(end, t.meta.end_live_bytes);
    // Each bin's own peak is what the sweep in `Bins` found.
    for (bin, s) in bins.bins.iter().zip(&m.series) {
        assert_eq!(
            s.occupancy.iter().copied().max().unwrap_or(0),
            bin.peak_bytes
        );
    }
    // Summing all bins at every event gives the loader's peak.
    let samples: Vec<_> = (0..bins.bins.len())
        .map(|b| {
            m.sample(
                b,
                TimeAxis::EventIndex,
                0,
                t.meta.events,
                t.meta.events as usize,
            )
        })
        .collect();
    let peak = (0..t.meta.events as usize)
        .map(|e| samples.iter().map(|s| s.occupancy[e]).sum::<u64>())
        .max()
        .unwrap();
    assert_eq!(peak, t.meta.peak_live_bytes);
}

/// Reference: sort all ranges and merge, the textbook way.
fn naive_regions(t: &memscape_trace::Trace, threshold: u64) -> Vec<(u64, u64)> {
    let mut ranges: Vec<(u64, u64)> = t
        .blocks
        .address
        .iter()
        .zip(&t.blocks.size)
        .map(|(&a, &s)| (a, a + s))
        .collect();
    ranges.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (s, e) in ranges {
        match out.last_mut() {
            Some(last) if s <= last.1.saturating_add(threshold) => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

#[test]
fn regions_equal_the_sort_and_merge_reference() {
    let t = load(&data("heaptrack/sqlite_1M.raw.zst")).unwrap();
    for threshold in [0, 1, 100, 4096, 65_536, 1 << 20, 3 << 20, 1 << 40] {
        let r = find_regions(&t, threshold);
        let got: Vec<(u64, u64)> = r.regions.iter().map(|r| (r.start, r.end)).collect();
        assert_eq!(got, naive_regions(&t, threshold), "threshold {threshold}");
        assert_eq!(
            r.regions.iter().map(|r| r.blocks).sum::<u64>(),
            t.blocks.len() as u64
        );
    }
}

/// The occupancy step functions of a growing trace continued from an earlier snapshot's sweep
/// (what the live view does at each snapshot) equal a sweep from the first event: sqlite3's
/// heaptrack recording replayed into a trace builder and snapshotted at several points, as a
/// live recording is, binned by address region (wide gaps: regions grow; narrow gaps: regions
/// appear and merge, so the sweep also restarts and maps bins that moved) and by thread.
#[test]
fn metrics_continued_over_snapshots_equal_a_full_sweep() {
    use memscape_trace::TraceBuilder;
    use memscape_trace::metrics::MetricsSweep;
    let real = load(&data("heaptrack/sqlite_1M.raw.zst")).unwrap();
    // The first 400,000 events (test time), cut at uneven points.
    let events = 400_000usize.min(real.event_order().len());
    let cuts = [1, 900, 37_000, 37_001, 150_000, 151_234, 290_000, events];
    for by in [
        BinBy::Region {
            gap_threshold: 1 << 20,
        },
        BinBy::Region {
            gap_threshold: 1 << 12,
        },
        BinBy::Thread,
    ] {
        let mut builder = TraceBuilder::with_event_times("sqlite replay");
        let mut sweep: Option<MetricsSweep> = None;
        let mut continued = 0;
        let mut replayed = 0;
        for &cut in &cuts {
            builder.replay(&real, replayed..cut);
            replayed = cut;
            let snapshot = builder.snapshot(TraceFormat::Msc, true);
            assert_eq!(snapshot.meta.events, cut as u64);
            let bins = Bins::new(&snapshot, by.clone());
            if let BinBy::Region { gap_threshold } = by {
                // What the scene makes from the regions it found already.
                let regions = find_regions(&snapshot, gap_threshold);
                let of = Bins::of_regions(&snapshot, &regions, gap_threshold);
                assert_eq!((&of.bins, &of.block_bin), (&bins.bins, &bins.block_bin));
            }
            let started_at = sweep.as_ref().map_or(0, MetricsSweep::events);
            let (metrics, next) = BinMetrics::continued(&snapshot, &bins, sweep.take());
            if next.started_at() > 0 {
                continued += 1;
                assert_eq!(next.started_at(), started_at);
            }
            sweep = Some(next);
            let full = BinMetrics::compute(&snapshot, &bins);
            let at = format!("{by:?}, cut at {cut} events");
            assert_eq!(metrics.extents, full.extents, "{at}");
            assert_eq!(metrics.series.len(), full.series.len(), "{at}");
            for (k, (a, f)) in metrics.series.iter().zip(&full.series).enumerate() {
                assert_eq!(a, f, "{at}, bin {k}");
                for r in 0..f.len() {
                    assert_eq!(
                        (metrics.largest_free_gap(k, r), metrics.total_free(k, r)),
                        (full.largest_free_gap(k, r), full.total_free(k, r)),
                        "{at}, bin {k}, row {r}"
                    );
                }
                let sampled = |m: &BinMetrics| m.sample(k, TimeAxis::EventIndex, 0, cut as u64, 97);
                assert_eq!(sampled(&metrics), sampled(&full), "{at}, bin {k}");
            }
        }
        // Most snapshots continue the last one's sweep (not started again from the first event).
        assert!(continued >= cuts.len() / 2, "{by:?}: {continued} continued");
    }
}

/// A sweep without the free gaps (what the allocation map's occupancy bars are made from)
/// gives the sweep's occupancy, live-block and waste rows bit for bit, keeps no gap columns,
/// reads gaps and free bytes as 0, and continues over snapshots of a growing trace as the full
/// sweep does (never from a sweep with gaps): sqlite3's heaptrack recording, by region and by
/// thread.
#[test]
fn a_sweep_without_gaps_has_the_occupancy_rows_of_the_full_sweep() {
    use memscape_trace::TraceBuilder;
    use memscape_trace::metrics::MetricsSweep;
    let real = load(&data("heaptrack/sqlite_1M.raw.zst")).unwrap();
    let events = 300_000usize.min(real.event_order().len());
    let cuts = [1, 37_000, 150_000, events];
    for by in [
        BinBy::Region {
            gap_threshold: 1 << 12,
        },
        BinBy::Thread,
    ] {
        let mut builder = TraceBuilder::with_event_times("sqlite replay");
        let mut sweep: Option<MetricsSweep> = None;
        let mut replayed = 0;
        let mut continued = 0;
        for &cut in &cuts {
            builder.replay(&real, replayed..cut);
            replayed = cut;
            let snapshot = builder.snapshot(TraceFormat::Msc, true);
            let bins = Bins::new(&snapshot, by.clone());
            let (occupancy, next) = BinMetrics::continued_occupancy(&snapshot, &bins, sweep.take());
            continued += usize::from(next.started_at() > 0);
            let full = BinMetrics::compute(&snapshot, &bins);
            let at = format!("{by:?}, cut at {cut} events");
            assert!(full.has_gaps && !occupancy.has_gaps, "{at}");
            assert_eq!(occupancy.extents, full.extents, "{at}");
            assert_eq!(occupancy.series.len(), full.series.len(), "{at}");
            for (k, (o, f)) in occupancy.series.iter().zip(&full.series).enumerate() {
                assert!(!f.is_empty() || cut == 1, "{at}, bin {k}");
                assert_eq!(o.event, f.event, "{at}, bin {k}");
                assert_eq!(o.time_ns, f.time_ns, "{at}, bin {k}");
                assert_eq!(o.occupancy, f.occupancy, "{at}, bin {k}");
                assert_eq!(o.live_blocks, f.live_blocks, "{at}, bin {k}");
                assert_eq!(o.waste, f.waste, "{at}, bin {k}");
                assert!(
                    o.inner_gap.is_empty() && o.first_start.is_empty() && o.last_end.is_empty(),
                    "{at}, bin {k}: gap columns kept"
                );
                for r in (0..f.len()).step_by(997) {
                    assert_eq!(occupancy.largest_free_gap(k, r), 0, "{at}, bin {k}");
                    assert_eq!(occupancy.total_free(k, r), 0, "{at}, bin {k}");
                }
            }
            sweep = Some(next);
        }
        assert!(
            continued >= 1,
            "{by:?}: no snapshot continued the last sweep"
        );
        // A sweep with gaps is not continued without them (its rows would lack the gap
        // columns' lengths): started again from the first event.
        let snapshot = builder.snapshot(TraceFormat::Msc, true);
        let bins = Bins::new(&snapshot, by.clone());
        let (_, with_gaps) = BinMetrics::continued(&snapshot, &bins, None);
        let (_, next) = BinMetrics::continued_occupancy(&snapshot, &bins, Some(with_gaps));
        assert_eq!(next.started_at(), 0, "{by:?}");
    }
}
