//! The picture around the GPU maps, as shapes and labels in points: axes, region separators,
//! bin labels, free bars, the legend, frames, markers and the context view's frame.

use memscape_render::shapes::{Geometry, Shape};

use super::bins::{BinBy, BinnedScene};
use super::camera::{Camera, nice_step};
use super::colors::ColorBy;
use super::layout::PaneLayout;
use super::scene::{AllocScene, TimeAxis};
use super::settings::Occupancy;
use crate::label::Label;
use crate::picture::Picture;
use crate::ramp::ColorRamp;

fn rect_shape(r: egui::Rect, fill: [u8; 4]) -> Shape {
    Shape::new(
        Geometry::Rect {
            min: [r.left(), r.top()],
            max: [r.right(), r.bottom()],
            corner_px: 0.0,
        },
        fill,
    )
}

fn frame_shape(r: egui::Rect, color: [u8; 4], width: f32) -> Shape {
    rect_shape(r, [0, 0, 0, 0]).with_border(color, width)
}

fn line(a: egui::Pos2, b: egui::Pos2, color: [u8; 4], width: f32) -> Shape {
    Shape::new(
        Geometry::Segment {
            a: [a.x, a.y],
            b: [b.x, b.y],
            width_px: width,
        },
        color,
    )
}

/// Pushes `label` on a dark translucent chip, readable on any block colour (a drop shadow alone
/// left light text unreadable on the light and striped blocks under it).
fn on_chip(p: &mut Picture, label: Label) {
    let chip = label.approx_rect().expand2(egui::vec2(2.0, 0.0));
    p.shapes.push(rect_shape(chip, CHIP));
    p.labels.push(label);
}

/// The chip under labels drawn over the map.
const CHIP: [u8; 4] = [16, 18, 24, 200];

const TEXT: egui::Color32 = egui::Color32::from_gray(205);

fn time_label(t: f64, axis: TimeAxis, step: f64) -> String {
    match axis {
        // One prefix rule for every tick: "900k" beside "1.0M", not "900000" beside "1.0M" (the
        // colour ramps' form: the prefix on the number).
        TimeAxis::Events => {
            if t.abs() >= 1e6 {
                format!("{:.*}M", decimals(step / 1e6), t / 1e6)
            } else if t.abs() >= 1e3 {
                format!("{:.*}k", decimals(step / 1e3), t / 1e3)
            } else {
                format!("{t:.0}")
            }
        }
        TimeAxis::Wall => {
            if step >= 1e9 {
                format!("{:.*} s", decimals(step / 1e9), t / 1e9)
            } else if step >= 1e6 {
                format!("{:.*} ms", decimals(step / 1e6), t / 1e6)
            } else if step >= 1e3 {
                format!("{:.*} µs", decimals(step / 1e3), t / 1e3)
            } else {
                format!("{t:.0} ns")
            }
        }
    }
}

/// The first tick of the event axis says what its numbers count ("0 events"); wall-time labels
/// carry their unit on every tick.
fn with_unit(text: String, axis: TimeAxis, first: bool) -> String {
    match axis {
        TimeAxis::Events if first => format!("{text} events"),
        _ => text,
    }
}

/// Decimals needed to tell ticks `step` apart.
fn decimals(step: f64) -> usize {
    if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil().clamp(0.0, 6.0) as usize
    }
}

/// The time between two ticks over `width` points: about one per 110 points, and on the event
/// axis at least one event, since a trace of a few events otherwise ticks at fractions of one
/// that its labels, in whole events, write "0 0 0 1 1 1".
fn tick_step(t_span: f64, width: f32, axis: TimeAxis) -> f64 {
    let step = nice_step(t_span / (f64::from(width) / 110.0).max(1.0));
    match axis {
        TimeAxis::Events => step.max(1.0),
        TimeAxis::Wall => step,
    }
}

/// Where a tick's label goes: right of its tick, or left of it where it would pass `right`
/// (the last tick's "1.0M" cut by the free bar); its anchors at the top and at the bottom.
fn tick_label_x(x: f32, text: &str, right: f32) -> (f32, [egui::Align2; 2]) {
    if x + 2.0 + crate::label::approx_width(text, 10.5) > right {
        (
            x - 2.0,
            [egui::Align2::RIGHT_TOP, egui::Align2::RIGHT_BOTTOM],
        )
    } else {
        (x + 2.0, [egui::Align2::LEFT_TOP, egui::Align2::LEFT_BOTTOM])
    }
}

/// Time ticks along the bottom of `map` (labels inside the map, above the ticks).
pub fn time_ticks(p: &mut Picture, map: egui::Rect, cam: &Camera, axis: TimeAxis) {
    let step = tick_step(cam.t_span, map.width(), axis);
    let mut t = (cam.t0 / step).ceil() * step;
    let mut first = true;
    let white = [205, 205, 205, 255];
    while t < cam.t0 + cam.t_span {
        let x = map.left() + ((t - cam.t0) / cam.t_span) as f32 * map.width();
        p.shapes.push(line(
            egui::pos2(x, map.bottom() - 5.0),
            egui::pos2(x, map.bottom()),
            white,
            1.0,
        ));
        let text = with_unit(time_label(t, axis, step), axis, std::mem::take(&mut first));
        let (x_label, align) = tick_label_x(x, &text, map.right());
        on_chip(
            p,
            Label::new(
                egui::pos2(x_label, map.bottom() - 5.0),
                text,
                10.5,
                TEXT,
                align[1],
            ),
        );
        t += step;
    }
}

/// Time ticks in `strip` (under a bar): marks at its top, labels in it.
pub fn time_axis(p: &mut Picture, strip: egui::Rect, cam: &Camera, axis: TimeAxis) {
    let step = tick_step(cam.t_span, strip.width(), axis);
    let mut t = (cam.t0 / step).ceil() * step;
    let mut first = true;
    while t < cam.t0 + cam.t_span {
        let x = strip.left() + ((t - cam.t0) / cam.t_span) as f32 * strip.width();
        p.shapes.push(line(
            egui::pos2(x, strip.top()),
            egui::pos2(x, strip.top() + 4.0),
            [205, 205, 205, 255],
            1.0,
        ));
        let text = with_unit(time_label(t, axis, step), axis, std::mem::take(&mut first));
        let (x_label, align) = tick_label_x(x, &text, strip.right());
        p.labels.push(Label::new(
            egui::pos2(x_label, strip.top() + 1.0),
            text,
            10.5,
            TEXT,
            align[0],
        ));
        t += step;
    }
}

/// A bin's region separators (thin lines at the collapsed gaps), labelled with the region's
/// start address where there is room.
pub fn region_separators(
    p: &mut Picture,
    map: egui::Rect,
    cam: &Camera,
    binned: &BinnedScene,
    bin: usize,
) {
    let Some(info) = binned.bins.get(bin) else {
        return;
    };
    let extent = info.collapsed_extent.max(1) as f64;
    let mut last_label = f32::INFINITY;
    let mut last_line = f32::INFINITY;
    // Labels need room: only in large cells (the unbinned map, a few bins).
    let labelled = map.height() > 240.0 && map.width() > 240.0;
    // Only the separators in view (the regions are sorted along the axis).
    let first = info
        .regions
        .partition_point(|r| (r.collapsed_start as f64) < cam.y0 * extent)
        .saturating_sub(1);
    for (k, r) in info.regions.iter().enumerate().skip(first) {
        let v = (r.collapsed_start as f64 / extent - cam.y0) / cam.y_span;
        let y = map.bottom() - v as f32 * map.height();
        if y < map.top() {
            break;
        }
        if y > map.bottom() {
            continue;
        }
        // Many ranges (a size class's own axis): at most one line every 4 points.
        if k > 0 && last_line - y >= 4.0 {
            last_line = y;
            p.shapes.push(line(
                egui::pos2(map.left(), y),
                egui::pos2(map.right(), y),
                [255, 255, 255, 70],
                1.0,
            ));
        }
        // The lowest region's label sits above the time ticks' labels, not on them.
        let label_y = (y - 2.0).min(map.bottom() - 20.0);
        // 10.5-point labels with their shadow need about 13 points: keep a gap between them.
        if labelled && last_label - label_y > 18.0 {
            on_chip(
                p,
                Label::new(
                    egui::pos2(map.left() + 4.0, label_y),
                    format!("{:#x}", r.start),
                    10.5,
                    TEXT,
                    egui::Align2::LEFT_BOTTOM,
                ),
            );
            last_label = label_y;
        }
    }
}

/// A time span on `axis` in short form: "2.16–2.32 s", "events 170.2k–177.7k".
pub fn span_text(t0: f64, t1: f64, axis: TimeAxis) -> String {
    match axis {
        TimeAxis::Events => {
            let k = |e: f64| {
                if t1 >= 10_000.0 {
                    format!("{:.1}k", e / 1e3)
                } else {
                    format!("{e:.0}")
                }
            };
            format!("events {}–{}", k(t0.max(0.0)), k(t1.max(0.0)))
        }
        TimeAxis::Wall => {
            let (scale, unit) = if t1 >= 1e9 {
                (1e9, "s")
            } else if t1 >= 1e6 {
                (1e6, "ms")
            } else {
                (1e3, "µs")
            };
            // Enough decimals that the two ends differ.
            let digits = (-((t1 - t0).max(1.0) / scale).log10().floor() + 1.0).clamp(0.0, 6.0);
            let d = digits as usize;
            format!(
                "{:.d$}–{:.d$} {unit}",
                t0.max(0.0) / scale,
                t1.max(0.0) / scale
            )
        }
    }
}

/// Bytes in short form: 1536 → "1.5 KiB".
pub fn bytes(v: u64) -> String {
    crate::ramp::bytes_fixed(v, 1)
}

/// A bin's name, blocks and peak (and the time span its cell shows when it is its own, a
/// process's life: `own`): in its title strip above the map when it has one, else in the map's
/// top-left corner. Shortened by whole parts (blocks, span, peak) before any is cut.
pub fn bin_label(
    p: &mut Picture,
    map: egui::Rect,
    title: Option<egui::Rect>,
    binned: &BinnedScene,
    bin: usize,
    own: Option<(&Camera, TimeAxis)>,
) {
    let Some(info) = binned.bins.get(bin) else {
        return;
    };
    let blocks = info.range.len();
    let peak = bytes(info.peak_bytes);
    if let Some(column) = title.filter(|t| t.right() <= map.left()) {
        names_beside(
            p,
            column,
            map,
            &info.label,
            &[format!("peak {peak}"), format!("{blocks} blocks")],
        );
        return;
    }
    let span = own.map_or_else(String::new, |(w, axis)| {
        format!(" · {}", span_text(w.t0, w.t0 + w.t_span, axis))
    });
    let forms = [
        format!("{} · {blocks} blocks · peak {peak}{span}", info.label),
        format!("{} · peak {peak}{span}", info.label),
        format!("{} · peak {peak}", info.label),
        format!("{} · {peak}", info.label),
        info.label.clone(),
    ];
    let room = title.unwrap_or(map).width() - 8.0;
    let text = forms
        .iter()
        .find(|f| crate::label::approx_width(f, 11.0) <= room)
        .cloned()
        .or_else(|| crate::label::fit(&info.label, 11.0, room));
    let Some(text) = text else {
        return;
    };
    let label = |pos| {
        Label::new(
            pos,
            text.clone(),
            11.0,
            egui::Color32::from_gray(235),
            egui::Align2::LEFT_TOP,
        )
    };
    match title {
        Some(strip) => p
            .labels
            .push(label(egui::pos2(strip.left() + 2.0, strip.top() + 1.0))),
        None => on_chip(p, label(egui::pos2(map.left() + 4.0, map.top() + 3.0))),
    }
}

/// Size of the bins' names in the time layout's names column (as beside the stacked bar).
const NAME_BESIDE_SIZE: f32 = 9.5;

/// A bin's name in the names' column left of its map (the time layout), right-aligned against
/// the map and centred on it, with as many of `more` lines under it as the cell's height holds.
fn names_beside(p: &mut Picture, column: egui::Rect, map: egui::Rect, name: &str, more: &[String]) {
    let line = NAME_BESIDE_SIZE + 2.0;
    let room = column.width() - 1.0;
    let Some(name) = crate::label::fit(name, NAME_BESIDE_SIZE, room) else {
        return;
    };
    let mut lines = vec![(name, egui::Color32::from_gray(225))];
    for extra in more {
        if (lines.len() + 1) as f32 * line > column.height()
            || crate::label::approx_width(extra, NAME_BESIDE_SIZE) > room
        {
            break;
        }
        lines.push((extra.clone(), egui::Color32::from_gray(160)));
    }
    let height = lines.len() as f32 * line;
    let centre = map.center().y.clamp(
        column.top() + 0.5 * height,
        (column.bottom() - 0.5 * height).max(column.top() + 0.5 * height),
    );
    let top = centre - 0.5 * height;
    for (k, (text, colour)) in lines.into_iter().enumerate() {
        p.labels.push(Label::new(
            egui::pos2(column.right() - 1.0, top + (k as f32 + 0.5) * line),
            text,
            NAME_BESIDE_SIZE,
            colour,
            egui::Align2::RIGHT_CENTER,
        ));
    }
}

/// The red bar of a bin's free memory (capacity − bytes in use) at one time: its height the free
/// fraction of the bin's capacity, from the bottom, over a dark track.
pub fn free_bar(p: &mut Picture, rect: egui::Rect, free_fraction: f32) {
    p.shapes.push(rect_shape(rect, [40, 20, 22, 255]));
    let h = rect.height() * free_fraction.clamp(0.0, 1.0);
    if h > 0.0 {
        p.shapes.push(rect_shape(
            egui::Rect::from_min_max(egui::pos2(rect.left(), rect.bottom() - h), rect.max),
            [225, 45, 40, 255],
        ));
    }
}

/// The context view's red frame: the camera's window over the whole plane drawn in `rect`
/// (clamped to it, at least 3 points on each side so that a deep zoom stays visible).
pub fn context_frame_rect(rect: egui::Rect, cam: &Camera, t_extent: u64) -> egui::Rect {
    let te = t_extent.max(1) as f64;
    let x0 = rect.left() + (cam.t0 / te) as f32 * rect.width();
    let x1 = rect.left() + ((cam.t0 + cam.t_span) / te) as f32 * rect.width();
    let y1 = rect.bottom() - cam.y0 as f32 * rect.height();
    let y0 = rect.bottom() - (cam.y0 + cam.y_span) as f32 * rect.height();
    let clamp_x = |x: f32| x.clamp(rect.left(), rect.right());
    let clamp_y = |y: f32| y.clamp(rect.top(), rect.bottom());
    let (mut x0, mut x1, mut y0, mut y1) = (clamp_x(x0), clamp_x(x1), clamp_y(y0), clamp_y(y1));
    let grow = |lo: &mut f32, hi: &mut f32, min: f32, max: f32| {
        if *hi - *lo < 3.0 {
            let c = 0.5 * (*lo + *hi);
            *lo = (c - 1.5).max(min);
            *hi = (*lo + 3.0).min(max);
        }
    };
    grow(&mut x0, &mut x1, rect.left(), rect.right());
    grow(&mut y0, &mut y1, rect.top(), rect.bottom());
    egui::Rect::from_min_max(egui::pos2(x0, y0), egui::pos2(x1, y1))
}

/// The frame over the context view and a border around it.
pub fn context_frame(p: &mut Picture, rect: egui::Rect, cam: &Camera, t_extent: u64, label: &str) {
    p.shapes
        .push(frame_shape(rect.expand(1.0), [90, 92, 100, 255], 1.0));
    let frame = context_frame_rect(rect, cam, t_extent);
    p.shapes.push(frame_shape(frame, [235, 40, 35, 255], 2.0));
    if let Some(text) = crate::label::fit(label, 10.0, rect.width() - 4.0) {
        on_chip(
            p,
            Label::new(
                egui::pos2(rect.left() + 2.0, rect.top() + 2.0),
                text,
                10.0,
                egui::Color32::from_gray(200),
                egui::Align2::LEFT_TOP,
            ),
        );
    }
}

/// A block's rectangle in a cell for the camera, grown to at least 5 points so that a sub-pixel
/// block can be seen, as a bright double outline (the pinned block).
pub fn block_outline(
    p: &mut Picture,
    map: egui::Rect,
    cam: &Camera,
    extent: u64,
    time: (u64, u64),
    y: (u64, u64),
) {
    let e = extent.max(1) as f64;
    let x = |t: u64| map.left() + ((t as f64 - cam.t0) / cam.t_span) as f32 * map.width();
    let yy = |a: u64| map.bottom() - ((a as f64 / e - cam.y0) / cam.y_span) as f32 * map.height();
    let (mut x0, mut x1) = (x(time.0), x(time.1));
    let (mut y0, mut y1) = (yy(y.1), yy(y.0));
    for (lo, hi) in [(&mut x0, &mut x1), (&mut y0, &mut y1)] {
        if *hi - *lo < 5.0 {
            let c = 0.5 * (*lo + *hi);
            *lo = c - 2.5;
            *hi = c + 2.5;
        }
    }
    let r = egui::Rect::from_min_max(egui::pos2(x0, y0), egui::pos2(x1, y1));
    if !r.intersects(map) {
        return;
    }
    let r = r.intersect(map.expand(3.0));
    p.shapes
        .push(frame_shape(r.expand(2.0), [0, 0, 0, 200], 1.5));
    p.shapes
        .push(frame_shape(r.expand(0.5), [255, 240, 90, 255], 1.5));
}

/// A vertical line through every cell at time `t` (the linked time cursor).
pub fn time_line(p: &mut Picture, maps: &[egui::Rect], cam: &Camera, t: f64, color: [u8; 4]) {
    for map in maps {
        let x = map.left() + ((t - cam.t0) / cam.t_span) as f32 * map.width();
        if (map.left()..=map.right()).contains(&x) {
            p.shapes.push(line(
                egui::pos2(x, map.top()),
                egui::pos2(x, map.bottom()),
                color,
                1.5,
            ));
        }
    }
}

/// Legend entries for `color_by`: swatches (threads, the top call sites, bins) or none for the
/// value ramp.
pub fn legend_entries(
    scene: &AllocScene,
    trace: &memscape_trace::Trace,
    binned: &BinnedScene,
    color_by: ColorBy,
    classes: &super::colors::Classes,
) -> Vec<([u8; 4], String)> {
    use super::colors::categorical;
    match color_by {
        ColorBy::Thread => (0..trace.threads.len().min(12))
            .map(|i| {
                (
                    classes.color(i as u32),
                    trace.thread_name(i as u32).to_owned(),
                )
            })
            .collect(),
        ColorBy::Process => {
            // The processes that hold the most first: binned by process, in the grid's own
            // order (each bin's series is its process); else by their heap peaks. A shell's
            // children come before the compiler by pid, not by weight.
            let order: Vec<usize> = if binned.by == BinBy::Process {
                binned
                    .bins
                    .iter()
                    .filter_map(|b| b.series.first().copied())
                    .collect()
            } else {
                let mut order: Vec<usize> = (0..trace.processes.len()).collect();
                order.sort_by_key(|&i| (std::cmp::Reverse(trace.processes[i].peak_live_bytes), i));
                order
            };
            order
                .into_iter()
                .take(12)
                .map(|i| {
                    (
                        classes.color(i as u32),
                        crate::processes::label(trace, i as u32),
                    )
                })
                .collect()
        }
        ColorBy::FreeSite => {
            let mut entries: Vec<([u8; 4], String)> = scene
                .top_free_sites
                .iter()
                .map(|(key, label)| (super::colors::site_color(*key), format!("freed in {label}")))
                .collect();
            entries.push((super::colors::UNKNOWN_COLOR, "not freed / no stack".into()));
            entries
        }
        ColorBy::CrossThread => vec![
            (
                super::colors::CROSS_THREAD_COLOR,
                "freed by another thread".into(),
            ),
            (
                super::colors::SAME_THREAD_COLOR,
                "freed by its thread".into(),
            ),
            (super::colors::UNKNOWN_COLOR, "not freed / not known".into()),
        ],
        ColorBy::Site => scene
            .top_sites
            .iter()
            .map(|(site, label)| (super::colors::site_color(*site), label.clone()))
            .collect(),
        ColorBy::Bin => {
            if binned.by == BinBy::None {
                scene
                    .regions
                    .iter()
                    .enumerate()
                    .take(12)
                    .map(|(k, r)| (categorical(k as u32), format!("region {:#x}", r.start)))
                    .collect()
            } else {
                binned
                    .bins
                    .iter()
                    .enumerate()
                    .take(12)
                    .map(|(k, b)| (classes.color(k as u32), b.label.clone()))
                    .collect()
            }
        }
        _ => Vec::new(),
    }
}

/// The colour legend in its band above the maps: the title, then swatches in columns of
/// three rows, or the blue → red ramp with ticks in the colouring's unit.
pub fn legend(
    p: &mut Picture,
    band: egui::Rect,
    title: &str,
    entries: &[([u8; 4], String)],
    ramp: Option<&ColorRamp>,
) {
    const ROW: f32 = 14.0;
    // Three rows in a full band, one in a compact one.
    let rows = (((band.height() - 4.0) / ROW).floor() as usize).clamp(1, 3);
    let text = egui::Color32::from_gray(210);
    let title_w = crate::label::approx_width(title, 11.0).min(0.4 * band.width()) + 16.0;
    if let Some(t) = crate::label::fit(title, 11.0, title_w - 12.0) {
        p.labels.push(Label::new(
            band.min + egui::vec2(4.0, 4.0),
            t,
            11.0,
            egui::Color32::from_gray(225),
            egui::Align2::LEFT_TOP,
        ));
    }
    let rest = egui::Rect::from_min_max(band.min + egui::vec2(title_w, 4.0), band.max);
    if entries.is_empty() {
        if let Some(ramp) = ramp {
            let rect = egui::Rect::from_min_size(
                rest.min
                    + egui::vec2(
                        0.0,
                        (band.height() - 4.0 - crate::ramp::HEIGHT).clamp(0.0, 4.0),
                    ),
                egui::vec2(rest.width().min(420.0) - 8.0, crate::ramp::HEIGHT),
            );
            ramp.draw(p, rect, text);
        }
        return;
    }
    let longest = entries
        .iter()
        .map(|(_, l)| crate::label::approx_width(l, 10.5))
        .fold(0.0f32, f32::max);
    // As many columns as the entries need, each as wide as the longest label, or the band's
    // share (at least 110 points; labels keep their tails) when they do not all fit.
    let needed = entries.len().div_ceil(rows).max(1);
    let natural = (longest + 28.0).clamp(50.0, 260.0);
    let column_w = if natural * needed as f32 <= rest.width() {
        natural
    } else {
        (rest.width() / needed as f32).max(110.0).min(natural)
    };
    let columns = ((rest.width() / column_w).floor() as usize).max(1);
    let shown = entries.len().min(columns * rows);
    for (k, (color, label)) in entries.iter().take(shown).enumerate() {
        let (col, row) = (k / rows, k % rows);
        let x = rest.left() + col as f32 * column_w;
        let y = rest.top() + row as f32 * ROW;
        p.shapes.push(Shape::new(
            Geometry::Rect {
                min: [x, y + 2.0],
                max: [x + 10.0, y + 12.0],
                corner_px: 2.0,
            },
            *color,
        ));
        // Module paths are long and their ends say the most: keep the tail.
        let room = column_w - 24.0;
        let keep = (room / (10.5 * 0.55)).floor().max(4.0) as usize;
        let count = label.chars().count();
        let text_k = if count > keep {
            "…".to_owned() + &label.chars().skip(count + 1 - keep).collect::<String>()
        } else {
            label.clone()
        };
        p.labels.push(Label::new(
            egui::pos2(x + 16.0, y),
            text_k,
            10.5,
            text,
            egui::Align2::LEFT_TOP,
        ));
    }
    if shown < entries.len() {
        p.labels.push(Label::new(
            egui::pos2(band.right() - 4.0, band.bottom() - 2.0),
            format!("+{} more", entries.len() - shown),
            10.0,
            egui::Color32::from_gray(160),
            egui::Align2::RIGHT_BOTTOM,
        ));
    }
}

/// A small caption at the right of a bar (its variant).
pub fn bar_caption(p: &mut Picture, bar: egui::Rect, text: &str) {
    if bar.height() >= 10.0 && bar.width() > 200.0 {
        on_chip(
            p,
            Label::new(
                egui::pos2(bar.right() - 4.0, bar.center().y),
                text,
                9.5,
                egui::Color32::from_white_alpha(200),
                egui::Align2::RIGHT_CENTER,
            ),
        );
    }
}

/// What the decorations need.
pub struct DecorateInputs<'a> {
    pub layout: &'a PaneLayout,
    pub binned: &'a BinnedScene,
    pub scene: &'a AllocScene,
    pub trace: &'a memscape_trace::Trace,
    pub cam: &'a Camera,
    /// Each cell's window of `cam` (`BinnedScene::cell_windows`: process cells on their own
    /// process's life).
    pub windows: &'a [Camera],
    pub axis: TimeAxis,
    pub color_by: ColorBy,
    /// The scale of a quantitative colouring (its legend's ticks).
    pub ramp: Option<ColorRamp>,
    pub occupancy: Option<Occupancy>,
    /// Free bars show the state after this many events.
    pub free_at_events: u64,
    pub time_cursor: Option<u64>,
    pub focus_bin: usize,
    pub pinned: Option<usize>,
    pub highlighted: bool,
    /// The bins the stacked occupancy bar shows.
    pub stacked: Option<&'a super::stacked::StackedWindow>,
    /// The palette classes of threads, processes and bins (shared with a compared map).
    pub classes: &'a super::colors::Classes,
}

/// The pane's picture besides the GPU maps and bars (the GUI and `memscape render` share it).
pub fn decorate(p: &mut Picture, d: &DecorateInputs<'_>) {
    let maps: Vec<egui::Rect> = d.layout.cells.iter().map(|c| c.map).collect();
    let binned_view = d.binned.by != BinBy::None;
    let lowest = maps
        .iter()
        .map(|m| m.bottom())
        .fold(f32::NEG_INFINITY, f32::max);
    let window_of = |k: usize| d.windows.get(k).unwrap_or(d.cam);
    for (k, cell) in d.layout.cells.iter().enumerate() {
        region_separators(p, cell.map, d.cam, d.binned, k);
        // Time ticks on the lowest cells, or on the stacked bar when there is one (short
        // cells of a long column have no room for them); a cell on its own time span says it
        // in its title instead.
        if !binned_view || (d.layout.stacked.is_none() && (cell.map.bottom() - lowest).abs() < 1.0)
        {
            time_ticks(p, cell.map, window_of(k), d.axis);
        }
        if binned_view {
            let own = (window_of(k) != d.cam).then(|| window_of(k));
            bin_label(
                p,
                cell.map,
                cell.title,
                d.binned,
                k,
                own.map(|w| (w, d.axis)),
            );
        }
        if let Some(free) = cell.free
            && let Some(info) = d.binned.bins.get(k)
        {
            let used = d.binned.occupancy_at(k, d.free_at_events);
            let cap = info.capacity.max(1);
            free_bar(
                p,
                free,
                (cap.saturating_sub(used) as f64 / cap as f64) as f32,
            );
        }
        if let (Some(bar), Some(v)) = (cell.bar, d.occupancy)
            && k == 0
        {
            let caption = match v.same_as_flat_on(d.axis) {
                Some(_) => format!("occupancy: {} (as flat on event time)", v.key()),
                None => format!("occupancy: {}", v.key()),
            };
            bar_caption(p, bar, &caption);
        }
    }
    if let (Some(bar), Some(window)) = (d.layout.stacked, d.stacked) {
        let names: Vec<String> = d.binned.bins.iter().map(|b| b.label.clone()).collect();
        super::stacked::decorate_stacked(
            p,
            bar,
            d.layout.stacked_labels,
            d.layout.stacked_track,
            window,
            &names,
        );
    }
    if let (Some(strip), Some(_)) = (d.layout.stacked_axis, d.occupancy) {
        // The time axis under the stacked bar (bin 0 on top, bands by capacity and at least
        // half their share each), its labels beside the bar rather than over it.
        time_axis(p, strip, d.cam, d.axis);
    }
    if let Some(t) = d.time_cursor {
        for (k, map) in maps.iter().enumerate() {
            time_line(
                p,
                std::slice::from_ref(map),
                window_of(k),
                t as f64,
                [250, 200, 80, 255],
            );
        }
    }
    if let Some(pos) = d.pinned
        && let Some(k) = d.binned.bin_at(pos)
        && let Some(cell) = d.layout.cells.get(k)
    {
        let join = |v: [u32; 2]| u64::from(v[0]) | (u64::from(v[1]) << 32);
        let b = &d.binned.blocks[pos];
        let tm = &d.binned.times(d.axis)[pos];
        let y0 = join(b.addr);
        block_outline(
            p,
            cell.map,
            window_of(k),
            d.binned.bins[k].collapsed_extent,
            (join(tm.start), join(tm.end)),
            (y0, y0.saturating_add(join(b.size))),
        );
    }
    if let Some(ctx) = d.layout.context {
        let label = d.binned.bins.get(d.focus_bin).map_or(String::new(), |b| {
            if binned_view {
                b.label.clone()
            } else {
                "context".to_owned()
            }
        });
        context_frame(p, ctx, d.cam, d.scene.time_extent(d.axis), &label);
    }
    if let Some(band) = d.layout.legend {
        let title = if d.highlighted {
            format!("{} (highlight: others dimmed)", d.color_by.name())
        } else {
            d.color_by.name().to_owned()
        };
        let entries = legend_entries(d.scene, d.trace, d.binned, d.color_by, d.classes);
        legend(p, band, &title, &entries, d.ramp.as_ref());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ticks_share_one_prefix_rule() {
        let step = 100_000.0;
        let labels: Vec<String> = [0.0, 100_000.0, 900_000.0, 1_000_000.0]
            .iter()
            .map(|t| time_label(*t, TimeAxis::Events, step))
            .collect();
        assert_eq!(labels, ["0", "100k", "900k", "1.0M"]);
        assert_eq!(time_label(1_500.0, TimeAxis::Events, 500.0), "1.5k");
        assert_eq!(time_label(500.0, TimeAxis::Events, 500.0), "500");
    }

    #[test]
    fn tick_labels_sit_on_chips_and_the_first_event_tick_names_its_unit() {
        let map = egui::Rect::from_min_size(egui::pos2(0.0, 0.0), egui::vec2(800.0, 300.0));
        let mut p = Picture::default();
        time_ticks(&mut p, map, &Camera::fit(200_000), TimeAxis::Events);
        assert!(p.labels.len() >= 5, "{:?}", p.labels);
        assert_eq!(p.labels[0].text, "0 events");
        assert!(p.labels[1..].iter().all(|l| !l.text.contains("events")));
        // Every label over the map has a dark chip under its whole text.
        for label in &p.labels {
            let text = label.approx_rect();
            let chipped = p.shapes.iter().any(|s| match s.geometry {
                Geometry::Rect { min, max, .. } => {
                    s.fill == CHIP
                        && egui::Rect::from_min_max(min.into(), max.into()).contains_rect(text)
                }
                _ => false,
            });
            assert!(chipped, "{label:?} has no chip under it");
        }
    }

    #[test]
    fn a_short_trace_ticks_whole_events() {
        // test_sysroot.raw: 6 events over a 1172-point map ticked 0 0 0 1 1 1 … 3 3.
        assert_eq!(tick_step(6.0, 1172.0, TimeAxis::Events), 1.0);
        assert!(tick_step(6.0, 1172.0, TimeAxis::Wall) < 1.0);
        assert_eq!(tick_step(1e6, 1172.0, TimeAxis::Events), 100_000.0);
    }

    #[test]
    fn a_tick_label_that_would_pass_the_edge_sits_left_of_its_tick() {
        let (x, align) = tick_label_x(1170.0, "1.0M", 1172.0);
        assert!(x < 1170.0 && align[1] == egui::Align2::RIGHT_BOTTOM);
        let (x, align) = tick_label_x(100.0, "100k", 1172.0);
        assert!(x > 100.0 && align[1] == egui::Align2::LEFT_BOTTOM);
    }

    #[test]
    fn the_context_frame_follows_the_camera_and_stays_visible() {
        let rect = egui::Rect::from_min_size(egui::pos2(100.0, 0.0), egui::vec2(96.0, 400.0));
        let whole = context_frame_rect(rect, &Camera::fit(1000), 1000);
        assert_eq!(whole, rect);
        let cam = Camera {
            t0: 500.0,
            t_span: 250.0,
            y0: 0.25,
            y_span: 0.5,
        };
        let f = context_frame_rect(rect, &cam, 1000);
        assert!((f.left() - 148.0).abs() < 1e-3 && (f.right() - 172.0).abs() < 1e-3);
        assert!((f.top() - 100.0).abs() < 1e-3 && (f.bottom() - 300.0).abs() < 1e-3);
        // A deep zoom keeps a frame of at least 3 points.
        let tiny = Camera {
            t0: 10.0,
            t_span: 1e-3,
            y0: 0.5,
            y_span: 1e-9,
        };
        let f = context_frame_rect(rect, &tiny, 1000);
        assert!(f.width() >= 3.0 - 1e-3 && f.height() >= 3.0 - 1e-3);
    }
}
