//! `memscape render`: any view to PNG, headless, through the view's one `compose`.

use std::process::ExitCode;

use memscape_render::{AdapterChoice, GpuContext};

use memscape_views::view::ViewSettings;

use crate::cli::{AdapterArg, RenderArgs};

pub fn run(args: &RenderArgs) -> anyhow::Result<ExitCode> {
    // A big trace's allocation map comes from its level-of-detail index (issue 25).
    if let Some(code) = super::lod::render_alloc_map(args)? {
        return Ok(code);
    }
    let dataset = memscape_views::render::load(&args.file)?;
    let ctx = gpu_context(args.adapter)?;
    let settings = args.settings();
    let image = memscape_views::render::image(&ctx, &dataset, &settings, args.width, args.height)?;
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
    image.save_png(&args.out)?;
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
