//! `memscape render --view graph`.

use anyhow::Context as _;
use memscape_graph::filter::Profile;
use memscape_graph::navigate::{self, NodeQuery};
use memscape_render::shapes::ShapesView;
use memscape_render::{GpuContext, RgbaImage};

use crate::data::{Dataset, DatasetContent};
use crate::views::graph::{draw, model};

/// A shipped profile by name, or a profile TOML file.
pub fn load_profile(name_or_path: &str) -> anyhow::Result<Profile> {
    if let Some(p) = Profile::shipped(name_or_path) {
        return Ok(p);
    }
    let text = std::fs::read_to_string(name_or_path).with_context(|| {
        format!(
            "--profile {name_or_path}: neither a shipped profile ({}) nor a readable file",
            memscape_graph::filter::SHIPPED_PROFILES
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    Ok(Profile::from_toml(&text, name_or_path)?)
}

pub fn render(
    ctx: &GpuContext,
    dataset: &Dataset,
    args: &crate::cli::RenderArgs,
) -> anyhow::Result<RgbaImage> {
    let DatasetContent::Graphs(imported) = &dataset.content else {
        anyhow::bail!(
            "{}: the graph view needs IGV XML or Graphviz DOT input",
            dataset.name
        );
    };
    let g = &args.graph;
    let profile = args.profile.as_deref().map(load_profile).transpose()?;
    let (snapshot, diff_from) = match g.diff {
        Some((a, b)) => (b, Some(a)),
        None => (
            usize::try_from(args.heap.snapshot.unwrap_or(0)).unwrap_or(usize::MAX),
            args.diff_from,
        ),
    };
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
            anyhow::ensure!(
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
    let (w, h) = (args.width as f32, args.height as f32);
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
    let mut picture = draw::picture(&laid, &marks, &view, w, h);
    if g.satellite {
        let side = (w.min(h) * 0.28).max(80.0);
        let aspect = (laid.layout.width / laid.layout.height.max(1.0)).clamp(0.4, 2.5) as f32;
        let size = if aspect >= 1.0 {
            egui::vec2(side * aspect.min(1.6), side)
        } else {
            egui::vec2(side, side / aspect.max(0.625))
        };
        let area =
            egui::Rect::from_min_size(egui::pos2(w - size.x - 10.0, h - size.y - 10.0), size);
        // The main view's labels would show through the inset.
        picture.labels.retain(|l| !area.expand(4.0).contains(l.pos));
        picture.extend(draw::satellite(&laid, &view, [w, h], area));
    }
    let shown = laid.view_graph.graph.nodes.len();
    let count = if shown == laid.total_nodes {
        format!("{shown} nodes")
    } else {
        format!("{shown} of {} nodes", laid.total_nodes)
    };
    let matches = if g.search.is_some() {
        format!(" · {} matches", marks.matches.len())
    } else {
        String::new()
    };
    picture.labels.push(crate::views::labels::Label::new(
        egui::pos2(w - 8.0, 8.0),
        format!(
            "{} · {count} · {} edges · {} crossings{matches}",
            laid.title.replace('→', "->"),
            laid.view_graph.graph.edges.len(),
            laid.layout.crossings
        ),
        12.0,
        egui::Color32::from_gray(210),
        egui::Align2::RIGHT_TOP,
    ));
    crate::headless::render_picture(
        ctx,
        &picture.shapes,
        &picture.labels,
        args.width,
        args.height,
        draw::BACKGROUND,
    )
}
