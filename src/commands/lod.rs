//! `memscape lod`: the level-of-detail index beside a trace (build, inspect) and allocation-map
//! frames drawn from it. The logic lives in memscape-lod ([`memscape_lod::LodTrace`]).

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::cli::{LodArgs, LodCommand, LodCurveArgs, LodRenderArgs};
use anyhow::Context;
use memscape_lod::eq1::Cushion;
use memscape_lod::{FramePath, LodTrace};

pub fn run(args: &LodArgs) -> anyhow::Result<ExitCode> {
    match &args.command {
        LodCommand::Build(a) => {
            let (t, report) = open(&a.trace, &a.coloring, a.force)?;
            let m = t.meta();
            let len = t.index.file_len() as f64;
            match report.built {
                Some(d) => println!(
                    "built {} in {:.2} s",
                    t.index_path.display(),
                    d.as_secs_f64()
                ),
                None => println!("{} is current", t.index_path.display()),
            }
            // What `info` prints, stored beside the index: its first run answers from it.
            if super::info::store_default_summary(&a.trace)? {
                println!("summary stored for `memscape info`");
            }
            let copied: u64 = m
                .classes
                .iter()
                .filter(|c| c.copied)
                .map(|c| c.blocks.len / 40)
                .sum();
            println!(
                "{} blocks, {} events, {} regions; {} levels, {} size classes ({} blocks copied); {:.1} MB ({:.1} B a block)",
                m.blocks,
                m.source.events,
                m.axis.regions.len(),
                m.levels.len(),
                m.classes.len(),
                copied,
                len / 1e6,
                len / m.blocks.max(1) as f64
            );
            Ok(ExitCode::SUCCESS)
        }
        LodCommand::Render(a) => render(a),
        LodCommand::Curve(a) => curve(a),
    }
}

/// `memscape lod curve`: the heap-size curve read from the index, one line per column.
fn curve(a: &LodCurveArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        (1..=1_000_000).contains(&a.columns),
        "--columns {}: expected 1 to 1000000",
        a.columns
    );
    let (t, _) = open(&a.trace, &a.coloring, false)?;
    let te = t.extent()[0];
    let (t0, t1) = match &a.window {
        None => (0, te),
        Some(s) => s
            .split_once(':')
            .and_then(|(x, y)| Some((x.trim().parse().ok()?, y.trim().parse().ok()?)))
            .filter(|(x, y): &(u64, u64)| x < y)
            .with_context(|| {
                format!("--window {s:?}: expected T0:T1 with T0 < T1 (events 0:{te})")
            })?,
    };
    let bins = t.heap_curve([t0, t1], a.columns);
    anyhow::ensure!(
        !bins.is_empty(),
        "{}: the index has no heap-size curve",
        t.index_path.display()
    );
    let span = u128::from(t1 - t0);
    let n = bins.len() as u128;
    println!("t0\tt1\tmin_bytes\tmax_bytes\tend_bytes");
    for (c, b) in bins.iter().enumerate() {
        let at = |k: u128| t0 + (span * k / n) as u64;
        println!(
            "{}\t{}\t{}\t{}\t{}",
            at(c as u128),
            at(c as u128 + 1),
            b.min,
            b.max,
            b.end
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn open(
    trace: &Path,
    coloring: &str,
    force: bool,
) -> anyhow::Result<(LodTrace, memscape_lod::open::OpenReport)> {
    let mut last = (0u8, -1i64);
    let start = Instant::now();
    LodTrace::open(
        trace,
        coloring,
        force,
        &mut |pass, f| {
            let pct = (f * 100.0) as i64;
            if (pass, pct / 10) != (last.0, last.1 / 10) {
                last = (pass, pct);
                eprintln!(
                    "building the index: pass {pass}, {pct:3} % ({:.1} s)",
                    start.elapsed().as_secs_f64()
                );
            }
        },
        &AtomicBool::new(false),
    )
    .map_err(anyhow::Error::from)
}

fn render(a: &LodRenderArgs) -> anyhow::Result<ExitCode> {
    let (w, h) = a
        .size
        .split_once('x')
        .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)))
        .filter(|&(w, h)| (1..=16384).contains(&w) && (1..=16384).contains(&h))
        .with_context(|| {
            format!(
                "--size {:?}: expected WIDTHxHEIGHT, each 1 to 16384",
                a.size
            )
        })?;
    let cushion = match a.cushion.as_str() {
        "parabolic" => Cushion::Parabolic,
        "plateau" => Cushion::Plateau,
        "none" => Cushion::None,
        other => anyhow::bail!("--cushion {other:?}: expected parabolic, plateau or none"),
    };
    let path = match a.path.as_deref() {
        Some("lod") => FramePath::Lod,
        Some("exact") => FramePath::Exact,
        Some(other) => anyhow::bail!("--path {other:?}: expected lod or exact"),
        None => FramePath::from_env().unwrap_or_default(),
    };
    anyhow::ensure!(
        a.alpha > 0.0 && a.alpha <= 1.0,
        "--alpha {}: expected (0, 1]",
        a.alpha
    );
    let (t, report) = open(&a.trace, &a.coloring, false)?;
    let [te, ye] = t.extent();
    let mut view = match &a.window {
        None => t.whole_view(w, h),
        Some(s) => {
            let parse = |r: &str, whole: u64| -> Option<(u64, u64)> {
                if r.trim() == "*" {
                    return Some((0, whole));
                }
                let (x, y) = r.split_once(':')?;
                Some((x.trim().parse().ok()?, y.trim().parse().ok()?))
            };
            let ((t0, t1), (a0, a1)) = s
                .split_once(',')
                .and_then(|(tr, ar)| Some((parse(tr, te)?, parse(ar, ye)?)))
                .filter(|((t0, t1), (a0, a1))| t0 < t1 && a0 < a1)
                .with_context(|| format!("--window {s:?}: expected T0:T1,A0:A1 with T0 < T1 and A0 < A1 (plane: 0:{te},0:{ye})"))?;
            memscape_lod::LodView::fit(t0, t1, a0, a1, w, h)
        }
    };
    view.alpha = a.alpha;
    view.cushion = cushion;
    let frame_start = Instant::now();
    let (pixels, stats) = t.frame(&view, path);
    let frame = frame_start.elapsed();
    let mut img = memscape_render::RgbaImage::new(w, h, [0, 0, 0, 255]);
    img.pixels = pixels.into_iter().flatten().collect();
    img.save_png(&a.output)
        .with_context(|| format!("{}", a.output.display()))?;
    let level = stats.level.map_or(String::from("exact blocks"), |l| {
        let d = t.index.levels[l].desc;
        format!("level 2^{} events × 2^{} bytes", d.log_tau, d.log_sig)
    });
    println!(
        "{}: {w}x{h} from {level}: {} cells, {} exact blocks; trace opened in {:.3} s, index {} in {:.3} s, frame {:.3} s",
        a.output.display(),
        stats.cells,
        stats.exact_blocks,
        report.opened_trace.as_secs_f64(),
        report.built.map_or("opened", |_| "built and opened"),
        report.built.unwrap_or_default().as_secs_f64() + report.opened_index.as_secs_f64(),
        frame.as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// `memscape render --view alloc` of a big trace from its level-of-detail index (the choice is
/// `memscape_views::alloc_map::lod`'s, where the map's draw paths are chosen): a picture whose
/// map layer draws from the index, through the same headless drawer as every picture (exact GPU
/// pipeline when few blocks are in view, else the index's sums resolved on the GPU). `Ok(None)`
/// when the exact pipeline draws it (small trace, or settings the index does not carry: said on
/// stderr).
pub fn render_alloc_map(
    args: &crate::cli::RenderArgs,
    file: &Path,
) -> anyhow::Result<Option<ExitCode>> {
    use memscape_views::ViewKind;
    use memscape_views::alloc_map::lod::{self as map_lod, PathChoice};
    if args.view != ViewKind::AllocMap {
        return Ok(None);
    }
    if crate::app::engine_heap::is_trace_dataset(file) {
        return render_dataset_map(args, file);
    }
    let path = memscape_views::demo::resolve_path(file)?;
    if !map_lod::wants_lod(&path) {
        return Ok(None);
    }
    let forced = PathChoice::from_env() == PathChoice::Lod;
    let open_start = Instant::now();
    let s = &args.alloc;
    // The trace's header first (mapped: cheap), so that settings the index cannot draw do not
    // build it.
    let header = memscape_lod::trace_source::TraceFile::open(&path)?;
    if let Some(why) = map_lod::unsupported(s, &header.trace) {
        anyhow::ensure!(
            !forced,
            "MEMSCAPE_ALLOC_MAP_PATH=lod: the level-of-detail index cannot draw {why}"
        );
        eprintln!(
            "{}: {why} is drawn exactly (every block), not from the level-of-detail index",
            path.display()
        );
        return Ok(None);
    }
    drop(header);
    let (t, report) = open(&path, map_lod::LOD_COLORINGS, false)?;
    let window = map_window(args, &t.meta().axis, t.extent())?;
    let opened = format!(
        "index {} {}",
        t.index_path.display(),
        report.built.map_or("opened", |_| "built")
    );
    let opened = Opened {
        line: opened,
        took: open_start.elapsed(),
    };
    draw_map(args, &path, std::sync::Arc::new(t), window, &opened)?;
    Ok(Some(ExitCode::SUCCESS))
}

/// `memscape render DATASET/ --view alloc` of a big Parquet trace dataset (more blocks than a
/// trace file is drawn exactly with, `lod_block_threshold`, or `MEMSCAPE_ALLOC_MAP_PATH=lod`):
/// the map drawn from the query engine's level-of-detail tiles (`app::engine_map`), the
/// dataset's blocks never read here. `Ok(None)` (the blocks are read and drawn exactly, as a
/// small trace file's) for a small dataset, without the engine, with
/// `MEMSCAPE_ALLOC_MAP_PATH=raster|dense|exact`, or for settings the index does not carry.
fn render_dataset_map(
    args: &crate::cli::RenderArgs,
    dir: &Path,
) -> anyhow::Result<Option<ExitCode>> {
    use memscape_views::alloc_map::lod::{self as map_lod, PathChoice};
    let forced = PathChoice::from_env() == PathChoice::Lod;
    if !cfg!(feature = "engine") || PathChoice::from_env() == PathChoice::Exact {
        return Ok(None);
    }
    let manifest = memscape_parquet::Manifest::read(dir)?;
    let host = manifest.pick_host(dir, None)?;
    let blocks = manifest.hosts.get(&host).map_or(0, |h| h.rows);
    if !forced && blocks <= map_lod::lod_block_threshold() {
        return Ok(None);
    }
    let open_start = Instant::now();
    let skeleton = memscape_parquet::trace::read_trace_skeleton(dir, None)?;
    if let Some(why) = map_lod::unsupported(&args.alloc, &skeleton) {
        anyhow::ensure!(
            !forced,
            "MEMSCAPE_ALLOC_MAP_PATH=lod: the level-of-detail index cannot draw {why}"
        );
        eprintln!(
            "{}: {why} is drawn exactly (every block read), not from the query engine's level of detail",
            dir.display()
        );
        return Ok(None);
    }
    let (t, window, report) = crate::app::engine_map::open_view(
        dir,
        skeleton,
        &args.engine,
        |axis, extent| map_window(args, axis, extent),
        [args.width, args.height],
    )?;
    let opened = Opened {
        line: report.line(),
        took: open_start.elapsed(),
    };
    draw_map(args, dir, std::sync::Arc::new(t), window, &opened)?;
    Ok(Some(ExitCode::SUCCESS))
}

/// The window of `--range-time`/`--range-addr` on a map of `extent` (events × collapsed bytes)
/// laid out on `axis`, checked; `--width`/`--height` checked too.
pub fn map_window(
    args: &crate::cli::RenderArgs,
    axis: &memscape_lod::source::AddressAxis,
    extent: [u64; 2],
) -> anyhow::Result<([u64; 2], [u64; 2])> {
    let (w, h) = (args.width, args.height);
    anyhow::ensure!(
        (1..=16384).contains(&w) && (1..=16384).contains(&h),
        "--width/--height {w}x{h}: expected 1 to 16384 each"
    );
    let s = &args.alloc;
    let [te, ye] = extent;
    let (t0, t1) = s.range_time.map_or((0, te), |r| (r.start, r.end));
    let (a0, a1) = match s.range_addr {
        None => (0, ye),
        Some(r) => {
            let c = |a: u64| axis.collapse(a);
            let (Some(a0), Some(a1)) = (c(r.start), c(r.end.saturating_sub(1)).map(|a| a + 1))
            else {
                anyhow::bail!(
                    "--range-addr {:#x}..{:#x}: both ends must lie inside used address regions",
                    r.start,
                    r.end
                );
            };
            (a0, a1)
        }
    };
    anyhow::ensure!(
        t0 < t1 && a0 < a1,
        "--range-time/--range-addr: an empty window"
    );
    Ok(([t0, t1], [a0, a1]))
}

/// How a map's level-of-detail index was opened: the line said on stderr, and how long it took.
pub struct Opened {
    pub line: String,
    pub took: std::time::Duration,
}

/// Draws the map of `t` in `window` as `args` ask (PNG or SVG, `--out`; with `--stats`, the
/// PNG measured and its statistics as JSON on stdout), saying on stderr which path drew it and
/// how the index was `opened`.
pub fn draw_map(
    args: &crate::cli::RenderArgs,
    path: &Path,
    t: std::sync::Arc<LodTrace>,
    window: ([u64; 2], [u64; 2]),
    opened: &Opened,
) -> anyhow::Result<()> {
    use memscape_views::alloc_map::lod as map_lod;
    let s = &args.alloc;
    let (w, h) = (args.width, args.height);
    let ([t0, t1], [a0, a1]) = window;
    let view = memscape_lod::LodView::fit(t0, t1, a0, a1, w, h);
    // The level the frame is drawn from (small frames from finer cells).
    let how = match t.index.level_for_frame(&view) {
        Some(l) => {
            let d = t.index.levels[l].desc;
            format!(
                "level of detail (level 2^{} events × 2^{} bytes, resolved on the GPU)",
                d.log_tau, d.log_sig
            )
        }
        // Finer than every level: exact blocks, unless they are many and a level's cells
        // are at most about a pixel and a half (`LodIndex::level_for_view`).
        None => match t.index.level_for_view(&view) {
            Some(l) => {
                let d = t.index.levels[l].desc;
                format!(
                    "exact blocks through the GPU pipeline up to {} in view on a software \
                     rasterizer ({} on a hardware GPU); beyond, the millions of blocks in view \
                     from the level 2^{} events × 2^{} bytes (cells of at most {} pixels)",
                    map_lod::EXACT_GPU_MAX_BLOCKS,
                    map_lod::EXACT_GPU_MAX_BLOCKS_HARDWARE,
                    d.log_tau,
                    d.log_sig,
                    memscape_lod::index::COARSE_CELL_PIXELS
                )
            }
            None => format!(
                "exact blocks found through the index (the GPU pipeline for up to {} in view on a \
                 software rasterizer, {} on a hardware GPU; CPU sums beyond)",
                map_lod::EXACT_GPU_MAX_BLOCKS,
                map_lod::EXACT_GPU_MAX_BLOCKS_HARDWARE
            ),
        },
    };
    let style = memscape_views::picture::MapStyle {
        alpha: s.alpha,
        cushion: s.cushion.kind(),
        cushion_strength: s.relief,
        color_mode: memscape_render::alloc_map::ColorMode::Categorical,
    };
    let compose_start = Instant::now();
    let picture = map_lod::picture(t, window, style, egui::vec2(w as f32, h as f32));
    let compose = compose_start.elapsed();
    if args.stats {
        // The frame plain `render` draws, drawn and timed the same way (issue 25).
        let ctx =
            memscape_views::render::gpu_context_timed(super::render::adapter_choice(args.adapter))?;
        let (image, stats) = memscape_views::render::picture_with_stats(&ctx, &picture, compose)?;
        image.save_png(&args.out)?;
        // What was drawn, measured: where the sums were made, which `how` cannot know.
        let drawn = stats
            .lod
            .first()
            .map_or(String::new(), |l| format!(" ({})", l.drawn));
        eprintln!(
            "{}: allocation map from {how}{drawn}; {}, frame {:.3} s",
            path.display(),
            opened.line,
            (stats.compose + stats.draw).as_secs_f64()
        );
        return super::render::print_stats(args, path, &ctx, opened.took, &stats);
    }
    let ctx = super::render::gpu_context(args.adapter)?;
    let frame_start = Instant::now();
    match crate::cli::ImageFormat::of(args.format, &args.out) {
        crate::cli::ImageFormat::Png => {
            memscape_views::headless::render_picture(&ctx, &picture)?.save_png(&args.out)?
        }
        crate::cli::ImageFormat::Svg => {
            let svg = memscape_views::svg::picture_svg(&ctx, &picture)?;
            std::fs::write(&args.out, svg)
                .with_context(|| format!("writing {}", args.out.display()))?;
        }
    }
    eprintln!(
        "{}: allocation map from {how}; {}, frame {:.3} s",
        path.display(),
        opened.line,
        frame_start.elapsed().as_secs_f64()
    );
    println!("{}", args.out.display());
    Ok(())
}
