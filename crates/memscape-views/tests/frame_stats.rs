//! Frame statistics on lavapipe: a view drawn headless with its statistics (passes, the path
//! each allocation map took, GPU times where the device has timestamp queries) draws the same
//! pixels as without them, and the GUI's statistics overlay composes into a readable panel.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use memscape_render::alloc_map::AccumPath;
use memscape_render::{AdapterChoice, FrameStats, GpuContext, GpuTimingSupport, MapDrawStats};
use memscape_render::{PassTiming, RgbaImage};
use memscape_views::stats::{FrameTimes, OverlayInput, overlay_lines, overlay_picture};
use memscape_views::{ViewKind, ViewSettings};

#[test]
fn stats_of_a_headless_frame_name_every_pass_and_map_and_change_no_pixel() {
    let ctx = GpuContext::new_with_features(AdapterChoice::Cpu, wgpu::Features::TIMESTAMP_QUERY)
        .expect("lavapipe");
    let dataset = common::load(std::path::Path::new("demo"));
    let settings = ViewSettings::default_for(ViewKind::AllocMap);
    let plain = memscape_views::render::image(&ctx, &dataset, &settings, 400, 260).unwrap();
    let (image, stats) =
        memscape_views::render::image_with_stats(&ctx, &dataset, &settings, 400, 260).unwrap();
    assert_eq!(image.pixels, plain.pixels, "measuring changed the picture");
    let frame = &stats.frame;
    assert!(!frame.maps.is_empty(), "no map draw reported: {frame:?}");
    for (scope, m) in &frame.maps {
        assert!(scope.starts_with("layer "), "{scope}");
        assert_ne!(m.path, AccumPath::Auto);
        assert!(m.blocks > 0 && m.size[0] > 0 && m.size[1] > 0, "{m:?}");
    }
    let accumulations = frame
        .passes
        .iter()
        .filter(|p| p.pass.starts_with("alloc_map accumulate"))
        .count();
    assert!(accumulations >= 1, "{:?}", frame.passes);
    assert!(frame.passes.iter().any(|p| p.pass == "alloc_map resolve"));
    match frame.timing {
        // Lavapipe has timestamp queries: every pass is timed.
        GpuTimingSupport::Passes => {
            for p in &frame.passes {
                assert!(p.gpu_ns.is_some(), "{p:?} not timed");
            }
            assert!(frame.gpu_total_ns().is_some_and(|ns| ns > 0));
        }
        GpuTimingSupport::Unavailable => {
            assert!(frame.passes.iter().all(|p| p.gpu_ns.is_none()));
        }
    }
    assert!(stats.draw.as_nanos() > 0);
}

fn sample_stats(timing: GpuTimingSupport) -> FrameStats {
    let ns = |v| (timing == GpuTimingSupport::Passes).then_some(v);
    FrameStats {
        timing,
        passes: vec![
            PassTiming {
                scope: "pane 3 · map 0".into(),
                pass: "alloc_map accumulate (raster)".into(),
                gpu_ns: ns(1_234_000),
            },
            PassTiming {
                scope: "pane 4 · map 1".into(),
                pass: "alloc_map dense scan".into(),
                gpu_ns: ns(456_000),
            },
        ],
        maps: vec![
            (
                "pane 3 · map 0".into(),
                MapDrawStats {
                    path: AccumPath::Raster,
                    blocks: 1_234_567,
                    size: [800, 600],
                },
            ),
            (
                "pane 4 · map 1".into(),
                MapDrawStats {
                    path: AccumPath::Dense,
                    blocks: 42,
                    size: [300, 200],
                },
            ),
        ],
    }
}

fn times(values: &[f64]) -> FrameTimes {
    let mut t = FrameTimes::new(240);
    for v in values {
        t.push(*v);
    }
    t
}

#[test]
fn the_overlay_says_what_it_measured() {
    let (frame, cpu) = (times(&[16.0, 17.0, 40.0]), times(&[2.0, 3.0]));
    let gpu = sample_stats(GpuTimingSupport::Passes);
    let input = OverlayInput {
        frame: &frame,
        cpu: &cpu,
        gpu: Some(&gpu),
        adapter: "llvmpipe · Vulkan",
        key: "F3",
    };
    let text: Vec<String> = overlay_lines(&input).into_iter().map(|l| l.0).collect();
    let all = text.join("\n");
    assert!(all.contains("frame statistics (F3)"), "{all}");
    assert!(
        all.contains("frame interval 24.3 ms mean · 40.0 ms p99 (3 frames)"),
        "{all}"
    );
    assert!(
        all.contains("CPU per frame 2.5 ms mean · 3.0 ms p99"),
        "{all}"
    );
    assert!(
        all.contains("pane 3 · map 0 · alloc_map accumulate (raster): 1.23 ms"),
        "{all}"
    );
    assert!(
        all.contains("pane 3 · map 0: raster, 1,234,567 blocks, 800×600"),
        "{all}"
    );
    assert!(
        all.contains("pane 4 · map 1: dense, 42 blocks, 300×200"),
        "{all}"
    );
    let none = sample_stats(GpuTimingSupport::Unavailable);
    let input = OverlayInput {
        gpu: Some(&none),
        ..input
    };
    let all: Vec<String> = overlay_lines(&input).into_iter().map(|l| l.0).collect();
    assert!(
        all.iter()
            .any(|l| l == "GPU timing unavailable on this adapter"),
        "{all:?}"
    );
    assert!(
        !all.iter()
            .any(|l| l.contains(" ms") && l.contains("accumulate"))
    );
}

#[test]
fn the_overlay_composes_into_a_dark_panel_with_text() {
    let (frame, cpu) = (times(&[16.0, 17.0, 18.0]), times(&[2.0, 3.0]));
    let gpu = sample_stats(GpuTimingSupport::Passes);
    let picture = overlay_picture(&OverlayInput {
        frame: &frame,
        cpu: &cpu,
        gpu: Some(&gpu),
        adapter: "llvmpipe (LLVM 15.0.6, 256 bits) · Vulkan",
        key: "F3",
    });
    // Drawn over a white background, as over a bright pane.
    let mut picture = picture;
    picture.background = Some([255, 255, 255, 255]);
    let image = memscape_views::headless::render_picture(common::ctx(), &picture).unwrap();
    if let Ok(dir) = std::env::var("MEMSCAPE_SAVE_OVERLAY") {
        image
            .save_png(&std::path::Path::new(&dir).join("overlay.png"))
            .unwrap();
    }
    let px = |x: u32, y: u32| -> [u8; 4] {
        let i = ((y * image.width + x) * 4) as usize;
        image.pixels[i..i + 4].try_into().unwrap()
    };
    assert!(
        image.width > 250 && image.height > 150,
        "{}x{}",
        image.width,
        image.height
    );
    // The panel is dark (its fill over white at 225/255) and holds light and yellow text.
    let inside = px(image.width - 6, image.height / 2);
    assert!(
        inside[0] < 60 && inside[1] < 60 && inside[2] < 70,
        "{inside:?}"
    );
    let light = count(&image, |p| p[0] > 180 && p[1] > 180 && p[2] > 180, 6);
    let yellow = count(&image, |p| p[0] > 200 && p[1] > 150 && p[2] < 150, 6);
    assert!(light > 300, "{light} light text pixels");
    assert!(yellow > 50, "{yellow} heading pixels");
}

/// Pixels for which `f` holds, at least `margin` pixels inside the image (the white edge left
/// by the rounded corners and the border are not text).
fn count(image: &RgbaImage, f: impl Fn([u8; 4]) -> bool, margin: u32) -> usize {
    let mut n = 0;
    for y in margin..image.height - margin {
        for x in margin..image.width - margin {
            let i = ((y * image.width + x) * 4) as usize;
            if f(image.pixels[i..i + 4].try_into().unwrap()) {
                n += 1;
            }
        }
    }
    n
}
