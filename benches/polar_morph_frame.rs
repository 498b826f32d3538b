//! Frame time of the cycle views' morph: N records (points + arcs between neighbours) at
//! 1920×1080, one frame = a new t uploaded as the uniform, the draw, and a blocking wait. Run
//! with `cargo bench --bench polar_morph_frame` (MEMSCAPE_ADAPTER=cpu|gpu picks the device;
//! MEMSCAPE_BENCH_RECORDS=100000,1000000 the sizes).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use memscape_render::polar_morph::{
    PolarMorphData, PolarMorphPipelines, PolarMorphView, draw_into,
};
use memscape_render::{AdapterChoice, GpuContext, OffscreenTarget};

fn frame_time(c: &mut Criterion) {
    let Ok(ctx) = GpuContext::new(AdapterChoice::from_env_or(AdapterChoice::Auto)) else {
        eprintln!("no GPU adapter: skipping the polar morph benchmark");
        return;
    };
    let (w, h) = (1920u32, 1080u32);
    let mut group = c.benchmark_group(format!(
        "polar_morph_frame_1920x1080 [{}]",
        ctx.adapter_name()
    ));
    group.sample_size(10);
    let sizes: Vec<usize> = std::env::var("MEMSCAPE_BENCH_RECORDS")
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![100_000]);
    for n in sizes {
        let (points, arcs) = memscape_render::polar_morph::synthetic_spiral(n);
        let mut pipelines = PolarMorphPipelines::new(&ctx.device).expect("pipelines");
        let mut data =
            PolarMorphData::new(&ctx.device, &pipelines, &points, &arcs).expect("upload");
        let target = OffscreenTarget::new(&ctx, w, h).expect("target");
        let mut view = PolarMorphView::centered(w as f32, h as f32, 1.0);
        view.point_radius_px = 1.2;
        if std::env::var_os("MEMSCAPE_BENCH_FIXED_PIECES").is_none() {
            view.arc_subdivisions = PolarMorphView::arc_pieces_for(n);
        }
        let mut t = 0.0f32;
        let label = format!("morph_{}_pieces", view.arc_subdivisions);
        group.bench_with_input(BenchmarkId::new(label, n), &n, |b, _| {
            b.iter(|| {
                t = (t + 0.01) % 1.0;
                view.t = t;
                draw_into(
                    &ctx,
                    &mut pipelines,
                    &mut data,
                    &view,
                    &target,
                    Some([0, 0, 0, 255]),
                );
                ctx.device
                    .poll(wgpu::PollType::wait_indefinitely())
                    .expect("poll");
            });
        });
    }
    group.finish();
}

criterion_group!(benches, frame_time);
criterion_main!(benches);
