//! `memscape render`: any view to PNG or SVG, headless, through the view's one `compose`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;

use memscape_render::{AdapterChoice, GpuContext};

use memscape_views::view::{ViewKind, ViewSettings};

use crate::cli::{AdapterArg, ImageFormat, RenderArgs};

pub fn run(args: &RenderArgs) -> anyhow::Result<ExitCode> {
    if let [a, b] = args.compare.as_slice() {
        return diff(args, a, b);
    }
    if args.stats {
        return run_with_stats(args);
    }
    let file = args
        .file
        .as_deref()
        .context("memscape render: name a FILE (or --compare A B)")?;
    // A big trace's allocation map comes from its level-of-detail index (issue 25).
    if let Some(code) = super::lod::render_alloc_map(args, file)? {
        return Ok(code);
    }
    let mut settings = args.settings();
    // A Parquet samples dataset's topology and offenders draw from the query engine.
    if let ViewSettings::Samples(samples) = &settings
        && crate::app::engine_samples::is_samples_dataset(file)
        && let Some((picture, how)) = crate::app::engine_samples::picture(
            file,
            &args.engine,
            samples,
            egui::vec2(args.width as f32, args.height as f32),
        )?
    {
        eprintln!("{}: {how}", file.display());
        let ctx = gpu_context(args.adapter)?;
        return write_picture(args, &ctx, &picture);
    }
    // A Parquet trace dataset's heap views draw from the query engine: its blocks and events
    // are not read here (the engine aggregates them where they lie).
    let engine_heap = matches!(
        args.view,
        ViewKind::Sunburst | ViewKind::Icicle | ViewKind::Timeline
    ) && crate::app::engine_heap::is_trace_dataset(file);
    let dataset = if engine_heap {
        crate::app::engine_heap::heap_dataset(file, &args.engine)?
    } else if file.is_dir() && memscape_parquet::dataset_kind(file).is_none() {
        load_from_dir(file, &mut settings)?
    } else {
        memscape_views::render::load(file)?
    };
    let ctx = gpu_context(args.adapter)?;
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
    write_picture(args, &ctx, &picture)
}

/// Writes the picture as `--out` asks: PNG drawn on the GPU, or SVG (vectors, GPU layers embedded).
fn write_picture(
    args: &RenderArgs,
    ctx: &GpuContext,
    picture: &memscape_views::picture::Picture,
) -> anyhow::Result<ExitCode> {
    match ImageFormat::of(args.format, &args.out) {
        ImageFormat::Png => {
            memscape_views::headless::render_picture(ctx, picture)?.save_png(&args.out)?
        }
        ImageFormat::Svg => {
            let svg = memscape_views::svg::picture_svg(ctx, picture)?;
            std::fs::write(&args.out, svg)
                .with_context(|| format!("writing {}", args.out.display()))?;
        }
    }
    println!("{}", args.out.display());
    Ok(ExitCode::SUCCESS)
}

/// `render --stats`: the image written, its statistics as JSON on stdout. A big trace's map is
/// drawn from its level-of-detail index as plain `render` draws it (`lod::render_alloc_map`),
/// the report naming the level or path taken; other views read the file whole.
fn run_with_stats(args: &RenderArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        matches!(ImageFormat::of(args.format, &args.out), ImageFormat::Png),
        "--stats measures the frame drawn for a PNG: give --out a .png name (or --format png)"
    );
    let file = args
        .file
        .as_deref()
        .context("memscape render --stats: name a FILE")?;
    if let Some(code) = super::lod::render_alloc_map(args, file)? {
        return Ok(code);
    }
    let mut settings = args.settings();
    let open_start = std::time::Instant::now();
    let dataset = if file.is_dir() && memscape_parquet::dataset_kind(file).is_none() {
        load_from_dir(file, &mut settings)?
    } else {
        memscape_views::render::load(file)?
    };
    let opened = open_start.elapsed();
    let ctx = memscape_views::render::gpu_context_timed(adapter_choice(args.adapter))?;
    let (image, stats) = memscape_views::render::image_with_stats(
        &ctx,
        &dataset,
        &settings,
        args.width,
        args.height,
    )?;
    image.save_png(&args.out)?;
    print_stats(args, file, &ctx, opened, &stats)?;
    Ok(ExitCode::SUCCESS)
}

/// Prints `render --stats`' JSON report of the frame drawn of `file`: `opened` is how long
/// reading the trace (or opening its index) took, `stats` what drawing it cost.
pub fn print_stats(
    args: &RenderArgs,
    file: &Path,
    ctx: &GpuContext,
    opened: std::time::Duration,
    stats: &memscape_views::render::RenderStats,
) -> anyhow::Result<()> {
    use memscape_views::stats::{AdapterReport, GpuReport, RenderStatsReport, WallMs};
    let ms = |d: std::time::Duration| memscape_views::bench::round_us(d.as_secs_f64() * 1e3);
    let report = RenderStatsReport {
        file: file.display().to_string(),
        view: args.view.name(),
        out: args.out.display().to_string(),
        width: args.width,
        height: args.height,
        adapter: AdapterReport::of(ctx),
        wall_ms: WallMs {
            open: ms(opened),
            compose: ms(stats.compose),
            draw: ms(stats.draw),
            total: ms(stats.compose + stats.draw),
        },
        gpu: GpuReport::of(&stats.frame),
        lod: stats.lod.clone(),
    };
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}

pub fn adapter_choice(adapter: Option<AdapterArg>) -> AdapterChoice {
    match adapter {
        None | Some(AdapterArg::Auto) => AdapterChoice::Auto,
        Some(AdapterArg::Cpu) => AdapterChoice::Cpu,
        Some(AdapterArg::Gpu) => AdapterChoice::Gpu,
    }
}

/// The headless GPU for `--adapter` (or MEMSCAPE_ADAPTER).
pub fn gpu_context(adapter: Option<AdapterArg>) -> anyhow::Result<GpuContext> {
    Ok(memscape_views::render::gpu_context(adapter_choice(
        adapter,
    ))?)
}

/// `memscape render --compare A B`: the difference view of two runs.
fn diff(args: &RenderArgs, a: &Path, b: &Path) -> anyhow::Result<ExitCode> {
    use memscape_views::diff::{DiffChart, DiffSettings};
    let chart = DiffChart::of_view(args.view).with_context(|| {
        format!(
            "--compare: --view {} has no difference view (sunburst, icicle, timeline: side by side, alloc: maps)",
            args.view.name()
        )
    })?;
    let (da, db) = (
        memscape_views::render::load(a)?,
        memscape_views::render::load(b)?,
    );
    let settings = DiffSettings {
        chart,
        heap: args.heap.clone(),
        map: args.alloc.clone(),
    };
    let size = egui::vec2(args.width as f32, args.height as f32);
    let picture = memscape_views::diff::compose(&da, &db, &settings, size)?;
    let ctx = gpu_context(args.adapter)?;
    write_picture(args, &ctx, &picture)
}

/// `memscape render DIR`: the directory's first dataset the view draws (samples views: the
/// first samples, on the topology the directory pairs them with), the others named on stderr.
fn load_from_dir(
    dir: &Path,
    settings: &mut ViewSettings,
) -> anyhow::Result<memscape_views::Dataset> {
    let found = memscape_views::discover::datasets_in(dir)?;
    let all = found.all();
    let wanted = match settings {
        ViewSettings::Samples(s) => {
            let first = found.pairs.first().map(|(samples, hardware)| {
                if s.hardware.is_none() {
                    s.hardware = Some(hardware.clone());
                }
                samples.clone()
            });
            first.or_else(|| all.first().cloned())
        }
        _ => all
            .iter()
            .find(|p| !found.pairs.iter().any(|(_, h)| h == *p))
            .cloned(),
    }
    .with_context(|| format!("{}: no dataset for this view", dir.display()))?;
    if all.len() > 1 {
        eprintln!(
            "{}: rendering {} ({} datasets found)",
            dir.display(),
            wanted.display(),
            all.len()
        );
    }
    Ok(memscape_views::render::load(&wanted)?)
}
