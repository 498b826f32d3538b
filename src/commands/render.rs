//! `memscape render`: any view to PNG or SVG, headless, through the view's one `compose`.

use std::process::ExitCode;

use memscape_render::{AdapterChoice, GpuContext};

use memscape_views::view::ViewSettings;

use anyhow::Context as _;

use crate::cli::{AdapterArg, ImageFormat, RenderArgs};

pub fn run(args: &RenderArgs) -> anyhow::Result<ExitCode> {
    let dataset = memscape_views::render::load(&args.file)?;
    let ctx = gpu_context(args.adapter)?;
    let settings = args.settings();
    let format = ImageFormat::of(args.format, &args.out);
    let picture = settings.compose(&dataset, egui::vec2(args.width as f32, args.height as f32))?;
    // A cycle view drawn from landmarks says so (the analysis is the one just drawn, cached).
    if let ViewSettings::Cycles(cycles) = &settings
        && let Ok((analysis, _)) = memscape_views::cycles::compose::analysis_of(&dataset, cycles)
        && let Some(lod) = &analysis.report.level_of_detail
    {
        eprintln!(
            "{}: {}",
            dataset.name,
            memscape_views::cycles::settings::detail_note(lod)
        );
    }
    match format {
        ImageFormat::Png => {
            memscape_views::headless::render_picture(&ctx, &picture)?.save_png(&args.out)?
        }
        ImageFormat::Svg => {
            let svg = memscape_views::svg::picture_svg(&ctx, &picture)?;
            std::fs::write(&args.out, svg)
                .with_context(|| format!("writing {}", args.out.display()))?;
        }
    }
    println!("{}", args.out.display());
    Ok(ExitCode::SUCCESS)
}

/// The headless GPU for `--adapter` (or MEMSCAPE_ADAPTER).
pub fn gpu_context(adapter: Option<AdapterArg>) -> anyhow::Result<GpuContext> {
    Ok(memscape_views::render::gpu_context(match adapter {
        None | Some(AdapterArg::Auto) => AdapterChoice::Auto,
        Some(AdapterArg::Cpu) => AdapterChoice::Cpu,
        Some(AdapterArg::Gpu) => AdapterChoice::Gpu,
    })?)
}
