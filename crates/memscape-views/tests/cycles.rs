//! Golden images of the cycle views drawn in-process through their one `compose` (spiral,
//! circular, barcode, the morph between two parameterizations, density contours, a selected
//! source line), on the lackey trace of assets/demo (assets/demo/record-lackey-demo.sh).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_render::RgbaImage;
use memscape_render::golden::{self, Tolerance};
use memscape_views::{Dataset, ViewKind};

mod common;
use common::check;

fn trace() -> Dataset {
    common::load(&common::repo("assets/demo/sort.lackey.zst"))
}

/// `fields` of `kind` on the first 1200 records, 480×480.
fn draw(trace: &Dataset, kind: ViewKind, fields: &str) -> RgbaImage {
    common::draw(
        trace,
        kind,
        &format!("range = \"0..1200\"\n{fields}"),
        480,
        480,
    )
}

/// Where the records' centre lies in `kind`'s picture (beside the legend, under the caption).
fn plot_center(trace: &Dataset, kind: ViewKind) -> (u32, u32) {
    let picture = common::settings(kind, "range = \"0..1200\"")
        .compose(trace, egui::vec2(480.0, 480.0))
        .unwrap();
    match picture.layers.first() {
        Some(memscape_views::picture::Layer::Morph(m)) => {
            (m.view.center_px[0] as u32, m.view.center_px[1] as u32)
        }
        _ => panic!("{kind:?}: a morph layer"),
    }
}

/// Pixels that differ from the background by more than a little, per quadrant around the
/// records' centre `(cx, cy)`, left of the legend excluded: a spiral whose loops are turns
/// covers all four.
fn quadrant_coverage(img: &RgbaImage, (cx, cy): (u32, u32)) -> [usize; 4] {
    let mut q = [0usize; 4];
    let left = 2 * cx - img.width;
    for y in 24..img.height {
        for x in left..img.width {
            let p = img.pixel(x, y);
            if p[0].max(p[1]).max(p[2]) > 60 {
                q[usize::from(x >= cx) + 2 * usize::from(y >= cy)] += 1;
            }
        }
    }
    q
}

#[test]
fn spiral_circular_and_barcode_goldens() {
    let trace = trace();
    let spiral = draw(&trace, ViewKind::Spiral, "");
    let q = quadrant_coverage(&spiral, plot_center(&trace, ViewKind::Spiral));
    assert!(
        q.iter().all(|&n| n > 300),
        "the sort loop winds around the centre: {q:?}"
    );
    check("cycles_spiral", &spiral);
    check("cycles_circular", &draw(&trace, ViewKind::Circular, ""));
    check("cycles_barcode", &draw(&trace, ViewKind::Barcode, ""));
}

#[test]
fn morph_goldens_at_0_half_and_1() {
    let trace = trace();
    let start = draw(&trace, ViewKind::Spiral, "morph_to = 1\nt = 0.0");
    let half = draw(&trace, ViewKind::Spiral, "morph_to = 1\nt = 0.5");
    let end = draw(&trace, ViewKind::Spiral, "morph_to = 1\nt = 1.0");
    let plain1 = draw(&trace, ViewKind::Spiral, "param = 1");
    // The ends are the plain spirals up to the caption line at the top.
    let crop = |img: &RgbaImage| {
        let mut c = img.clone();
        for y in 0..24 {
            for x in 0..img.width {
                c.set_pixel(x, y, [0, 0, 0, 255]);
            }
        }
        c
    };
    let same = Tolerance {
        per_channel: 2,
        max_differing_pixels: 5,
    };
    let c = golden::compare(&crop(&end), &crop(&plain1), same);
    assert!(
        c.differing_pixels <= 5,
        "t = 1 is parameterization 1: {c:?}"
    );
    assert!(golden::compare(&crop(&half), &crop(&start), same).differing_pixels > 500);
    check("cycles_morph_0", &start);
    check("cycles_morph_05", &half);
    check("cycles_morph_1", &end);
}

#[test]
fn parameterizations_out_of_range_are_clear_errors() {
    // Beyond what the analysis found (only a handful of bars on 40 records).
    let trace = trace();
    let err = common::error(&trace, ViewKind::Spiral, "range = \"0..40\"\nparam = 60");
    assert!(
        err.contains("--param 60") && err.contains("parameterization"),
        "{err}"
    );
    let err = common::error(
        &trace,
        ViewKind::Spiral,
        "range = \"0..1200\"\nselect_record = 99999",
    );
    assert!(err.contains("--select-record 99999"), "{err}");
}

#[test]
fn circular_isocontour_summary_golden() {
    let trace = trace();
    let plain = draw(&trace, ViewKind::Circular, "");
    let contoured = draw(&trace, ViewKind::Circular, "contours = true");
    // The contours only add light lines around the crowded stretches of the circle.
    let changed = (0..plain.height)
        .flat_map(|y| (0..plain.width).map(move |x| (x, y)))
        .filter(|&(x, y)| plain.pixel(x, y) != contoured.pixel(x, y))
        .count();
    assert!(changed > 200, "contours drawn: {changed} pixels changed");
    check("cycles_circular_contours", &contoured);
}

/// `select_record = N` selects N's source line as a click does: the other records are drawn in
/// the dimmed grey, so fewer pixels keep their line colours.
#[test]
fn a_selected_source_line_dims_the_other_records() {
    let trace = trace();
    // The records only: right of the legend.
    let (cx, _) = plot_center(&trace, ViewKind::Spiral);
    let left = 2 * cx - 480;
    let colourful = |img: &RgbaImage| {
        let mut n = 0usize;
        for y in 0..img.height {
            for x in left..img.width {
                let p = img.pixel(x, y);
                let (hi, lo) = (p[0].max(p[1]).max(p[2]), p[0].min(p[1]).min(p[2]));
                // Saturated: a line colour, not the grey of dimmed records or the background.
                if hi > 90 && hi - lo > 60 {
                    n += 1;
                }
            }
        }
        n
    };
    let plain = draw(&trace, ViewKind::Spiral, "");
    let selected = draw(&trace, ViewKind::Spiral, "select_record = 400");
    let (all, some) = (colourful(&plain), colourful(&selected));
    assert!(some > 0, "the selected line keeps its colour");
    assert!(
        some * 3 < all,
        "the other lines are dimmed ({some} of {all} coloured pixels left)"
    );
}

/// No text over a record: every record of the spiral and the circular view (at both ends of a
/// morph) lies outside every label's box, the legend's and the caption's included.
#[test]
fn legend_and_caption_leave_every_record_visible() {
    use memscape_render::polar_morph::cpu_reference::{angle_at, polar_px};
    use memscape_views::picture::Layer;
    let trace = trace();
    for (kind, t) in [
        (ViewKind::Spiral, 0.0),
        (ViewKind::Circular, 0.0),
        (ViewKind::Spiral, 1.0),
    ] {
        let fields = format!("range = \"0..1200\"\nt = {t}\nmorph_to = 1");
        let picture = common::settings(kind, &fields)
            .compose(&trace, egui::vec2(480.0, 480.0))
            .unwrap();
        let Some(Layer::Morph(morph)) = picture.layers.first() else {
            panic!("{kind:?}: a morph layer");
        };
        let margin = morph.view.point_radius_px;
        for p in &morph.data.points {
            let [x, y] = polar_px(
                &morph.view,
                p.r,
                angle_at(p.theta_a, p.theta_b, morph.view.t),
            );
            for label in &picture.labels {
                let r = label.approx_rect().expand(margin);
                assert!(
                    !r.contains(egui::pos2(x, y)),
                    "{kind:?} t={t}: {label:?} covers the record at ({x}, {y})"
                );
            }
        }
    }
}

/// The analysis options of `fields` (a cycle view's TOML fields).
fn options(fields: &str) -> memscape_cycles::CyclesOptions {
    let memscape_views::ViewSettings::Cycles(s) = common::settings(ViewKind::Spiral, fields) else {
        panic!("cycle settings");
    };
    s.analysis.options(5).unwrap()
}

/// The GUI's worker: its progress (read as the pane reads it, every frame) never goes back and
/// reaches 1 when the analysis ends, with the analysis and its projection.
#[test]
fn the_worker_reports_monotone_progress_up_to_one() {
    use memscape_views::cycles::worker::Job;
    use std::sync::Arc;
    use std::time::Duration;
    let trace = Arc::new(trace());
    let job = Job::spawn(trace, options("range = \"0..1200\""), None, || {}).unwrap();
    let mut seen = vec![job.progress()];
    let outcome = loop {
        if let Some(outcome) = job.poll() {
            break outcome;
        }
        seen.push(job.progress());
        std::thread::sleep(Duration::from_millis(2));
        assert!(job.elapsed() < Duration::from_secs(120), "{seen:?}");
    };
    let analysed = outcome.expect("the analysis of 1200 records");
    assert!(!analysed.analysis.report.parameterizations.is_empty());
    assert!(analysed.projection.is_some());
    seen.push(job.progress());
    for pair in seen.windows(2) {
        assert!(pair[1].fraction >= pair[0].fraction, "went back: {pair:?}");
    }
    assert_eq!(job.progress().fraction, 1.0);
    let stages: std::collections::BTreeSet<_> = seen.iter().map(|p| p.stage).collect();
    assert!(stages.len() >= 2, "stages named: {stages:?}");
}

/// Cancel stops a long analysis (every window of the whole demo trace: minutes) within a
/// second, reported as cancelled, not as an error.
#[test]
fn cancelling_the_worker_stops_it_promptly() {
    use memscape_views::cycles::worker::{Failure, Job};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    let trace = Arc::new(trace());
    let job = Job::spawn(trace, options("full = true\ntime_budget = 0"), None, || {}).unwrap();
    // Into the analysis proper (past the symbols and filters), then cancel.
    while job.progress().fraction < 0.05 && job.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(job.poll().is_none(), "still running when cancelled");
    let cancelled_at = Instant::now();
    job.cancel();
    let outcome = job.wait(Duration::from_secs(10)).expect("the worker ended");
    let took = cancelled_at.elapsed();
    assert_eq!(outcome.err(), Some(Failure::Cancelled));
    // About 100 ms on an idle machine; a second leaves room for a loaded CI runner.
    assert!(took < Duration::from_secs(1), "cancelled after {took:?}");
}

/// "Colour by line, functions collapsed" (`collapse_function`): the lines of a collapsed
/// function share one colour and one legend entry, the other functions keep theirs line by
/// line; the composed picture's legend says so.
#[test]
fn a_collapsed_function_is_one_colour_and_one_legend_entry() {
    use memscape_views::cycles::compose::{PolarModel, analysis_of};
    use std::collections::BTreeSet;
    // The embedded demo (symbolized against the program it traced).
    let trace = common::load(std::path::Path::new("demo:sort"));
    let fields = "range = \"0..1200\"";
    let memscape_views::ViewSettings::Cycles(plain) = common::settings(ViewKind::Spiral, fields)
    else {
        panic!("cycle settings");
    };
    let (analysis, _) = analysis_of(&trace, &plain).unwrap();
    let records = &analysis.report.records;
    let lines_of = |f: &str| -> BTreeSet<u32> {
        records
            .iter()
            .filter(|r| r.function.as_deref() == Some(f))
            .filter_map(|r| r.line)
            .collect()
    };
    // The busiest function drawn over several lines.
    let (function, _) = analysis
        .tables
        .functions_by_count()
        .into_iter()
        .find(|(f, _)| f != "??" && lines_of(f).len() >= 2)
        .unwrap_or_else(|| {
            let sample: Vec<_> = records
                .iter()
                .take(5)
                .map(|r| (&r.function, &r.file, r.line))
                .collect();
            panic!(
                "a function with several lines in the first 1200 records: {:?} {sample:?}",
                analysis.tables.functions_by_count()
            )
        });
    let colours_of = |model: &PolarModel| -> BTreeSet<u32> {
        records
            .iter()
            .zip(&model.data.points)
            .filter(|(r, _)| r.function.as_deref() == Some(function.as_str()))
            .map(|(_, p)| p.color)
            .collect()
    };
    let by_line = PolarModel::build(&analysis, &plain, None);
    assert!(
        colours_of(&by_line).len() >= 2,
        "{function}: a colour per line"
    );
    let collapsed_settings = memscape_views::cycles::CycleSettings {
        collapse_function: vec![function.clone()],
        ..plain.clone()
    };
    let collapsed = PolarModel::build(&analysis, &collapsed_settings, None);
    assert_eq!(colours_of(&collapsed).len(), 1, "{function}: one colour");
    let entries = |model: &PolarModel| -> Vec<String> {
        model
            .legend
            .iter()
            .map(|(name, _)| name.clone())
            .filter(|name| name.starts_with(&format!("{function} ")))
            .collect()
    };
    assert!(entries(&by_line).len() >= 2, "{:?}", by_line.legend);
    let ours = entries(&collapsed);
    assert_eq!(ours.len(), 1, "{:?}", collapsed.legend);
    assert!(
        ours[0].starts_with(&format!("{function} (all lines)")),
        "{ours:?}"
    );
    // The entry's swatch is the records' colour.
    let swatch = collapsed
        .legend
        .iter()
        .find(|(name, _)| *name == ours[0])
        .map(|(_, c)| u32::from_le_bytes(*c));
    assert_eq!(swatch, colours_of(&collapsed).into_iter().next());
    // Other functions keep their lines: the legend still has line entries.
    assert!(
        collapsed
            .legend
            .iter()
            .any(|(n, _)| !n.contains("(all lines)")),
        "{:?}",
        collapsed.legend
    );
    // As `memscape render --collapse-function` composes it.
    let picture = common::settings(
        ViewKind::Spiral,
        &format!("{fields}\ncollapse_function = [\"{function}\"]"),
    )
    .compose(&trace, egui::vec2(480.0, 480.0))
    .unwrap();
    assert!(
        picture
            .labels
            .iter()
            .any(|l| l.text.starts_with(&format!("{function} (all lines)"))),
        "the legend drawn"
    );
}
