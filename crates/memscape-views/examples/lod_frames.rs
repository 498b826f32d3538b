//! A big trace's level-of-detail map frames as the GUI and `memscape render` draw them on the
//! default path of the device (`alloc_map::lod::prepare`: a level's sums, or the exact blocks
//! in view), resolved into a target and read back; per view, the wall and the process's CPU time
//! (user + system, every thread: lavapipe runs the GPU's work in this process) of each frame
//! after a first one (pipelines, shaders). BENCHMARKS.md, "Level of detail: frames at
//! 1920×1080 on lavapipe":
//!
//! ```sh
//! MEMSCAPE_ADAPTER=cpu cargo run --release -p memscape-views --example lod_frames -- \
//!     TRACE.msc [WIDTH HEIGHT [FRAMES]]
//! ```
//!
//! The views: the whole trace, zoomed out 2× and 4× past its time extent (what a level draws
//! at 1920×1080 for traces of tens of millions of events), 1/4 and 1/64 of it and the next
//! 1/64 (a pan), each at α 0.1 with cushions and α 1 without.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use memscape_lod::LodTrace;
use memscape_render::alloc_map::{AllocMapFrame, AllocMapPipelines, AllocMapView, CushionKind};
use memscape_render::offscreen::OffscreenTarget;
use memscape_render::{AdapterChoice, GpuContext};

#[path = "support/cpu.rs"]
mod cpu;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .ok_or("usage: lod_frames TRACE [WIDTH HEIGHT [FRAMES]]")?;
    let width: u32 = args.get(2).map_or(Ok(1920), |s| s.parse())?;
    let height: u32 = args.get(3).map_or(Ok(1080), |s| s.parse())?;
    let frames: usize = args.get(4).map_or(Ok(3), |s| s.parse())?;
    let (lod, _) = LodTrace::open(
        std::path::Path::new(path),
        "thread",
        false,
        &mut |_, _| {},
        &AtomicBool::new(false),
    )?;
    let ctx = GpuContext::new(AdapterChoice::from_env_or(AdapterChoice::Cpu))?;
    let [te, ye] = lod.extent();
    let windows = [
        ("whole", 0, te),
        ("zoomed out 2x", 0, 2 * te),
        ("zoomed out 4x", 0, 4 * te),
        ("1/4", te / 3, te / 3 + te / 4),
        ("1/64", te / 2, te / 2 + te / 64),
        ("1/64 panned", te / 2 + te / 64, te / 2 + te / 32),
    ];
    let size = [width, height];
    let mut pipelines = AllocMapPipelines::new(&ctx.device)?;
    let mut frame = AllocMapFrame::new(&ctx.device, &pipelines);
    let target = OffscreenTarget::new(&ctx, width, height)?;
    println!("view\talpha\tdrawn\twall_ms_per_frame\tcpu_ms_per_frame");
    // `LOD_FRAMES_VIEWS=2x,4x`: only the views whose names contain one of these (to profile them).
    let only = std::env::var("LOD_FRAMES_VIEWS").ok();
    let wanted = |name: &str| {
        only.as_deref()
            .is_none_or(|list| list.split(',').any(|part| name.contains(part)))
    };
    for (name, t0, t1) in windows.into_iter().filter(|w| wanted(w.0)) {
        for (alpha, cushion) in [(0.1f32, CushionKind::Parabolic), (1.0, CushionKind::None)] {
            let mut view = AllocMapView::fit(t0, t1, 0, ye, width, height);
            view.alpha = alpha;
            view.cushion = cushion;
            let (mut wall, mut cpu, mut drawn) = (Vec::new(), Vec::new(), String::new());
            for k in 0..=frames {
                let (c0, w0) = (cpu::cpu_ms("/proc/self/stat"), Instant::now());
                let mut encoder = ctx.device.create_command_encoder(&Default::default());
                let (upload, how) = memscape_views::alloc_map::lod::prepare(
                    memscape_views::alloc_map::lod::ExactOnGpu::of(&ctx.device),
                    &mut memscape_views::alloc_map::lod::LodFrameTarget::offscreen(
                        &ctx,
                        &mut encoder,
                        &mut pipelines,
                        &mut frame,
                    ),
                    None,
                    &lod,
                    &view,
                    size,
                );
                frame.resolve_to(&mut encoder, &target.view, &pipelines);
                ctx.queue.submit([encoder.finish()]);
                let image = target.read(&ctx)?;
                drop(upload);
                std::hint::black_box(image);
                if k > 0 {
                    wall.push(w0.elapsed().as_secs_f64() * 1e3);
                    cpu.push(cpu::cpu_ms("/proc/self/stat") - c0);
                }
                drawn = how.to_string();
            }
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
            let list = |v: &[f64]| {
                v.iter()
                    .map(|x| format!("{x:.0}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            println!(
                "{name}\t{alpha}\t{drawn}\t{:.0} ({})\t{:.0} ({})",
                mean(&wall),
                list(&wall),
                mean(&cpu),
                list(&cpu)
            );
        }
    }
    Ok(())
}
