//! The samples workers with a query attached (`samples::query`, what the query engine is to a
//! Parquet samples dataset): the base, each selection's numbers and the strips come from the
//! query, off the UI thread; a selection it cannot state (samples picked with no terms) is
//! computed from the samples with their own index, and says so (`computed_by` None).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use memscape_samples::metrics::{Metric, WindowScore};
use memscape_samples::{
    AxisBrush, Bitset, Brush, LinkedIndex, LinkedResult, Picked, SelectionSpec,
};
use memscape_topology::ResourceKind;
use memscape_views::Dataset;
use memscape_views::samples::query::{SamplesQuery, attach};
use memscape_views::samples::shared::{
    Base, Repaint, SamplesShared, StripKey, TOP_OFFENDERS, samples_of,
};

/// Answers as the samples do, counting its calls; a picked set without terms is refused, as
/// the engine refuses it.
struct Counting {
    bases: AtomicUsize,
    selections: AtomicUsize,
    strips: AtomicUsize,
    native: Base,
    samples: Arc<Dataset>,
}

impl SamplesQuery for Counting {
    fn base(
        &self,
        _dataset: &Dataset,
        _hardware: Option<&std::path::Path>,
        bins: usize,
    ) -> Result<Base, String> {
        self.bases.fetch_add(1, Ordering::Relaxed);
        let samples = samples_of(&self.samples).unwrap();
        Ok(self.native.rebinned(samples, bins))
    }

    fn recompute(&self, base: &Base, spec: &SelectionSpec) -> Option<Result<LinkedResult, String>> {
        if spec.picked.as_ref().is_some_and(|p| p.terms.is_none()) {
            return None;
        }
        self.selections.fetch_add(1, Ordering::Relaxed);
        let samples = samples_of(&self.samples).unwrap();
        let mut result =
            memscape_samples::recompute(samples, &base.mapping, &base.index, spec, TOP_OFFENDERS);
        // The engine states numbers, not members.
        result.selection = Bitset::new(0);
        Some(Ok(result))
    }

    fn strip(&self, _base: &Base, key: &StripKey) -> Result<Vec<WindowScore>, String> {
        self.strips.fetch_add(1, Ordering::Relaxed);
        Ok((0..key.windows)
            .map(|w| WindowScore {
                range: [w as f64, w as f64 + 1.0],
                samples: 7,
                metric: Some(0.5),
            })
            .collect())
    }

    fn engine(&self) -> String {
        String::from("Counting")
    }
}

fn wait<T>(what: &str, f: impl FnMut() -> Option<T>) -> T {
    memscape_views::testing::wait_for(what, Duration::from_secs(60), f)
}

fn lulesh() -> Arc<Dataset> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/memaxes/lulesh/samples.out");
    Arc::new(
        memscape_views::dataset::load(&memscape_views::LoadSource::File(path), &|_, _| {})
            .expect("LULESH samples"),
    )
}

#[test]
fn samples_views_draw_from_an_attached_query_and_fall_back_for_clusters() {
    let samples = lulesh();
    let native = Base::build(
        samples_of(&samples).unwrap(),
        std::path::Path::new(&samples.name),
        None,
    )
    .unwrap();
    let query = Arc::new(Counting {
        bases: AtomicUsize::new(0),
        selections: AtomicUsize::new(0),
        strips: AtomicUsize::new(0),
        native,
        samples: samples.clone(),
    });
    let dataset = lulesh();
    attach(&dataset, query.clone());
    let ctx: Repaint = Arc::new(|| {});
    let shared = SamplesShared::of(&dataset, &ctx);
    assert_eq!(shared.engine(), Some("Counting"));
    let base = wait("the base", || shared.base()).expect("base");
    assert_eq!(
        query.bases.load(Ordering::Relaxed),
        1,
        "the base is the query's"
    );
    // A brush: the query's numbers.
    let lat = base.index.axis("latency").expect("latency");
    shared.update(|s| {
        s.set_brush(AxisBrush {
            axis: lat,
            brush: Brush::Range { lo: 0.0, hi: 60.0 },
        })
    });
    let version = shared.spec().1;
    let result = wait("the brushed selection", || {
        shared
            .result()
            .filter(|(_, v)| *v == version)
            .map(|(r, _)| r)
    });
    assert_eq!(shared.computed_by().as_deref(), Some("Counting"));
    assert!(query.selections.load(Ordering::Relaxed) >= 1);
    assert_eq!(result.selection.universe(), 0, "the query's result");
    // Samples picked with no terms: the samples' own numbers, equal to a direct recomputation.
    let s = samples_of(&dataset).unwrap();
    let every_third = Bitset::from_fn(s.len(), |i| i % 3 == 0);
    shared.update(|spec| {
        spec.picked = Some(Picked {
            label: String::from("every third"),
            samples: Arc::new(every_third),
            terms: None,
        })
    });
    let (spec, version) = shared.spec();
    let result = wait("the picked selection", || {
        shared
            .result()
            .filter(|(_, v)| *v == version)
            .map(|(r, _)| r)
    });
    assert_eq!(shared.computed_by(), None);
    let own = LinkedIndex::new(s, base.index.quantitative_bins);
    let direct = memscape_samples::recompute(s, &base.mapping, &own, &spec, TOP_OFFENDERS);
    assert_eq!(result.selection, direct.selection);
    assert_eq!(result.aggregate, direct.aggregate);
    assert_eq!(result.selected_bins, direct.selected_bins);
    assert_eq!(result.summary, direct.summary);
    // Strips: the query's.
    let key = StripKey {
        axis: lat,
        windows: 5,
        metric: Metric::Latency,
        kind: ResourceKind::L2,
    };
    let strip = wait("a strip", || shared.strip(&key)).expect("strip");
    assert_eq!(strip.len(), 5);
    assert!(strip.iter().all(|w| w.samples == 7));
    assert_eq!(query.strips.load(Ordering::Relaxed), 1);
    // Re-binned: the query's base again.
    shared.set_bins(12);
    wait("the re-binned base", || {
        shared
            .base()
            .and_then(Result::ok)
            .filter(|b| b.index.quantitative_bins == 12)
    });
    assert_eq!(query.bases.load(Ordering::Relaxed), 2);
}
