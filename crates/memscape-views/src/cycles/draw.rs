//! Geometry of the cycle views (Choudhury et al.): records as polar points for the spiral and
//! circular views (drawn by the renderer's polar morph), the barcode, the MDS baseline and the
//! colour legend as shapes and labels. Pure functions: the GUI pane and `memscape render` share
//! them.

use std::collections::HashMap;
use std::f32::consts::TAU;

use egui::{Align2, Color32, Pos2, Rect};
use memscape_render::color::{categorical, pack_rgba8};
use memscape_render::polar_morph::{PolarArcGpu, PolarPointGpu};
use memscape_render::shapes::{Geometry, Shape};

use super::model::CycleAnalysis;
use crate::label::{self as labels, Label};
use crate::picture::Picture;

pub const BACKGROUND: [u8; 4] = [16, 18, 24, 255];
const TEXT: Color32 = Color32::from_rgb(225, 227, 232);
const DIM: Color32 = Color32::from_rgb(150, 154, 165);
/// Colour of records outside the selection (spiral and circular views).
pub const UNSELECTED: [u8; 4] = [60, 63, 72, 255];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Radius = record index (time), early records in the centre.
    Spiral,
    /// Cycle members on the unit circle, pre-amble inside, post-amble outside.
    Circular,
}

/// What colours the records (`--cycle-color`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ColorBy {
    /// Source line (`function file:line`; the instruction address when unsymbolized).
    #[default]
    Line,
    Function,
    File,
    Time,
    Address,
}

impl ColorBy {
    pub const ALL: [ColorBy; 5] = [
        ColorBy::Line,
        ColorBy::Function,
        ColorBy::File,
        ColorBy::Time,
        ColorBy::Address,
    ];

    /// The legend's title (and the menu's name).
    pub fn title(self) -> &'static str {
        match self {
            ColorBy::Line => "source line",
            ColorBy::Function => "function",
            ColorBy::File => "file",
            ColorBy::Time => "time",
            ColorBy::Address => "address",
        }
    }
}

/// Legend entries: a name and its colour.
pub type Legend = Vec<(String, [u8; 4])>;

/// Colour per record and the legend (most frequent keys first) for `by`.
pub fn record_colors(analysis: &CycleAnalysis, by: ColorBy) -> (Vec<[u8; 4]>, Legend) {
    let records = &analysis.report.records;
    let n = records.len();
    let ramp = memscape_render::color::blue_red_srgb8;
    match by {
        ColorBy::Time => {
            let colors = (0..n)
                .map(|i| ramp(i as f32 / (n.max(2) - 1) as f32))
                .collect();
            let legend = vec![
                ("first record".to_owned(), ramp(0.0)),
                ("last record".to_owned(), ramp(1.0)),
            ];
            (colors, legend)
        }
        ColorBy::Address => {
            // Rank of the address among the distinct addresses: spreads clustered heaps.
            let mut distinct: Vec<u64> = records.iter().map(|r| r.address).collect();
            distinct.sort_unstable();
            distinct.dedup();
            let last = (distinct.len().max(2) - 1) as f32;
            let colors = records
                .iter()
                .map(|r| {
                    let rank = distinct.partition_point(|&a| a < r.address);
                    ramp(rank as f32 / last)
                })
                .collect();
            let legend = vec![
                (
                    format!("{:#x}", distinct.first().copied().unwrap_or(0)),
                    ramp(0.0),
                ),
                (
                    format!("{:#x}", distinct.last().copied().unwrap_or(0)),
                    ramp(1.0),
                ),
            ];
            (colors, legend)
        }
        ColorBy::Line | ColorBy::Function | ColorBy::File => {
            let t = &analysis.tables;
            let (ids, names) = match by {
                ColorBy::Line => (&t.records.line, &t.line_labels),
                ColorBy::Function => (&t.records.function, &t.function_labels),
                _ => (&t.records.file, &t.file_labels),
            };
            // Unsymbolized traces: every record is "??": key by instruction address instead.
            let unsymbolized = names.len() <= 1 && names.first().is_none_or(|l| l == "??");
            let keys: Vec<u64> = if unsymbolized {
                records.iter().map(|r| r.ip).collect()
            } else {
                ids.iter().map(|&i| u64::from(i)).collect()
            };
            let mut counts: HashMap<u64, usize> = HashMap::new();
            for &k in &keys {
                *counts.entry(k).or_default() += 1;
            }
            let mut by_count: Vec<(u64, usize)> = counts.into_iter().collect();
            by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let palette: HashMap<u64, [u8; 4]> = by_count
                .iter()
                .enumerate()
                .map(|(rank, (k, _))| (*k, categorical(rank as u32)))
                .collect();
            let colors = keys
                .iter()
                .map(|k| palette.get(k).copied().unwrap_or([128, 128, 128, 255]))
                .collect();
            let mut sources: HashMap<String, Option<Vec<String>>> = HashMap::new();
            let legend = by_count
                .iter()
                .take(12)
                .map(|(k, count)| {
                    let record = keys
                        .iter()
                        .position(|key| key == k)
                        .and_then(|i| records.get(i));
                    let name = if unsymbolized {
                        format!("ip {k:#x}")
                    } else {
                        short_label(by, record).unwrap_or_else(|| {
                            names
                                .get(*k as usize)
                                .cloned()
                                .unwrap_or_else(|| "??".into())
                        })
                    };
                    // Lines: the source text itself when the file is readable here.
                    let text = if by == ColorBy::Line && !unsymbolized {
                        record
                            .and_then(|r| source_line(&mut sources, r.file.as_deref()?, r.line?))
                            .map(|t| format!("  {t}"))
                            .unwrap_or_default()
                    } else {
                        String::new()
                    };
                    (
                        format!("{name}  ({count}){text}"),
                        palette.get(k).copied().unwrap_or([128; 4]),
                    )
                })
                .collect();
            (colors, legend)
        }
    }
}

/// Colour by line with the lines of some functions collapsed into one colour each (the
/// paper's "functions collapsed"): the keys of `ViewTables::line_keys`, ranked by frequency
/// like [`record_colors`], which this is when nothing is collapsed.
pub fn line_colors_collapsed(
    analysis: &CycleAnalysis,
    collapsed: &memscape_cycles::CollapsedFunctions,
) -> (Vec<[u8; 4]>, Legend) {
    let keys = analysis.tables.line_keys(collapsed);
    if !keys.collapsed.iter().any(|&c| c) {
        return record_colors(analysis, ColorBy::Line);
    }
    let mut counts = vec![0usize; keys.labels.len()];
    for &k in &keys.key {
        counts[k as usize] += 1;
    }
    let mut ranked: Vec<usize> = (0..counts.len()).filter(|&k| counts[k] > 0).collect();
    ranked.sort_by(|&a, &b| counts[b].cmp(&counts[a]).then(a.cmp(&b)));
    let mut palette = vec![[128u8, 128, 128, 255]; counts.len()];
    for (rank, &k) in ranked.iter().enumerate() {
        palette[k] = categorical(rank as u32);
    }
    let colors = keys.key.iter().map(|&k| palette[k as usize]).collect();
    let records = &analysis.report.records;
    let mut sources: HashMap<String, Option<Vec<String>>> = HashMap::new();
    let legend = ranked
        .iter()
        .take(12)
        .map(|&k| {
            let record = keys
                .key
                .iter()
                .position(|&key| key as usize == k)
                .and_then(|i| records.get(i));
            let name = if keys.collapsed[k] {
                format!("{} (all lines)", keys.labels[k])
            } else {
                let text = record
                    .and_then(|r| source_line(&mut sources, r.file.as_deref()?, r.line?))
                    .map(|t| format!("  {t}"))
                    .unwrap_or_default();
                let label =
                    short_label(ColorBy::Line, record).unwrap_or_else(|| keys.labels[k].clone());
                format!("{label}{text}")
            };
            (format!("{name}  ({})", counts[k]), palette[k])
        })
        .collect();
    (colors, legend)
}

/// A legend entry as people read it: the file's name without its directories (the full path is
/// in the source pane), `function file:line` for lines. `None` leaves the analysis's own label.
fn short_label(by: ColorBy, record: Option<&memscape_cycles::TraceRecord>) -> Option<String> {
    let r = record?;
    let file = r.file.as_deref().map(|f| {
        std::path::Path::new(f)
            .file_name()
            .map_or_else(|| f.to_owned(), |n| n.to_string_lossy().into_owned())
    });
    match by {
        ColorBy::File => file,
        ColorBy::Line => Some(format!(
            "{} {}:{}",
            r.function.as_deref().unwrap_or("??"),
            file.as_deref().unwrap_or("??"),
            r.line.map_or_else(|| "??".to_owned(), |l| l.to_string())
        )),
        _ => None,
    }
}

/// Line `line` (1-based) of `file`, trimmed, when the file is readable (cached per file).
fn source_line(
    cache: &mut HashMap<String, Option<Vec<String>>>,
    file: &str,
    line: u32,
) -> Option<String> {
    let lines = cache
        .entry(file.to_owned())
        .or_insert_with(|| crate::source_file::read_lines(std::path::Path::new(file)));
    let text = lines.as_ref()?.get((line as usize).checked_sub(1)?)?.trim();
    (!text.is_empty()).then(|| text.chars().take(60).collect())
}

/// Radius of every record for `layout` under parameterization `param`, and the outermost radius.
pub fn radii(analysis: &CycleAnalysis, layout: Layout, param: usize) -> (Vec<f32>, f32) {
    let n = analysis.report.records.len();
    match layout {
        Layout::Spiral => (
            (0..n)
                .map(|i| 0.1 + 0.9 * i as f32 / (n.max(2) - 1) as f32)
                .collect(),
            1.0,
        ),
        Layout::Circular => {
            let (pre_end, post_start) = analysis
                .report
                .parameterizations
                .get(param)
                .map_or((0, n), |p| {
                    (p.preamble_end.min(n), p.postamble_start.min(n))
                });
            let r = (0..n)
                .map(|i| {
                    if i < pre_end {
                        1.0 - 0.5 * (pre_end - i) as f32 / pre_end.max(1) as f32
                    } else if i >= post_start {
                        1.0 + 0.5 * (i + 1 - post_start) as f32 / (n - post_start).max(1) as f32
                    } else {
                        1.0
                    }
                })
                .collect();
            (r, 1.5)
        }
    }
}

/// θ in radians of every record under parameterization `param` (the analysis gives turns;
/// zeros when the parameterization does not exist).
pub fn thetas(analysis: &CycleAnalysis, param: usize) -> Vec<f32> {
    let n = analysis.report.records.len();
    analysis
        .report
        .parameterizations
        .get(param)
        .map(|p| {
            p.theta
                .iter()
                .map(|&t| (t as f32 * TAU).rem_euclid(TAU))
                .collect()
        })
        .unwrap_or_else(|| vec![0.0; n])
}

/// Points and arcs of the spiral/circular view morphing from parameterization `a` to `b` (radii
/// of `a`'s layout are shared by both ends).
pub fn polar_instances(
    analysis: &CycleAnalysis,
    layout: Layout,
    a: usize,
    b: usize,
    colors: &[[u8; 4]],
) -> (Vec<PolarPointGpu>, Vec<PolarArcGpu>, f32) {
    let (r, outer) = radii(analysis, layout, a);
    let ta = thetas(analysis, a);
    let tb = thetas(analysis, b);
    let n = r.len().min(ta.len()).min(tb.len()).min(colors.len());
    let points = (0..n)
        .map(|i| PolarPointGpu {
            r: r[i],
            theta_a: ta[i],
            theta_b: tb[i],
            color: pack_rgba8(colors[i]),
        })
        .collect();
    let arc_color = pack_rgba8([170, 176, 192, 70]);
    let arcs = (1..n)
        .map(|i| PolarArcGpu {
            from: [r[i - 1], ta[i - 1], tb[i - 1]],
            to: [r[i], ta[i], tb[i]],
            color: arc_color,
            _pad: 0,
        })
        .collect();
    (points, arcs, outer)
}

/// Which records share the source line of record `record` (its instruction address when the
/// trace is unsymbolized): the selection a click makes.
pub fn same_line_mask(analysis: &CycleAnalysis, record: usize) -> Vec<bool> {
    let records = &analysis.report.records;
    let lines = &analysis.tables.records.line;
    let labels = &analysis.tables.line_labels;
    let unsymbolized = labels.len() <= 1 && labels.first().is_none_or(|l| l == "??");
    if unsymbolized {
        let ip = records.get(record).map(|r| r.ip);
        records.iter().map(|r| Some(r.ip) == ip).collect()
    } else {
        let line = lines.get(record).copied();
        lines.iter().map(|&l| Some(l) == line).collect()
    }
}

/// Colour of an angle on a cyclic hue wheel (for the projection view).
pub fn cyclic_color(theta: f32) -> [u8; 4] {
    let h = theta.rem_euclid(TAU) / TAU * 6.0;
    let x = 1.0 - (h % 2.0 - 1.0).abs();
    let (r, g, b) = match h as u32 {
        0 => (1.0, x, 0.0),
        1 => (x, 1.0, 0.0),
        2 => (0.0, 1.0, x),
        3 => (0.0, x, 1.0),
        4 => (x, 0.0, 1.0),
        _ => (1.0, 0.0, x),
    };
    // Softened toward grey so that it sits on a dark background.
    let soft = |v: f32| ((0.25 + 0.7 * v) * 255.0).round() as u8;
    [soft(r), soft(g), soft(b), 255]
}

/// The barcode's rows: H1 bars sorted by persistence (longest first; infinite first of all),
/// with their rank in that order, and the rows' placement inside `rect`.
pub struct BarcodeRows {
    pub bars: Vec<(f32, Option<f32>)>,
    pub shown: usize,
    pub top: f32,
    pub row: f32,
    pub max_value: f32,
}

pub fn barcode_rows(analysis: &CycleAnalysis, rect: Rect) -> BarcodeRows {
    let mut bars: Vec<(f32, Option<f32>)> = analysis
        .report
        .barcode
        .iter()
        .map(|b| (b.birth(), b.death()))
        .collect();
    let persistence = |b: &(f32, Option<f32>)| b.1.map_or(f32::INFINITY, |d| d - b.0);
    bars.sort_by(|x, y| persistence(y).total_cmp(&persistence(x)));
    // The longest bars, each at least 6 points tall; the rest are summarised in the title.
    let shown = bars
        .len()
        .min(((rect.height() - 60.0) / 6.0).max(1.0) as usize)
        .min(80);
    let max_value = bars
        .iter()
        .map(|b| b.1.unwrap_or(b.0))
        .fold(analysis.report.threshold, f32::max)
        .max(1e-6);
    let row = ((rect.height() - 60.0) / shown.max(1) as f32).clamp(6.0, 18.0);
    BarcodeRows {
        bars,
        shown,
        top: rect.top() + 26.0,
        row,
        max_value,
    }
}

/// The barcode: H1 bars sorted by persistence (longest on top), the parameterized classes
/// marked; `selected` are the ranks shown (0 = most persistent).
pub fn barcode(analysis: &CycleAnalysis, rect: Rect, selected: &[usize]) -> Picture {
    let mut pic = Picture::default();
    let BarcodeRows {
        bars,
        shown,
        top,
        row,
        max_value,
    } = barcode_rows(analysis, rect);
    let left = rect.left() + 40.0;
    let width = rect.width() - 60.0;
    let x = |v: f32| left + v / max_value * width;
    for (i, bar) in bars.iter().take(shown).enumerate() {
        let y = top + i as f32 * row;
        let end = bar.1.map_or(x(max_value) + 10.0, x);
        let color = match selected.iter().position(|&s| s == i) {
            Some(k) => categorical(k as u32 + 2),
            None => [120, 126, 140, 255],
        };
        pic.shapes.push(Shape::new(
            Geometry::Rect {
                min: [x(bar.0), y],
                max: [end.max(x(bar.0) + 1.0), y + (row * 0.7).max(1.5)],
                corner_px: 1.0,
            },
            color,
        ));
        if row >= 10.0 || i < selected.len().max(3) || i % 5 == 0 {
            pic.labels.push(Label::new(
                Pos2::new(rect.left() + 34.0, y + 0.35 * row),
                format!("{i}"),
                10.0,
                DIM,
                Align2::RIGHT_CENTER,
            ));
        }
    }
    // The axis: birth/death values.
    let axis_y = rect.bottom() - 22.0;
    pic.shapes.push(Shape::new(
        Geometry::Segment {
            a: [left, axis_y],
            b: [left + width, axis_y],
            width_px: 1.0,
        },
        [150, 154, 165, 255],
    ));
    let steps = 5;
    for k in 0..=steps {
        let v = max_value * k as f32 / steps as f32;
        pic.labels.push(Label::new(
            Pos2::new(x(v), axis_y + 10.0),
            format!("{v:.1}"),
            10.0,
            DIM,
            Align2::CENTER_CENTER,
        ));
    }
    pic.labels.push(Label::new(
        Pos2::new(rect.right() - 4.0, rect.top() + 2.0),
        if shown < bars.len() {
            format!(
                "H1 barcode · the {shown} longest of {} bars · threshold {:.2}",
                bars.len(),
                analysis.report.threshold
            )
        } else {
            format!(
                "H1 barcode · {} bars · threshold {:.2}",
                bars.len(),
                analysis.report.threshold
            )
        },
        11.0,
        TEXT,
        Align2::RIGHT_TOP,
    ));
    pic
}

/// The MDS baseline: unique windows projected to 2-D, coloured by θ of parameterization
/// `param` (cyclic hues), joined in time order.
pub fn projection(
    analysis: &CycleAnalysis,
    embedding: &[[f64; 2]],
    param: usize,
    rect: Rect,
    selected: Option<&[bool]>,
) -> Picture {
    let mut pic = Picture::default();
    let theta = thetas(analysis, param);
    let windows = &analysis.tables.windows;
    let mut lo = [f64::INFINITY; 2];
    let mut hi = [f64::NEG_INFINITY; 2];
    for p in embedding {
        for k in 0..2 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    if embedding.is_empty() || !lo[0].is_finite() {
        return pic;
    }
    let span = ((hi[0] - lo[0]).max(hi[1] - lo[1])).max(1e-9);
    let side = (rect.width().min(rect.height()) - 30.0).max(10.0);
    let origin = rect.center() - egui::vec2(side, side) * 0.5;
    let place = |p: [f64; 2]| {
        [
            origin.x + ((p[0] - lo[0]) / span) as f32 * side,
            origin.y + ((p[1] - lo[1]) / span) as f32 * side,
        ]
    };
    let mut previous: Option<[f32; 2]> = None;
    for (k, &u) in windows.unique.iter().enumerate() {
        let Some(&p) = embedding.get(u as usize) else {
            continue;
        };
        let q = place(p);
        if let Some(prev) = previous {
            pic.shapes.push(Shape::new(
                Geometry::Segment {
                    a: prev,
                    b: q,
                    width_px: 0.8,
                },
                [170, 176, 192, 40],
            ));
        }
        previous = Some(q);
        let _ = k;
    }
    for (k, &u) in windows.unique.iter().enumerate() {
        let Some(&p) = embedding.get(u as usize) else {
            continue;
        };
        let th = theta.get(k).copied().unwrap_or(0.0);
        pic.shapes.push(Shape::new(
            Geometry::PixelDisc {
                center: place(p),
                radius_px: 2.5,
            },
            match selected {
                // Windows starting at a selected record stay coloured; the rest are dimmed.
                Some(mask) if !mask.get(k).copied().unwrap_or(false) => UNSELECTED,
                _ => cyclic_color(th),
            },
        ));
    }
    pic.labels.push(Label::new(
        Pos2::new(rect.right() - 4.0, rect.top() + 2.0),
        format!(
            "classical MDS of {} unique windows · colour: θ of parameterization {param}",
            embedding.len()
        ),
        11.0,
        TEXT,
        Align2::RIGHT_TOP,
    ));
    pic
}

/// Legend swatches and names in the top-left corner of `rect`, cut to its width and as many
/// rows as its height holds.
pub fn legend(entries: &[(String, [u8; 4])], rect: Rect, title: &str) -> Picture {
    let mut pic = Picture::default();
    let x = rect.left() + 10.0;
    let mut y = rect.top() + 12.0;
    if let Some(t) = labels::fit(title, 11.0, rect.width() - 14.0) {
        pic.labels.push(Label::new(
            Pos2::new(x, y),
            t,
            11.0,
            TEXT,
            Align2::LEFT_CENTER,
        ));
    }
    for (name, color) in entries {
        y += 16.0;
        if y + 8.0 > rect.bottom() {
            break;
        }
        pic.shapes.push(Shape::new(
            Geometry::Rect {
                min: [x, y - 5.0],
                max: [x + 10.0, y + 5.0],
                corner_px: 2.0,
            },
            *color,
        ));
        if let Some(text) = labels::fit(name, 10.5, rect.right() - x - 18.0) {
            pic.labels.push(Label::new(
                Pos2::new(x + 16.0, y),
                text,
                10.5,
                TEXT,
                Align2::LEFT_CENTER,
            ));
        }
    }
    pic
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_click_selects_the_records_of_one_line() {
        let source = crate::demo::sources().into_iter().nth(1).unwrap();
        let dataset = crate::dataset::load(&source, &|_, _| {}).unwrap();
        let crate::dataset::DatasetContent::RefTrace(trace) = &dataset.content else {
            panic!("the second demo file is the lackey trace");
        };
        let options = memscape_cycles::CyclesOptions {
            filter: memscape_cycles::RecordFilter {
                record_range: Some(0..300),
                ..Default::default()
            },
            ..Default::default()
        };
        let analysis = super::super::model::analyze("demo", trace, &options, None).unwrap();
        let records = &analysis.report.records;
        let mask = same_line_mask(&analysis, 5);
        assert!(mask[5]);
        // Unsymbolized: exactly the records with record 5's instruction address.
        for (r, on) in records.iter().zip(&mask) {
            assert_eq!(*on, r.ip == records[5].ip);
        }
        // The projection dims the windows outside the selection.
        let embedding = memscape_cycles::window_projection(records, &options).unwrap();
        let rect = Rect::from_min_size(Pos2::ZERO, egui::vec2(300.0, 300.0));
        let plain = projection(&analysis, &embedding, 0, rect, None);
        let picked = projection(&analysis, &embedding, 0, rect, Some(&mask));
        let dim = |p: &Picture| {
            p.shapes
                .iter()
                .filter(|s| s.fill == [60, 63, 72, 255])
                .count()
        };
        assert_eq!(dim(&plain), 0);
        assert!(dim(&picked) > 0);
    }
}
