//! The windowed self-test: the real GUI under Xvfb, rendering through lavapipe, saved with
//! `--screenshot` and checked for content.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use memscape_render::RgbaImage;

#[test]
fn gui_opens_the_demo_and_screenshots_it_under_xvfb() {
    let xvfb = Command::new("sh")
        .args(["-c", "command -v xvfb-run"])
        .output()
        .unwrap();
    assert!(
        xvfb.status.success(),
        "xvfb-run is missing: install the `xvfb` package (make test does)"
    );
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gui");
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("demo-window.png");
    let _ = std::fs::remove_file(&png);
    // "Export view as SVG…" of every pane, written when the screenshot is taken.
    let exported = dir.join("exported-views");
    let _ = std::fs::remove_dir_all(&exported);
    let out = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1280x800x24"])
        .arg(env!("CARGO_BIN_EXE_memscape"))
        .args([
            "view",
            "--window-size",
            "1200x760",
            "--screenshot-timeout",
            "240",
            "--screenshot",
        ])
        .arg(&png)
        .env("MEMSCAPE_ADAPTER", "cpu")
        .env("XDG_CONFIG_HOME", &dir)
        .env("MEMSCAPE_EXPORT_VIEWS", &exported)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "memscape view --screenshot failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let image = memscape_render::RgbaImage::load_png(&png).unwrap();
    assert!(
        image.width >= 1000 && image.height >= 600,
        "unexpected size {}x{}",
        image.width,
        image.height
    );
    assert!(
        image.distinct_colors() > 200,
        "the window looks blank ({} colours)",
        image.distinct_colors()
    );
    check_exported_views(&exported);
}

/// The panes' pictures exported as the GUI's "Export view as SVG…" writes them: one SVG per
/// visible pane, each rendered by librsvg to something that is not blank, the allocation map's
/// with its map as an embedded image and every one with its text as `<text>`.
fn check_exported_views(dir: &Path) {
    let mut svgs: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e} (no views exported)", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .collect();
    svgs.sort();
    assert!(svgs.len() >= 2, "exported views: {svgs:?}");
    let mut maps = 0;
    for svg in &svgs {
        let text = std::fs::read_to_string(svg).unwrap();
        assert!(text.contains("<text"), "{}: no text", svg.display());
        maps += usize::from(text.contains("<image"));
        let png = svg.with_extension("svg.png");
        let out = Command::new("rsvg-convert")
            .arg(svg)
            .arg("-o")
            .arg(&png)
            .output()
            .expect("rsvg-convert (librsvg2-bin; scripts/install-deps.sh test)");
        assert!(
            out.status.success(),
            "rsvg-convert {}: {}",
            svg.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let image = RgbaImage::load_png(&png).unwrap();
        assert!(
            image.width >= 200 && image.distinct_colors() > 50,
            "{}: {}x{}, {} colours",
            svg.display(),
            image.width,
            image.height,
            image.distinct_colors()
        );
    }
    assert!(
        maps >= 1,
        "no exported view embeds an allocation map: {svgs:?}"
    );
}

/// `memscape present` in a real window under Xvfb, driven by scripted keys: two presses of →
/// step through a three-step tour of the demo CFG, and the window then shows the last step's
/// picture, the same as `memscape render` of that state (but for the step counter).
#[test]
fn present_steps_through_a_tour_with_scripted_keys() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("present");
    std::fs::create_dir_all(&dir).unwrap();
    let tour = dir.join("tour.toml");
    std::fs::write(
        &tour,
        r#"
[[step]]
file = "demo:cfg"
view = "graph"
snapshot = 0
hold = 0.5

[[step]]
snapshot = 1
duration = 0.5

[[step]]
snapshot = 2
duration = 0.5
"#,
    )
    .unwrap();
    let png = dir.join("present.png");
    let _ = std::fs::remove_file(&png);
    let out = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1280x800x24"])
        .arg(env!("CARGO_BIN_EXE_memscape"))
        .arg("present")
        .arg(&tour)
        .args([
            "--windowed",
            "--fps",
            "4",
            "--keys",
            "right,right",
            "--screenshot",
        ])
        .arg(&png)
        .env("MEMSCAPE_ADAPTER", "cpu")
        .env("XDG_CONFIG_HOME", &dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "memscape present --screenshot failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = memscape_render::RgbaImage::load_png(&png).unwrap();
    let plain_png = dir.join("plain.png");
    let out = Command::new(env!("CARGO_BIN_EXE_memscape"))
        .args(["render", "demo:cfg", "--view", "graph", "--snapshot", "2"])
        .args(["--width", &shown.width.to_string()])
        .args(["--height", &shown.height.to_string(), "--out"])
        .arg(&plain_png)
        .env("MEMSCAPE_ADAPTER", "cpu")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plain = memscape_render::RgbaImage::load_png(&plain_png).unwrap();
    // Every pixel but the step counter in the bottom-right corner.
    let mut differing = 0;
    for y in 0..shown.height {
        for x in 0..shown.width {
            if x + 160 > shown.width && y + 40 > shown.height {
                continue;
            }
            let (p, q) = (shown.pixel(x, y), plain.pixel(x, y));
            if (0..3).any(|c| p[c].abs_diff(q[c]) > 3) {
                differing += 1;
            }
        }
    }
    assert!(
        differing < 100,
        "{differing} pixels of the window differ from the last step's render"
    );
}

/// Whether `img` has a pixel within 10 of `want` in every channel.
fn has(img: &RgbaImage, want: [u8; 3]) -> bool {
    count(img, want) > 0
}

/// Pixels within 10 of `want`.
fn count(img: &RgbaImage, want: [u8; 3]) -> usize {
    (0..img.height)
        .flat_map(|y| (0..img.width).map(move |x| (x, y)))
        .filter(|&(x, y)| {
            let p = img.pixel(x, y);
            (0..3).all(|k| p[k].abs_diff(want[k]) < 10)
        })
        .count()
}

#[test]
fn gui_opens_the_samples_views_under_xvfb() {
    let samples =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/memaxes/lulesh/samples.out");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("topology_views_gui");
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("lulesh-window.png");
    let _ = std::fs::remove_file(&png);
    let out = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1600x1000x24"])
        .arg(env!("CARGO_BIN_EXE_memscape"))
        .arg("view")
        .arg(&samples)
        .args([
            "--window-size",
            "1600x1000",
            "--screenshot-timeout",
            "240",
            "--screenshot",
        ])
        .arg(&png)
        .env("MEMSCAPE_ADAPTER", "cpu")
        .env("XDG_CONFIG_HOME", &dir)
        .output()
        .expect("xvfb-run (package xvfb) runs");
    assert!(
        out.status.success(),
        "memscape view --screenshot failed:\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let image = RgbaImage::load_png(&png).unwrap();
    // The topology (ramp ends), the histograms' bars and the source pane's highlighted line.
    assert!(has(&image, [165, 0, 38]), "a hottest resource");
    assert!(has(&image, [49, 54, 149]), "a coolest resource");
    assert!(count(&image, [86, 92, 108]) > 5000, "histogram bars");
    assert!(
        count(&image, [120, 86, 20]) > 1000,
        "the top line in the source pane"
    );
}

/// `memscape view demo:cfg` opens the embedded file, as every other command takes the demo
/// names (it looked for a file named `demo:cfg` and the screenshot failed on the load error).
#[test]
fn gui_view_accepts_demo_names() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("gui");
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("demo-cfg-window.png");
    let _ = std::fs::remove_file(&png);
    let out = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 1024x700x24"])
        .arg(env!("CARGO_BIN_EXE_memscape"))
        .args([
            "view",
            "demo:cfg",
            "--window-size",
            "900x640",
            "--screenshot-timeout",
            "240",
            "--screenshot",
        ])
        .arg(&png)
        .env("MEMSCAPE_ADAPTER", "cpu")
        .env("XDG_CONFIG_HOME", &dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "memscape view demo:cfg --screenshot failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        memscape_render::RgbaImage::load_png(&png)
            .unwrap()
            .distinct_colors()
            > 50
    );
}
