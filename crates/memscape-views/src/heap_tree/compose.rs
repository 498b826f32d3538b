//! The heap tree's picture (sunburst, icicle or timeline of small multiples), composed in one
//! place for the GUI pane and headless rendering.

use memscape_heap::{HeapTimeline, Sizes, SizesSource, TimePoint, icicle, sunburst};

use super::draw::{self, BACKGROUND, NodePaint, Picture};
use super::model::{self, Grouping};
use super::settings::{Chart, HeapTreeSettings};
use crate::dataset::{Dataset, DatasetContent};
use crate::error::{Context as _, Result};
use crate::label::Label;

/// The area a single tree (sunburst or icicle) fills in a picture of `size` points.
pub fn chart_area(size: egui::Vec2) -> egui::Rect {
    egui::Rect::from_min_size(egui::Pos2::ZERO, size).shrink(4.0)
}

/// One tree as a sunburst or an icicle, morphing from `from` (a layout of the same chart) by
/// `t`, `highlight` outlined.
pub fn tree_picture(
    shown: &Shown,
    from: Option<&Shown>,
    t: f32,
    timeline: &HeapTimeline,
    highlight: Option<u32>,
    size: egui::Vec2,
) -> Picture {
    let area = chart_area(size);
    let mut picture = match (shown, from) {
        (Shown::Sunburst(cur), from) => {
            let from = match from {
                Some(Shown::Sunburst(p)) if t < 1.0 => Some(p),
                _ => None,
            };
            draw::sunburst(
                cur,
                from,
                t,
                area,
                &NodePaint::heap(&timeline.order),
                highlight,
            )
        }
        (Shown::Icicle(cur), from) => {
            let from = match from {
                Some(Shown::Icicle(p)) if t < 1.0 => Some(p),
                _ => None,
            };
            draw::icicle(
                cur,
                from,
                t,
                area,
                &NodePaint::heap(&timeline.order),
                highlight,
            )
        }
    };
    picture.size = size;
    picture.background = Some(BACKGROUND);
    picture
}

/// A laid-out tree.
pub enum Shown {
    Sunburst(memscape_heap::Layout<memscape_heap::SunburstSegment>),
    Icicle(memscape_heap::Layout<memscape_heap::IcicleRect>),
}

impl Shown {
    /// The tree of `sizes` under `root`, `depth` levels deep, laid out as `chart` (a timeline's
    /// cells are sunbursts); `keep` is never merged into "Other".
    pub fn build(
        chart: Chart,
        timeline: &HeapTimeline,
        sizes: &Sizes,
        root: u32,
        depth: usize,
        keep: Option<u32>,
    ) -> Shown {
        let tree = model::tree(timeline, sizes, root, depth, keep);
        match chart {
            Chart::Icicle => Shown::Icicle(icicle(&tree, timeline.metric, depth)),
            _ => Shown::Sunburst(sunburst(&tree, timeline.metric, depth)),
        }
    }

    pub fn nodes(&self) -> &[memscape_heap::layout::LayoutNode] {
        match self {
            Shown::Sunburst(l) => &l.nodes,
            Shown::Icicle(l) => &l.nodes,
        }
    }
}

/// Small multiples: one sunburst per (time point, sizes) side by side, each captioned with its
/// time and live bytes.
pub fn timeline_picture(
    timeline: &HeapTimeline,
    cells: &[(TimePoint, &Sizes)],
    root: u32,
    depth: usize,
    size: egui::Vec2,
) -> Picture {
    let n = cells.len().max(1);
    let mut pic = Picture::new(size, BACKGROUND);
    let cell_w = size.x / n as f32;
    for (i, (point, s)) in cells.iter().enumerate() {
        let tree = model::tree(timeline, s, root, depth, None);
        let layout = sunburst(&tree, timeline.metric, depth);
        let cell = egui::Rect::from_min_size(
            egui::pos2(i as f32 * cell_w, 0.0),
            egui::vec2(cell_w, size.y - 36.0),
        );
        pic.extend(draw::sunburst(
            &layout,
            None,
            1.0,
            cell.shrink(6.0),
            &NodePaint::heap(&timeline.order),
            None,
        ));
        pic.labels.push(Label::new(
            egui::pos2(cell.center().x, size.y - 18.0),
            format!(
                "{} · {}",
                model::time_text(timeline, point.time),
                draw::human_bytes(point.total_bytes)
            ),
            13.0,
            egui::Color32::from_gray(220),
            egui::Align2::CENTER_CENTER,
        ));
    }
    pic
}

/// The heap tree of `dataset` as `settings` say, at `size` points.
pub fn compose(
    dataset: &Dataset,
    settings: &HeapTreeSettings,
    size: egui::Vec2,
) -> Result<Picture> {
    let by_process = settings.group.0.contains(&memscape_heap::GroupKey::Process);
    if let Some(keep) =
        crate::processes::heap_selection(dataset, settings.process.as_deref(), by_process)?
    {
        let only = crate::processes::restrict_to(dataset, &keep)?;
        let settings = HeapTreeSettings {
            process: None,
            ..settings.clone()
        };
        return compose(&only, &settings, size);
    }
    // A massif file without any heap tree: its heap-size curve instead of a tree.
    if let DatasetContent::Massif(file) = &dataset.content
        && let Some(curve) = file.curve_instead_of_tree()
    {
        return Ok(curve_picture(&curve, size));
    }
    let (timeline, mut sizes) = model::timeline(dataset, &Grouping::of(settings))?;
    let root = match &settings.root {
        None => 0,
        Some(name) => find_group(&timeline, name).with_context(|| {
            format!(
                "--root: no group of {} has a name containing {name:?}",
                dataset.name
            )
        })?,
    };
    Ok(match settings.chart {
        Chart::Timeline => {
            let cells = timeline_cells(&timeline, sizes.as_mut(), settings)?;
            let cells: Vec<(TimePoint, &Sizes)> =
                cells.iter().map(|(p, s)| (p.clone(), s)).collect();
            timeline_picture(&timeline, &cells, root, settings.depth, size)
        }
        chart => {
            let s = sizes_for_selection(dataset, &timeline, sizes.as_mut(), settings)?;
            let shown = Shown::build(chart, &timeline, &s, root, settings.depth, None);
            tree_picture(&shown, None, 1.0, &timeline, None, size)
        }
    })
}

/// The first trie node (breadth first) whose name contains `needle`.
pub fn find_group(timeline: &HeapTimeline, needle: &str) -> Option<u32> {
    let mut queue = std::collections::VecDeque::from([0u32]);
    while let Some(n) = queue.pop_front() {
        if n != 0 && timeline.trie.name(n).contains(needle) {
            return Some(n);
        }
        queue.extend(timeline.trie.children(n).iter().copied());
    }
    None
}

/// Sizes at `--at`, `--snapshot`, `--peak` or the default point (trace end; massif peak).
fn sizes_for_selection(
    dataset: &Dataset,
    timeline: &HeapTimeline,
    sizes: &mut dyn SizesSource,
    args: &HeapTreeSettings,
) -> Result<Sizes> {
    match &dataset.content {
        DatasetContent::Massif(_) | DatasetContent::HeapProfile(_) => {
            let point = if let Some(n) = args.snapshot {
                timeline
                    .points
                    .iter()
                    .position(|p| p.index == n)
                    .with_context(|| {
                        let with: Vec<u64> = timeline.points.iter().map(|p| p.index).collect();
                        format!("--snapshot {n}: no tree in that snapshot; snapshots with trees: {with:?}")
                    })?
            } else if let Some(t) = args.at {
                timeline
                    .points
                    .iter()
                    .rposition(|p| p.time <= t)
                    .with_context(|| format!("--at {t}: no detailed snapshot at or before it"))?
            } else {
                timeline.peak_point
            };
            sizes
                .sizes_at_point(point)
                .context("time point out of range")
        }
        DatasetContent::AllocTrace(_) => {
            crate::ensure!(
                args.snapshot.is_none(),
                "--snapshot applies to massif files; use --at TIME or --peak for allocation traces"
            );
            let events = if args.peak {
                sizes.peak_events()
            } else if let Some(at) = args.at {
                sizes.events_at_time(at)
            } else {
                sizes.events_at_time(u64::MAX)
            };
            events
                .and_then(|e| sizes.sizes_at_events(e))
                .map(|(_, s)| s)
                .context("the trace's sizes source has no events")
        }
        _ => crate::bail!("{}: not a heap input", dataset.name),
    }
}

/// The small multiples of `--view timeline`: `--points` evenly spread slider points, or the
/// exact states at `--times` (traces: the events up to each time; massif: the detailed
/// snapshot at or before each time, as massif has no tree in between).
pub fn timeline_cells(
    timeline: &HeapTimeline,
    sizes: &mut dyn SizesSource,
    args: &HeapTreeSettings,
) -> Result<Vec<(TimePoint, Sizes)>> {
    let count = timeline.points.len();
    crate::ensure!(count > 0, "the input has no time points");
    if args.times.is_empty() {
        let n = args.points.clamp(1, 16).min(count);
        return (0..n)
            .map(|i| {
                if n == 1 {
                    count - 1
                } else {
                    i * (count - 1) / (n - 1)
                }
            })
            .map(|p| {
                let s = sizes.sizes_at_point(p).context("time point out of range")?;
                Ok((timeline.points[p].clone(), s))
            })
            .collect();
    }
    crate::ensure!(args.times.len() <= 16, "--times: at most 16 time points");
    args.times
        .iter()
        .map(|&t| {
            if let Some(events) = sizes.events_at_time(t) {
                return sizes
                    .sizes_at_events(events)
                    .with_context(|| format!("--times {t}: no state at that time"));
            }
            let p = timeline
                .points
                .iter()
                .rposition(|p| p.time <= t)
                .unwrap_or(0);
            let s = sizes.sizes_at_point(p).context("time point out of range")?;
            Ok((timeline.points[p].clone(), s))
        })
        .collect()
}

/// The two caption lines of [`curve_picture`]: why there is no tree to draw.
fn curve_captions(curve: &memscape_heap::HeapCurveReport) -> [String; 2] {
    match &curve.peak {
        Some(peak) if curve.no_heap_bytes => [
            format!(
                "this profile has no heap bytes: it measured stacks, which peak at {} (valgrind --stacks=yes)",
                draw::human_bytes(peak.stacks_bytes)
            ),
            format!(
                "{} snapshots, all with mem_heap_B=0: stack size over time",
                curve.snapshots.len()
            ),
        ],
        _ => [
            "no snapshot has a heap tree: heap size over time only".to_owned(),
            format!(
                "{} snapshots, all heap_tree=empty (massif's --detailed-freq was above their count)",
                curve.snapshots.len()
            ),
        ],
    }
}

/// A massif file without a heap tree to draw: its heap-size curve (useful heap, and heap plus
/// allocator overhead) and, when massif recorded them, the stacks' curve, the peak marked, and
/// a line saying why there is no tree.
fn curve_picture(curve: &memscape_heap::HeapCurveReport, size: egui::Vec2) -> Picture {
    use memscape_render::shapes::{Geometry, Shape};
    let mut pic = Picture::new(size, BACKGROUND);
    let (w, h) = (size.x, size.y);
    let plot = egui::Rect::from_min_max(egui::pos2(70.0, 70.0), egui::pos2(w - 20.0, h - 40.0));
    let text = egui::Color32::from_gray(220);
    let [headline, detail] = curve_captions(curve);
    pic.labels.push(Label::new(
        egui::pos2(w / 2.0, 20.0),
        headline,
        15.0,
        text,
        egui::Align2::CENTER_CENTER,
    ));
    pic.labels.push(Label::new(
        egui::pos2(w / 2.0, 42.0),
        detail,
        12.0,
        egui::Color32::from_gray(170),
        egui::Align2::CENTER_CENTER,
    ));
    // Only files that recorded stacks get their curve (the others' pictures stay as they were).
    let has_stacks = curve.snapshots.iter().any(|p| p.stacks_bytes > 0);
    let t_max = curve
        .snapshots
        .iter()
        .map(|p| p.time)
        .max()
        .unwrap_or(0)
        .max(1) as f32;
    let b_max = curve
        .snapshots
        .iter()
        .map(|p| {
            p.heap_bytes
                .saturating_add(p.heap_extra_bytes)
                .max(p.stacks_bytes)
        })
        .max()
        .unwrap_or(0)
        .max(1) as f32;
    let at = |t: u64, b: u64| {
        [
            plot.left() + plot.width() * t as f32 / t_max,
            plot.bottom() - plot.height() * b as f32 / b_max,
        ]
    };
    let axis = [90, 94, 104, 255];
    for (a, b) in [
        (plot.left_bottom(), plot.right_bottom()),
        (plot.left_bottom(), plot.left_top()),
    ] {
        pic.shapes.push(Shape::new(
            Geometry::Segment {
                a: [a.x, a.y],
                b: [b.x, b.y],
                width_px: 1.0,
            },
            axis,
        ));
    }
    // One line per snapshot field, in the plot's coordinates.
    let line = |bytes: fn(&memscape_heap::CurvePoint) -> u64| -> Vec<[f32; 2]> {
        curve
            .snapshots
            .iter()
            .map(|p| at(p.time, bytes(p)))
            .collect()
    };
    let mut series = vec![
        (
            "heap + allocator overhead",
            [120, 170, 255, 255],
            line(|p| p.heap_bytes.saturating_add(p.heap_extra_bytes)),
        ),
        ("useful heap", [255, 170, 60, 255], line(|p| p.heap_bytes)),
    ];
    if has_stacks {
        series.push(("stacks", [110, 210, 130, 255], line(|p| p.stacks_bytes)));
    }
    for (_, color, points) in &series {
        for pair in points.windows(2) {
            pic.shapes.push(Shape::new(
                Geometry::Segment {
                    a: pair[0],
                    b: pair[1],
                    width_px: 2.0,
                },
                *color,
            ));
        }
        for p in points {
            pic.shapes.push(Shape::new(
                Geometry::PixelDisc {
                    center: *p,
                    radius_px: 3.0,
                },
                *color,
            ));
        }
    }
    let small = egui::Color32::from_gray(170);
    pic.labels.push(Label::new(
        egui::pos2(plot.left() - 6.0, plot.top()),
        draw::human_bytes(b_max as u64),
        11.0,
        small,
        egui::Align2::RIGHT_CENTER,
    ));
    pic.labels.push(Label::new(
        egui::pos2(plot.left() - 6.0, plot.bottom()),
        "0 B",
        11.0,
        small,
        egui::Align2::RIGHT_CENTER,
    ));
    pic.labels.push(Label::new(
        egui::pos2(plot.right(), plot.bottom() + 14.0),
        format!("{} {}", t_max as u64, curve.time_unit),
        11.0,
        small,
        egui::Align2::RIGHT_CENTER,
    ));
    for (i, (name, color, _)) in series.iter().enumerate() {
        let y = plot.top() + 8.0 + 16.0 * i as f32;
        pic.shapes.push(Shape::new(
            Geometry::Rect {
                min: [plot.left() + 8.0, y - 4.0],
                max: [plot.left() + 18.0, y + 4.0],
                corner_px: 2.0,
            },
            *color,
        ));
        pic.labels.push(Label::new(
            egui::pos2(plot.left() + 24.0, y),
            *name,
            11.0,
            small,
            egui::Align2::LEFT_CENTER,
        ));
    }
    if let Some(p) = &curve.peak {
        let peak_bytes = if curve.no_heap_bytes {
            p.stacks_bytes
        } else {
            p.heap_bytes.saturating_add(p.heap_extra_bytes)
        };
        let [x, y] = at(p.time, peak_bytes);
        // Beside the point, on the side with room.
        let align = if x > plot.center().x {
            egui::Align2::RIGHT_CENTER
        } else {
            egui::Align2::LEFT_CENTER
        };
        let dx = if x > plot.center().x { -8.0 } else { 8.0 };
        pic.labels.push(Label::new(
            egui::pos2(x + dx, y + 4.0),
            format!(
                "{}peak {} (snapshot {})",
                if curve.no_heap_bytes { "stacks " } else { "" },
                draw::human_bytes(peak_bytes),
                p.snapshot
            ),
            11.0,
            text,
            align,
        ));
    }
    pic
}

#[cfg(test)]
mod tests {
    use super::*;
    use memscape_heap::{GroupKey, Metric};

    /// massif.out.stack (`valgrind --stacks=yes`, no malloc): the picture says the profile has
    /// no heap bytes and draws the stacks, not an empty "(heap allocation functions) 0 B" tree.
    #[test]
    fn a_profile_of_stacks_only_draws_the_stacks_and_says_so() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/massif/massif.out.stack");
        let file = memscape_heap::read_massif(&path).unwrap();
        let most = file.snapshots.iter().map(|s| s.mem_stacks_b).max().unwrap();
        let curve = file.curve_instead_of_tree().expect("a curve, not a tree");
        let picture = curve_picture(&curve, egui::vec2(800.0, 500.0));
        let texts: Vec<&str> = picture.labels.iter().map(|l| l.text.as_str()).collect();
        let headline = format!(
            "this profile has no heap bytes: it measured stacks, which peak at {} (valgrind --stacks=yes)",
            draw::human_bytes(most)
        );
        assert!(texts.contains(&headline.as_str()), "{texts:?}");
        assert!(texts.contains(&"stacks"), "the stacks' legend: {texts:?}");
        assert!(
            texts.iter().any(|t| t.starts_with("stacks peak ")),
            "{texts:?}"
        );
        // A tree-less file without stacks keeps its picture: two series, its own caption.
        let tree_less = memscape_heap::read_massif(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/data/massif/massif.out.32406"),
        )
        .unwrap();
        let picture = curve_picture(
            &tree_less.curve_instead_of_tree().unwrap(),
            egui::vec2(800.0, 500.0),
        );
        let texts: Vec<&str> = picture.labels.iter().map(|l| l.text.as_str()).collect();
        assert!(
            texts.contains(&"no snapshot has a heap tree: heap size over time only"),
            "{texts:?}"
        );
        assert!(!texts.contains(&"stacks"), "{texts:?}");
    }

    #[test]
    fn timeline_times_between_points_show_the_exact_state() {
        let dataset = crate::test_data::demo();
        let DatasetContent::AllocTrace(t) = &dataset.content else {
            panic!("the demo is a trace");
        };
        let settings = Grouping {
            keys: vec![GroupKey::Site],
            metric: Metric::Bytes,
            points: 120,
            suppressions: true,
            measure: None,
        };
        let (timeline, mut sizes) = model::timeline(&dataset, &settings).unwrap();
        // The time of an event halfway between two slider points (the first pair in the
        // second half of the trace with such an event): no point sits there.
        let mut fresh = memscape_heap::TraceHeap::new(&t.trace, &[GroupKey::Site]);
        let (a, b, mid) = timeline.points[timeline.points.len() / 2..]
            .windows(2)
            .find_map(|w| {
                let (a, b) = (&w[0], &w[1]);
                let mid = fresh.time_of((a.index + b.index) / 2);
                let events = fresh.events_at_time(mid);
                (mid > a.time && mid < b.time && events > a.index && events < b.index)
                    .then_some((a, b, mid))
            })
            .expect("two points with an event between them");
        let cells = timeline_cells(
            &timeline,
            sizes.as_mut(),
            &HeapTreeSettings {
                times: vec![a.time, mid],
                ..HeapTreeSettings::default()
            },
        )
        .unwrap();
        assert_eq!(cells.len(), 2);
        let events = fresh.events_at_time(mid);
        assert!(
            events > a.index && events < b.index,
            "mid lies between points"
        );
        assert_eq!(cells[1].0.index, events);
        assert_eq!(cells[1].1, fresh.sizes_at(events));
        assert_eq!(cells[1].0.total_bytes, cells[1].1.bytes(0));
        // A time on a point gives that point.
        assert_eq!(cells[0].0.index, a.index);
    }
}
