//! The difference view: its allocation maps one above the other give a thread, process or bin
//! of the same name one colour in both runs (one palette assignment across the pair, not each
//! run's own order of first appearance), and hovering its charts names what is under the
//! pointer with both runs' values.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use memscape_views::dataset::{AllocTraceData, DatasetContent};
use memscape_views::picture::{Layer, Picture};
use memscape_views::{Dataset, ViewKind, ViewSettings};

mod common;
use common::load;

/// `dataset`'s run as a second run records it when its threads started in another order:
/// the same names with other thread ids (`worker-1 (21926)` becomes `worker-1 (31926)`),
/// listed by name from the last (threads of one name keep their order of creation).
fn threads_reordered(dataset: &Dataset) -> Dataset {
    let mut trace = (*dataset.alloc_trace().unwrap().trace).clone();
    let stems: Vec<String> = (0..trace.threads.len() as u32)
        .map(|k| {
            let name = trace.thread_name(k);
            name.rsplit_once(" (")
                .map_or(name, |(stem, _)| stem)
                .to_owned()
        })
        .collect();
    let mut order: Vec<usize> = (0..stems.len()).collect();
    order.sort_by(|&x, &y| stems[y].cmp(&stems[x]));
    // Old index → new index.
    let mut new_of = vec![0u32; order.len()];
    for (new, &old) in order.iter().enumerate() {
        new_of[old] = new as u32;
    }
    let renamed: Vec<u32> = (0..trace.threads.len() as u32)
        .map(|k| {
            let name = trace.thread_name(k).to_owned();
            let (stem, tid) = name.rsplit_once(" (").expect("a recorded thread name");
            let tid: u32 = tid.trim_end_matches(')').parse().expect("a thread id");
            trace.strings.intern(&format!("{stem} ({})", tid + 10_000))
        })
        .collect();
    trace.threads = order.iter().map(|&old| renamed[old]).collect();
    trace.thread_process = order.iter().map(|&old| trace.thread_process[old]).collect();
    let thread: Vec<u32> = trace
        .blocks
        .thread
        .iter()
        .map(|&t| new_of[t as usize])
        .collect();
    let free_thread: Vec<u32> = trace
        .blocks
        .free_thread
        .iter()
        .map(|&t| {
            if t == 0 {
                0
            } else {
                new_of[t as usize - 1] + 1
            }
        })
        .collect();
    trace.blocks.thread = thread.into();
    trace.blocks.free_thread = free_thread.into();
    Dataset {
        name: format!("{} (threads reordered)", dataset.name),
        content: DatasetContent::AllocTrace(Box::new(AllocTraceData::new(trace))),
        links: Default::default(),
    }
}

/// Every block of a picture's maps (address, size) with its colour, sorted.
fn block_colors(picture: &Picture) -> Vec<([u32; 2], [u32; 2], u32)> {
    let mut blocks: Vec<_> = picture
        .layers
        .iter()
        .filter_map(|l| match l {
            Layer::Map(m) => Some(m.data.blocks.iter().map(|b| (b.addr, b.size, b.color))),
            _ => None,
        })
        .flatten()
        .collect();
    blocks.sort_unstable();
    blocks
}

#[test]
fn compared_maps_give_a_thread_one_colour_in_both_runs() {
    let a = load(Path::new("demo"));
    let names = |d: &Dataset| -> Vec<String> {
        let t = &d.alloc_trace().unwrap().trace;
        (0..t.threads.len() as u32)
            .map(|i| t.thread_name(i).to_owned())
            .collect()
    };
    assert!(names(&a).len() >= 3, "threads: {:?}", names(&a));
    let b = threads_reordered(&a);
    assert_ne!(names(&a), names(&b));
    let ViewSettings::AllocMap(settings) =
        common::settings(ViewKind::AllocMap, "panels = \"main\"\ncolor = \"thread\"")
    else {
        panic!("alloc map settings");
    };
    let size = egui::vec2(700.0, 600.0);
    let maps = memscape_views::diff::compose::maps(&a, &b, &settings, size).unwrap();
    let [(_, ma), (_, mb)] = &maps.cells[..] else {
        panic!("two maps");
    };
    let (ca, cb) = (block_colors(ma), block_colors(mb));
    assert_eq!(ca.len(), a.alloc_trace().unwrap().trace.blocks.len());
    assert!(
        ca == cb,
        "the same blocks of the same threads are coloured differently in A and B"
    );
    // A looks as it does alone; B alone would colour its threads by its own order.
    let alone = |d: &Dataset| {
        block_colors(
            &memscape_views::alloc_map::compose(d, &settings, egui::vec2(700.0, 272.0)).unwrap(),
        )
    };
    assert_eq!(ca, alone(&a));
    assert_ne!(
        cb,
        alone(&b),
        "the reordered threads colour differently on their own"
    );
}

/// Hovering a difference chart names the group drawn there with its value in each run: the
/// centre is the whole heap (both totals), and every group whose name the chart writes is the
/// group the hover finds at that name, with the values the comparison reports for it.
#[test]
fn hovering_the_difference_charts_names_the_group_and_both_values() {
    use memscape_views::diff::DiffChart;
    use memscape_views::diff::compose::{hover, tree_picture};
    let a = load(Path::new("demo:sqlite"));
    let b = load(&common::shared("heaptrack/sqlite_1M.raw.zst"));
    let heap = memscape_views::heap_tree::HeapTreeSettings {
        peak: true,
        ..Default::default()
    };
    let report = memscape_views::diff::report(&a, &b, &heap).unwrap();
    let size = egui::vec2(900.0, 640.0);
    let depth = 3;
    let by_name = |name: &str| {
        report
            .tree
            .children
            .iter()
            .find(|c| c.name == name)
            .map(|c| (c.value_a(report.metric), c.value_b(report.metric)))
    };
    let mut checked_groups = 0;
    for chart in [
        DiffChart::Sunburst,
        DiffChart::Icicle,
        DiffChart::SideBySide,
    ] {
        let picture = tree_picture(&report, chart, depth, size);
        if chart == DiffChart::Sunburst {
            let centre = egui::pos2(0.5 * size.x, 0.5 * (40.0 + size.y - 46.0));
            let h = hover(&report, chart, depth, size, centre).expect("the root");
            assert_eq!(
                (h.a, h.b),
                (report.totals.bytes_a, report.totals.bytes_b),
                "{h:?}"
            );
            assert!(h.text().contains("→"), "{}", h.text());
        }
        // The names written on the charts (not the header, legend, captions or values).
        let names = picture.labels.iter().filter(|l| {
            l.pos.y > 40.0
                && l.pos.y < size.y - 46.0
                && !l.text.starts_with(['+', '-', '±', '−'])
                && !l.text.starts_with(|c: char| c.is_ascii_digit())
        });
        for label in names {
            let h = hover(&report, chart, depth, size, label.pos);
            let Some(h) = h else {
                // Side by side: each run's caption under its chart.
                assert!(
                    chart == DiffChart::SideBySide && label.text.contains(" · "),
                    "{chart:?}: nothing under {label:?}"
                );
                continue;
            };
            let name = memscape_views::diff::compose::short(&h.name);
            let text = label.text.trim_end_matches('…');
            let text = text.split("  ").next().unwrap_or(text);
            assert!(name.starts_with(text), "{chart:?}: {label:?} but {h:?}");
            checked_groups += 1;
            if let Some((va, vb)) = by_name(&h.name) {
                assert_eq!((h.a, h.b), (va, vb), "{chart:?}: {h:?}");
            }
            assert_eq!(h.run.is_some(), chart == DiffChart::SideBySide, "{h:?}");
        }
    }
    assert!(
        checked_groups >= 6,
        "{checked_groups} labelled groups hovered"
    );
    // Off the charts: nothing.
    assert!(
        hover(
            &report,
            DiffChart::Icicle,
            depth,
            size,
            egui::pos2(2.0, 2.0)
        )
        .is_none()
    );
}
