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
    /// Leave out of the leak suspects the blocks the C library, the loader and the C++ runtime
    /// keep until exit (`memscape_heap::suppress`); false shows them.
    pub suppressions: bool,
    /// Profiles: the measure shown (None: the profile's default).
    pub measure: Option<String>,
}

impl Default for Grouping {
    fn default() -> Self {
        Self {
            keys: vec![GroupKey::Site],
            metric: Metric::Bytes,
            points: 120,
            suppressions: true,
            measure: None,
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
            suppressions: true,
            measure: settings.measure.clone(),
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

fn heap_options(settings: &Grouping) -> memscape_heap::HeapOptions {
    memscape_heap::HeapOptions {
        suppressions: if settings.suppressions {
            memscape_heap::Suppressions::builtin()
        } else {
            memscape_heap::Suppressions::none()
        },
        ..Default::default()
    }
}

/// [`timeline`] of a live recording's snapshot, its grouping continued from an earlier
/// snapshot's `carry` ([`memscape_heap::TraceHeap::continued`]: equal to the full build, the
/// work the new blocks); the sizes source hands over the next carry. None where `dataset` is
/// not an allocation trace grouped in memory (then [`timeline`]).
pub fn timeline_continued<'a>(
    dataset: &'a Dataset,
    settings: &Grouping,
    carry: Option<memscape_heap::HeapCarry>,
) -> Option<(HeapTimeline, memscape_heap::TraceSizes<'a>)> {
    match &dataset.content {
        DatasetContent::AllocTrace(t) if t.heap_query.is_none() => {
            Some(memscape_heap::trace_timeline_continued(
                &t.trace,
                &settings.keys,
                settings.metric,
                settings.points,
                &heap_options(settings),
                carry,
            ))
        }
        _ => None,
    }
}

/// Builds the timeline of `dataset` and its sizes source (which borrows the dataset).
pub fn timeline<'a>(
    dataset: &'a Dataset,
    settings: &Grouping,
) -> crate::error::Result<(HeapTimeline, Box<dyn SizesSource + 'a>)> {
    match &dataset.content {
        DatasetContent::AllocTrace(t) => {
            let options = heap_options(settings);
            if let Some(query) = &t.heap_query {
                return match query.timeline(
                    &settings.keys,
                    settings.metric,
                    settings.points,
                    &options,
                ) {
                    Ok(got) => {
                        tracing::info!("{}: heap timeline from {}", dataset.name, query.engine());
                        Ok(got)
                    }
                    Err(e) => crate::bail!("{}: {} ({})", dataset.name, e, query.engine()),
                };
            }
            let (timeline, sizes) = memscape_heap::trace_timeline_with(
                &t.trace,
                &settings.keys,
                settings.metric,
                settings.points,
                &options,
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
            if let Some(curve) = file.curve_instead_of_tree() {
                // `memscape render` and `heaptree` draw the curve; the pane says so.
                crate::bail!(
                    "{}: {} (`memscape heaptree` lists it; `memscape render --view sunburst` draws it)",
                    dataset.name,
                    curve.message
                );
            }
            Ok((timeline, Box::new(sizes)))
        }
        // The measure chosen, else the profile's default (pprof: inuse; DHAT: total).
        DatasetContent::HeapProfile(profile) => {
            let measure = profile.measure(settings.measure.as_deref())?;
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

/// The roots a click on `group` pushes to step in from the shown `root`: the path below `root`
/// down to `group`, whether `group` has children or is a leaf at the drill-down depth (it then
/// becomes the centre, alone). Empty when `group` is not below `root`.
pub fn step_in(trie: &memscape_heap::GroupTrie, root: u32, group: u32) -> Vec<u32> {
    let path = trie.path_to_root(group);
    match path.iter().position(|&n| n == root) {
        Some(i) if group != root => path[i + 1..].to_vec(),
        _ => Vec::new(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A click steps in to any group below the shown root, a leaf too (grouped by line, every
    /// group is a leaf at depth 1).
    #[test]
    fn a_click_steps_in_to_leaves_and_inner_groups() {
        let demo = crate::test_data::demo();
        let (lines, _) = timeline(&demo, &Grouping::default()).unwrap();
        let leaf = lines.trie.children(0)[0];
        assert!(lines.trie.children(leaf).is_empty());
        assert_eq!(step_in(&lines.trie, 0, leaf), [leaf]);
        assert!(step_in(&lines.trie, leaf, leaf).is_empty());
        let paths = Grouping {
            keys: vec![GroupKey::Path],
            ..Grouping::default()
        };
        let (paths, _) = timeline(&demo, &paths).unwrap();
        let child = paths.trie.children(0)[0];
        let grandchild = paths.trie.children(child)[0];
        assert_eq!(step_in(&paths.trie, 0, grandchild), [child, grandchild]);
        assert_eq!(step_in(&paths.trie, child, grandchild), [grandchild]);
        assert!(step_in(&paths.trie, grandchild, child).is_empty());
    }

    /// The demo's leak suspects leave out the thread control blocks glibc keeps until exit
    /// ("suppressed: N blocks"); switched off, they are suspects again.
    #[test]
    fn the_runtime_blocks_are_suppressed_and_can_be_shown() {
        let demo = crate::test_data::demo();
        let names = |suppressions: bool| {
            let grouping = Grouping {
                suppressions,
                ..Grouping::default()
            };
            let (timeline, _) = timeline(&demo, &grouping).unwrap();
            let names: Vec<String> = timeline.suspects.iter().map(|s| s.name.clone()).collect();
            (timeline.suppressed, names)
        };
        let (on, suspects) = names(true);
        assert!(on.applied && on.blocks > 0, "{on:?}");
        assert!(
            !suspects.iter().any(|n| n.contains("pthread_create")),
            "{suspects:?}"
        );
        let (off, suspects) = names(false);
        assert!(!off.applied && off.blocks == 0);
        assert!(
            suspects.iter().any(|n| n.contains("pthread_create")),
            "{suspects:?}"
        );
    }

    /// A profile with several measures shows the one chosen (inuse and alloc of a text heap
    /// profile: the header's totals), and says which exist when asked for another.
    #[test]
    fn profiles_show_the_measure_chosen() {
        let text = b"heap profile:   2:   300 [   5:  1000] @ heapprofile\n   1:   100 [   2:   400] @ 0x1000 0x2000\n   1:   200 [   3:   600] @ 0x3000\n";
        let profile = memscape_heap::profile::parse_profile("t.heap", text).unwrap();
        let dataset = Dataset {
            name: "t.heap".into(),
            content: DatasetContent::HeapProfile(Box::new(profile)),
            links: Default::default(),
        };
        let total = |measure: Option<&str>| {
            let grouping = Grouping {
                measure: measure.map(str::to_owned),
                ..Grouping::default()
            };
            let (timeline, _) = timeline(&dataset, &grouping).unwrap();
            timeline.points.last().map(|p| p.total_bytes)
        };
        assert_eq!(total(None), Some(300));
        assert_eq!(total(Some("inuse")), Some(300));
        assert_eq!(total(Some("alloc")), Some(1000));
        let Err(e) = timeline(
            &dataset,
            &Grouping {
                measure: Some("reads".into()),
                ..Grouping::default()
            },
        ) else {
            panic!("no such measure");
        };
        assert!(e.to_string().contains("alloc"), "{e}");
    }
}
