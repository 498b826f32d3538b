//! The allocation map drawn in-process through its one `compose` (what the pane and
//! `memscape render --view alloc` draw): golden images of each cushion, each occupancy-bar
//! variant, both bin layouts and cushion cursors on the embedded sqlite demo (lavapipe), the
//! linear pixel mapping of `panels = main`, and errors naming the setting at fault.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use memscape_render::RgbaImage;
use memscape_render::golden::Tolerance;
use memscape_views::ViewKind;

mod common;
use common::{draw, load};

/// The maps are deterministic on one lavapipe build; labels are egui's text. Allow a little
/// for float differences between Mesa versions at glyph and block edges.
const TOLERANCE: Tolerance = Tolerance {
    per_channel: 3,
    max_differing_pixels: 80,
};

fn check(name: &str, image: &RgbaImage) {
    common::check_with(name, image, TOLERANCE);
}

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("alloc_map_views");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Pixels differing by more than 8 in some channel inside `[x0, x1) × [y0, y1)`.
fn differing(a: &RgbaImage, b: &RgbaImage, x0: u32, y0: u32, x1: u32, y1: u32) -> usize {
    let mut n = 0;
    for y in y0..y1.min(a.height) {
        for x in x0..x1.min(a.width) {
            let (p, q) = (a.pixel(x, y), b.pixel(x, y));
            if (0..3).any(|c| p[c].abs_diff(q[c]) > 8) {
                n += 1;
            }
        }
    }
    n
}

#[test]
fn cushions_golden() {
    let sqlite = load(Path::new("demo:sqlite"));
    let map = |cushion: &str| {
        draw(
            &sqlite,
            ViewKind::AllocMap,
            &format!("panels = \"main\"\nrange_time = [20000, 60000]\ncushion = \"{cushion}\""),
            480,
            300,
        )
    };
    let (none, parabolic, plateau) = (map("none"), map("parabolic"), map("plateau"));
    assert!(
        differing(&none, &parabolic, 0, 0, 480, 300) > 2000,
        "parabolic cushions shade the blocks"
    );
    assert!(differing(&parabolic, &plateau, 0, 0, 480, 300) > 500);
    check("alloc_cushion_none", &none);
    check("alloc_cushion_parabolic", &parabolic);
    check("alloc_cushion_plateau", &plateau);
}

/// A CSV trace of bursts of allocations (10 ns apart) separated by pauses of 5 µs: idle gaps
/// at a full view, busy stretches between them. Bursts take turns over three sets of 16 slots
/// and each frees the blocks of the one before the last, so occupancy rises and falls.
fn bursts() -> PathBuf {
    let path = out_dir().join("bursts.csv");
    let mut csv = String::from("time,op,address,size,thread,site\n");
    let address = |k: u64, j: u64| 0x10_0000 + ((k % 3) * 16 + j) * 128;
    for k in 0..12u64 {
        let t = k * 5200;
        for j in 0..16 {
            let size = 72 + 16 * (j % 4) + 8 * (k % 3);
            csv.push_str(&format!(
                "{},alloc,{:#x},{size},main,s{}\n",
                t + j * 10,
                address(k, j),
                j % 5
            ));
        }
        if k >= 2 {
            for j in 0..16 {
                csv.push_str(&format!(
                    "{},free,{:#x},,main,\n",
                    t + 200 + j * 10,
                    address(k - 2, j)
                ));
            }
        }
    }
    std::fs::write(&path, csv).unwrap();
    path
}

#[test]
fn occupancy_variants_golden() {
    const W: u32 = 480;
    const H: u32 = 150;
    let trace = load(&bursts());
    let variants = [
        "flat",
        "idle-black",
        "idle-plateau",
        "idle-parabolic",
        "intervals-plateau",
        "intervals-parabolic",
    ];
    let images: Vec<RgbaImage> = variants
        .iter()
        .map(|v| {
            draw(
                &trace,
                ViewKind::AllocMap,
                &format!("panels = \"main,occupancy\"\ntime = \"wall\"\noccupancy = \"{v}\""),
                W,
                H,
            )
        })
        .collect();
    // The bar is the bottom strip: the maps above it are the same picture.
    let bar_top = H - 17;
    for (i, a) in images.iter().enumerate() {
        assert_eq!(
            differing(a, &images[0], 0, 0, W, bar_top - 4),
            0,
            "{}: the map above the bar does not depend on the variant",
            variants[i]
        );
        for (j, b) in images.iter().enumerate().take(i) {
            assert!(
                differing(a, b, 0, bar_top, W - 100, H) > 20,
                "{} and {} draw the same bar",
                variants[i],
                variants[j]
            );
        }
    }
    // Idle gaps are black in idle-black: some bar pixels are black, none in flat.
    let black = |img: &RgbaImage| {
        (0..W - 100)
            .filter(|&x| img.pixel(x, H - 6)[..3].iter().all(|&c| c < 8))
            .count()
    };
    assert_eq!(black(&images[0]), 0, "flat has no black columns");
    assert!(black(&images[1]) > 5, "idle-black shows idle gaps");
    for (v, img) in variants.iter().zip(&images) {
        check(&format!("alloc_occupancy_{v}"), img);
    }
}

#[test]
fn bin_layouts_golden() {
    let sqlite = load(Path::new("demo:sqlite"));
    let map = |layout: &str| {
        draw(
            &sqlite,
            ViewKind::AllocMap,
            &format!(
                "panels = \"main,occupancy,context\"\nbins = \"size\"\nlayout = \"{layout}\"\ncolor = \"size\""
            ),
            800,
            480,
        )
    };
    let (address, time) = (map("address"), map("time"));
    assert!(differing(&address, &time, 0, 0, 800, 480) > 10_000);
    check("alloc_bins_address", &address);
    check("alloc_bins_time", &time);
}

#[test]
fn cushion_cursors_golden() {
    let sqlite = load(Path::new("demo:sqlite"));
    let base = "panels = \"main,occupancy\"\nbins = \"size\"\nlayout = \"time\"\n";
    let plain = draw(&sqlite, ViewKind::AllocMap, base, 640, 480);
    let cursors = draw(
        &sqlite,
        ViewKind::AllocMap,
        &format!("{base}cursors = [30000, 31000, 90000]"),
        640,
        480,
    );
    // Cursors change only the maps' columns around them (every bin, time-aligned), not the
    // bars under the cells nor the space between the cursors.
    assert!(differing(&plain, &cursors, 0, 0, 640, 480) > 1000);
    // The maps' time axis (right of the bins' names column, left of the free bars).
    let map = common::settings(ViewKind::AllocMap, base)
        .compose(&sqlite, egui::vec2(640.0, 480.0))
        .unwrap()
        .layers
        .iter()
        .find_map(|l| match l {
            memscape_views::picture::Layer::Map(m) => Some(m.rect),
            _ => None,
        })
        .unwrap();
    let x_of = |t: f64| (map.left() + (t / 127_532.0) as f32 * map.width()) as u32;
    assert_eq!(
        differing(&plain, &cursors, x_of(40_000.0), 0, x_of(80_000.0), 480),
        0,
        "no change far from the cursors"
    );
    check("alloc_cursors", &cursors);
}

/// A small CSV trace with two blocks at known places.
fn two_blocks() -> PathBuf {
    let path = out_dir().join("two_blocks.csv");
    std::fs::write(
        &path,
        "time,op,address,size,thread,site\n\
         0,alloc,0x10000,4096,main,a\n\
         100,alloc,0x20000,4096,main,b\n\
         1000,free,0x10000,,main,\n\
         2000,free,0x20000,,main,\n",
    )
    .unwrap();
    path
}

#[test]
fn panels_main_maps_pixels_linearly() {
    // 2000 ns over 400 px: 5 ns per pixel; 0x10000..0x21000 (69632 B) over 340 px: 204.8 B
    // per pixel. Block A: 0..1000 ns × 0x10000..0x11000 → columns 0..200, rows 320..340.
    // Block B: 100..2000 ns × 0x20000..0x21000 → columns 20..400, rows 0..20.
    let img = draw(
        &load(&two_blocks()),
        ViewKind::AllocMap,
        "panels = \"main\"\ntime = \"wall\"\nrange_time = [0, 2000]\n\
         range_addr = [0x10000, 0x21000]\ncushion = \"none\"\nalpha = 1.0\ncolor = \"thread\"",
        400,
        340,
    );
    assert_eq!((img.width, img.height), (400, 340), "only the plot area");
    let background = img.pixel(300, 170);
    let block = img.pixel(100, 330);
    assert!(
        (0..3).any(|c| block[c].abs_diff(background[c]) > 40),
        "block A is drawn: {block:?} vs {background:?}"
    );
    let is_block = |x: u32, y: u32| img.pixel(x, y) == block;
    let is_free = |x: u32, y: u32| img.pixel(x, y) == background;
    // Block A's right edge at column 200, top edge at row 320 (exact box coverage: the last
    // covered column and row are full, the next ones empty).
    for y in [321, 330, 339] {
        assert!(is_block(0, y) && is_block(199, y), "row {y} inside A");
        assert!(is_free(200, y) && is_free(260, y), "row {y} right of A");
    }
    for x in [0, 100, 199] {
        assert!(is_block(x, 320), "column {x}: A's top row");
        assert!(is_free(x, 319), "column {x}: above A");
    }
    // Block B: columns 20..400, rows 0..20.
    for x in [20, 200, 399] {
        assert!(is_block(x, 0) && is_block(x, 19), "column {x} inside B");
        assert!(is_free(x, 20), "column {x} below B");
    }
    assert!(is_free(19, 5) && is_free(0, 5), "before B's allocation");
}

#[test]
fn bad_allocation_map_settings_are_clear_errors() {
    let demo = load(Path::new("demo"));
    let err = common::error(
        &demo,
        ViewKind::AllocMap,
        "bins = \"size\"\nrange_addr = [0x10, 0x20]",
    );
    assert!(err.contains("--range-addr"), "{err}");
    let err = common::error(&demo, ViewKind::AllocMap, "range_addr = [0x10, 0x20]");
    assert!(err.contains("not inside a used region"), "{err}");
    let err = common::error(&demo, ViewKind::AllocMap, "range_time = [20, 10]");
    assert!(err.contains("--range-time"), "{err}");
}

/// Every quantitative colouring's legend says what its colours mean: at least two ticks with
/// values in the colouring's unit (size in bytes, lifetime and age in events, waste in %), in
/// the one picture the GUI and `memscape render` both draw.
#[test]
fn quantitative_colourings_have_ramps_with_values_and_units() {
    let demo = load(Path::new("demo"));
    for (color, unit) in [
        ("size", "B"),
        ("lifetime", "events"),
        ("waste", "%"),
        ("age", "events"),
    ] {
        let fields = format!("panels = \"main,occupancy\"\ncolor = \"{color}\"");
        let picture = common::settings(ViewKind::AllocMap, &fields)
            .compose(&demo, egui::vec2(800.0, 500.0))
            .unwrap();
        let ticks: Vec<&str> = picture
            .labels
            .iter()
            .map(|l| l.text.as_str())
            .filter(|t| t.starts_with(|c: char| c.is_ascii_digit()) && t.ends_with(unit))
            .collect();
        assert!(
            ticks.len() >= 2
                && ticks
                    .iter()
                    .any(|t| t.starts_with('0') || t.starts_with("1 ")),
            "{color}: the ramp's ticks are {ticks:?}"
        );
    }
}

/// The colour legend lies in its band above the maps and each grid cell's title in its strip:
/// neither rectangle meets a map or a bar, every legend and title label lies inside its
/// rectangle, and titles are shortened by whole parts, never cut (`16156 bl…`).
#[test]
fn legend_and_bin_titles_are_not_drawn_over_the_maps() {
    use memscape_views::alloc_map::layout::{Panels, pane_layout};
    use memscape_views::picture::Layer;
    let sqlite = load(Path::new("demo:sqlite"));
    let size = egui::vec2(800.0, 480.0);
    for layout in ["address", "time"] {
        for color in ["size", "site"] {
            let fields = format!(
                "panels = \"main,occupancy,context\"\nbins = \"size\"\nlayout = \"{layout}\"\ncolor = \"{color}\""
            );
            let settings = common::settings(ViewKind::AllocMap, &fields);
            let picture = settings.compose(&sqlite, size).unwrap();
            let data: Vec<egui::Rect> = picture
                .layers
                .iter()
                .filter_map(|l| match l {
                    Layer::Map(m) => Some(m.rect),
                    Layer::Bar(b) => Some(b.rect),
                    _ => None,
                })
                .collect();
            let memscape_views::ViewSettings::AllocMap(s) = &settings else {
                panic!("alloc map settings");
            };
            let bins = picture
                .layers
                .iter()
                .filter(|l| matches!(l, Layer::Map(m) if m.slot != u32::MAX))
                .count();
            let l = pane_layout(size, bins, s.layout, Panels::of(s));
            let band = l.legend.expect("a legend band");
            let mut text_rects = vec![band];
            text_rects.extend(l.cells.iter().filter_map(|c| c.title));
            if layout == "address" {
                assert_eq!(
                    text_rects.len(),
                    1 + bins,
                    "every grid cell has a title strip"
                );
            }
            for r in &text_rects {
                for d in &data {
                    assert!(!r.intersects(d.shrink(0.5)), "{fields}: {r:?} covers {d:?}");
                }
            }
            let inside = |label: &memscape_views::label::Label| {
                text_rects.iter().find(|r| r.contains(label.pos))
            };
            let mut in_band = 0;
            for label in &picture.labels {
                if let Some(r) = inside(label) {
                    in_band += 1;
                    assert!(
                        r.expand(1.0).contains_rect(label.approx_rect()),
                        "{fields}: {label:?} runs out of {r:?}"
                    );
                    assert!(!label.text.contains('…') || *r == band, "{label:?} is cut");
                }
            }
            assert!(
                in_band >= 3,
                "{fields}: {in_band} labels in the legend and titles"
            );
        }
    }
}

/// The occupancy variants other than flat look like flat on event-index time (no step is idle,
/// every interval is one event): the bar's caption says so there, and not on wall time.
#[test]
fn occupancy_variants_say_when_they_look_like_flat() {
    let sqlite = load(Path::new("demo:sqlite"));
    let caption = |time: &str, occupancy: &str| {
        let fields =
            format!("panels = \"main,occupancy\"\ntime = \"{time}\"\noccupancy = \"{occupancy}\"");
        common::settings(ViewKind::AllocMap, &fields)
            .compose(&sqlite, egui::vec2(640.0, 400.0))
            .unwrap()
            .labels
            .iter()
            .any(|l| l.text.contains("as flat on event time"))
    };
    assert!(caption("events", "idle-black"));
    assert!(caption("events", "intervals-parabolic"));
    assert!(!caption("events", "flat"));
    assert!(!caption("wall", "idle-black"));
}

/// The stacked bar of many bins gives each bin a band of at least half its per-bin height, and
/// its time labels lie under it, not over it.
#[test]
fn stacked_bar_has_room_per_bin_and_labels_beside_it() {
    use memscape_views::picture::{Layer, Picture};
    let sqlite = load(Path::new("demo:sqlite"));
    let compose = |fields: &str, height: f32| -> Picture {
        common::settings(
            ViewKind::AllocMap,
            &format!("panels = \"main,occupancy\"\nbins = \"size\"\nlayout = \"time\"\n{fields}"),
        )
        .compose(&sqlite, egui::vec2(800.0, height))
        .unwrap()
    };
    let stacked = |picture: &Picture| {
        picture
            .layers
            .iter()
            .find_map(|l| match l {
                Layer::Bar(b) if b.bin.is_none() => Some((b.rect, b.bars.clone(), b.stack_slice)),
                _ => None,
            })
            .expect("a stacked bar")
    };
    let per_bin = memscape_views::alloc_map::layout::STACKED_PER_BIN;
    let units = memscape_render::alloc_map::occupancy::BAR_UNITS as f32;
    let caption = |picture: &Picture| {
        picture
            .labels
            .iter()
            .find(|l| l.text.starts_with("bins "))
            .map(|l| l.text.clone())
    };
    // 600 points: 15 size classes need 300, the bar gets a quarter (150) and scrolls.
    let top = compose("", 600.0);
    let (rect, bars, slice) = stacked(&top);
    let n = bars.bands.len();
    assert!(n >= 10, "{n} size classes");
    let (lo, hi) = slice.expect("a slice of the stack");
    assert_eq!(hi, units as u64, "the first bins at the top");
    let full = per_bin * n as f32;
    let visible: Vec<usize> = (0..n)
        .filter(|&k| bars.bands[k].lo < hi && bars.bands[k].hi > lo)
        .collect();
    for &k in &visible {
        let band = &bars.bands[k];
        // At the whole stack's scale, not squeezed into the bar.
        let h = (band.hi - band.lo) as f32 / units * full;
        assert!(h >= 0.5 * per_bin - 0.01, "bin {k}: a band of {h} points");
    }
    assert!(visible.len() < n, "some bins are scrolled out of view");
    let shown = caption(&top).expect("the picture says which bins it shows");
    assert_eq!(shown, format!("bins 1–{} of {n}", visible.len()));
    // Each bin shown whole has its name beside its band, left of the bar.
    let point = |u: u64| rect.top() + (hi - u.min(hi)) as f32 / units * full;
    for &k in &visible {
        let (y0, y1) = (point(bars.bands[k].hi), point(bars.bands[k].lo));
        if y1 > rect.bottom() + 0.5 {
            continue;
        }
        assert!(
            top.labels.iter().any(|l| l.pos.x <= rect.left()
                && (y0..=y1).contains(&l.pos.y)
                && (l.text.ends_with(" B") || l.text.ends_with("iB"))),
            "bin {k}: no name beside its band {y0}..{y1}"
        );
    }
    // Labels (names, time ticks, the caption) never over the bar.
    for l in &top.labels {
        assert!(
            !l.approx_rect().intersects(rect),
            "{l:?} over the stacked bar {rect:?}"
        );
    }
    // Scrolled past the end: the last bins, the bar still full.
    let bottom = compose("stacked_from = 100", 600.0);
    let (_, _, slice) = stacked(&bottom);
    let (lo, hi) = slice.expect("a slice of the stack");
    assert_eq!(lo, 0, "the last bins at the bottom");
    assert!(hi < units as u64);
    assert!(
        caption(&bottom)
            .expect("a caption")
            .ends_with(&format!("–{n} of {n}"))
    );
    // A tall picture has room for every bin: the whole stack, nothing to say.
    let tall = compose("", 1400.0);
    let (rect, _, slice) = stacked(&tall);
    assert!(slice.is_none() && caption(&tall).is_none());
    assert!(rect.height() >= full - 0.5, "{rect:?}");
}

/// In the time layout every time axis spans one x range: each bin's map, its occupancy bar
/// and curves, and the stacked bar of all bins (its names stand in a column left of the maps
/// as well, not only left of the bar), and the stacked bar's tick at time 0 lies at the maps'
/// left edge: a time under the pointer is the same time in the maps and in the bar.
#[test]
fn time_layout_aligns_the_stacked_bar_with_the_maps() {
    use memscape_views::alloc_map::compose::CONTEXT_SLOT;
    use memscape_views::picture::Layer;
    let sqlite = load(Path::new("demo:sqlite"));
    for panels in ["main,occupancy", "main,occupancy,context,curves"] {
        // 480 points: the stacked bar scrolls; 1400: the whole stack fits.
        for (w, h) in [(800.0, 480.0), (640.0, 1400.0)] {
            let fields = format!(
                "panels = \"{panels}\"\nbins = \"size\"\nlayout = \"time\"\ncolor = \"size\""
            );
            let picture = common::settings(ViewKind::AllocMap, &fields)
                .compose(&sqlite, egui::vec2(w, h))
                .unwrap();
            let what = format!("{panels} at {w}×{h}");
            let mut spans: Vec<(String, f32, f32)> = Vec::new();
            let mut stacked = None;
            for layer in &picture.layers {
                match layer {
                    Layer::Map(m) if m.slot != CONTEXT_SLOT => {
                        spans.push((format!("map {}", m.slot), m.rect.left(), m.rect.right()));
                    }
                    Layer::Bar(b) => {
                        spans.push((format!("bar {:?}", b.bin), b.rect.left(), b.rect.right()));
                        if b.bin.is_none() {
                            stacked = Some(b.rect);
                        }
                    }
                    _ => {}
                }
            }
            let stacked = stacked.unwrap_or_else(|| panic!("{what}: a stacked bar"));
            assert!(spans.len() >= 20, "{what}: {spans:?}");
            for (name, left, right) in &spans {
                assert!(
                    (left - stacked.left()).abs() < 0.01 && (right - stacked.right()).abs() < 0.01,
                    "{what}: {name} spans {left}..{right}, the stacked bar {}..{}",
                    stacked.left(),
                    stacked.right()
                );
            }
            // The names' column is left of the maps, the bar's first tick at its left edge.
            assert!(stacked.left() >= 80.0, "{what}: names left of the maps");
            let zero = picture
                .labels
                .iter()
                .find(|l| l.text == "0 events" && l.pos.y > stacked.bottom())
                .unwrap_or_else(|| panic!("{what}: the stacked bar's tick at time 0"));
            assert!(
                (zero.pos.x - stacked.left()).abs() < 3.0,
                "{what}: tick 0 at {} but the maps start at {}",
                zero.pos.x,
                stacked.left()
            );
            // Every bin's name lies in the column, beside its map, not over any map.
            let maps_top = picture
                .layers
                .iter()
                .filter_map(|l| match l {
                    Layer::Map(m) if m.slot != CONTEXT_SLOT => Some(m.rect.top()),
                    _ => None,
                })
                .fold(f32::INFINITY, f32::min);
            let names = picture
                .labels
                .iter()
                .filter(|l| l.pos.y >= maps_top && l.text.ends_with(" B") && l.text.contains('–'));
            for label in names {
                let r = label.approx_rect();
                assert!(
                    r.right() <= stacked.left() + 0.5,
                    "{what}: {label:?} over the maps"
                );
            }
        }
    }
}

/// The unbinned map in the scene's own colouring shares the scene's blocks (a live snapshot's
/// pane does not colour every block again), and they are what colouring them again gives.
#[test]
fn unbinned_map_in_the_scenes_colouring_shares_its_blocks() {
    use memscape_views::alloc_map::bins::BinBy;
    use memscape_views::alloc_map::compose::{MapBuilder, Wanted};
    use memscape_views::alloc_map::scene::TimeAxis;
    let sqlite = load(Path::new("demo:sqlite"));
    let data = sqlite.alloc_trace().unwrap();
    let scene = data.scene.as_ref().unwrap();
    let wanted = Wanted {
        by: BinBy::None,
        axis: TimeAxis::Events,
        color_by: scene.color_by,
        age_at: 0,
        curves: false,
        bar_integral: false,
    };
    let built = MapBuilder::default().build(&data.trace, scene, wanted, false);
    assert!(std::sync::Arc::ptr_eq(&built.blocks, &scene.blocks));
    let colors = scene.block_colors(
        &data.trace,
        scene.color_by,
        &scene.block_region,
        scene.events_extent,
    );
    assert_eq!(*built.blocks, built.binned.colored(&colors));
}

/// A Parquet trace dataset read in part (its first tenth of blocks, on the whole dataset's
/// address regions, as the GUI reads one above its bound): until its last allocation read the
/// occupancy bar is the whole trace's — same capacity, same bytes at every event —, and the bar
/// ends there, where the blocks allocated later are not known (it ran to the trace's end,
/// drawing the blocks read as if nothing else were allocated).
#[test]
fn a_dataset_read_in_part_has_the_whole_traces_bar_until_its_last_allocation_read() {
    use memscape_views::alloc_map::bins::{BinBy, BinnedScene};
    use memscape_views::alloc_map::scene::TimeAxis;
    let trace = memscape_trace::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/heaptrack/sqlite_1M.raw.zst"),
    )
    .unwrap();
    let n = trace.blocks.len();
    let dir = tempfile::tempdir().unwrap();
    let options = memscape_parquet::trace::TraceWriteOptions {
        windows: 32,
        ..Default::default()
    };
    memscape_parquet::write_trace(&trace, dir.path(), &options).unwrap();
    let progress = |_: f32, _: &str| {};
    let whole = memscape_views::dataset::load_trace_head(dir.path(), n, None, &progress).unwrap();
    let whole = whole.alloc_trace().unwrap();
    let whole_scene = whole.scene.as_ref().unwrap();
    assert_eq!(whole_scene.known_until, None, "read whole");
    let ranges: Vec<(u64, u64)> = whole_scene
        .regions
        .iter()
        .map(|r| (r.start, r.end))
        .collect();
    let head =
        memscape_views::dataset::load_trace_head(dir.path(), n / 10, Some(&ranges), &progress)
            .unwrap();
    let head = head.alloc_trace().unwrap();
    let head_scene = head.scene.as_ref().unwrap();
    let cut = head_scene.bar_time_extent(TimeAxis::Events);
    assert!(
        cut > 1 && cut < head_scene.events_extent / 2,
        "the bar ends at {cut} of {}",
        head_scene.events_extent
    );
    assert_eq!(head_scene.region_capacity, whole_scene.region_capacity);
    let steps = |data: &memscape_views::dataset::AllocTraceData| {
        let scene = data.scene.as_ref().unwrap();
        BinnedScene::build(&data.trace, scene, BinBy::None).steps(
            0,
            TimeAxis::Events,
            scene.bar_time_extent(TimeAxis::Events),
        )
    };
    let (w, h) = (steps(whole), steps(head));
    assert_eq!(h.end, cut);
    assert_eq!(w.capacity, h.capacity);
    let at = |s: &memscape_render::alloc_map::occupancy::OccupancySteps, t: u64| {
        s.times
            .partition_point(|&x| x <= t)
            .checked_sub(1)
            .map_or(0, |i| s.bytes[i])
    };
    let before: Vec<u64> = w.times.iter().copied().filter(|&t| t < cut).collect();
    assert!(
        before.len() > 1000,
        "{} events before the cut",
        before.len()
    );
    for t in before {
        assert_eq!(at(&w, t), at(&h, t), "bytes in use at event {t}");
    }
}

/// The map of a dataset read in part, drawn from its blocks (as the GUI's first frame is,
/// before the query engine's index): the part of the run after its last allocation read is
/// veiled and says so, from the point where its bar ends; the same dataset read whole has no
/// veil. (The GUI's switch to the engine's index, which drops it, is
/// `tests/gui_engine.rs`'s `gui_draws_a_trace_datasets_first_frame_before_the_engines_level_then_the_index`.)
#[test]
fn the_map_of_a_dataset_read_in_part_veils_what_was_not_read() {
    use memscape_render::shapes::Geometry;
    let dataset = memscape_views::demo::sources().remove(0);
    let demo = memscape_views::dataset::load(&dataset, &|_, _| {}).unwrap();
    let trace = &demo.alloc_trace().unwrap().trace;
    let dir = tempfile::tempdir().unwrap();
    let options = memscape_parquet::trace::TraceWriteOptions {
        windows: 8,
        ..Default::default()
    };
    memscape_parquet::write_trace(trace, dir.path(), &options).unwrap();
    let n = trace.blocks.len();
    let progress = |_: f32, _: &str| {};
    let settings = memscape_views::alloc_map::AllocMapSettings::default();
    let size = egui::vec2(900.0, 500.0);
    let compose = memscape_views::alloc_map::compose::compose;
    let veils = |picture: &memscape_views::Picture| -> Vec<[f32; 2]> {
        picture
            .shapes
            .iter()
            .filter_map(|s| match s.geometry {
                Geometry::Rect { min, max, .. } if s.fill == [120, 124, 136, 70] => {
                    Some([min[0], max[0]])
                }
                _ => None,
            })
            .collect()
    };
    let says = |picture: &memscape_views::Picture| {
        picture
            .labels
            .iter()
            .any(|l| l.text.starts_with("not read yet"))
    };
    let whole = memscape_views::dataset::load_trace_head(dir.path(), n, None, &progress).unwrap();
    let picture = compose(&whole, &settings, size).unwrap();
    assert!(veils(&picture).is_empty() && !says(&picture), "read whole");
    let head =
        memscape_views::dataset::load_trace_head(dir.path(), n / 4, None, &progress).unwrap();
    let picture = compose(&head, &settings, size).unwrap();
    let found = veils(&picture);
    assert!(!found.is_empty(), "no veil over the blocks not read");
    assert!(says(&picture), "the veil does not say what it is");
    // It starts inside the map (after the blocks read), not at its left edge.
    let map = picture
        .layers
        .iter()
        .find_map(|l| match l {
            memscape_views::picture::Layer::Map(m) => Some(m.rect),
            _ => None,
        })
        .unwrap();
    let [x0, x1] = found[0];
    assert!(
        x0 > map.left() + 1.0 && x0 < map.right() - 1.0 && (x1 - map.right()).abs() < 0.5,
        "veil {x0}..{x1} over the map {map:?}"
    );
}
