//! The graph view's picture, composed in one place for the GUI pane and headless rendering:
//! the drawing through its camera (baked into points headless, a GPU transform in the pane), the
//! satellite inset and the header line; and the blend of two scenes that tours glide through.

use memscape_graph::filter::Profile;
use memscape_graph::navigate::{self, NodeQuery};
use memscape_render::shapes::ShapesView;

use super::settings::GraphSettings;
use super::{draw, model, profiles};
use crate::dataset::{Dataset, DatasetContent};
use crate::error::{Context as _, Result};
use crate::picture::{Layer, Picture, ShapeLayer};

/// A shipped profile by name, a profile TOML file, or a profile saved from the GUI's editor
/// (by name, in the user's profile directory).
pub fn load_profile(name_or_path: &str) -> Result<Profile> {
    if let Some(p) = Profile::shipped(name_or_path) {
        return Ok(p);
    }
    let path = std::path::Path::new(name_or_path);
    if path.is_file() {
        return Ok(Profile::load(path)?);
    }
    let dir = profiles::user_profiles_dir();
    if let Some(found) = dir
        .as_deref()
        .and_then(|d| profiles::find_user_profile_in(d, name_or_path))
    {
        return Ok(Profile::load(&found)?);
    }
    crate::bail!(
        "--profile {name_or_path}: neither a shipped profile ({}), nor a file, nor a saved profile{}",
        memscape_graph::filter::SHIPPED_PROFILES
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", "),
        dir.map(|d| format!(" in {}", d.display()))
            .unwrap_or_default()
    )
}

/// What `render --view graph` shows, resolved but not yet drawn: the main drawing and its
/// camera, the satellite inset's place, the header line. Tours blend two of these.
pub struct GraphScene {
    pub drawing: draw::Drawing,
    pub view: ShapesView,
    pub width: f32,
    pub height: f32,
    pub satellite: Option<egui::Rect>,
    pub header: String,
}

/// The scene of `settings` at `size` points.
pub fn scene(dataset: &Dataset, g: &GraphSettings, size: egui::Vec2) -> Result<GraphScene> {
    let DatasetContent::Graphs(imported) = &dataset.content else {
        crate::bail!(
            "{}: the graph view needs IGV XML or Graphviz DOT input",
            dataset.name
        );
    };
    let profile = g.profile.as_deref().map(load_profile).transpose()?;
    let (snapshot, diff_from) = g.snapshots();
    let focus = match &g.focus {
        Some(q) => {
            // The set S is named by ids so that it means the same in every snapshot.
            let query = NodeQuery::parse(q).context("--focus")?;
            let snapshots = imported.document.snapshots();
            let graph = snapshots.get(snapshot).with_context(|| {
                format!(
                    "snapshot {snapshot}: the input has {} graph(s)",
                    snapshots.len()
                )
            })?;
            let ids: std::collections::BTreeSet<String> = navigate::search(graph, &query)
                .into_iter()
                .map(|i| graph.nodes[i].id.clone())
                .collect();
            crate::ensure!(
                !ids.is_empty(),
                "--focus {q}: no node of snapshot {snapshot} matches"
            );
            Some(ids)
        }
        None => None,
    };
    let show = model::ShowOptions {
        diff_from,
        changes_only: g.changes_only,
        blocks: g.blocks,
        focus,
    };
    let laid = model::lay_out(&imported.document, snapshot, profile.as_ref(), &show)
        .with_context(|| dataset.name.clone())?;
    let marks = draw::Marks {
        matches: match &g.search {
            Some(q) => navigate::search(
                &laid.view_graph.graph,
                &NodeQuery::parse(q).context("--search")?,
            ),
            None => Vec::new(),
        },
        ..Default::default()
    };
    let (w, h) = (size.x, size.y);
    // The header line gets its own strip above the graph.
    const HEADER: f32 = 22.0;
    let mut view = draw::fit_view(&laid.layout, w, h - HEADER, 12.0);
    view.offset[1] += HEADER;
    if g.zoom > 0.0 && g.zoom != 1.0 {
        // Zoom about the first match (or the centre), keeping that point in the middle.
        let focus_point = marks
            .matches
            .first()
            .and_then(|&i| laid.layout.nodes.get(i))
            .map(|b| {
                let c = b.center();
                [c[0] as f32, c[1] as f32]
            })
            .unwrap_or_else(|| view.to_world([w / 2.0, h / 2.0]));
        let scale = [view.scale[0] * g.zoom, view.scale[1] * g.zoom];
        view = ShapesView {
            scale,
            offset: [
                w / 2.0 - focus_point[0] * scale[0],
                h / 2.0 - focus_point[1] * scale[1],
            ],
        };
    }
    let satellite = g.satellite.then(|| {
        let side = (w.min(h) * 0.28).max(80.0);
        let aspect = (laid.layout.width / laid.layout.height.max(1.0)).clamp(0.4, 2.5) as f32;
        let size = if aspect >= 1.0 {
            egui::vec2(side * aspect.min(1.6), side)
        } else {
            egui::vec2(side, side / aspect.max(0.625))
        };
        egui::Rect::from_min_size(egui::pos2(w - size.x - 10.0, h - size.y - 10.0), size)
    });
    let shown = laid.view_graph.graph.nodes.len();
    let count = if shown == laid.total_nodes {
        counted(shown, "node")
    } else {
        format!("{shown} of {}", counted(laid.total_nodes, "node"))
    };
    let matches = if g.search.is_some() {
        format!(" · {} matches", marks.matches.len())
    } else {
        String::new()
    };
    let header = format!(
        "{} · {count} · {} · {}{matches}",
        laid.title.replace('→', "->"),
        counted(laid.view_graph.graph.edges.len(), "edge"),
        counted(laid.layout.crossings as usize, "crossing")
    );
    Ok(GraphScene {
        drawing: draw::drawing(&laid, &laid.layout, &marks),
        view,
        width: w,
        height: h,
        satellite,
        header,
    })
}

/// `n` and `noun`, plural unless one: the header of a Graal dump's first snapshot read
/// "1 nodes".
fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn header_label(text: &str, width: f32, opacity: f32) -> crate::label::Label {
    crate::label::Label::new(
        egui::pos2(width - 8.0, 8.0),
        text.to_owned(),
        12.0,
        egui::Color32::from_gray(210).gamma_multiply(opacity),
        egui::Align2::RIGHT_TOP,
    )
}

/// The camera `t` (0..1, eased) of the way from `from` to `to`: a fit to a new set of nodes
/// glides there, zooming in log scale so that zoom speed looks even, the offset following
/// the world point at the centre.
pub fn camera_between(from: &ShapesView, to: &ShapesView, t: f32, size: egui::Vec2) -> ShapesView {
    let u = crate::picture::ease(t.clamp(0.0, 1.0));
    let scale: [f32; 2] = std::array::from_fn(|k| {
        let (a, b) = (from.scale[k].max(1e-9), to.scale[k].max(1e-9));
        (a.ln() + (b.ln() - a.ln()) * u).exp()
    });
    let centre = [0.5 * size.x, 0.5 * size.y];
    // The world point at the picture's centre moves straight from one to the other.
    let world = |v: &ShapesView| -> [f32; 2] {
        std::array::from_fn(|k| (centre[k] - v.offset[k]) / v.scale[k].max(1e-9))
    };
    let (wa, wb) = (world(from), world(to));
    let offset = std::array::from_fn(|k| centre[k] - (wa[k] + (wb[k] - wa[k]) * u) * scale[k]);
    ShapesView { scale, offset }
}

/// A drawing seen through `view` in a picture of `size` points, with the satellite inset in
/// `satellite` (its frame around what `view` shows) and `header` at the top right. `baked`: the
/// camera applied to the shapes here (headless); else the shapes stay in world units in a layer
/// the GPU transforms (the pane: panning and zooming upload nothing).
pub fn graph_picture(
    drawing: &draw::Drawing,
    view: &ShapesView,
    size: egui::Vec2,
    satellite: Option<egui::Rect>,
    header: Option<&str>,
    baked: bool,
) -> Picture {
    let mut picture = if baked {
        draw::drawing_picture(drawing, view, size.x, size.y)
    } else {
        let mut p = Picture::default();
        p.layers.push(Layer::Shapes(ShapeLayer {
            slot: 0,
            view: *view,
            shapes: draw::drawing_shapes(drawing),
        }));
        p.labels = draw::drawing_labels(
            drawing,
            view,
            egui::Rect::from_min_size(egui::Pos2::ZERO, size),
        );
        p
    };
    picture.size = size;
    picture.background = Some(draw::BACKGROUND);
    if let Some(area) = satellite {
        // The main view's labels would show through the inset.
        picture.labels.retain(|l| !area.expand(4.0).contains(l.pos));
        picture.extend(draw::drawing_satellite(
            drawing,
            view,
            [size.x, size.y],
            area,
        ));
    }
    if let Some(text) = header {
        picture.labels.push(header_label(text, size.x, 1.0));
    }
    picture
}

/// The picture of a scene: the graph, the satellite inset, the header.
pub fn scene_picture(s: &GraphScene) -> Picture {
    graph_picture(
        &s.drawing,
        &s.view,
        egui::vec2(s.width, s.height),
        s.satellite,
        Some(&s.header),
        true,
    )
}

/// The picture `u` (eased, 0 to 1) of the way from scene `a` to scene `b` (same size): the
/// drawings blended by [`draw::between`] (shared nodes glide, others fade), the camera
/// interpolated, the satellite inset drawn from the blended drawing when both scenes have one
/// (else faded), the header lines cross-faded.
pub fn picture_between(a: &GraphScene, b: &GraphScene, u: f32) -> Picture {
    let u = u.clamp(0.0, 1.0);
    if u <= 0.0 {
        return scene_picture(a);
    }
    if u >= 1.0 {
        return scene_picture(b);
    }
    let lerp = |x: f32, y: f32| x + (y - x) * u;
    let view = ShapesView {
        scale: [
            lerp(a.view.scale[0], b.view.scale[0]),
            lerp(a.view.scale[1], b.view.scale[1]),
        ],
        offset: [
            lerp(a.view.offset[0], b.view.offset[0]),
            lerp(a.view.offset[1], b.view.offset[1]),
        ],
    };
    let drawing = draw::between(&a.drawing, &b.drawing, u);
    let (w, h) = (b.width, b.height);
    let mut picture = draw::drawing_picture(&drawing, &view, w, h);
    picture.size = egui::vec2(w, h);
    picture.background = Some(draw::BACKGROUND);
    let inset = match (a.satellite, b.satellite) {
        (Some(ra), Some(rb)) => Some((
            egui::Rect::from_min_max(
                egui::pos2(lerp(ra.min.x, rb.min.x), lerp(ra.min.y, rb.min.y)),
                egui::pos2(lerp(ra.max.x, rb.max.x), lerp(ra.max.y, rb.max.y)),
            ),
            1.0,
        )),
        (Some(r), None) => Some((r, 1.0 - u)),
        (None, Some(r)) => Some((r, u)),
        (None, None) => None,
    };
    if let Some((area, opacity)) = inset {
        picture.labels.retain(|l| !area.expand(4.0).contains(l.pos));
        let mut inset = draw::drawing_satellite(&drawing, &view, [w, h], area);
        for shape in &mut inset.shapes {
            shape.fill[3] = (f32::from(shape.fill[3]) * opacity).round() as u8;
            shape.border[3] = (f32::from(shape.border[3]) * opacity).round() as u8;
        }
        picture.extend(inset);
    }
    if a.header == b.header {
        picture.labels.push(header_label(&b.header, w, 1.0));
    } else {
        // One after the other: two right-aligned lines over each other do not read.
        let (out, into) = ((1.0 - 2.0 * u).max(0.0), (2.0 * u - 1.0).max(0.0));
        if out > 0.0 {
            picture.labels.push(header_label(&a.header, w, out));
        }
        if into > 0.0 {
            picture.labels.push(header_label(&b.header, w, into));
        }
    }
    picture
}

/// The graph view of `dataset` as `settings` say, at `size` points.
pub fn compose(dataset: &Dataset, settings: &GraphSettings, size: egui::Vec2) -> Result<Picture> {
    Ok(scene_picture(&scene(dataset, settings, size)?))
}

#[cfg(test)]
mod camera_tests {
    use super::*;

    #[test]
    fn a_fit_glides_from_the_old_camera_to_the_new_one() {
        let size = egui::vec2(800.0, 600.0);
        let from = ShapesView {
            scale: [2.0, 2.0],
            offset: [10.0, -40.0],
        };
        let to = ShapesView {
            scale: [0.5, 0.5],
            offset: [300.0, 200.0],
        };
        assert_eq!(camera_between(&from, &to, 0.0, size), from);
        let end = camera_between(&from, &to, 1.0, size);
        for k in 0..2 {
            assert!((end.scale[k] - to.scale[k]).abs() < 1e-5);
            assert!((end.offset[k] - to.offset[k]).abs() < 1e-3);
        }
        let mid = camera_between(&from, &to, 0.5, size);
        assert!(
            (mid.scale[0] - 1.0).abs() < 1e-4,
            "log-scale midway: {mid:?}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::counted;

    #[test]
    fn counts_of_one_are_singular() {
        assert_eq!(counted(1, "node"), "1 node");
        assert_eq!(counted(0, "edge"), "0 edges");
        assert_eq!(counted(56, "node"), "56 nodes");
    }
}
