//! `memscape render`'s command line: options that clap rejects name the option and what it
//! takes, and the graph's `--profile` finds a profile saved by the GUI's editor in the user's
//! directory. (The views themselves are tested in-process in `crates/memscape-views/tests`.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_render::RgbaImage;

fn render(input: &Path, args: &[&str], out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_memscape"))
        .arg("render")
        .arg(input)
        .args(args)
        .arg("--out")
        .arg(out)
        .env("MEMSCAPE_ADAPTER", "cpu")
        .output()
        .unwrap()
}

fn root(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn never() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("never.png")
}

#[test]
fn options_clap_rejects_name_themselves() {
    let lulesh = root("../shared/data/memaxes/lulesh/samples.out");
    for (input, args, expect) in [
        (
            root("assets/demo/sort.lackey.zst"),
            &["--view", "spiral", "--range", "0..300", "--param", "99"][..],
            &["--param", "99"][..],
        ),
        (
            PathBuf::from("demo"),
            &["--view", "alloc", "--occupancy", "wavy"][..],
            &["intervals-parabolic"][..],
        ),
        (
            lulesh.clone(),
            &[
                "--view",
                "histograms",
                "--cluster-attribute",
                "zidx",
                "--cluster-depth",
                "l9",
            ][..],
            &["--cluster-depth"][..],
        ),
        (
            PathBuf::from("demo"),
            &["--view", "sunburst", "--metric", "pages"][..],
            &["--metric", "bytes or objects"][..],
        ),
        (
            PathBuf::from("demo"),
            &["--view", "pie-chart"][..],
            &["pie-chart", "sunburst"][..],
        ),
    ] {
        let out = render(&input, args, &never());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        for e in expect {
            assert!(err.contains(e), "{args:?}: {err}");
        }
    }
}

#[test]
fn view_errors_reach_the_command_line_with_their_causes() {
    let out = render(
        Path::new("demo"),
        &[
            "--view",
            "alloc",
            "--bins",
            "size",
            "--range-addr",
            "0x10..0x20",
        ],
        &never(),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--range-addr") && !err.contains("panicked"),
        "{err}"
    );
}

/// `--profile NAME` also finds a profile saved by the GUI's editor in the user's directory;
/// an unknown name is an error naming where it was looked for.
#[test]
fn saved_profiles_are_found_by_name() {
    let input = root("crates/memscape-graph/tests/data/igv_difference.xml");
    let config = Path::new(env!("CARGO_TARGET_TMPDIR")).join("graph_config");
    let _ = std::fs::remove_dir_all(&config);
    let dir = config.join("memscape/profiles");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("reds.toml"),
        "name = \"reds\"\n[[rule]]\naction = \"color\"\nproperty = \"name\"\nregex = \".\"\ncolor = \"#d02020\"\n",
    )
    .unwrap();
    let out_png = config.join("reds.png");
    let run = |profile: &str| {
        Command::new(env!("CARGO_BIN_EXE_memscape"))
            .arg("render")
            .arg(&input)
            .args([
                "--view",
                "graph",
                "--profile",
                profile,
                "--width",
                "400",
                "--height",
                "300",
                "--out",
            ])
            .arg(&out_png)
            .env("MEMSCAPE_ADAPTER", "cpu")
            .env("XDG_CONFIG_HOME", &config)
            .output()
            .unwrap()
    };
    let out = run("reds");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let img = RgbaImage::load_png(&out_png).unwrap();
    assert!(
        common::count_near(&img, [0xd0, 0x20, 0x20], 12) > 100,
        "red nodes"
    );
    let out = run("blues");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("blues") && err.contains("memscape/profiles"),
        "{err}"
    );
}

/// `--out x.svg` writes SVG (by the extension, or `--format svg` whatever the name): the
/// allocation map's picture as one XML document with its map embedded as an image and its
/// labels as text; `.png` stays PNG. (Every view's SVG is compared with its PNG in
/// `crates/memscape-views/tests/svg.rs`.)
#[test]
fn render_writes_svg_by_extension_or_format() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("render-svg");
    std::fs::create_dir_all(&dir).unwrap();
    let args = [
        "--view",
        "alloc",
        "--panels",
        "main,occupancy",
        "--width",
        "480",
        "--height",
        "300",
    ];
    let by_extension = dir.join("map.svg");
    let by_format = dir.join("map.image");
    let png = dir.join("map.png");
    let out = render(Path::new("demo"), &args, &by_extension);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut with_format = args.to_vec();
    with_format.extend(["--format", "svg"]);
    let out = render(Path::new("demo"), &with_format, &by_format);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for path in [&by_extension, &by_format] {
        let svg = std::fs::read_to_string(path).unwrap();
        assert!(svg.starts_with("<?xml"), "{}", path.display());
        assert!(
            svg.contains(r#"width="480" height="300""#),
            "{}",
            path.display()
        );
        assert!(
            svg.contains("<image") && svg.contains("data:image/png;base64,"),
            "{}",
            path.display()
        );
        assert!(svg.contains("<text"), "{}", path.display());
    }
    let out = render(Path::new("demo"), &args, &png);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let image = RgbaImage::load_png(&png).unwrap();
    assert_eq!((image.width, image.height), (480, 300));
}
