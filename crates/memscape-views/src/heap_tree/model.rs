//! The heap view's input: an allocation trace or a massif file of a dataset, turned into a
//! [`HeapTimeline`] and a source of group sizes per time point.

use memscape_heap::{
    GroupKey, HeapNode, HeapTimeline, Metric, PruneOptions, Sizes, SizesSource, build_view_keeping,
};

use crate::dataset::{Dataset, DatasetContent};

/// How the heap is grouped and sized, and how many time points the slider has.
#[derive(Debug, Clone, PartialEq)]
pub struct Grouping {
    pub keys: Vec<GroupKey>,
    pub metric: Metric,
    /// Time points on the slider for traces (massif: its detailed snapshots).
    pub points: usize,
}

impl Default for Grouping {
    fn default() -> Self {
        Self {
            keys: vec![GroupKey::Site],
            metric: Metric::Bytes,
            points: 120,
        }
    }
}

impl Grouping {
    /// The grouping of `settings`, with the slider's 120 time points.
    pub fn of(settings: &super::settings::HeapTreeSettings) -> Self {
        Self {
            keys: settings.group.0.clone(),
            metric: settings.metric.0,
            points: 120,
        }
    }
}

/// Whether `dataset` has a heap to show, and if not why.
pub fn accepts(dataset: &Dataset) -> Result<(), &'static str> {
    match &dataset.content {
        DatasetContent::AllocTrace(_)
        | DatasetContent::Massif(_)
        | DatasetContent::HeapProfile(_) => Ok(()),
        _ => Err("needs an allocation trace, a massif file or a heap profile"),
    }
}

/// Builds the timeline of `dataset` and its sizes source (which borrows the dataset).
pub fn timeline<'a>(
    dataset: &'a Dataset,
    settings: &Grouping,
) -> crate::error::Result<(HeapTimeline, Box<dyn SizesSource + 'a>)> {
    match &dataset.content {
        DatasetContent::AllocTrace(t) => {
            let (timeline, sizes) = memscape_heap::trace_timeline(
                &t.trace,
                &settings.keys,
                settings.metric,
                settings.points,
            );
            Ok((timeline, Box::new(sizes)))
        }
        DatasetContent::Massif(file) => {
            if settings.metric == Metric::Objects {
                crate::bail!(
                    "{}: massif records bytes per allocation site but no object counts: use bytes",
                    dataset.name
                );
            }
            let (timeline, sizes) = memscape_heap::massif_timeline(file, settings.metric);
            if let Some(curve) = file.curve_without_tree() {
                // `memscape render` and `heaptree` draw the curve; the pane says so.
                crate::bail!(
                    "{}: {} (`memscape heaptree` lists it; `memscape render --view sunburst` draws it)",
                    dataset.name,
                    curve.message
                );
            }
            Ok((timeline, Box::new(sizes)))
        }
        // The profile's default measure (pprof: inuse; DHAT: total); picking another one in
        // the pane is for the views' settings.
        DatasetContent::HeapProfile(profile) => {
            let measure = profile.measure(None)?;
            let (timeline, sizes) =
                memscape_heap::profile_timeline(profile, measure, settings.metric);
            Ok((timeline, Box::new(sizes)))
        }
        _ => crate::bail!(
            "{}: the heap views need an allocation trace or a massif file",
            dataset.name
        ),
    }
}

/// The shown tree at a time point: pruned, stably ordered, rooted at `root`; `keep` (a picked
/// group) is never merged into "Other".
pub fn tree(
    timeline: &HeapTimeline,
    sizes: &Sizes,
    root: u32,
    depth: usize,
    keep: Option<u32>,
) -> HeapNode {
    let prune = PruneOptions {
        depth,
        metric: timeline.metric,
        ..PruneOptions::default()
    };
    build_view_keeping(&timeline.trie, sizes, &timeline.order, root, &prune, keep)
}

/// A human-readable time of a point.
pub fn time_text(timeline: &HeapTimeline, time: u64) -> String {
    match timeline.time_unit.as_str() {
        "ns" => format!("{:.3} s", time as f64 / 1e9),
        "events" => format!("event {time}"),
        "i" => format!("{} instructions", crate::picture::si(time)),
        "B" => format!("{} allocated", crate::heap_tree::draw::human_bytes(time)),
        unit => format!("{time} {unit}"),
    }
}
