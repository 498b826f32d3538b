//! The SVG export of every view against the PNG of the same picture: each view is composed
//! once, drawn headless on lavapipe (the PNG `memscape render` writes) and written as SVG, which
//! librsvg's `rsvg-convert` (Debian `librsvg2-bin`) rasterizes at the same size.
//!
//! Tolerances, and why: shapes are vectors in the SVG and signed-distance quads on the GPU, both
//! anti-aliased over about one pixel, and the GPU layers are the very pixels of the PNG, so
//! **outside the labels** (each label's egui box, turned by its angle, grown by 3 points) at
//! least 97.5 % of the pixels must lie within 16/255 of the PNG in every channel and the mean
//! difference must stay under 1.5/255 (measured: 98.2 % for the topology's many thin sector
//! borders, 99–100 % for the rest; means 0.01–0.9). **Inside the labels** the
//! glyphs are egui's Ubuntu Light in the PNG and whatever font librsvg finds (Nimbus Sans or
//! DejaVu here) in the SVG, so only the ink is compared: the mean brightness difference from
//! the box's own background, which is the same text in the same place up to font shape, may
//! differ by at most a third. Besides pixels: the document is well-formed XML (quick-xml),
//! every label is a `<text>` holding its string, and every allocation-map and occupancy-bar
//! layer is one `<image>`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_render::RgbaImage;
use memscape_views::picture::{Layer, Picture};
use memscape_views::svg::text::TextLayout;
use memscape_views::{Dataset, ViewKind};

/// One view of one file, composed at `size`.
struct Case {
    name: &'static str,
    kind: ViewKind,
    fields: &'static str,
    size: (u32, u32),
}

/// What one SVG holds and how its rasterization compares with the PNG.
struct Outcome {
    texts: Vec<String>,
    elements: HashMap<String, usize>,
    outside_within: f64,
    outside_mean: f64,
    ink_ratio: f64,
}

fn scratch() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("memscape-views-svg");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `svg` rasterized by librsvg at its own size.
fn rasterize(svg: &Path) -> RgbaImage {
    let png = svg.with_extension("svg.png");
    let out = Command::new("rsvg-convert")
        .arg(svg)
        .arg("-o")
        .arg(&png)
        .output()
        .unwrap_or_else(|e| {
            panic!("rsvg-convert: {e} (Debian librsvg2-bin; scripts/install-deps.sh test)")
        });
    assert!(
        out.status.success(),
        "rsvg-convert {}: {}",
        svg.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    RgbaImage::load_png(&png).unwrap()
}

/// Element counts and the character data of every `<text>`; panics on malformed XML.
fn parse(svg: &str) -> (HashMap<String, usize>, Vec<String>) {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(svg);
    let mut elements = HashMap::new();
    let mut texts = Vec::new();
    let mut in_text: Option<String> = None;
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                if name == "text" {
                    in_text = Some(String::new());
                }
                *elements.entry(name).or_default() += 1;
            }
            Ok(Event::Empty(e)) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                *elements.entry(name).or_default() += 1;
            }
            Ok(Event::Text(t)) => {
                if let Some(s) = &mut in_text {
                    s.push_str(&t.xml10_content().unwrap());
                }
            }
            Ok(Event::GeneralRef(r)) => {
                if let Some(s) = &mut in_text {
                    let name: &[u8] = &r;
                    let c = match name {
                        b"amp" => "&",
                        b"lt" => "<",
                        b"gt" => ">",
                        b"quot" => "\"",
                        b"apos" => "'",
                        other => panic!("unexpected entity {other:?}"),
                    };
                    s.push_str(c);
                }
            }
            Ok(Event::End(e)) if e.name().as_ref() == b"text" => {
                texts.extend(in_text.take());
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!(
                "not well-formed XML at byte {}: {e}",
                reader.buffer_position()
            ),
        }
    }
    (elements, texts)
}

/// Per-pixel largest channel difference.
fn diff(a: &RgbaImage, b: &RgbaImage, x: u32, y: u32) -> u8 {
    let (p, q) = (a.pixel(x, y), b.pixel(x, y));
    (0..3).map(|k| p[k].abs_diff(q[k])).max().unwrap_or(0)
}

fn luma(p: [u8; 4]) -> f64 {
    0.299 * f64::from(p[0]) + 0.587 * f64::from(p[1]) + 0.114 * f64::from(p[2])
}

/// The label boxes (grown by 3 points) as a pixel mask.
fn label_mask(picture: &Picture, layout: &TextLayout, w: u32, h: u32) -> Vec<egui::Rect> {
    let _ = (w, h);
    picture
        .labels
        .iter()
        .filter(|l| !l.text.trim().is_empty())
        .map(|l| layout.label_bounds(l).expand(3.0))
        .collect()
}

/// Total ink of the label boxes: how far each pixel's brightness lies from the median of its
/// box (the background it sits on).
fn ink(img: &RgbaImage, boxes: &[egui::Rect]) -> f64 {
    let mut total = 0.0;
    for r in boxes {
        let (x0, y0) = (r.min.x.max(0.0) as u32, r.min.y.max(0.0) as u32);
        let (x1, y1) = (
            (r.max.x.max(0.0) as u32).min(img.width),
            (r.max.y.max(0.0) as u32).min(img.height),
        );
        let mut values = Vec::new();
        for y in y0..y1 {
            for x in x0..x1 {
                values.push(luma(img.pixel(x, y)));
            }
        }
        if values.is_empty() {
            continue;
        }
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        total += values.iter().map(|v| (v - median).abs()).sum::<f64>();
    }
    total
}

fn run(dataset: &Dataset, case: &Case, layout: &TextLayout) -> Outcome {
    let ctx = common::ctx();
    let settings = common::settings(case.kind, case.fields);
    let (w, h) = case.size;
    let picture = settings
        .compose(dataset, egui::vec2(w as f32, h as f32))
        .unwrap_or_else(|e| panic!("{}: {}", case.name, common::chain(&e)));
    let png = memscape_views::headless::render_picture(ctx, &picture).unwrap();
    let svg = memscape_views::svg::picture_svg(ctx, &picture).unwrap();
    let dir = scratch();
    png.save_png(&dir.join(format!("{}.png", case.name)))
        .unwrap();
    let svg_path = dir.join(format!("{}.svg", case.name));
    std::fs::write(&svg_path, &svg).unwrap();
    let raster = rasterize(&svg_path);
    assert_eq!(
        (raster.width, raster.height),
        (w, h),
        "{}: the SVG's size",
        case.name
    );
    let (elements, texts) = parse(&svg);

    let boxes = label_mask(&picture, layout, w, h);
    let (mut outside, mut within, mut sum) = (0usize, 0usize, 0u64);
    for y in 0..h {
        for x in 0..w {
            let point = egui::pos2(x as f32 + 0.5, y as f32 + 0.5);
            if boxes.iter().any(|r| r.contains(point)) {
                continue;
            }
            let d = diff(&png, &raster, x, y);
            outside += 1;
            within += usize::from(d <= 16);
            sum += u64::from(d);
        }
    }
    let (ink_png, ink_svg) = (ink(&png, &boxes), ink(&raster, &boxes));
    let ink_ratio = if ink_png > 0.0 {
        ink_svg / ink_png
    } else {
        1.0
    };
    let outcome = Outcome {
        texts,
        elements,
        outside_within: within as f64 / outside.max(1) as f64,
        outside_mean: sum as f64 / outside.max(1) as f64,
        ink_ratio,
    };
    eprintln!(
        "{:12} outside labels: {:6.2} % within 16, mean {:.2}; label ink SVG/PNG {:.2}; {} texts, {} images",
        case.name,
        100.0 * outcome.outside_within,
        outcome.outside_mean,
        outcome.ink_ratio,
        outcome.texts.len(),
        outcome.elements.get("image").copied().unwrap_or(0)
    );

    // Text is text: every label's string is one <text>.
    for l in picture.labels.iter().filter(|l| !l.text.trim().is_empty()) {
        assert!(
            outcome.texts.iter().any(|t| t == &l.text),
            "{}: label {:?} is not a <text> of the SVG",
            case.name,
            l.text
        );
    }
    // Maps and bars are images, one each.
    let raster_layers = picture
        .layers
        .iter()
        .filter(|l| matches!(l, Layer::Map(_) | Layer::Bar(_)))
        .count();
    let morphs = picture
        .layers
        .iter()
        .filter(|l| matches!(l, Layer::Morph(_)))
        .count();
    let images = outcome.elements.get("image").copied().unwrap_or(0);
    assert!(
        (raster_layers..=raster_layers + morphs).contains(&images),
        "{}: {images} <image>s for {raster_layers} map/bar layers and {morphs} morphs",
        case.name
    );
    assert!(
        outcome.outside_within >= 0.975 && outcome.outside_mean <= 1.5,
        "{}: outside the labels only {:.2} % of pixels within 16/255 (mean {:.2}) of the PNG; see {}",
        case.name,
        100.0 * outcome.outside_within,
        outcome.outside_mean,
        dir.display()
    );
    assert!(
        (0.67..=1.5).contains(&outcome.ink_ratio),
        "{}: the labels' ink differs from the PNG's by a factor {:.2}; see {}",
        case.name,
        outcome.ink_ratio,
        dir.display()
    );
    outcome
}

#[test]
fn allocation_map_views_export_as_svg_with_the_map_as_images() {
    let demo = common::load(Path::new("demo"));
    let layout = TextLayout::new();
    let panels = run(
        &demo,
        &Case {
            name: "alloc_panels",
            kind: ViewKind::AllocMap,
            fields: "color = \"size\"\ncushion = \"plateau\"\nalpha = 0.3\npanels = \"main,occupancy,context\"",
            size: (720, 450),
        },
        &layout,
    );
    assert!(panels.elements.get("image").copied().unwrap_or(0) >= 3);
    // Axes, legend ticks and addresses are text.
    assert!(panels.texts.iter().any(|t| t.contains("KiB")));
    let bins = run(
        &demo,
        &Case {
            name: "alloc_bins",
            kind: ViewKind::AllocMap,
            fields: "color = \"thread\"\nbins = \"thread\"\npanels = \"main,occupancy\"",
            size: (720, 450),
        },
        &layout,
    );
    assert!(bins.elements.get("image").copied().unwrap_or(0) >= 9);
}

#[test]
fn heap_tree_views_export_as_vectors() {
    let demo = common::load(Path::new("demo"));
    let layout = TextLayout::new();
    for (name, kind, fields) in [
        ("sunburst", ViewKind::Sunburst, "peak = true"),
        (
            "icicle",
            ViewKind::Icicle,
            "peak = true\ngroup = \"size,site\"",
        ),
        ("timeline", ViewKind::Timeline, ""),
    ] {
        let o = run(
            &demo,
            &Case {
                name,
                kind,
                fields,
                size: (640, 400),
            },
            &layout,
        );
        assert_eq!(o.elements.get("image"), None, "{name}: no raster");
        assert!(
            o.elements.get("path").copied().unwrap_or(0)
                + o.elements.get("rect").copied().unwrap_or(0)
                > 3,
            "{name}"
        );
    }
}

#[test]
fn cycle_views_export_as_svg() {
    let trace = common::load(Path::new("demo:sort"));
    let layout = TextLayout::new();
    for (name, kind, fields) in [
        ("spiral", ViewKind::Spiral, "range = \"0..1200\""),
        (
            "morph",
            ViewKind::Spiral,
            "range = \"0..1200\"\nmorph_to = 1\nt = 0.5",
        ),
        ("circular", ViewKind::Circular, "range = \"0..1200\""),
        ("barcode", ViewKind::Barcode, "range = \"0..1200\""),
        ("projection", ViewKind::Projection, "range = \"0..1200\""),
    ] {
        run(
            &trace,
            &Case {
                name,
                kind,
                fields,
                size: (560, 400),
            },
            &layout,
        );
    }
}

#[test]
fn graph_exports_edges_and_nodes_as_vectors() {
    let cfg = common::load(Path::new("demo:cfg"));
    let layout = TextLayout::new();
    for (name, fields) in [("graph", ""), ("graph_diff", "diff = [0, 3]")] {
        let o = run(
            &cfg,
            &Case {
                name,
                kind: ViewKind::Graph,
                fields,
                size: (640, 480),
            },
            &layout,
        );
        assert_eq!(o.elements.get("image"), None, "{name}");
        // Edges are lines and polylines, nodes rectangles.
        let lines = o.elements.get("line").copied().unwrap_or(0)
            + o.elements.get("polyline").copied().unwrap_or(0);
        assert!(lines >= 10, "{name}: {lines} edge pieces");
        assert!(o.elements.get("rect").copied().unwrap_or(0) >= 10, "{name}");
    }
}

#[test]
fn samples_views_export_as_vectors() {
    let samples = common::load(&common::shared("memaxes/lulesh/samples.out"));
    let layout = TextLayout::new();
    for (name, kind, size) in [
        ("topology", ViewKind::Topology, (640, 480)),
        ("offenders", ViewKind::Offenders, (800, 400)),
        ("histograms", ViewKind::Histograms, (800, 480)),
        ("histogram", ViewKind::Histogram, (560, 360)),
    ] {
        let o = run(
            &samples,
            &Case {
                name,
                kind,
                fields: "",
                size,
            },
            &layout,
        );
        assert_eq!(o.elements.get("image"), None, "{name}");
    }
}
