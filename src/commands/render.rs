//! `memscape render`: any view to PNG, headless, with the GUI's pipelines.

use std::process::ExitCode;

use anyhow::Context as _;
use memscape_render::alloc_map::{
    AllocMapData, AllocMapFrame, AllocMapPipelines, CursorOverlay, CursorPipelines, CursorStyle,
    CushionCursor, CushionKind, DrawOptions, OccupancyBarData, OccupancyBarFrame, OccupancyBarView,
    OccupancyVariant, TimeMapping,
};
use memscape_render::offscreen::OFFSCREEN_FORMAT;
use memscape_render::{AdapterChoice, GpuContext, OffscreenTarget, RgbaImage};

use crate::cli::{
    AdapterArg, BinsArg, ColorByArg, CushionArg, LayoutArg, OccupancyArg, PanelArg, RenderArgs,
    TimeAxisArg, ViewKindArg,
};
use crate::data::LoadSource;
use crate::scene::{BinBy, BinnedScene, ColorBy, TimeAxis};
use crate::views::alloc_map::draw::{self, DecorateInputs, Panels};
use crate::views::alloc_map::model::{BinLayout, Camera};

pub fn run(args: &RenderArgs) -> anyhow::Result<ExitCode> {
    let mut dataset = load_for_render(&args.file)?;
    if let (Some(filter), crate::data::DatasetContent::AllocTrace(t)) =
        (&args.process, &mut dataset.content)
    {
        t.trace = super::info::selected(&t.trace, filter)?;
        t.scene = t.trace.has_addresses().then(|| {
            crate::scene::AllocScene::build(&t.trace, crate::scene::ColorBy::default_for(&t.trace))
        });
    }
    let ctx = gpu_context(args.adapter)?;
    let image = render_dataset(&ctx, &dataset, args)?;
    image.save_png(&args.out)?;
    println!("{}", args.out.display());
    Ok(ExitCode::SUCCESS)
}

/// Loads a file for rendering: a path, or an embedded demo file by name (`demo`, `demo:sort`,
/// … see [`crate::demo::FILES`]).
pub fn load_for_render(file: &std::path::Path) -> anyhow::Result<crate::data::Dataset> {
    let name = file.to_string_lossy();
    let source = if name == "demo" || name.starts_with("demo:") {
        crate::demo::by_name(&name)
            .with_context(|| {
                format!(
                    "{name}: no such embedded demo file (there are {})",
                    crate::demo::names()
                )
            })?
            .source()
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
        ViewKindArg::AllocMap => render_alloc(ctx, dataset, args)?,
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

/// Background of the allocation map's picture around the plots (sRGB).
const ALLOC_BACKGROUND: [u8; 4] = [27, 27, 30, 255];

/// A rectangle in points as whole pixels `[x, y, w, h]` (1 pixel per point), at least 1×1.
fn pixel_rect(r: egui::Rect) -> [u32; 4] {
    let x0 = r.left().round().max(0.0) as u32;
    let y0 = r.top().round().max(0.0) as u32;
    let x1 = (r.right().round().max(0.0) as u32).max(x0 + 1);
    let y1 = (r.bottom().round().max(0.0) as u32).max(y0 + 1);
    [x0, y0, x1 - x0, y1 - y0]
}

/// `memscape render --view alloc`: the map (one cell per bin), and with more panels than
/// `main` the GUI's picture around it: occupancy bars, context view, axes, labels, legend.
fn render_alloc(
    ctx: &GpuContext,
    dataset: &crate::data::Dataset,
    args: &RenderArgs,
) -> anyhow::Result<RgbaImage> {
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
    let a = &args.alloc;
    let color_by = match args.color {
        None => scene.color_by,
        Some(ColorByArg::Thread) => ColorBy::Thread,
        Some(ColorByArg::Site) => ColorBy::Site,
        Some(ColorByArg::Size) => ColorBy::Size,
        Some(ColorByArg::Lifetime) => ColorBy::Lifetime,
        Some(ColorByArg::Waste) => ColorBy::Waste,
        Some(ColorByArg::Age) => ColorBy::Age,
        Some(ColorByArg::Bin) => ColorBy::Bin,
    };
    let axis = match args.time {
        TimeAxisArg::Events => TimeAxis::Events,
        TimeAxisArg::Wall => TimeAxis::Wall,
    };
    let by = match a.bins {
        None => BinBy::None,
        Some(BinsArg::Region) => BinBy::Region,
        Some(BinsArg::Size) => BinBy::Size,
        Some(BinsArg::Thread) => BinBy::Thread,
    };
    let bin_layout = match a.layout {
        LayoutArg::Address => BinLayout::Address,
        LayoutArg::Time => BinLayout::Time,
    };
    let variant = match a.occupancy {
        OccupancyArg::Flat => OccupancyVariant::Flat,
        OccupancyArg::IdleBlack => OccupancyVariant::BlackGaps,
        OccupancyArg::IdlePlateau => OccupancyVariant::GapCushions(CushionKind::Plateau),
        OccupancyArg::IdleParabolic => OccupancyVariant::GapCushions(CushionKind::Parabolic),
        OccupancyArg::IntervalsPlateau => OccupancyVariant::EventCushions(CushionKind::Plateau),
        OccupancyArg::IntervalsParabolic => OccupancyVariant::EventCushions(CushionKind::Parabolic),
    };
    let only_main = a.panels.iter().all(|p| *p == PanelArg::Main);
    let panels = Panels {
        occupancy: a.panels.contains(&PanelArg::Occupancy),
        context: a.panels.contains(&PanelArg::Context),
        decorations: !only_main,
    };
    let binned = BinnedScene::build(&t.trace, scene, by);
    let colors = scene.block_colors(&t.trace, color_by, &binned.block_bin, scene.events_extent);
    let blocks = binned.colored(&colors);
    let t_extent = scene.time_extent(axis);
    let (t0, t1) = args.range_time.unwrap_or((0, t_extent));
    let camera = match args.range_addr {
        None => Camera::of_ranges(t0, t1, 0, 1, 1),
        Some(_) if by != BinBy::None => anyhow::bail!(
            "--range-addr applies to the map without --bins (each bin has its own address axis)"
        ),
        Some((a0, a1)) => {
            let collapse = |a: u64| {
                scene.collapse(a).with_context(|| {
                    format!(
                        "--range-addr: {a:#x} is not inside a used region of {}",
                        dataset.name
                    )
                })
            };
            let (y0, y1) = (collapse(a0)?, collapse(a1 - 1)? + 1);
            Camera::of_ranges(t0, t1, y0, y1.max(y0 + 1), scene.collapsed_extent)
        }
    };
    let (w, h) = (args.width, args.height);
    let layout = draw::pane_layout(
        egui::vec2(w as f32, h as f32),
        binned.bins.len().max(1),
        bin_layout,
        panels,
    );
    let cushion = match args.cushion {
        CushionArg::None => CushionKind::None,
        CushionArg::Parabolic => CushionKind::Parabolic,
        CushionArg::Plateau => CushionKind::Plateau,
    };
    let style = |view: &mut memscape_render::alloc_map::AllocMapView| {
        view.alpha = args.alpha;
        view.color_mode = color_by.mode();
        view.cushion = cushion;
    };

    let target = OffscreenTarget::new(ctx, w, h)?;
    target.clear(ctx, ALLOC_BACKGROUND);
    let mut pipelines = AllocMapPipelines::new(&ctx.device)?;
    let data = AllocMapData::upload(&ctx.device, &pipelines, &blocks, binned.times(axis));
    let bar_data = (panels.occupancy).then(|| {
        OccupancyBarData::upload(&ctx.device, &pipelines, &binned.bar_blocks(axis, t_extent))
    });
    let mut cursor_pipelines = CursorPipelines::new(&ctx.device)?;
    let mut overlay = CursorOverlay::new(&ctx.device, &cursor_pipelines);
    let cursors: Vec<CushionCursor> = a
        .cursors
        .iter()
        .map(|&t| CushionCursor::new(t, [255, 250, 235, 255]))
        .collect();
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("render::alloc"),
        });
    // (rect, frame) of every map and bar, resolved below in one pass.
    let mut maps: Vec<([u32; 4], AllocMapFrame)> = Vec::new();
    let mut bars: Vec<([u32; 4], OccupancyBarFrame)> = Vec::new();
    let mut prepare_map = |rect: egui::Rect,
                           cam: &Camera,
                           bin: usize,
                           context: bool,
                           encoder: &mut wgpu::CommandEncoder|
     -> memscape_render::alloc_map::AllocMapView {
        let r = pixel_rect(rect);
        let info = binned.bins.get(bin);
        let mut view = cam.view(
            info.map_or(1, |b| b.collapsed_extent),
            [r[2] as f32, r[3] as f32],
        );
        style(&mut view);
        if context {
            view.cushion = CushionKind::None;
            view.alpha = view.alpha.min(0.5);
        }
        let mut frame = AllocMapFrame::new(&ctx.device, &pipelines);
        frame.prepare_with(
            &ctx.device,
            &ctx.queue,
            encoder,
            &mut pipelines,
            &data,
            &view,
            [r[2], r[3]],
            [r[0] as f32, r[1] as f32],
            OFFSCREEN_FORMAT,
            &DrawOptions::range(info.map_or(0..0, |b| b.range.clone())),
        );
        maps.push((r, frame));
        view
    };
    let mut cell_views = Vec::new();
    for (k, cell) in layout.cells.iter().enumerate() {
        cell_views.push(prepare_map(cell.map, &camera, k, false, &mut encoder));
    }
    if let Some(ctx_rect) = layout.context {
        prepare_map(
            ctx_rect,
            &Camera::fit(t_extent),
            binned.largest_bin(),
            true,
            &mut encoder,
        );
    }
    if let Some(bar_data) = &bar_data {
        let mut bar_rects: Vec<(egui::Rect, Option<usize>)> = layout
            .cells
            .iter()
            .enumerate()
            .filter_map(|(k, c)| Some((c.bar?, Some(k))))
            .collect();
        if let Some(stacked) = layout.stacked {
            bar_rects.push((stacked, None));
        }
        for (rect, bin) in bar_rects {
            let r = pixel_rect(rect);
            let mut map_view = camera.view(1, [r[2] as f32, r[3] as f32]);
            style(&mut map_view);
            let view = OccupancyBarView::from_map(&map_view, variant);
            let mut frame = OccupancyBarFrame::new(&ctx.device, &pipelines);
            frame.prepare(
                &ctx.device,
                &ctx.queue,
                &mut encoder,
                &mut pipelines,
                bar_data,
                &view,
                bin,
                [r[2], r[3]],
                [r[0] as f32, r[1] as f32],
                OFFSCREEN_FORMAT,
            );
            bars.push((r, frame));
        }
    }
    if let Some(first) = cell_views.first() {
        overlay.prepare(
            &ctx.device,
            &ctx.queue,
            &mut cursor_pipelines,
            &cursors,
            &TimeMapping::from(first),
            &CursorStyle {
                opacity: a.cursor_opacity.clamp(0.0, 1.0),
                ..CursorStyle::default()
            },
            maps.first().map_or(1, |(r, _)| r[2]),
            OFFSCREEN_FORMAT,
        );
    }
    {
        let mut pass = target.begin_pass(&mut encoder, "render::alloc resolve", None);
        for (k, (r, frame)) in maps.iter().enumerate() {
            pass.set_viewport(r[0] as f32, r[1] as f32, r[2] as f32, r[3] as f32, 0.0, 1.0);
            frame.resolve(&mut pass, &pipelines);
            if k < layout.cells.len() {
                overlay.draw(&mut pass, &cursor_pipelines);
            }
        }
        for (r, frame) in &bars {
            pass.set_viewport(r[0] as f32, r[1] as f32, r[2] as f32, r[3] as f32, 0.0, 1.0);
            frame.resolve(&mut pass, &pipelines);
        }
    }
    ctx.queue.submit([encoder.finish()]);
    if panels.decorations {
        let mut picture = crate::views::picture::Picture::default();
        draw::decorate(
            &mut picture,
            &DecorateInputs {
                layout: &layout,
                binned: &binned,
                scene,
                trace: &t.trace,
                cam: &camera,
                axis,
                color_by,
                occupancy: panels.occupancy.then_some(variant),
                free_at_events: crate::views::alloc_map::model::events_at(&t.trace, axis, t1),
                time_cursor: None,
                focus_bin: binned.largest_bin(),
                pinned: None,
                highlighted: false,
            },
        );
        let mut shape_pipelines = memscape_render::shapes::ShapesPipelines::new(&ctx.device)?;
        let gpu: Vec<_> = picture.shapes.iter().map(|s| s.gpu()).collect();
        memscape_render::shapes::draw_into(
            ctx,
            &mut shape_pipelines,
            &gpu,
            &memscape_render::shapes::ShapesView::IDENTITY,
            &target,
            None,
        )?;
        crate::headless::paint_labels(ctx, &target, &picture.labels);
    }
    Ok(target.read(ctx)?)
}
