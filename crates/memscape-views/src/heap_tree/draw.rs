//! Heap trees as pictures: sunburst rings and icicle rectangles as GPU shapes, plus labels,
//! animated between two time points (or two drill-down roots) by matching nodes on their stable
//! colour key. Pure geometry: the GUI pane and `memscape render` both call it.

use std::collections::HashMap;
use std::f32::consts::{FRAC_PI_2, TAU};

use egui::{Align2, Color32, Pos2, Rect};
use memscape_heap::layout::LayoutNode;
use memscape_heap::{IcicleRect, Layout, StableOrder, SunburstSegment};
use memscape_render::shapes::{Geometry, Shape};

use crate::label::{self as labels, Label};
pub use crate::picture::{Picture, ease, text_on};

pub const BACKGROUND: [u8; 4] = [18, 20, 26, 255];
const TEXT: Color32 = Color32::from_rgb(235, 236, 240);

/// Colours: each top-level group (child of the shown root) gets a palette colour by its stable
/// rank among its siblings, so that a group keeps its colour at every time point; deeper levels
/// are lighter tints of their top-level ancestor; "Other" is grey.
pub fn node_color(nodes: &[LayoutNode], index: usize, order: &StableOrder) -> [u8; 4] {
    let Some(node) = nodes.get(index) else {
        return [128, 128, 128, 255];
    };
    if node.depth == 0 {
        return [58, 62, 74, 255];
    }
    // Walk up to the depth-1 ancestor.
    let mut top = index;
    while let Some(parent) = nodes.get(top).and_then(|n| n.parent) {
        if nodes.get(parent as usize).is_some_and(|p| p.depth == 0) {
            break;
        }
        top = parent as usize;
    }
    let base = match nodes.get(top).and_then(|n| n.group) {
        Some(group) => memscape_render::color::categorical(order.rank(group)),
        None => [120, 124, 134, 255],
    };
    let base = if node.group.is_none() {
        [110, 114, 124, 255]
    } else {
        base
    };
    let tint = (0.16f32 * (node.depth.saturating_sub(1)) as f32).min(0.6);
    let mix = |c: u8| (f32::from(c) + (255.0 - f32::from(c)) * tint).round() as u8;
    [mix(base[0]), mix(base[1]), mix(base[2]), 255]
}

/// A function name without its parameters, file part and trailing ABI tags
/// (`build_index[abi:cxx11](int)` reads `build_index`: the tag is noise in a label and, cut to a
/// legend's width, was all that was left), or a `module+offset` frame without the module's
/// directory, for labels.
pub fn short_name(name: &str) -> &str {
    let cut = name.find(" (").unwrap_or(name.len());
    let mut s = &name[..cut];
    if s.starts_with('/')
        && let Some(slash) = s.rfind('/')
    {
        s = &s[slash + 1..];
    }
    if let Some(p) = s.find('(')
        && p > 0
    {
        s = &s[..p];
    }
    while s.ends_with(']')
        && let Some(p) = s.rfind("[abi:")
        && p > 0
    {
        s = &s[..p];
    }
    s
}

/// [`short_name`] followed by its source location's file name and line when the name carries one
/// (`audit_log (./kvstore.c:112)` reads `audit_log · kvstore.c:112`): lists where two groups of
/// one function at different lines sit one above the other (leak suspects, a highlight's
/// label) must tell them apart.
pub fn short_name_at(name: &str) -> String {
    let short = short_name(name);
    let location = name
        .rfind(" (")
        .map(|p| &name[p + 2..])
        .and_then(|rest| rest.strip_suffix(')'))
        .filter(|loc| {
            loc.rsplit_once(':')
                .is_some_and(|(_, line)| line.parse::<u32>().is_ok())
        });
    match location {
        Some(loc) => {
            let file = loc.rsplit('/').next().unwrap_or(loc);
            format!("{short} · {file}")
        }
        None => short.to_owned(),
    }
}

pub fn human_bytes(bytes: u64) -> String {
    crate::ramp::bytes_fixed(bytes, 1)
}

fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

/// a0, a1, r0, r1 (layout units: angle from 12 o'clock, radius 0..1).
fn sector_of(s: &SunburstSegment) -> [f32; 4] {
    [
        s.start_angle as f32,
        s.end_angle as f32,
        s.inner_radius as f32,
        s.outer_radius as f32,
    ]
}

/// How a chart paints its nodes: each layout node's fill and the value written under its
/// name (the heap tree: palette colours and bytes, [`NodePaint::heap`]; the difference views:
/// the change).
pub struct NodePaint<'a> {
    pub fill: NodeFill<'a>,
    pub value: Box<dyn Fn(&LayoutNode) -> String + 'a>,
}

/// The fill of layout node `i` of `nodes`.
pub type NodeFill<'a> = Box<dyn Fn(&[LayoutNode], usize) -> [u8; 4] + 'a>;

impl<'a> NodePaint<'a> {
    /// The heap tree's paint: colours by `order` (see [`node_color`]), values in bytes.
    pub fn heap(order: &'a StableOrder) -> Self {
        Self {
            fill: Box::new(move |nodes: &[LayoutNode], i: usize| node_color(nodes, i, order)),
            value: Box::new(|n: &LayoutNode| human_bytes(n.bytes)),
        }
    }
}

/// The geometry (`[f32; 4]` in layout units) a node of `layout` has while morphing from
/// `from` as `t` goes 0 → 1: matched by colour key; a node new in `layout` grows coordinate
/// `grow + 1` from coordinate `grow` (the sunburst's end angle, the icicle's bottom).
struct Morph {
    previous: HashMap<u64, [f32; 4]>,
    morphing: bool,
    t: f32,
    grow: usize,
}

impl Morph {
    fn new<S>(
        from: Option<&Layout<S>>,
        t: f32,
        grow: usize,
        geometry: impl Fn(&S) -> (u32, [f32; 4]),
    ) -> Self {
        let previous = from
            .map(|f| {
                f.shapes
                    .iter()
                    .filter_map(|s| {
                        let (node, g) = geometry(s);
                        Some((f.nodes.get(node as usize)?.color_key, g))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            previous,
            morphing: from.is_some(),
            t: ease(t),
            grow,
        }
    }

    fn at(&self, node: &LayoutNode, target: [f32; 4]) -> [f32; 4] {
        if !self.morphing {
            return target;
        }
        match self.previous.get(&node.color_key) {
            Some(p) => std::array::from_fn(|k| lerp(p[k], target[k], self.t)),
            None => {
                let mut g = target;
                g[self.grow + 1] = lerp(target[self.grow], target[self.grow + 1], self.t);
                g
            }
        }
    }
}

/// The sunburst of `layout` inside `rect` (points), morphing from `from` as `t` goes 0 → 1,
/// filled and labelled by `paint`. Nodes new in `layout` grow from a zero angle at their
/// start; `highlight` (a layout node) gets a bright outline.
pub fn sunburst(
    layout: &Layout<SunburstSegment>,
    from: Option<&Layout<SunburstSegment>>,
    t: f32,
    rect: Rect,
    paint: &NodePaint<'_>,
    highlight: Option<u32>,
) -> Picture {
    let morph = Morph::new(from, t, 0, |s: &SunburstSegment| (s.node, sector_of(s)));
    let center = rect.center();
    let radius = 0.5 * rect.width().min(rect.height()) - 4.0;
    let mut pic = Picture::default();
    let mut placed = Vec::new();
    for s in &layout.shapes {
        let Some(node) = layout.nodes.get(s.node as usize) else {
            continue;
        };
        let g = morph.at(node, sector_of(s));
        if g[1] - g[0] <= 1e-6 {
            continue;
        }
        let fill = (paint.fill)(&layout.nodes, s.node as usize);
        // Layout angles run clockwise from 12 o'clock; screen angles clockwise from +x.
        let shape = Shape::new(
            Geometry::Sector {
                center: [center.x, center.y],
                r0: g[2] * radius,
                r1: g[3] * radius,
                a0: g[0] - FRAC_PI_2,
                a1: g[1] - FRAC_PI_2,
            },
            fill,
        )
        .with_border(BACKGROUND, 1.0);
        pic.shapes.push(shape);
        placed.push((s.node, g, fill));
    }
    if let Some(h) = highlight
        && let Some((_, g, _)) = placed.iter().find(|(n, _, _)| *n == h)
    {
        pic.shapes.push(
            Shape::new(
                Geometry::Sector {
                    center: [center.x, center.y],
                    r0: g[2] * radius,
                    r1: g[3] * radius,
                    a0: g[0] - FRAC_PI_2,
                    a1: g[1] - FRAC_PI_2,
                },
                [255, 255, 255, 40],
            )
            .with_border([255, 255, 255, 255], 2.0),
        );
    }
    // Labels where they fit, horizontally at the segment's middle.
    for (index, g, fill) in &placed {
        let Some(node) = layout.nodes.get(*index as usize) else {
            continue;
        };
        let (r0, r1) = (g[2] * radius, g[3] * radius);
        let size = 11.0;
        if node.depth == 0 {
            let name = short_name(&node.name);
            let width = 1.6 * r1;
            if let Some(text) = labels::fit(name, 12.0, width) {
                pic.labels.push(Label::new(
                    center + egui::vec2(0.0, -8.0),
                    text,
                    12.0,
                    TEXT,
                    Align2::CENTER_CENTER,
                ));
            }
            pic.labels.push(Label::new(
                center + egui::vec2(0.0, 8.0),
                (paint.value)(node),
                12.0,
                TEXT,
                Align2::CENTER_CENTER,
            ));
            continue;
        }
        let mid_r = 0.5 * (r0 + r1);
        let span = g[1] - g[0];
        // Tangential text fits inside the chord of the outer circle through the middle of the
        // ring and inside the arc; radial text fits inside the ring's thickness.
        let chord = 2.0 * (r1 * r1 - mid_r * mid_r).max(0.0).sqrt();
        let tangential_room = (span * mid_r).min(chord) - 8.0;
        let radial_room = r1 - r0 - 8.0;
        let name = short_name(&node.name);
        let mid_a = 0.5 * (g[0] + g[1]) - FRAC_PI_2;
        let pos = center + egui::vec2(mid_a.cos(), mid_a.sin()) * mid_r;
        let fits_tangential = r1 - r0 >= size + 4.0;
        let fits_radial = span * mid_r >= size + 3.0;
        let (room, angle) = if fits_tangential && (tangential_room >= radial_room || !fits_radial) {
            (tangential_room, mid_a + FRAC_PI_2)
        } else if fits_radial {
            (radial_room, mid_a)
        } else {
            continue;
        };
        let Some(text) = labels::fit(name, size, room) else {
            continue;
        };
        // Keep text upright: turn it half a turn when it would read upside down.
        let mut angle = angle.rem_euclid(TAU);
        if angle > FRAC_PI_2 && angle < 3.0 * FRAC_PI_2 {
            angle -= std::f32::consts::PI;
        }
        pic.labels.push(
            Label::new(pos, text, size, text_on(*fill), Align2::CENTER_CENTER).rotated(angle),
        );
    }
    pic
}

/// The node of `layout` that [`sunburst`] draws at `pos` inside `rect` (the deepest ring there).
pub fn sunburst_node_at(layout: &Layout<SunburstSegment>, rect: Rect, pos: Pos2) -> Option<u32> {
    let radius = 0.5 * rect.width().min(rect.height()) - 4.0;
    let d = pos - rect.center();
    let angle = (d.y.atan2(d.x) + FRAC_PI_2).rem_euclid(TAU);
    memscape_heap::layout::sunburst_hit(
        layout,
        f64::from(angle),
        f64::from(d.length() / radius.max(1.0)),
    )
}

/// The node of `layout` that [`icicle`] draws at `pos` inside `rect`.
pub fn icicle_node_at(layout: &Layout<IcicleRect>, rect: Rect, pos: Pos2) -> Option<u32> {
    let x = f64::from((pos.x - rect.left()) / rect.width());
    let y = f64::from((pos.y - rect.top()) / rect.height());
    layout
        .shapes
        .iter()
        .find(|s| x >= s.x0 && x < s.x1 && y >= s.y0 && y < s.y1)
        .map(|s| s.node)
}

/// x0, x1, y0, y1 (layout units 0..1).
fn span_of(r: &IcicleRect) -> [f32; 4] {
    [r.x0 as f32, r.x1 as f32, r.y0 as f32, r.y1 as f32]
}

/// The icicle of `layout` inside `rect`, morphing from `from` like [`sunburst`].
pub fn icicle(
    layout: &Layout<IcicleRect>,
    from: Option<&Layout<IcicleRect>>,
    t: f32,
    rect: Rect,
    paint: &NodePaint<'_>,
    highlight: Option<u32>,
) -> Picture {
    let morph = Morph::new(from, t, 2, |r: &IcicleRect| (r.node, span_of(r)));
    let (w, h) = (rect.width(), rect.height());
    let mut pic = Picture::default();
    for s in &layout.shapes {
        let Some(node) = layout.nodes.get(s.node as usize) else {
            continue;
        };
        let g = morph.at(node, span_of(s));
        if g[3] - g[2] <= 1e-7 {
            continue;
        }
        let min = [rect.min.x + g[0] * w, rect.min.y + g[2] * h];
        let max = [rect.min.x + g[1] * w, rect.min.y + g[3] * h];
        let fill = (paint.fill)(&layout.nodes, s.node as usize);
        let mut shape = Shape::new(
            Geometry::Rect {
                min,
                max,
                corner_px: 0.0,
            },
            fill,
        )
        .with_border(BACKGROUND, 1.0);
        if highlight == Some(s.node) {
            shape = shape.with_border([255, 255, 255, 255], 2.0);
        }
        pic.shapes.push(shape);
        let height = max[1] - min[1];
        let width = max[0] - min[0] - 10.0;
        let name = short_name(&node.name);
        let bytes = (paint.value)(node);
        let y = 0.5 * (min[1] + max[1]);
        let color = text_on(fill);
        if height >= 32.0 {
            // Name above, size below.
            if let Some(text) = labels::fit(name, 11.0, width) {
                pic.labels.push(Label::new(
                    Pos2::new(min[0] + 5.0, y - 7.0),
                    text,
                    11.0,
                    color,
                    Align2::LEFT_CENTER,
                ));
                pic.labels.push(Label::new(
                    Pos2::new(min[0] + 5.0, y + 7.0),
                    bytes,
                    10.0,
                    color,
                    Align2::LEFT_CENTER,
                ));
            }
        } else if height >= 14.0 {
            // One line: the size when the name does not fit whole.
            let both = format!("{name}  {bytes}");
            let text = if labels::approx_width(&both, 11.0) <= width {
                Some(both)
            } else {
                labels::fit(name, 11.0, width)
            };
            if let Some(text) = text {
                pic.labels.push(Label::new(
                    Pos2::new(min[0] + 5.0, y),
                    text,
                    11.0,
                    color,
                    Align2::LEFT_CENTER,
                ));
            }
        }
    }
    pic
}

#[cfg(test)]
mod short_name_tests {
    use crate::heap_tree::draw::{short_name, short_name_at};

    #[test]
    fn named_locations_keep_their_file_and_line() {
        assert_eq!(
            short_name_at("audit_log (./kvstore.c:112)"),
            "audit_log · kvstore.c:112"
        );
        assert_eq!(
            short_name_at("make_node(int) (/tmp/node.cpp:9)"),
            "make_node · node.cpp:9"
        );
        assert_eq!(short_name_at("audit_log"), "audit_log");
        assert_eq!(
            short_name_at("/usr/lib/libsqlite3.so.0+0xa7503"),
            "libsqlite3.so.0+0xa7503"
        );
        // A parenthesis that is not a location stays out of the label.
        assert_eq!(short_name_at("f (inlined)"), "f");
    }

    #[test]
    fn labels_drop_parameters_files_directories_and_abi_tags() {
        assert_eq!(short_name("make_node(int) (/tmp/node.cpp:9)"), "make_node");
        assert_eq!(short_name("build_index[abi:cxx11](int)"), "build_index");
        assert_eq!(short_name("f[abi:cxx11][abi:v2]()"), "f");
        assert_eq!(
            short_name("/usr/lib/libsqlite3.so.0+0xa7503"),
            "libsqlite3.so.0+0xa7503"
        );
        assert_eq!(short_name("operator[](unsigned long)"), "operator[]");
        assert_eq!(short_name("[abi:cxx11]"), "[abi:cxx11]");
    }
}
