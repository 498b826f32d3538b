//! Eq. 1's CPU sums of big map and bar layers off the UI thread (issue 25, `sums_worker`): each
//! view is summed once (asking again, or from another place on the screen, computes nothing), a
//! newer view replaces one not started and cancels one running, and through the paint bridge on lavapipe a frame never waits for the sums while the picture
//! it settles on is the one summed on the spot (what the bridge drew before the worker).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use memscape_render::alloc_map::cpu_reference::exact_sums;
use memscape_render::alloc_map::dense::CPU_SUMS_MIN_BLOCKS;
use memscape_render::alloc_map::synthetic::heap_like;
use memscape_render::alloc_map::{
    AllocMapView, BarBlocks, ColorMode, CushionKind, OccupancySteps, OccupancyVariant,
};
use memscape_render::offscreen::OFFSCREEN_FORMAT;
use memscape_views::gpu::{GpuRegistry, PaintOptions, PaneKey};
use memscape_views::picture::{BarLayer, Layer, MapData, MapLayer, MapStyle, MapWindow, Picture};
use memscape_views::sums_worker::{SumsJob, SumsSource, SumsWorker, bar_slot, map_slot};

mod common;
use common::{ctx, through_bridge, through_bridge_with};

const THREADS: usize = 2;

fn map_source(n: usize) -> (SumsSource, u64, u64) {
    let (blocks, times, te, ye) = heap_like(n);
    (
        SumsSource::Map {
            blocks: Arc::new(blocks),
            times: Arc::new(times),
        },
        te,
        ye,
    )
}

fn job(source: &SumsSource, n: usize, view: AllocMapView, size: [u32; 2]) -> SumsJob {
    SumsJob {
        source: source.clone(),
        range: 0..n,
        view,
        size,
        row: None,
        accumulate: None,
    }
}

/// Waits until the worker has nothing pending (panics after 120 s).
fn settle(worker: &SumsWorker) {
    let start = Instant::now();
    while worker.pending() {
        assert!(start.elapsed() < Duration::from_secs(120), "never summed");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_view_is_summed_once_and_equals_the_cpu_reference() {
    let n = 50_000;
    let (source, te, ye) = map_source(n);
    let size = [120, 80];
    let view = AllocMapView::fit(0, te, 0, ye, size[0], size[1]);
    let worker = SumsWorker::new(None, THREADS).unwrap();
    assert!(
        worker
            .want(map_slot(0), job(&source, n, view, size))
            .is_none()
    );
    assert!(worker.pending());
    settle(&worker);
    for _ in 0..10 {
        let done = worker.want(map_slot(0), job(&source, n, view, size));
        assert!(done.is_some());
    }
    settle(&worker);
    assert_eq!(worker.finished(), 1, "the same view summed again");
    let done = worker.latest(map_slot(0)).unwrap();
    let SumsSource::Map { blocks, times } = &source else {
        unreachable!()
    };
    let want = exact_sums(&view, size, blocks, times, Some(0..n), THREADS);
    assert_eq!(done.sums, want, "the worker's sums are exact_sums'");
    assert_eq!(done.view, view.eq1(size));
    // Another slot, another size: summed.
    worker.want(map_slot(1), job(&source, n, view, [60, 40]));
    settle(&worker);
    assert_eq!(worker.finished(), 2);
    // Another view of the first slot, then back: each summed (one picture kept per slot).
    let other = AllocMapView::fit(0, te / 2, 0, ye, size[0], size[1]);
    worker.want(map_slot(0), job(&source, n, other, size));
    settle(&worker);
    assert_eq!(worker.finished(), 3);
    worker.want(map_slot(0), job(&source, n, view, size));
    settle(&worker);
    assert_eq!(worker.finished(), 4);
}

#[test]
fn a_newer_view_replaces_the_one_waiting_and_cancels_the_one_running() {
    let n = 1_000_000;
    let (source, te, ye) = map_source(n);
    let size = [200, 100];
    let view = |k: u64| AllocMapView::fit(0, te / k, 0, ye, size[0], size[1]);
    let worker = SumsWorker::new(None, THREADS).unwrap();
    // Held: the first view is replaced before it starts, and never summed.
    worker.hold(Duration::from_secs(60));
    worker.want(map_slot(0), job(&source, n, view(1), size));
    worker.want(map_slot(0), job(&source, n, view(2), size));
    assert!(worker.progress().is_none(), "started while held");
    worker.release();
    settle(&worker);
    assert_eq!(worker.finished(), 1);
    let latest = worker.latest(map_slot(0)).unwrap();
    assert_eq!(latest.key, job(&source, n, view(2), size).key());
    // Running: a newer view cancels it (one block range of 65,536 blocks per thread at most
    // is summed after the cancel), and only the newer one finishes.
    worker.want(map_slot(0), job(&source, n, view(3), size));
    let start = Instant::now();
    let (done, all) = loop {
        if let Some(p) = worker.progress() {
            break p;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "never started");
        std::thread::yield_now();
    };
    assert_eq!(all, n);
    assert!(done < all, "finished before the check");
    worker.want(map_slot(0), job(&source, n, view(4), size));
    settle(&worker);
    assert_eq!(worker.finished(), 2, "the passed-over view was finished");
    let latest = worker.latest(map_slot(0)).unwrap();
    assert_eq!(latest.key, job(&source, n, view(4), size).key());
}

/// `n` heap-like blocks and a bar of one bin with `steps` occupancy steps `every` events apart;
/// the time and address extents.
fn map_and_bar(n: usize, steps: usize, every: u64) -> (Arc<MapData>, Arc<BarBlocks>, u64, u64) {
    let (blocks, times, te, ye) = heap_like(n);
    let data = Arc::new(MapData {
        blocks: Arc::new(blocks),
        times: Arc::new(times),
        selection: None,
        lod: None,
        refiner: None,
        accumulate: None,
    });
    let steps = OccupancySteps {
        start: 0,
        end: te,
        times: (0..steps as u64).map(|i| i * every).collect(),
        bytes: (0..steps as u64).map(|i| (i * 7919) % 1000).collect(),
        capacity: 1000,
    };
    let bars = Arc::new(BarBlocks::build(&[steps], &[1.0]));
    (data, bars, te, ye)
}

/// A map of `blocks` and, under it, a bar of one bin with an event per block.
fn picture_of(data: &Arc<MapData>, bars: &Arc<BarBlocks>, te: u64, ye: u64, dy: f32) -> Picture {
    let (w, h) = (240.0, 160.0);
    let style = MapStyle {
        alpha: 0.4,
        cushion: CushionKind::Parabolic,
        cushion_strength: 1.0,
        color_mode: ColorMode::Categorical,
    };
    let window = MapWindow {
        t0: 0.0,
        t_span: te as f64,
        y0: 0.0,
        y_span: 1.0,
    };
    let mut p = Picture::new(egui::vec2(w, h), [20, 22, 30, 255]);
    p.layers.push(Layer::Map(MapLayer {
        slot: 0,
        rect: egui::Rect::from_min_size(egui::pos2(0.0, dy), egui::vec2(w, 120.0)),
        data: data.clone(),
        window,
        extent: ye,
        range: 0..data.blocks.len(),
        style,
        cursors: None,
    }));
    p.layers.push(Layer::Bar(BarLayer {
        slot: 0,
        rect: egui::Rect::from_min_size(egui::pos2(0.0, 130.0), egui::vec2(w, 24.0)),
        bars: bars.clone(),
        integral: None,
        window,
        style,
        variant: OccupancyVariant::EventCushions(CushionKind::Plateau),
        bin: Some(0),
        stack_slice: None,
    }));
    p
}

#[test]
fn frames_never_wait_for_the_sums_and_settle_on_the_picture_summed_on_the_spot() {
    let n = CPU_SUMS_MIN_BLOCKS;
    // One bin whose occupancy steps at every block's start: a bar of a million intervals.
    let (data, bars, te, ye) = map_and_bar(n, n, 2);
    assert!(bars.blocks.len() >= CPU_SUMS_MIN_BLOCKS);
    let picture = picture_of(&data, &bars, te, ye, 0.0);
    let ctx = ctx();
    // On the spot (no worker): what the bridge drew before.
    let spot = through_bridge(
        &mut GpuRegistry::new(&ctx.device, OFFSCREEN_FORMAT).unwrap(),
        &PaneKey::new(),
        &picture,
    );

    let mut registry = GpuRegistry::new(&ctx.device, OFFSCREEN_FORMAT).unwrap();
    let key = PaneKey::new();
    let worker = SumsWorker::new(None, THREADS).unwrap();
    let options = PaintOptions {
        sums: Some(worker.clone()),
        ..Default::default()
    };
    worker.hold(Duration::from_secs(60));
    let start = Instant::now();
    let first = through_bridge_with(&mut registry, &key, &picture, &options);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "the first frame waited {:?}",
        start.elapsed()
    );
    assert!(worker.pending());
    assert_ne!(
        first.pixels, spot.pixels,
        "drawn before the sums were there"
    );
    worker.release();
    settle(&worker);
    let img = through_bridge_with(&mut registry, &key, &picture, &options);
    assert_eq!(
        img.pixels, spot.pixels,
        "the worker's picture is the one summed on the spot"
    );
    assert!(worker.latest(map_slot(0)).is_some() && worker.latest(bar_slot(0)).is_some());
    assert_eq!(worker.finished(), 2, "one map and one bar");
    // More frames, and the map moved on the screen at the same size: nothing summed again.
    for _ in 0..3 {
        through_bridge_with(&mut registry, &key, &picture, &options);
    }
    let moved = picture_of(&data, &bars, te, ye, 4.0);
    through_bridge_with(&mut registry, &key, &moved, &options);
    assert!(!worker.pending());
    assert_eq!(worker.finished(), 2, "an unchanged view summed again");
}

/// A live recording's pane (`PaintOptions::cpu_sums_always`) on lavapipe: layers far below
/// [`CPU_SUMS_MIN_BLOCKS`] are summed by the worker too, so that a new snapshot's first frame
/// never has lavapipe accumulate every block again; the picture it settles on is the GPU
/// pipelines' (the CPU twin, within the map's GPU-vs-CPU tolerance); and the next snapshot's
/// first frame shows the last one's sums stretched to its longer time axis, not an empty map.
#[test]
fn a_live_panes_small_layers_are_summed_on_the_cpu_as_the_gpu_draws_them() {
    let tolerance = memscape_render::golden::Tolerance {
        per_channel: 2,
        max_differing_pixels: 0,
    };
    let snapshot = |n: usize| {
        let (data, bars, te, ye) = map_and_bar(n, n / 4, 8);
        picture_of(&data, &bars, te, ye, 0.0)
    };
    let (first, second) = (snapshot(20_000), snapshot(40_000));
    let ctx = ctx();
    let gpu = |p: &Picture| {
        through_bridge(
            &mut GpuRegistry::new(&ctx.device, OFFSCREEN_FORMAT).unwrap(),
            &PaneKey::new(),
            p,
        )
    };
    let (gpu_first, gpu_second) = (gpu(&first), gpu(&second));

    let mut registry = GpuRegistry::new(&ctx.device, OFFSCREEN_FORMAT).unwrap();
    let key = PaneKey::new();
    let worker = SumsWorker::new(None, THREADS).unwrap();
    // Without the option, small layers are the GPU's: nothing asked of the worker.
    let plain = PaintOptions {
        sums: Some(worker.clone()),
        ..Default::default()
    };
    through_bridge_with(&mut registry, &key, &first, &plain);
    assert!(!worker.pending());
    assert_eq!(worker.finished(), 0);
    let live = PaintOptions {
        cpu_sums_always: true,
        ..plain
    };
    let mut registry = GpuRegistry::new(&ctx.device, OFFSCREEN_FORMAT).unwrap();
    through_bridge_with(&mut registry, &key, &first, &live);
    settle(&worker);
    assert_eq!(
        worker.finished(),
        2,
        "one map and one bar summed on the CPU"
    );
    let img = through_bridge_with(&mut registry, &key, &first, &live);
    let c = memscape_render::golden::compare(&img, &gpu_first, tolerance);
    assert_eq!(c.differing_pixels, 0, "the CPU sums' picture is the GPU's");
    // The next snapshot: its first frame, before its sums, shows the last ones stretched.
    worker.hold(Duration::from_secs(60));
    let early = through_bridge_with(&mut registry, &key, &second, &live);
    assert!(worker.pending());
    // What a frame with no sums yet draws (a pane of its own): the map and bar empty.
    let empty = {
        let fresh = SumsWorker::new(None, THREADS).unwrap();
        fresh.hold(Duration::from_secs(60));
        let options = PaintOptions {
            sums: Some(fresh.clone()),
            cpu_sums_always: true,
            ..Default::default()
        };
        let mut registry = GpuRegistry::new(&ctx.device, OFFSCREEN_FORMAT).unwrap();
        through_bridge_with(&mut registry, &PaneKey::new(), &second, &options)
    };
    let drawn = memscape_render::golden::compare(&early, &empty, tolerance).differing_pixels;
    assert!(
        drawn > 2000,
        "the next snapshot's first frame is an empty map ({drawn} pixels differ)"
    );
    worker.release();
    settle(&worker);
    assert_eq!(worker.finished(), 4);
    let img = through_bridge_with(&mut registry, &key, &second, &live);
    let c = memscape_render::golden::compare(&img, &gpu_second, tolerance);
    assert_eq!(
        c.differing_pixels, 0,
        "the next snapshot's picture is the GPU's"
    );
}

/// A pane's CPU-summed layers swap in their sums together: a live snapshot's map and bar are
/// asked in one frame and summed one after the other, and a frame drawn between the two
/// landings shows both layers of the last snapshot (the sums then drawn), not the new map
/// beside the last snapshot's bar. The worker is held after its first job so that such a frame
/// is drawn whatever the machine's speed; without the swap together that frame differs.
#[test]
fn a_frame_shows_no_layer_of_a_newer_snapshot_beside_one_of_an_older() {
    let snapshot = |n: usize| {
        let (data, bars, te, ye) = map_and_bar(n, n, 2);
        picture_of(&data, &bars, te, ye, 0.0)
    };
    // Big enough that the first job still runs when the worker is held again.
    let (first, second) = (snapshot(300_000), snapshot(400_000));
    let ctx = ctx();
    let mut registry = GpuRegistry::new(&ctx.device, OFFSCREEN_FORMAT).unwrap();
    let key = PaneKey::new();
    let worker = SumsWorker::new(None, THREADS).unwrap();
    worker.set_group_hold(Duration::from_secs(600));
    let live = PaintOptions {
        sums: Some(worker.clone()),
        cpu_sums_always: true,
        ..Default::default()
    };
    through_bridge_with(&mut registry, &key, &first, &live);
    settle(&worker);
    assert_eq!(worker.finished(), 2, "one map and one bar");
    through_bridge_with(&mut registry, &key, &first, &live);
    // The next snapshot: both layers asked in its first frame, which draws the last sums.
    worker.hold(Duration::from_secs(600));
    let early = through_bridge_with(&mut registry, &key, &second, &live);
    worker.release();
    let start = Instant::now();
    while worker.progress().is_none() {
        assert!(start.elapsed() < Duration::from_secs(60), "never started");
        std::thread::yield_now();
    }
    // The first job runs: hold the second back until a frame is drawn after the first lands.
    worker.hold(Duration::from_secs(600));
    while worker.finished() < 3 {
        assert!(start.elapsed() < Duration::from_secs(120), "never summed");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(worker.finished(), 3, "the second job started while held");
    assert!(
        worker.pending(),
        "the second layer's sums are not yet there"
    );
    let between = through_bridge_with(&mut registry, &key, &second, &live);
    let exact = memscape_render::golden::Tolerance {
        per_channel: 0,
        max_differing_pixels: 0,
    };
    let mixed = memscape_render::golden::compare(&between, &early, exact);
    assert_eq!(
        mixed.differing_pixels, 0,
        "a frame between the layers' landings differs from the last snapshot's picture"
    );
    worker.release();
    settle(&worker);
    assert_eq!(worker.finished(), 4);
    let settled = through_bridge_with(&mut registry, &key, &second, &live);
    let spot = through_bridge(
        &mut GpuRegistry::new(&ctx.device, OFFSCREEN_FORMAT).unwrap(),
        &PaneKey::new(),
        &second,
    );
    let tolerance = memscape_render::golden::Tolerance {
        per_channel: 2,
        max_differing_pixels: 0,
    };
    let c = memscape_render::golden::compare(&settled, &spot, tolerance);
    assert_eq!(c.differing_pixels, 0, "both layers swapped in once summed");
    let c = memscape_render::golden::compare(&settled, &early, exact);
    assert!(c.differing_pixels > 1000, "the new snapshot is not drawn");
}
