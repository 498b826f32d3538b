//! Between two steps of a tour: whether they show the same picture (then everything numeric
//! glides: α, the allocation map's camera and cursors, the heap's time point, the morph, the
//! samples' brushes) or not (then the frames cross-fade). Between two states of one graph the
//! nodes glide from one layout to the other (`graph::compose::picture_between`).

use crate::alloc_map::AllocMapSettings;
use crate::alloc_map::scene::AllocScene;
use crate::cycles::CycleSettings;
use crate::heap_tree::HeapTreeSettings;
use crate::samples::SamplesSettings;
use crate::values::U64Range;
use crate::view::ViewSettings;

use super::format::Step;

fn lerp(a: f32, b: f32, u: f32) -> f32 {
    a + (b - a) * u
}

fn lerp_u64(a: u64, b: u64, u: f32) -> u64 {
    (a as f64 + (b as f64 - a as f64) * f64::from(u))
        .round()
        .max(0.0) as u64
}

/// Whether two steps show the same picture (same file and view, the same structure) and so can
/// be interpolated rather than cross-faded. What only moves, recolours or restyles the picture
/// (α, colours, cushions, ranges, the time point, t, the measure) keeps it the same.
pub fn same_picture(a: &Step, b: &Step) -> bool {
    a.file == b.file
        && a.kind() == b.kind()
        && match (&a.settings, &b.settings) {
            (ViewSettings::AllocMap(x), ViewSettings::AllocMap(y)) => {
                x.panels == y.panels
                    && x.bins == y.bins
                    && x.layout == y.layout
                    && x.process == y.process
            }
            (ViewSettings::HeapTree(x), ViewSettings::HeapTree(y)) => {
                x.group == y.group && x.root == y.root
            }
            (ViewSettings::Cycles(x), ViewSettings::Cycles(y)) => {
                x.param == y.param
                    && x.morph_to == y.morph_to
                    && x.analysis.range == y.analysis.range
                    && x.analysis.window == y.analysis.window
                    && x.analysis.sample == y.analysis.sample
                    && x.analysis.threshold == y.analysis.threshold
                    && x.analysis.binary == y.analysis.binary
                    && x.analysis.functions == y.analysis.functions
                    && x.analysis.same_detail(&y.analysis)
                    && x.select_record == y.select_record
            }
            (ViewSettings::Graph(_), ViewSettings::Graph(_)) => true,
            (ViewSettings::Samples(x), ViewSettings::Samples(y)) => {
                x.select_line == y.select_line
                    && x.select_symbol == y.select_symbol
                    && select_attributes(x) == select_attributes(y)
                    && x.axes == y.axes
                    && x.histogram_attribute == y.histogram_attribute
                    && x.histogram_bins == y.histogram_bins
                    && x.cluster_attribute == y.cluster_attribute
                    && x.cluster_metric == y.cluster_metric
                    && x.cluster_depth == y.cluster_depth
                    && x.clusters == y.clusters
                    && x.glyph == y.glyph
            }
            _ => false,
        }
}

/// The attributes a state's `select` ranges are on, in order.
fn select_attributes(s: &SamplesSettings) -> Vec<String> {
    s.select
        .iter()
        .map(|r| {
            r.split_once('=')
                .map_or(r.as_str(), |(a, _)| a)
                .trim()
                .to_owned()
        })
        .collect()
}

/// `ATTR=LO..HI` between two ranges of one attribute (open ends stay open).
fn interpolate_select(a: &str, b: &str, u: f32) -> Option<String> {
    let (x, y) = (
        memscape_samples::RangeSpec::parse(a).ok()?,
        memscape_samples::RangeSpec::parse(b).ok()?,
    );
    if x.attribute != y.attribute {
        return None;
    }
    let mix = |p: Option<f64>, q: Option<f64>| match (p, q) {
        (Some(p), Some(q)) => Some(p + (q - p) * f64::from(u)),
        _ => q,
    };
    let show = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
    Some(format!(
        "{}={}..{}",
        y.attribute,
        show(mix(x.lo, y.lo)),
        show(mix(x.hi, y.hi))
    ))
}

/// How the allocation map's address axis is laid out, for interpolating address ranges where
/// the picture is linear: on the collapsed axis (regions concatenated), not across the gaps of
/// the 64-bit address space.
pub trait AddressAxis {
    /// The position of a real address on the axis.
    fn to_axis(&self, address: u64) -> u64;
    /// The real address at an axis position (the nearest used one).
    fn to_address(&self, position: u64) -> u64;
}

/// Addresses as they are (no collapsing).
pub struct RawAddresses;

impl AddressAxis for RawAddresses {
    fn to_axis(&self, address: u64) -> u64 {
        address
    }
    fn to_address(&self, position: u64) -> u64 {
        position
    }
}

impl AddressAxis for AllocScene {
    fn to_axis(&self, address: u64) -> u64 {
        // Inside a region: its collapsed position; in a gap: the start of the next region.
        let next = self.regions.partition_point(|r| r.end <= address);
        match self.regions.get(next) {
            Some(r) => r.collapsed_start + address.saturating_sub(r.start),
            None => self.collapsed_extent,
        }
    }
    fn to_address(&self, position: u64) -> u64 {
        // In a separator between regions: the last byte of the region below it.
        let i = self
            .regions
            .partition_point(|r| r.collapsed_start <= position)
            .saturating_sub(1);
        match self.regions.get(i) {
            Some(r) => {
                r.start + (position - r.collapsed_start.min(position)).min(r.end - r.start - 1)
            }
            None => position,
        }
    }
}

/// The state between `a` and `b` at eased position `u` (only when [`same_picture`]), with
/// address ranges interpolated on the raw address axis.
pub fn interpolate(a: &Step, b: &Step, u: f32) -> Step {
    interpolate_on(a, b, u, &RawAddresses)
}

/// [`interpolate`] with address ranges interpolated on `axis`: `b` with every number that
/// glides moved `u` of the way from `a`'s.
pub fn interpolate_on(a: &Step, b: &Step, u: f32, axis: &dyn AddressAxis) -> Step {
    let mut s = b.clone();
    s.settings = match (&a.settings, &b.settings) {
        (ViewSettings::AllocMap(x), ViewSettings::AllocMap(y)) => {
            ViewSettings::AllocMap(alloc_map(x, y, u, axis))
        }
        (ViewSettings::HeapTree(x), ViewSettings::HeapTree(y)) => {
            ViewSettings::HeapTree(heap_tree(x, y, u))
        }
        (ViewSettings::Cycles(x), ViewSettings::Cycles(y)) => ViewSettings::Cycles(CycleSettings {
            t: lerp(x.t, y.t, u),
            ..y.clone()
        }),
        (ViewSettings::Samples(x), ViewSettings::Samples(y)) => {
            ViewSettings::Samples(samples(x, y, u))
        }
        (_, other) => other.clone(),
    };
    s
}

fn alloc_map(
    a: &AllocMapSettings,
    b: &AllocMapSettings,
    u: f32,
    axis: &dyn AddressAxis,
) -> AllocMapSettings {
    let mut s = b.clone();
    s.alpha = lerp(a.alpha, b.alpha, u);
    s.relief = lerp(a.relief, b.relief, u);
    s.cursor_opacity = lerp(a.cursor_opacity, b.cursor_opacity, u);
    if a.cursors.len() == b.cursors.len() {
        // As many cursors before as after: each glides to its new time.
        s.cursors = a
            .cursors
            .iter()
            .zip(&b.cursors)
            .map(|(&p, &q)| lerp_u64(p, q, u))
            .collect();
    }
    if let (Some(x), Some(y)) = (a.range_time, b.range_time) {
        s.range_time = Some(zoom_between(x, y, u));
    }
    if let (Some(x), Some(y)) = (a.range_addr, b.range_addr) {
        let on_axis = |r: U64Range| U64Range::new(axis.to_axis(r.start), axis.to_axis(r.end));
        let r = zoom_between(on_axis(x), on_axis(y), u);
        s.range_addr = Some(U64Range::new(
            axis.to_address(r.start),
            axis.to_address(r.end),
        ));
    }
    s
}

fn heap_tree(a: &HeapTreeSettings, b: &HeapTreeSettings, u: f32) -> HeapTreeSettings {
    let mut s = b.clone();
    if let (Some(x), Some(y)) = (a.at, b.at) {
        s.at = Some(lerp_u64(x, y, u));
    }
    s
}

fn samples(a: &SamplesSettings, b: &SamplesSettings, u: f32) -> SamplesSettings {
    let mut s = b.clone();
    if a.select.len() == b.select.len() {
        let glided: Option<Vec<String>> = a
            .select
            .iter()
            .zip(&b.select)
            .map(|(p, q)| interpolate_select(p, q, u))
            .collect();
        if let Some(glided) = glided {
            s.select = glided;
        }
    }
    s
}

/// The range between `a` and `b` at `u` as a zoom moves it: the width geometrically (a constant
/// zoom speed, however deep the zoom) and the centre in proportion to the change of width, so
/// that what the zoom goes to stays in view.
pub fn zoom_between(a: U64Range, b: U64Range, u: f32) -> U64Range {
    let u = f64::from(u.clamp(0.0, 1.0));
    let width = |r: U64Range| (r.end.saturating_sub(r.start) as f64).max(1.0);
    let centre = |r: U64Range| (r.start as f64 + r.end as f64) / 2.0;
    let (wa, wb) = (width(a), width(b));
    let w = wa.powf(1.0 - u) * wb.powf(u);
    // The share of the zoom done so far (by width), which also moves the centre; a pure pan
    // (equal widths) moves linearly.
    let progress = if (wa - wb).abs() > 0.5 {
        ((wa - w) / (wa - wb)).clamp(0.0, 1.0)
    } else {
        u
    };
    let c = centre(a) + (centre(b) - centre(a)) * progress;
    let to_u64 = |v: f64| v.round().max(0.0) as u64;
    U64Range::new(to_u64(c - w / 2.0), to_u64(c + w / 2.0))
}
