//! `memscape render --view topology|offenders`.

use anyhow::Context as _;
use memscape_render::{GpuContext, RgbaImage};

use crate::data::{Dataset, DatasetContent};
use crate::views::topology::draw::{self, BACKGROUND, Measure, NodeValues};

pub fn render(
    ctx: &GpuContext,
    dataset: &Dataset,
    args: &crate::cli::RenderArgs,
) -> anyhow::Result<RgbaImage> {
    let measure = match args.measure.as_str() {
        "samples" => Measure::Samples,
        "cycles" => Measure::Cycles,
        other => anyhow::bail!("--measure: expected samples or cycles, got {other:?}"),
    };
    let full = egui::Rect::from_min_size(
        egui::Pos2::ZERO,
        egui::vec2(args.width as f32, args.height as f32),
    );
    let picture = match &dataset.content {
        DatasetContent::Topology(topology) => {
            anyhow::ensure!(
                args.view == crate::cli::ViewKindArg::Topology,
                "{}: a topology alone has no offenders; give the samples file",
                dataset.name
            );
            draw::radial(topology, None, measure, full.shrink(8.0), None)
        }
        DatasetContent::Samples(samples) => {
            let (topology, mapping, report) = crate::views::topology::map_samples(
                samples,
                std::path::Path::new(&dataset.name),
                args.hardware.as_deref(),
            )
            .with_context(|| format!("{}: mapping the samples onto the hardware", dataset.name))?;
            if args.view == crate::cli::ViewKindArg::Offenders {
                let half = full.width() * 0.5;
                let mut pic = draw::offenders(
                    "total latency per source line",
                    &report.top_lines,
                    egui::Rect::from_min_size(full.min, egui::vec2(half, full.height()))
                        .shrink(8.0),
                );
                pic.extend(draw::offenders(
                    "total latency per data symbol",
                    &report.top_symbols,
                    egui::Rect::from_min_size(
                        full.min + egui::vec2(half, 0.0),
                        egui::vec2(half, full.height()),
                    )
                    .shrink(8.0),
                ));
                pic
            } else {
                let agg = mapping.aggregate(samples, None);
                let values = NodeValues {
                    samples: &agg.samples,
                    cycles: &agg.cycles,
                    transfers: &agg.transfers,
                };
                let mut pic =
                    draw::radial(&topology, Some(&values), measure, full.shrink(8.0), None);
                pic.labels.push(crate::views::labels::Label::new(
                    egui::pos2(8.0, 8.0),
                    format!(
                        "{} samples on {} · colour: {} per level (blue low, red high) · links: transfers",
                        samples.len(),
                        std::path::Path::new(topology.source())
                            .file_name()
                            .map_or_else(
                                || topology.source().to_owned(),
                                |n| n.to_string_lossy().into_owned()
                            ),
                        args.measure
                    ),
                    12.0,
                    egui::Color32::from_gray(210),
                    egui::Align2::LEFT_TOP,
                ));
                pic
            }
        }
        _ => anyhow::bail!(
            "{}: the topology views need samples (MemAxes/Mitos CSV, perf script) or a topology (hwloc XML)",
            dataset.name
        ),
    };
    crate::headless::render_picture(
        ctx,
        &picture.shapes,
        &picture.labels,
        args.width,
        args.height,
        BACKGROUND,
    )
}
