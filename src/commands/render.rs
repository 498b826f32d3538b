//! `memscape render`: any view to PNG, headless, with the GUI's pipelines.

use std::process::ExitCode;

use anyhow::Context as _;
use memscape_render::alloc_map::{
    AllocMapData, AllocMapPipelines, AllocMapView, CushionKind, render_offscreen,
};
use memscape_render::{AdapterChoice, GpuContext};

use crate::cli::{AdapterArg, ColorByArg, CushionArg, RenderArgs, TimeAxisArg, ViewKindArg};
use crate::data::LoadSource;
use crate::scene::{ColorBy, TimeAxis};

pub fn run(args: &RenderArgs) -> anyhow::Result<ExitCode> {
    let dataset = load_for_render(&args.file)?;
    let ctx = gpu_context(args.adapter)?;
    let image = render_dataset(&ctx, &dataset, args)?;
    image.save_png(&args.out)?;
    println!("{}", args.out.display());
    Ok(ExitCode::SUCCESS)
}

/// Loads a file for rendering: a path, `demo` (the embedded sqlite heaptrack trace) or
/// `demo:sort` (the embedded lackey trace).
pub fn load_for_render(file: &std::path::Path) -> anyhow::Result<crate::data::Dataset> {
    let name = file.to_string_lossy();
    let source = if name == "demo" || name == "demo:sqlite" {
        crate::demo::sources()
            .into_iter()
            .next()
            .context("no embedded demo")?
    } else if name == "demo:sort" {
        crate::demo::sources()
            .into_iter()
            .nth(1)
            .context("no embedded demo")?
    } else {
        LoadSource::File(file.to_path_buf())
    };
    crate::data::load(&source, &|_, _| {})
}

/// The headless GPU for `--adapter` (or MEMSCAPE_ADAPTER).
pub fn gpu_context(adapter: Option<AdapterArg>) -> anyhow::Result<GpuContext> {
    let choice = AdapterChoice::from_env_or(match adapter {
        None | Some(AdapterArg::Auto) => AdapterChoice::Auto,
        Some(AdapterArg::Cpu) => AdapterChoice::Cpu,
        Some(AdapterArg::Gpu) => AdapterChoice::Gpu,
    });
    let ctx = GpuContext::new(choice)?;
    tracing::info!("rendering on {}", ctx.adapter_name());
    Ok(ctx)
}

/// Renders `args.view` of an already loaded dataset.
pub fn render_dataset(
    ctx: &GpuContext,
    dataset: &crate::data::Dataset,
    args: &RenderArgs,
) -> anyhow::Result<memscape_render::RgbaImage> {
    let image = match args.view {
        ViewKindArg::AllocMap => {
            let t = dataset.alloc_trace().with_context(|| {
                format!(
                    "{}: the allocation map needs an allocation trace",
                    dataset.name
                )
            })?;
            let scene = t.scene.as_ref().with_context(|| {
                format!(
                    "{}: this trace has no addresses, so it has no allocation map",
                    dataset.name
                )
            })?;
            let color_by = match args.color {
                None => scene.color_by,
                Some(ColorByArg::Thread) => ColorBy::Thread,
                Some(ColorByArg::Site) => ColorBy::Site,
                Some(ColorByArg::Size) => ColorBy::Size,
                Some(ColorByArg::Lifetime) => ColorBy::Lifetime,
                Some(ColorByArg::Waste) => ColorBy::Waste,
                Some(ColorByArg::Age) => ColorBy::Age,
            };
            let axis = match args.time {
                TimeAxisArg::Events => TimeAxis::Events,
                TimeAxisArg::Wall => TimeAxis::Wall,
            };
            let blocks = scene.colored_blocks(&t.trace, color_by);
            let mut pipelines = AllocMapPipelines::new(&ctx.device)?;
            let data = AllocMapData::upload(&ctx.device, &pipelines, &blocks, scene.times(axis));
            let (t0, t1) = args.range_time.unwrap_or((0, scene.time_extent(axis)));
            let (y0, y1) = match args.range_addr {
                None => (0, scene.collapsed_extent),
                Some((a0, a1)) => {
                    let collapse = |a: u64| {
                        scene.collapse(a).with_context(|| {
                            format!(
                                "--range-addr: {a:#x} is not inside a used region of {}",
                                dataset.name
                            )
                        })
                    };
                    (collapse(a0)?, collapse(a1 - 1)? + 1)
                }
            };
            let mut view = AllocMapView::fit(t0, t1, y0, y1.max(y0 + 1), args.width, args.height);
            view.alpha = args.alpha;
            view.color_mode = color_by.mode();
            view.cushion = match args.cushion {
                CushionArg::None => CushionKind::None,
                CushionArg::Parabolic => CushionKind::Parabolic,
                CushionArg::Plateau => CushionKind::Plateau,
            };
            render_offscreen(ctx, &mut pipelines, &data, &view, args.width, args.height)?
        }
        ViewKindArg::Graph => super::render_graph::render(ctx, dataset, args)?,
        ViewKindArg::Topology
        | ViewKindArg::Offenders
        | ViewKindArg::Histograms
        | ViewKindArg::Histogram => super::render_topology::render(ctx, dataset, args)?,
        ViewKindArg::Spiral
        | ViewKindArg::Circular
        | ViewKindArg::Barcode
        | ViewKindArg::Projection => super::render_cycles::render(
            ctx,
            dataset,
            args.view,
            &args.cycles,
            args.width,
            args.height,
        )?,
        ViewKindArg::Sunburst | ViewKindArg::Icicle | ViewKindArg::Timeline => {
            super::render_heap::render(
                ctx,
                dataset,
                args.view,
                &args.heap,
                args.width,
                args.height,
            )?
        }
    };
    Ok(image)
}
