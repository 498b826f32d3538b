//! What the view tests share: views drawn in-process through their one `compose` on Mesa's
//! lavapipe (the software Vulkan device golden images are made on), settings written as a tour
//! step's TOML fields, golden-image checks and pixel counts.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use memscape_render::golden::{self, Tolerance};
use memscape_render::{AdapterChoice, GpuContext, RgbaImage};
use memscape_views::{Dataset, ViewKind, ViewSettings};

/// Golden-image tolerance of the view tests: 3/255 per channel, 60 pixels (text edges).
pub const TOLERANCE: Tolerance = Tolerance {
    per_channel: 3,
    max_differing_pixels: 60,
};

/// The software device, made once per test binary.
pub fn ctx() -> &'static GpuContext {
    static CTX: OnceLock<GpuContext> = OnceLock::new();
    CTX.get_or_init(|| GpuContext::new(AdapterChoice::Cpu).expect("lavapipe (mesa-vulkan-drivers)"))
}

/// The device of the GPU-vs-CPU tests: lavapipe unless `MEMSCAPE_ADAPTER` asks for another
/// (`gpu`: a real GPU checks its shaders against the CPU twins), made once per test binary.
/// Golden-image tests keep [`ctx`]: their images are lavapipe's.
pub fn gpu_ctx() -> &'static GpuContext {
    static CTX: OnceLock<GpuContext> = OnceLock::new();
    CTX.get_or_init(|| {
        let choice = AdapterChoice::from_env_or(AdapterChoice::Cpu);
        GpuContext::new(choice).unwrap_or_else(|e| panic!("{choice:?} adapter: {e}"))
    })
}

/// Whether [`gpu_ctx`] is a software rasterizer (lavapipe).
pub fn gpu_ctx_is_software() -> bool {
    memscape_render::context::is_software(&gpu_ctx().device)
}

/// A file of the shared real-data directory (`../shared/data/<rel>` from the repository).
pub fn shared(rel: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(rel);
    assert!(
        p.exists(),
        "{} is missing (see ../shared/data/README.md)",
        p.display()
    );
    p
}

/// A file of the repository (`crates/memscape-graph/tests/data/…`, `assets/demo/…`).
pub fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// A file (or `demo`, `demo:sort`, …) loaded as `memscape render` loads it.
pub fn load(file: &Path) -> Dataset {
    memscape_views::render::load(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// The settings of `kind` given as a tour step's fields (TOML), the rest at their defaults.
pub fn settings(kind: ViewKind, fields: &str) -> ViewSettings {
    let table: toml::Table = toml::from_str(fields).unwrap();
    ViewSettings::from_table(kind, table).unwrap()
}

/// `settings` of `dataset` drawn at `width`×`height`.
pub fn try_draw(
    dataset: &Dataset,
    settings: &ViewSettings,
    width: u32,
    height: u32,
) -> memscape_views::Result<RgbaImage> {
    memscape_views::render::image(ctx(), dataset, settings, width, height)
}

/// `fields` of `kind` for `dataset`, drawn: the test fails on an error.
pub fn draw(dataset: &Dataset, kind: ViewKind, fields: &str, width: u32, height: u32) -> RgbaImage {
    try_draw(dataset, &settings(kind, fields), width, height)
        .unwrap_or_else(|e| panic!("{kind:?} {fields}: {}", chain(&e)))
}

/// The error and its causes, as `memscape` prints them.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(c) = source {
        s.push_str(": ");
        s.push_str(&c.to_string());
        source = c.source();
    }
    s
}

/// The error `fields` of `kind` give for `dataset`, with its causes.
pub fn error(dataset: &Dataset, kind: ViewKind, fields: &str) -> String {
    match try_draw(dataset, &settings(kind, fields), 320, 240) {
        Ok(_) => panic!("{kind:?} {fields}: no error"),
        Err(e) => chain(&e),
    }
}

/// Compares with `tests/golden/<name>.png` under [`TOLERANCE`] (the image is written to the
/// test's scratch directory too, for looking at).
pub fn check(name: &str, image: &RgbaImage) {
    check_with(name, image, TOLERANCE);
}

pub fn check_with(name: &str, image: &RgbaImage, tolerance: Tolerance) {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("memscape-views");
    std::fs::create_dir_all(&scratch).unwrap();
    image
        .save_png(&scratch.join(format!("{name}.png")))
        .unwrap();
    let reference = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.png"));
    golden::check(image, &reference, tolerance).unwrap();
}

/// Pixels within 10 of `want` in every channel.
pub fn count(img: &RgbaImage, want: [u8; 3]) -> usize {
    count_in(img, want, 10, 0, 0, img.width, img.height)
}

/// Pixels of `img` inside `[x0, x1) × [y0, y1)` within `tol` of `want`.
pub fn count_in(
    img: &RgbaImage,
    want: [u8; 3],
    tol: u8,
    x0: u32,
    y0: u32,
    x1: u32,
    y1: u32,
) -> usize {
    let mut n = 0;
    for y in y0..y1.min(img.height) {
        for x in x0..x1.min(img.width) {
            let p = img.pixel(x, y);
            if (0..3).all(|k| p[k].abs_diff(want[k]) < tol) {
                n += 1;
            }
        }
    }
    n
}

/// Whether `img` has a pixel within 10 of `want`.
pub fn has(img: &RgbaImage, want: [u8; 3]) -> bool {
    count(img, want) > 0
}

/// `picture` painted through the registry under `key` into a new image (one pixel per point),
/// labels through egui as the GUI paints them.
pub fn through_bridge(
    registry: &mut memscape_views::gpu::GpuRegistry,
    key: &memscape_views::gpu::PaneKey,
    picture: &memscape_views::Picture,
) -> RgbaImage {
    through_bridge_with(
        registry,
        key,
        picture,
        &memscape_views::gpu::PaintOptions::default(),
    )
}

/// [`through_bridge`] with what the pane asks besides its picture (a sums worker).
pub fn through_bridge_with(
    registry: &mut memscape_views::gpu::GpuRegistry,
    key: &memscape_views::gpu::PaneKey,
    picture: &memscape_views::Picture,
    options: &memscape_views::gpu::PaintOptions,
) -> RgbaImage {
    let ctx = ctx();
    let (w, h) = memscape_views::headless::picture_pixels(picture);
    let target = memscape_render::OffscreenTarget::new(ctx, w, h).unwrap();
    // Under a picture with a background: a colour no picture has, which the bridge must paint
    // over (it draws the background itself, as the GUI has egui draw none).
    if picture.background.is_some() {
        target.clear(ctx, [255, 0, 255, 255]);
    }
    let screen = egui_wgpu::ScreenDescriptor {
        size_in_pixels: [w, h],
        pixels_per_point: 1.0,
    };
    let pane = memscape_views::gpu::PanePicture {
        key: key.get(),
        rect: egui::Rect::from_min_size(egui::Pos2::ZERO, picture.size),
        picture,
        options,
    };
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    registry.prepare(&ctx.device, &ctx.queue, &screen, &mut encoder, &pane);
    {
        let mut pass = target.begin_pass(&mut encoder, "bridge test", None);
        registry.paint(&mut pass, &screen, &pane);
    }
    ctx.queue.submit([encoder.finish()]);
    memscape_views::headless::paint_labels(ctx, &target, &picture.labels);
    target.read(ctx).unwrap()
}

/// A generated trace of 400,000 events (seed 11) written as a mappable `.msc` in `dir`, and its
/// level-of-detail index coloured by thread, built beside it (`big.msc.thread.lod`).
pub fn indexed_synth_trace(dir: &Path) -> (PathBuf, memscape_lod::LodTrace) {
    let trace = dir.join("big.msc");
    memscape_lod::synth::write_mappable(
        memscape_lod::synth::SynthParams::new(400_000, 11),
        &trace,
        &mut |_| {},
    )
    .unwrap();
    let (lod, _) = memscape_lod::LodTrace::open(
        &trace,
        "thread",
        false,
        &mut |_, _| {},
        &std::sync::atomic::AtomicBool::new(false),
    )
    .unwrap();
    (trace, lod)
}

/// `data`'s blocks and times with the index and the refiner given, and no selection.
pub fn map_data_with(
    data: &memscape_views::picture::MapData,
    lod: Option<std::sync::Arc<memscape_lod::LodTrace>>,
    refiner: Option<std::sync::Arc<memscape_views::lod_refine::LodRefiner>>,
) -> std::sync::Arc<memscape_views::picture::MapData> {
    std::sync::Arc::new(memscape_views::picture::MapData {
        blocks: data.blocks.clone(),
        times: data.times.clone(),
        selection: None,
        lod,
        refiner,
        accumulate: None,
    })
}

/// sqlite3's real heaptrack recording, which the live tests replay into a `TraceBuilder` as a
/// recording growing.
pub fn sqlite_recording() -> memscape_trace::Trace {
    memscape_trace::load(&shared("heaptrack/sqlite_1M.raw.zst")).unwrap()
}

/// Where the live tests snapshot a replay of `real`: uneven cuts over its first 400,000 events
/// at most, one without new events.
pub fn uneven_cuts(real: &memscape_trace::Trace) -> [usize; 10] {
    let events = 400_000usize.min(real.event_order().len());
    [
        2_000, 9_000, 30_000, 30_000, 61_000, 120_000, 121_500, 200_000, 290_000, events,
    ]
}
