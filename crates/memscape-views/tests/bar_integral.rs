//! A big trace's flat occupancy bar from running integrals (`alloc_map::bar_integral`, issue
//! 25) against the exact bar's sums of every interval, on the demo and a generated trace.
#![allow(clippy::unwrap_used)]
use memscape_render::alloc_map::cpu_reference::SumsControl;
use memscape_render::alloc_map::{
    BarPart, ColorMode, CushionKind, OccupancyBarFrame, OccupancyBarView, OccupancyVariant,
};

use memscape_views::alloc_map::bar_integral::BarIntegral;
use memscape_views::alloc_map::bins::BinnedScene;
use memscape_views::alloc_map::scene::TimeAxis;
use memscape_views::dataset::{LoadSource, load};
use memscape_views::picture::{MapStyle, MapWindow};

/// The unbinned bar of `source` on the event axis: its exact sums (every interval, as the
/// sums worker computes them) and its integral's, at `size` in `window`, resolved to sRGB.
fn both(
    source: &LoadSource,
    window: MapWindow,
    alpha: f32,
    size: [u32; 2],
) -> (Vec<[u8; 4]>, Vec<[u8; 4]>) {
    let dataset = load(source, &|_, _| {}).unwrap();
    let scene = dataset.alloc_trace().unwrap().scene.as_ref().unwrap();
    let binned = BinnedScene::unbinned(scene);
    assert_eq!(binned.bins.len(), 1);
    let end = scene.time_extent(TimeAxis::Events);
    let bars = binned.bar_blocks(TimeAxis::Events, end);
    let mut map_view = window.view(1, [size[0] as f32, size[1] as f32]);
    MapStyle {
        alpha,
        cushion: CushionKind::None,
        cushion_strength: 1.0,
        color_mode: ColorMode::Quantitative,
    }
    .apply(&mut map_view);
    let view = OccupancyBarView::from_map(&map_view, OccupancyVariant::Flat);
    let job = OccupancyBarFrame::cpu_sums_view(&bars, &view, BarPart::Bin(0), size).unwrap();
    let eq1 = job.view.eq1(size);
    let mut exact = job
        .sums(&bars.blocks, &bars.times, size, 2, &SumsControl::default())
        .unwrap();
    // A one-bin bar's intervals carry bytes over a power of two: the scale to the fraction is
    // applied where the bar is resolved (`BarBlocks::value_scale`); the integral's are fractions.
    for acc in &mut exact.acc {
        acc[0] *= bars.value_scale;
    }
    let info = &binned.bins[0];
    let integral = BarIntegral::build(binned.metrics.clone(), &info.series, end, info.capacity);
    let (exact, integral) = (exact.resolve(&eq1), integral.sums(&eq1).resolve(&eq1));
    // A bar of many shades, not a flat one that any two methods agree on.
    let shades: std::collections::HashSet<[u8; 4]> = exact.iter().copied().collect();
    assert!(shades.len() > 10, "{} shades", shades.len());
    (exact, integral)
}

/// A generated trace of `events` events (memscape-lod's realistic generator) in a file.
fn synth(events: u64, dir: &tempfile::TempDir) -> LoadSource {
    let path = dir.path().join("synth.msc");
    memscape_lod::synth::write_mappable(
        memscape_lod::synth::SynthParams::new(events, 3),
        &path,
        &mut |_| {},
    )
    .unwrap();
    LoadSource::File(path)
}

/// The demo and a generated trace (written into `dir`), each with its events' extent.
fn sources_and_extents(dir: &tempfile::TempDir) -> Vec<(LoadSource, u64)> {
    [
        memscape_views::demo::sources().remove(0),
        synth(60_000, dir),
    ]
    .into_iter()
    .map(|source| {
        let dataset = load(&source, &|_, _| {}).unwrap();
        let end = dataset
            .alloc_trace()
            .unwrap()
            .scene
            .as_ref()
            .unwrap()
            .events_extent;
        (source, end)
    })
    .collect()
}

fn worst(a: &[[u8; 4]], b: &[[u8; 4]]) -> u8 {
    a.iter()
        .zip(b)
        .flat_map(|(p, q)| (0..3).map(move |c| p[c].abs_diff(q[c])))
        .max()
        .unwrap_or(0)
}

/// At α = 1 Eq. 1 weighs each interval by its coverage: the exact bar's column is the
/// time-weighted mean, which the integral gives from two searches (within the f32 sums'
/// rounding), on the whole trace and zoomed into a stretch of it, real and generated.
#[test]
fn the_integrals_flat_bar_is_the_exact_bars_at_alpha_one() {
    let dir = tempfile::tempdir().unwrap();
    for (source, end) in sources_and_extents(&dir) {
        for window in [
            MapWindow {
                t0: 0.0,
                t_span: end as f64,
                y0: 0.0,
                y_span: 1.0,
            },
            MapWindow {
                t0: end as f64 * 0.31 + 0.37,
                t_span: end as f64 / 37.0,
                y0: 0.0,
                y_span: 1.0,
            },
        ] {
            let (exact, integral) = both(&source, window, 1.0, [397, 5]);
            let d = worst(&exact, &integral);
            assert!(d <= 2, "{}: {d} levels apart", source.display_name());
        }
    }
}

/// At the GUI's α (0.5) the exact sums weigh an interval by its coverage to the power α,
/// alike for the one-event intervals of the event axis: the integral's columns stay within
/// a few levels of the exact bar's but in the columns at the trace's ends, which are partly
/// covered (the background weighs differently).
#[test]
fn the_integrals_flat_bar_is_close_to_the_exact_bars_at_the_guis_alpha() {
    let dir = tempfile::tempdir().unwrap();
    for (source, end) in sources_and_extents(&dir) {
        let w = 512;
        let window = MapWindow {
            t0: 0.0,
            t_span: end as f64,
            y0: 0.0,
            y_span: 1.0,
        };
        let (exact, integral) = both(&source, window, 0.5, [w, 3]);
        let inner = |v: &[[u8; 4]]| -> Vec<[u8; 4]> {
            v.chunks(w as usize)
                .flat_map(|row| row[1..row.len() - 1].to_vec())
                .collect()
        };
        let d = worst(&inner(&exact), &inner(&integral));
        assert!(d <= 3, "{}: {d} levels apart", source.display_name());
    }
}

/// The integral holds one float per row of the bin's step functions and draws a view from
/// two searches per column and series: nothing per interval is made (the stand-in bar the
/// GUI's worker builds for a big trace has one interval).
#[test]
fn a_big_traces_flat_bar_builds_no_intervals() {
    use memscape_views::alloc_map::colors::ColorBy;
    use memscape_views::alloc_map::compose::{MapBuilder, Wanted};
    let dir = tempfile::tempdir().unwrap();
    let dataset = load(&synth(60_000, &dir), &|_, _| {}).unwrap();
    let t = dataset.alloc_trace().unwrap();
    let scene = t.scene.as_ref().unwrap();
    let wanted = Wanted {
        by: memscape_views::alloc_map::bins::BinBy::None,
        axis: TimeAxis::Events,
        color_by: ColorBy::Thread,
        age_at: 0,
        curves: false,
        bar_integral: true,
    };
    let built = MapBuilder::default().build(&t.trace, scene, wanted, true);
    assert_eq!(built.bar.as_ref().unwrap().blocks.len(), 1);
    assert!(built.bar_integral.is_some());
    let exact = MapBuilder::default().build(
        &t.trace,
        scene,
        Wanted {
            bar_integral: false,
            ..wanted
        },
        true,
    );
    assert!(exact.bar.unwrap().blocks.len() > 50_000);
    assert!(exact.bar_integral.is_none());
}
