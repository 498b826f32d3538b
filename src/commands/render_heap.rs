//! `memscape render --view sunburst|icicle|timeline`.

use anyhow::Context as _;
use memscape_heap::{GroupKey, HeapTimeline, Metric, SizesSource, icicle, sunburst};
use memscape_render::{GpuContext, RgbaImage};

use crate::cli::{HeapRenderArgs, ViewKindArg};
use crate::data::{Dataset, DatasetContent};
use crate::views::heap_tree::draw::{self, BACKGROUND, Picture};
use crate::views::heap_tree::model::{self, HeapSettings};
use crate::views::labels::Label;

pub fn render(
    ctx: &GpuContext,
    dataset: &Dataset,
    view: ViewKindArg,
    args: &HeapRenderArgs,
    width: u32,
    height: u32,
) -> anyhow::Result<RgbaImage> {
    let settings = HeapSettings {
        keys: GroupKey::parse_list(&args.group).map_err(|e| anyhow::anyhow!("--group: {e}"))?,
        metric: Metric::parse(&args.metric).with_context(|| {
            format!("--metric: expected bytes or objects, got {:?}", args.metric)
        })?,
        points: 120,
    };
    let (timeline, mut sizes) = model::timeline(dataset, &settings)?;
    let root = match &args.root {
        None => 0,
        Some(name) => find_group(&timeline, name).with_context(|| {
            format!(
                "--root: no group of {} has a name containing {name:?}",
                dataset.name
            )
        })?,
    };
    let rect = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(width as f32, height as f32));
    let picture = match view {
        ViewKindArg::Timeline => {
            let picks: Vec<usize> = if args.times.is_empty() {
                let n = args.points.clamp(1, 16).min(timeline.points.len());
                (0..n)
                    .map(|i| {
                        if n == 1 {
                            timeline.points.len() - 1
                        } else {
                            i * (timeline.points.len() - 1) / (n - 1)
                        }
                    })
                    .collect()
            } else {
                anyhow::ensure!(args.times.len() <= 16, "--times: at most 16 time points");
                // Each time goes to the nearest time point of the timeline (120 for traces,
                // the detailed snapshots for massif).
                args.times
                    .iter()
                    .map(|&t| {
                        timeline
                            .points
                            .iter()
                            .enumerate()
                            .min_by_key(|(_, p)| p.time.abs_diff(t))
                            .map_or(0, |(i, _)| i)
                    })
                    .collect()
            };
            let n = picks.len().max(1);
            let mut pic = Picture::default();
            let cell_w = width as f32 / n as f32;
            for (i, &p) in picks.iter().enumerate() {
                let s = sizes.sizes_at_point(p).context("time point out of range")?;
                let tree = model::tree(&timeline, &s, root, args.depth);
                let layout = sunburst(&tree, timeline.metric, args.depth);
                let cell = egui::Rect::from_min_size(
                    egui::pos2(i as f32 * cell_w, 0.0),
                    egui::vec2(cell_w, height as f32 - 36.0),
                );
                pic.extend(draw::sunburst(
                    &layout,
                    None,
                    1.0,
                    cell.shrink(6.0),
                    &timeline.order,
                    None,
                ));
                let point = &timeline.points[p];
                pic.labels.push(Label::new(
                    egui::pos2(cell.center().x, height as f32 - 18.0),
                    format!(
                        "{} · {}",
                        model::time_text(&timeline, point.time),
                        draw::human_bytes(point.total_bytes)
                    ),
                    13.0,
                    egui::Color32::from_gray(220),
                    egui::Align2::CENTER_CENTER,
                ));
            }
            pic
        }
        _ => {
            let s = sizes_for_selection(dataset, &timeline, sizes.as_mut(), args)?;
            let tree = model::tree(&timeline, &s, root, args.depth);
            if view == ViewKindArg::Icicle {
                let layout = icicle(&tree, timeline.metric, args.depth);
                draw::icicle(&layout, None, 1.0, rect.shrink(4.0), &timeline.order, None)
            } else {
                let layout = sunburst(&tree, timeline.metric, args.depth);
                draw::sunburst(&layout, None, 1.0, rect.shrink(4.0), &timeline.order, None)
            }
        }
    };
    crate::headless::render_picture(
        ctx,
        &picture.shapes,
        &picture.labels,
        width,
        height,
        BACKGROUND,
    )
}

/// The first trie node (breadth first) whose name contains `needle`.
fn find_group(timeline: &HeapTimeline, needle: &str) -> Option<u32> {
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
    args: &HeapRenderArgs,
) -> anyhow::Result<memscape_heap::Sizes> {
    match &dataset.content {
        DatasetContent::Massif(_) => {
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
        DatasetContent::AllocTrace(t) => {
            anyhow::ensure!(
                args.snapshot.is_none(),
                "--snapshot applies to massif files; use --at TIME or --peak for allocation traces"
            );
            // A fresh index for an arbitrary event count.
            let mut heap = memscape_heap::TraceHeap::new(&t.trace, &timeline_keys(args)?);
            let applied = if args.peak {
                heap.peak_point()
            } else if let Some(at) = args.at {
                if t.trace.meta.has_wall_time {
                    heap.events_at_time(at)
                } else {
                    at.min(heap.events())
                }
            } else {
                heap.events()
            };
            Ok(heap.sizes_at(applied))
        }
        _ => anyhow::bail!("{}: not a heap input", dataset.name),
    }
}

fn timeline_keys(args: &HeapRenderArgs) -> anyhow::Result<Vec<GroupKey>> {
    GroupKey::parse_list(&args.group).map_err(|e| anyhow::anyhow!("--group: {e}"))
}
