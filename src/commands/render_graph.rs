//! `memscape render --view graph`.

use anyhow::Context as _;
use memscape_graph::filter::Profile;
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
    let profile = args.profile.as_deref().map(load_profile).transpose()?;
    let snapshot = usize::try_from(args.heap.snapshot.unwrap_or(0)).unwrap_or(usize::MAX);
    let laid = model::lay_out(
        &imported.document,
        snapshot,
        profile.as_ref(),
        args.diff_from,
    )
    .with_context(|| dataset.name.clone())?;
    let (mut picture, _) = draw::fitted(
        &laid.view_graph,
        &laid.layout,
        &laid.node_colors,
        &laid.edge_colors,
        args.width as f32,
        args.height as f32,
    );
    picture.labels.push(crate::views::labels::Label::new(
        egui::pos2(args.width as f32 - 8.0, 8.0),
        format!(
            "{} · {} nodes · {} edges · {} crossings",
            laid.title.replace('→', "->"),
            laid.view_graph.graph.nodes.len(),
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
