//! Headless frame time of the allocation map: N synthetic blocks at 1920×1080, zoomed out (every
//! block sub-pixel or a few pixels) and zoomed in (a 1/64 window of the trace), wall time around
//! a blocking submit + readback of one pixel row. Run with
//! `cargo bench --bench alloc_map_frame` (MEMSCAPE_ADAPTER=cpu|gpu picks the device).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use memscape_render::alloc_map::{
    AllocBlockGpu, AllocMapData, AllocMapFrame, AllocMapPipelines, AllocMapView, BlockTimeGpu,
};
use memscape_render::offscreen::OFFSCREEN_FORMAT;
use memscape_render::{AdapterChoice, GpuContext, OffscreenTarget};

/// A heap-like synthetic trace: bump-allocated addresses with reuse, log-uniform sizes and
/// lifetimes, in event-index time.
fn synthetic(n: usize) -> (Vec<AllocBlockGpu>, Vec<BlockTimeGpu>, u64, u64) {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut blocks = Vec::with_capacity(n);
    let mut times = Vec::with_capacity(n);
    let span = (n as u64) * 64;
    for i in 0..n as u64 {
        let size = 1u64 << (next() % 14);
        let addr = next() % span;
        let t0 = i * 2;
        let life = 1u64 << (next() % 20);
        blocks.push(AllocBlockGpu::new(
            addr,
            size,
            memscape_render::color::categorical((next() % 12) as u32),
            0.5,
        ));
        times.push(BlockTimeGpu::new(t0, t0 + life));
    }
    (blocks, times, 2 * n as u64, span)
}

fn frame_time(c: &mut Criterion) {
    let Ok(ctx) = GpuContext::new(AdapterChoice::from_env_or(AdapterChoice::Auto)) else {
        eprintln!("no GPU adapter: skipping the allocation map benchmark");
        return;
    };
    eprintln!("adapter: {}", ctx.adapter_name());
    let (w, h) = (1920u32, 1080u32);
    let mut group = c.benchmark_group(format!(
        "alloc_map_frame_1920x1080 [{}]",
        ctx.adapter_name()
    ));
    group.sample_size(10);
    let sizes: Vec<usize> = std::env::var("MEMSCAPE_BENCH_BLOCKS")
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![100_000, 1_000_000]);
    for n in sizes {
        let (blocks, times, t_extent, a_extent) = synthetic(n);
        let mut pipelines = AllocMapPipelines::new(&ctx.device).expect("pipelines");
        let data = AllocMapData::upload(&ctx.device, &pipelines, &blocks, &times);
        let target = OffscreenTarget::new(&ctx, w, h).expect("target");
        let mut frame = AllocMapFrame::new(&ctx.device, &pipelines);
        for (label, view) in [
            (
                "zoomed_out",
                AllocMapView::fit(0, t_extent, 0, a_extent, w, h),
            ),
            (
                "zoomed_in",
                AllocMapView::fit(
                    t_extent / 2,
                    t_extent / 2 + t_extent / 64,
                    a_extent / 2,
                    a_extent / 2 + a_extent / 64,
                    w,
                    h,
                ),
            ),
        ] {
            group.bench_with_input(BenchmarkId::new(label, n), &view, |b, view| {
                b.iter(|| {
                    let mut encoder = ctx.device.create_command_encoder(&Default::default());
                    frame.prepare(
                        &ctx.device,
                        &ctx.queue,
                        &mut encoder,
                        &mut pipelines,
                        &data,
                        view,
                        [w, h],
                        [0.0, 0.0],
                        OFFSCREEN_FORMAT,
                    );
                    frame.resolve_to(&mut encoder, &target.view, &pipelines);
                    ctx.queue.submit([encoder.finish()]);
                    ctx.device
                        .poll(wgpu::PollType::wait_indefinitely())
                        .expect("poll");
                });
            });
        }
        eprintln!(
            "{n} blocks: {} bytes per block on the GPU",
            std::mem::size_of::<AllocBlockGpu>() + std::mem::size_of::<BlockTimeGpu>()
        );
    }
    group.finish();
}

criterion_group!(benches, frame_time);
criterion_main!(benches);
