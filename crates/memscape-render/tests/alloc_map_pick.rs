//! GPU picking of the allocation map (lavapipe in CI) against its CPU reference.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_render::alloc_map::cpu_reference::{
    self, block_geometry_px, box_coverage, clamp_geometry_rect,
};
use memscape_render::alloc_map::{
    AllocBlockGpu, AllocMapData, AllocMapPicker, AllocMapPipelines, AllocMapView, BlockTimeGpu,
    PickResult,
};

mod common;
use common::ctx;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Random overlapping blocks in a `t_span × a_span` plane near `base`: large, medium, sub-pixel,
/// 1-byte and 1-event blocks, some on exact pixel borders, some exact duplicates (ties).
fn random_blocks(
    rng: &mut Rng,
    n: usize,
    base: u64,
    t_span: u64,
    a_span: u64,
) -> (Vec<AllocBlockGpu>, Vec<BlockTimeGpu>) {
    let mut blocks = Vec::new();
    let mut times = Vec::new();
    for i in 0..n {
        let kind = rng.below(6);
        let (t0, life, addr, size) = match kind {
            0 => (
                rng.below(t_span),
                1 + rng.below(t_span / 2),
                rng.below(a_span),
                1 + rng.below(a_span / 4),
            ),
            1 => (
                rng.below(t_span),
                1 + rng.below(t_span / 20),
                rng.below(a_span),
                1 + rng.below(a_span / 40),
            ),
            // Sub-pixel in both directions.
            2 => (rng.below(t_span), 1, rng.below(a_span), 1 + rng.below(8)),
            // One byte, long-lived.
            3 => (
                rng.below(t_span),
                1 + rng.below(t_span / 3),
                rng.below(a_span),
                1,
            ),
            // Aligned to pixel borders (spans are multiples of the view size in the tests).
            4 => {
                let tx = t_span / 100;
                let ay = a_span / 100;
                (
                    rng.below(100) * tx,
                    tx * (1 + rng.below(5)),
                    rng.below(100) * ay,
                    ay * (1 + rng.below(5)),
                )
            }
            // An exact duplicate of an earlier block: a tie on every pixel.
            _ if i > 0 => {
                let j = rng.below(i as u64) as usize;
                blocks.push(blocks[j]);
                times.push(times[j]);
                continue;
            }
            _ => (0, t_span, 0, a_span),
        };
        blocks.push(AllocBlockGpu::new(base + addr, size, [255; 4], 0.5));
        times.push(BlockTimeGpu::new(t0, t0 + life));
    }
    (blocks, times)
}

/// The coverage the CPU reference gives block `i` at view pixel `p`, clamped as for `result`.
fn coverage_of(
    view: &AllocMapView,
    size: [u32; 2],
    result: &PickResult,
    blocks: &[AllocBlockGpu],
    times: &[BlockTimeGpu],
    i: usize,
    p: [u32; 2],
) -> f32 {
    let lo = [result.origin_px[0] as f32, result.origin_px[1] as f32];
    let hi = [lo[0] + result.width as f32, lo[1] + result.height as f32];
    let g = block_geometry_px(view, size, &blocks[i], &times[i]);
    box_coverage(
        clamp_geometry_rect(g, lo, hi, 2.0),
        [p[0] as f32, p[1] as f32],
    )
}

/// Compares a GPU pick with the CPU reference pixel by pixel. A different winner is accepted only
/// on a near-tie (the two blocks' CPU coverages within 1e-5 relative: GPU and CPU f32 may round
/// differently); returns how many near-ties decided differently.
fn assert_same_pick(
    what: &str,
    view: &AllocMapView,
    size: [u32; 2],
    blocks: &[AllocBlockGpu],
    times: &[BlockTimeGpu],
    gpu: &PickResult,
    cpu: &PickResult,
) -> usize {
    assert_eq!(
        (gpu.origin_px, gpu.width, gpu.height),
        (cpu.origin_px, cpu.width, cpu.height),
        "{what}: windows differ"
    );
    let mut near_ties = 0;
    for y in 0..gpu.height {
        for x in 0..gpu.width {
            let p = [gpu.origin_px[0] + x, gpu.origin_px[1] + y];
            match (gpu.at(p), cpu.at(p)) {
                (None, None) => {}
                (Some(g), Some(c)) => {
                    let tol = 1e-5 * c.coverage.max(g.coverage);
                    if g.block != c.block {
                        let gc = coverage_of(view, size, cpu, blocks, times, g.block as usize, p);
                        assert!(
                            (gc - c.coverage).abs() <= tol,
                            "{what}: pixel {p:?}: GPU picked block {} (CPU coverage {gc}), CPU \
                             block {} (coverage {})",
                            g.block,
                            c.block,
                            c.coverage
                        );
                        near_ties += 1;
                    }
                    assert!(
                        (g.coverage - c.coverage).abs() <= tol,
                        "{what}: pixel {p:?}: coverage GPU {} CPU {}",
                        g.coverage,
                        c.coverage
                    );
                }
                (g, c) => panic!("{what}: pixel {p:?}: GPU {g:?}, CPU {c:?}"),
            }
        }
    }
    near_ties
}

#[test]
fn gpu_pick_matches_cpu_reference_on_random_block_sets() {
    let ctx = ctx();
    let pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let size = [200u32, 150];
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut picked = 0;
    let mut near_ties = 0;
    let mut compared = 0;
    for round in 0..4u64 {
        // Near the top of the 64-bit range in the later rounds: exact integer offsets matter.
        let base = if round % 2 == 0 {
            0x1000
        } else {
            0xffff_ff00_0000_0000
        };
        let (t_span, a_span) = (200 * (1 + round * 997), 150 * 4096 * (1 + round));
        let (blocks, times) = random_blocks(&mut rng, 400, base, t_span, a_span);
        // Small chunks: global indices across chunk boundaries.
        let data = AllocMapData::upload_chunked(
            &ctx.device,
            &pipelines,
            &blocks,
            &times,
            37 + round as usize,
        );
        let view = AllocMapView::fit(0, t_span, base, base + a_span, size[0], size[1]);
        let mut picker = AllocMapPicker::new(&ctx.device, &pipelines, 3);
        let mut cursors: Vec<[u32; 2]> = vec![[0, 0], [199, 149], [100, 75], [2, 148]];
        for _ in 0..12 {
            cursors.push([rng.below(200) as u32, rng.below(150) as u32]);
        }
        for cursor in cursors {
            let gpu = picker
                .pick_blocking(
                    &ctx.device,
                    &ctx.queue,
                    &pipelines,
                    &data,
                    &view,
                    size,
                    cursor,
                    None,
                )
                .unwrap();
            let cpu = cpu_reference::pick_window(&view, size, &blocks, &times, None, cursor, 3);
            near_ties += assert_same_pick(
                &format!("round {round}, cursor {cursor:?}"),
                &view,
                size,
                &blocks,
                &times,
                &gpu,
                &cpu,
            );
            picked += gpu.hits.iter().filter(|h| h.is_some()).count();
            compared += gpu.hits.len();
        }
    }
    eprintln!("{picked} hits in {compared} pixels, {near_ties} near-ties decided differently");
    assert!(
        picked > compared / 2,
        "too few hits to test anything: {picked}/{compared}"
    );
    assert!(
        near_ties * 100 <= picked,
        "{near_ties} near-ties decided differently out of {picked} hits"
    );
}

#[test]
fn ties_go_to_the_higher_index_across_chunks_and_sub_pixel_blocks_are_found() {
    let ctx = ctx();
    let pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    // Blocks 0..5 identical (full cover of the view), block 5 a 1-byte, 1-event block seen over a
    // gigabyte and a million events (coverage ~4e-11), block 6 identical to 0 again.
    let big = AllocBlockGpu::new(0, 1_000_000_000, [255; 4], 0.5);
    let mut blocks = vec![big; 5];
    let mut times = vec![BlockTimeGpu::new(0, 1_000_000); 5];
    blocks.push(AllocBlockGpu::new(500_000_000, 1, [255; 4], 0.5));
    times.push(BlockTimeGpu::new(500_000, 500_001));
    let view = AllocMapView::fit(0, 1_000_000, 0, 1_000_000_000, 200, 200);
    let size = [200, 200];
    let data = AllocMapData::upload_chunked(&ctx.device, &pipelines, &blocks, &times, 2);
    let mut picker = AllocMapPicker::new(&ctx.device, &pipelines, 1);
    let r = picker
        .pick_blocking(
            &ctx.device,
            &ctx.queue,
            &pipelines,
            &data,
            &view,
            size,
            [10, 10],
            None,
        )
        .unwrap();
    assert_eq!(r.at_cursor().map(|h| h.block), Some(4), "{r:?}");
    assert_eq!(r.at_cursor().map(|h| h.coverage), Some(1.0));

    // Without the big blocks, the sub-pixel block is still found at its pixel (100, 99).
    let r = picker
        .pick_blocking(
            &ctx.device,
            &ctx.queue,
            &pipelines,
            &data,
            &view,
            size,
            [100, 99],
            Some(5..6),
        )
        .unwrap();
    let hit = r
        .at_cursor()
        .expect("the 1-byte block vanished from picking");
    assert_eq!(hit.block, 5);
    assert!(hit.coverage > 0.0 && hit.coverage < 1e-9, "{hit:?}");
    let cpu = cpu_reference::pick_window(&view, size, &blocks, &times, Some(5..6), [100, 99], 1);
    assert_eq!(cpu.at_cursor().map(|h| h.block), Some(5));
    assert!((cpu.at_cursor().unwrap().coverage - hit.coverage).abs() <= hit.coverage * 1e-5);
    // One pixel off: `nearest` still finds it, `at_cursor` does not.
    let r = picker
        .pick_blocking(
            &ctx.device,
            &ctx.queue,
            &pipelines,
            &data,
            &view,
            size,
            [101, 98],
            Some(5..6),
        )
        .unwrap();
    assert_eq!(r.at_cursor(), None);
    assert_eq!(r.nearest().map(|h| h.block), Some(5));
    // Range 0..3: of the identical blocks, 2 wins.
    let r = picker
        .pick_blocking(
            &ctx.device,
            &ctx.queue,
            &pipelines,
            &data,
            &view,
            size,
            [199, 0],
            Some(0..3),
        )
        .unwrap();
    assert_eq!(r.at_cursor().map(|h| h.block), Some(2));
    assert_eq!((r.origin_px, r.width, r.height), ([198, 0], 2, 2));
}

#[test]
fn asynchronous_readback_arrives_after_submit_without_blocking() {
    let ctx = ctx();
    let pipelines = AllocMapPipelines::new(&ctx.device).unwrap();
    let mut rng = Rng(99);
    let (blocks, times) = random_blocks(&mut rng, 300, 0, 10_000, 1 << 20);
    let data = AllocMapData::upload(&ctx.device, &pipelines, &blocks, &times);
    let view = AllocMapView::fit(0, 10_000, 0, 1 << 20, 64, 64);
    let mut picker = AllocMapPicker::new(&ctx.device, &pipelines, 2);
    let mut encoder = ctx.device.create_command_encoder(&Default::default());
    let request = picker
        .request(
            &ctx.queue,
            &mut encoder,
            &pipelines,
            &data,
            &view,
            [64, 64],
            [30, 40],
            None,
        )
        .expect("an idle picker accepts a request");
    // A second request before the first was submitted and polled is refused.
    let mut other = ctx.device.create_command_encoder(&Default::default());
    assert!(
        picker
            .request(
                &ctx.queue,
                &mut other,
                &pipelines,
                &data,
                &view,
                [64, 64],
                [1, 1],
                None
            )
            .is_none()
    );
    ctx.queue.submit([encoder.finish()]);
    assert!(picker.busy());
    let start = std::time::Instant::now();
    let result = loop {
        let mut done = picker.poll(&ctx.device);
        if let Some(r) = done.pop() {
            break r;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "no pick result after 30 s of polling"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    assert_eq!(result.request, request);
    assert!(!picker.busy());
    let cpu = cpu_reference::pick_window(&view, [64, 64], &blocks, &times, None, [30, 40], 2);
    assert_same_pick("async", &view, [64, 64], &blocks, &times, &result, &cpu);
    assert!(result.hits.iter().any(Option::is_some));
}
