//! Headless frame time of the allocation map: N synthetic blocks at 1920×1080, zoomed out (the
//! whole trace: every block sub-pixel or a few pixels) and zoomed in (a 1/64 × 1/64 window of
//! the time × address plane). One frame = the view uniform written, the accumulation pass over
//! every block, the resolve pass, submit, and a blocking wait for the device (no readback).
//!
//! Criterion measures that wall time. Where the adapter supports `TIMESTAMP_QUERY`, a few extra
//! frames are bracketed by timestamp writes (empty compute passes before and after) and their
//! GPU time is printed too. GPU bytes per block are printed for each size.
//!
//! Criterion needs at least 10 samples; from `MEMSCAPE_BENCH_MANUAL_FROM` blocks on (default
//! 5,000,000: a lavapipe frame then takes a minute or more) each case is instead timed over
//! `MEMSCAPE_BENCH_FRAMES` frames (default 3), wall time around the blocking submit and GPU time
//! by timestamps of the same frames, printed as `manual` lines.
//!
//! `MEMSCAPE_BENCH_PATH=raster|dense|auto` (default auto) chooses the accumulation path
//! (`AccumPath`): the dense path's compute passes, or every block rasterized; the path each
//! case took is printed.
//!
//! ```sh
//! MEMSCAPE_ADAPTER=cpu cargo bench --profile dev --bench alloc_map_frame -- --noplot
//! MEMSCAPE_BENCH_BLOCKS=100000,1000000 ...   # other sizes (default 1,000,000 and 10,000,000)
//! MEMSCAPE_BENCH_PATH=raster ...             # the raster path (before the dense path existed)
//! MEMSCAPE_BENCH_CUSHION=none|plateau ...     # other cushions (default parabolic)
//! ```

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, SamplingMode, criterion_group, criterion_main};
use memscape_render::alloc_map::dense::DENSE_BYTES_PER_PIXEL;
use memscape_render::alloc_map::{
    AccumPath, AllocBlockGpu, AllocMapData, AllocMapFrame, AllocMapPipelines, AllocMapView,
    BlockTimeGpu, CushionKind, DrawOptions,
};
use memscape_render::offscreen::OFFSCREEN_FORMAT;
use memscape_render::{AdapterChoice, GpuContext, OffscreenTarget};

use memscape_render::alloc_map::synthetic::heap_like as synthetic;

/// Records one frame (accumulate + resolve) into `encoder`.
#[allow(clippy::too_many_arguments)]
fn record_frame(
    ctx: &GpuContext,
    encoder: &mut wgpu::CommandEncoder,
    frame: &mut AllocMapFrame,
    pipelines: &mut AllocMapPipelines,
    data: &AllocMapData,
    view: &AllocMapView,
    target: &OffscreenTarget,
    size: [u32; 2],
) {
    frame.prepare_with(
        &ctx.device,
        &ctx.queue,
        encoder,
        pipelines,
        data,
        view,
        size,
        [0.0, 0.0],
        OFFSCREEN_FORMAT,
        &DrawOptions {
            path: bench_path(),
            ..Default::default()
        },
    );
    frame.resolve_to(encoder, &target.view, pipelines);
}

/// CPU time of this process so far (all threads, user + system), in milliseconds, on Linux. On
/// lavapipe the "GPU" runs in this process, so on a loaded machine this is a steadier measure of
/// a frame's work than wall time.
fn process_cpu_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    // USER_HZ is 100 on Linux.
    Some(ticks * 10.0)
}

/// Wall time (around submit + blocking wait), GPU time (from timestamps around the frame;
/// `None` when the device has no `TIMESTAMP_QUERY`) and process CPU time of `frames` frames, in
/// milliseconds.
#[allow(clippy::too_many_arguments)]
fn timed_frames_ms(
    ctx: &GpuContext,
    frame: &mut AllocMapFrame,
    pipelines: &mut AllocMapPipelines,
    data: &AllocMapData,
    view: &AllocMapView,
    target: &OffscreenTarget,
    size: [u32; 2],
    frames: usize,
) -> Vec<(f64, Option<f64>, Option<f64>)> {
    let timestamps = ctx
        .device
        .features()
        .contains(wgpu::Features::TIMESTAMP_QUERY);
    let queries = timestamps.then(|| {
        ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("bench::timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        })
    });
    let resolve = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bench::timestamps_resolve"),
        size: 16,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let readback = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bench::timestamps_readback"),
        size: 16,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let period_ns = f64::from(ctx.queue.get_timestamp_period());
    let mut out = Vec::new();
    for _ in 0..frames {
        let cpu_start = process_cpu_ms();
        let start = Instant::now();
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        let stamp = |encoder: &mut wgpu::CommandEncoder, index: u32| {
            if let Some(queries) = &queries {
                drop(encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("bench::timestamp"),
                    timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                        query_set: queries,
                        beginning_of_pass_write_index: Some(index),
                        end_of_pass_write_index: None,
                    }),
                }));
            }
        };
        stamp(&mut encoder, 0);
        record_frame(
            ctx,
            &mut encoder,
            frame,
            pipelines,
            data,
            view,
            target,
            size,
        );
        stamp(&mut encoder, 1);
        if let Some(queries) = &queries {
            encoder.resolve_query_set(queries, 0..2, &resolve, 0);
            encoder.copy_buffer_to_buffer(&resolve, 0, &readback, 0, 16);
        }
        ctx.queue.submit([encoder.finish()]);
        ctx.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("poll");
        let wall = start.elapsed().as_secs_f64() * 1e3;
        let cpu = cpu_start.zip(process_cpu_ms()).map(|(a, b)| b - a);
        if queries.is_none() {
            out.push((wall, None, cpu));
            continue;
        }
        let slice = readback.slice(..);
        slice.map_async(wgpu::MapMode::Read, |_| {});
        ctx.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("poll");
        let ticks: [u64; 2] = {
            let mapped = slice.get_mapped_range().expect("mapped timestamps");
            bytemuck::pod_read_unaligned(&mapped[..16])
        };
        readback.unmap();
        let gpu = ticks[1].wrapping_sub(ticks[0]) as f64 * period_ns / 1e6;
        out.push((wall, Some(gpu), cpu));
    }
    out
}

fn bench_path() -> AccumPath {
    match std::env::var("MEMSCAPE_BENCH_PATH").as_deref() {
        Ok("raster") => AccumPath::Raster,
        Ok("dense") => AccumPath::Dense,
        _ => AccumPath::Auto,
    }
}

fn bench_cushion() -> CushionKind {
    match std::env::var("MEMSCAPE_BENCH_CUSHION").as_deref() {
        Ok("none") => CushionKind::None,
        Ok("plateau") => CushionKind::Plateau,
        _ => CushionKind::Parabolic,
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn print_frames(label: &str, n: usize, how: &str, frames: &[(f64, Option<f64>, Option<f64>)]) {
    let wall: Vec<String> = frames.iter().map(|f| format!("{:.1}", f.0)).collect();
    let cpu: Vec<String> = frames
        .iter()
        .filter_map(|f| f.2.map(|c| format!("{c:.0}")))
        .collect();
    let gpu: Vec<String> = frames
        .iter()
        .filter_map(|f| f.1.map(|g| format!("{g:.1}")))
        .collect();
    eprintln!(
        "{label}/{n} {how}: wall ms per frame: {}; process CPU ms: {}; GPU ms by timestamps: {}",
        wall.join(", "),
        cpu.join(", "),
        if gpu.is_empty() {
            "not supported".to_owned()
        } else {
            gpu.join(", ")
        }
    );
}

fn frame_time(c: &mut Criterion) {
    let Ok(ctx) = GpuContext::new_with_features(
        AdapterChoice::from_env_or(AdapterChoice::Auto),
        wgpu::Features::TIMESTAMP_QUERY,
    ) else {
        eprintln!("no GPU adapter: skipping the allocation map benchmark");
        return;
    };
    let timestamps = ctx
        .device
        .features()
        .contains(wgpu::Features::TIMESTAMP_QUERY);
    eprintln!(
        "adapter: {}; timestamp queries: {}",
        ctx.adapter_name(),
        if timestamps { "yes" } else { "no" }
    );
    let (w, h) = (1920u32, 1080u32);
    let mut group = c.benchmark_group(format!(
        "alloc_map_frame_1920x1080 [{}]",
        ctx.adapter_name()
    ));
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(10));
    let sizes: Vec<usize> = std::env::var("MEMSCAPE_BENCH_BLOCKS")
        .ok()
        .map(|s| s.split(',').filter_map(|v| v.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1_000_000, 10_000_000]);
    let manual_from = env_usize("MEMSCAPE_BENCH_MANUAL_FROM", 5_000_000);
    for n in sizes {
        let generated = Instant::now();
        let (blocks, times, t_extent, a_extent) = synthetic(n);
        let generated = generated.elapsed();
        let mut pipelines = AllocMapPipelines::new(&ctx.device).expect("pipelines");
        let uploaded = Instant::now();
        let data = AllocMapData::upload(&ctx.device, &pipelines, &blocks, &times);
        ctx.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("poll");
        let uploaded = uploaded.elapsed();
        drop((blocks, times));
        let target = OffscreenTarget::new(&ctx, w, h).expect("target");
        let mut frame = AllocMapFrame::new(&ctx.device, &pipelines);
        let per_block = std::mem::size_of::<AllocBlockGpu>() + std::mem::size_of::<BlockTimeGpu>();
        // The dense path's raster list: 4 bytes per block where the device runs it.
        let list = if pipelines.dense_supported() { 4 } else { 0 };
        eprintln!(
            "{n} blocks: {} bytes per block on the GPU + 1 selection bit \
             ({:.1} MB in {} chunk(s)); per view: accumulation targets {:.1} MB at {w}x{h} \
             (+ {:.1} MB of difference arrays when drawn by the dense path); \
             generated in {:.2} s, uploaded in {:.2} s",
            per_block + list,
            ((per_block + list) as f64 + 0.125) * n as f64 / 1e6,
            data.chunk_count(),
            f64::from(w * h) * (16.0 + 4.0) / 1e6,
            f64::from(w * h) * DENSE_BYTES_PER_PIXEL as f64 / 1e6,
            generated.as_secs_f64(),
            uploaded.as_secs_f64(),
        );
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
            let view = AllocMapView {
                cushion: bench_cushion(),
                ..view
            };
            if n >= manual_from {
                let frames = timed_frames_ms(
                    &ctx,
                    &mut frame,
                    &mut pipelines,
                    &data,
                    &view,
                    &target,
                    [w, h],
                    env_usize("MEMSCAPE_BENCH_FRAMES", 3),
                );
                print_frames(label, n, "manual", &frames);
                eprintln!("{label}/{n}: {:?} path", frame.last_path());
                continue;
            }
            group.bench_with_input(BenchmarkId::new(label, n), &view, |b, view| {
                b.iter(|| {
                    let mut encoder = ctx.device.create_command_encoder(&Default::default());
                    record_frame(
                        &ctx,
                        &mut encoder,
                        &mut frame,
                        &mut pipelines,
                        &data,
                        view,
                        &target,
                        [w, h],
                    );
                    ctx.queue.submit([encoder.finish()]);
                    ctx.device
                        .poll(wgpu::PollType::wait_indefinitely())
                        .expect("poll");
                });
            });
            if timestamps {
                let frames = timed_frames_ms(
                    &ctx,
                    &mut frame,
                    &mut pipelines,
                    &data,
                    &view,
                    &target,
                    [w, h],
                    3,
                );
                print_frames(label, n, "after criterion", &frames);
            }
            eprintln!("{label}/{n}: {:?} path", frame.last_path());
        }
    }
    group.finish();
}

criterion_group!(benches, frame_time);
criterion_main!(benches);
