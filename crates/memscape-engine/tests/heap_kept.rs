//! The heap views' engine answers kept beside a dataset (`memscape_engine::heap_kept`): a
//! dataset reopened unchanged gets the first open's timeline without asking the engine, for
//! every metric and suppression setting of a kept grouping; a new grouping or a changed dataset
//! is asked again and equals the engine's fresh answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use memscape_engine::heap_kept::KeptHeap;
use memscape_engine::{Dataset, Engine};
use memscape_heap::{
    GroupKey, GroupedSizes, HeapOptions, HeapTimeline, Metric, SizesSource, Suppressions,
};
use memscape_parquet::trace::TraceWriteOptions;

fn repo() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    dir.canonicalize().unwrap_or(dir)
}

fn write_dataset(demo: &str, dir: &Path) {
    let trace = memscape_trace::load(&repo().join("assets/demo").join(demo)).unwrap();
    let _ = std::fs::remove_dir_all(dir);
    let options = TraceWriteOptions {
        host: String::from("demo"),
        windows: 9,
    };
    memscape_parquet::write_trace(&trace, dir, &options).unwrap();
}

/// A fresh engine on `dir`: what a new GUI process opens.
fn reopen(dir: &Path) -> (Engine, Dataset) {
    let engine = Engine::embedded(2).unwrap();
    let ds = engine.open(dir).unwrap();
    (engine, ds)
}

fn builtin() -> HeapOptions {
    HeapOptions {
        suppressions: Suppressions::builtin(),
        ..Default::default()
    }
}

/// Every part of two timelines the heap views draw, and their sizes at every point.
fn assert_same(
    (a, mut a_sizes): (HeapTimeline, GroupedSizes),
    (b, mut b_sizes): (HeapTimeline, GroupedSizes),
    what: &str,
) {
    assert_eq!(a.trie.len(), b.trie.len(), "{what}: trie");
    for n in 0..a.trie.len() as u32 {
        assert_eq!(a.trie.name(n), b.trie.name(n), "{what}: node {n}");
        assert_eq!(a.trie.parent(n), b.trie.parent(n), "{what}: node {n}");
    }
    assert_eq!(a.order, b.order, "{what}: order");
    assert_eq!(a.metric, b.metric, "{what}: metric");
    assert_eq!(a.points, b.points, "{what}: points");
    assert_eq!(a.series, b.series, "{what}: curve");
    assert_eq!(a.time_unit, b.time_unit, "{what}: unit");
    assert_eq!(a.suppressed, b.suppressed, "{what}: suppressed");
    assert_eq!(a.peak_point, b.peak_point, "{what}: peak");
    assert_eq!(a.growth, b.growth, "{what}: growth");
    let suspects = |t: &HeapTimeline| -> Vec<(String, u64)> {
        t.suspects
            .iter()
            .map(|s| (s.name.clone(), s.end_bytes))
            .collect()
    };
    assert_eq!(suspects(&a), suspects(&b), "{what}: suspects");
    for p in 0..a.points.len() {
        assert_eq!(
            a_sizes.sizes_at_point(p),
            b_sizes.sizes_at_point(p),
            "{what}: sizes at point {p}"
        );
    }
}

#[test]
fn a_reopened_dataset_draws_its_heap_timeline_from_the_kept_answers_and_a_changed_one_asks_again() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kvstore");
    let kept_at = tmp.path().join("cache/manifest.engine.heap.json");
    write_dataset("kvstore.msc", &dir);
    let site = [GroupKey::Site];
    let thread_path = [GroupKey::Thread, GroupKey::Path];

    // First open: the engine answers, and the answer is kept.
    let (engine, ds) = reopen(&dir);
    let first = KeptHeap::at(Some(kept_at.clone()));
    let opened = first
        .heap_timeline(&engine, &ds, None, &site, Metric::Bytes, 40, &builtin())
        .unwrap();
    assert_eq!(first.engine_asked(), 1);
    let kvstore_series = opened.0.series.clone();
    assert!(kept_at.is_file(), "nothing kept at {}", kept_at.display());
    let fresh = engine
        .heap_timeline(&ds, None, &site, Metric::Bytes, 40, &builtin())
        .unwrap();
    assert_same(opened, fresh, "first open vs the engine");
    assert!(
        engine
            .heap_timeline(&ds, None, &site, Metric::Bytes, 40, &builtin())
            .unwrap()
            .0
            .points
            .iter()
            .any(|p| p.total_bytes > 0)
    );

    // Reopened (a new engine and a new keeper, as a new GUI process): the same timeline, the
    // engine not asked, for other metrics and suppressions too.
    let (engine2, ds2) = reopen(&dir);
    let second = KeptHeap::at(Some(kept_at.clone()));
    for (metric, options, what) in [
        (Metric::Bytes, builtin(), "bytes, built-in suppressions"),
        (Metric::Objects, builtin(), "objects"),
        (Metric::Bytes, HeapOptions::default(), "no suppressions"),
    ] {
        let reopened = second
            .heap_timeline(&engine2, &ds2, None, &site, metric, 40, &options)
            .unwrap();
        let fresh = engine2
            .heap_timeline(&ds2, None, &site, metric, 40, &options)
            .unwrap();
        assert_same(reopened, fresh, what);
    }
    assert_eq!(second.engine_asked(), 0, "a kept answer asked the engine");

    // Another grouping or point count is asked, then kept beside the first.
    second
        .heap_timeline(
            &engine2,
            &ds2,
            None,
            &thread_path,
            Metric::Bytes,
            40,
            &builtin(),
        )
        .unwrap();
    second
        .heap_timeline(&engine2, &ds2, None, &site, Metric::Bytes, 12, &builtin())
        .unwrap();
    assert_eq!(second.engine_asked(), 2);
    let third = KeptHeap::at(Some(kept_at.clone()));
    for (keys, points) in [(&site[..], 40), (&thread_path[..], 40), (&site[..], 12)] {
        let reopened = third
            .heap_timeline(
                &engine2,
                &ds2,
                None,
                keys,
                Metric::Bytes,
                points,
                &builtin(),
            )
            .unwrap();
        let fresh = engine2
            .heap_timeline(&ds2, None, keys, Metric::Bytes, points, &builtin())
            .unwrap();
        assert_same(reopened, fresh, &format!("{keys:?} {points}"));
    }
    assert_eq!(third.engine_asked(), 0);

    // The dataset rewritten from another trace (its manifest changed): computed anew, equal to
    // the engine's answer on it, not the kept one.
    write_dataset("pools.msc", &dir);
    let (engine3, ds3) = reopen(&dir);
    let changed = KeptHeap::at(Some(kept_at.clone()));
    let (answer, sizes) = changed
        .heap_timeline(&engine3, &ds3, None, &site, Metric::Bytes, 40, &builtin())
        .unwrap();
    assert_eq!(
        changed.engine_asked(),
        1,
        "a changed dataset was answered from the kept file"
    );
    let fresh = engine3
        .heap_timeline(&ds3, None, &site, Metric::Bytes, 40, &builtin())
        .unwrap();
    assert_ne!(answer.series, kvstore_series, "the kept kvstore curve");
    assert_same((answer, sizes), fresh, "changed dataset");
    // And kept for the next open of the changed dataset.
    let after = KeptHeap::at(Some(kept_at));
    after
        .heap_timeline(&engine3, &ds3, None, &site, Metric::Bytes, 40, &builtin())
        .unwrap();
    assert_eq!(after.engine_asked(), 0);
}

/// Without a place to keep them every answer comes from the engine, and a kept file that cannot
/// be read (cut short) is computed again rather than failing the views.
#[test]
fn no_kept_file_or_a_broken_one_asks_the_engine() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kvstore");
    write_dataset("kvstore.msc", &dir);
    let (engine, ds) = reopen(&dir);
    let nowhere = KeptHeap::at(None);
    for _ in 0..2 {
        nowhere
            .heap_timeline(
                &engine,
                &ds,
                None,
                &[GroupKey::Site],
                Metric::Bytes,
                20,
                &builtin(),
            )
            .unwrap();
    }
    assert_eq!(nowhere.engine_asked(), 2);

    let kept_at = tmp.path().join("kept.json");
    std::fs::write(&kept_at, b"{\"format\": 1, \"sour").unwrap();
    let broken = KeptHeap::at(Some(kept_at.clone()));
    let got = broken
        .heap_timeline(
            &engine,
            &ds,
            None,
            &[GroupKey::Site],
            Metric::Bytes,
            20,
            &builtin(),
        )
        .unwrap();
    assert_eq!(broken.engine_asked(), 1);
    let fresh = engine
        .heap_timeline(&ds, None, &[GroupKey::Site], Metric::Bytes, 20, &builtin())
        .unwrap();
    assert_same(got, fresh, "after a broken kept file");
    // Rewritten whole: the next keeper reads it.
    let next = KeptHeap::at(Some(kept_at));
    next.heap_timeline(
        &engine,
        &ds,
        None,
        &[GroupKey::Site],
        Metric::Bytes,
        20,
        &builtin(),
    )
    .unwrap();
    assert_eq!(next.engine_asked(), 0);
}
