//! The `memscape` binary end to end: help, headless rendering on lavapipe, errors on bad input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn memscape() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memscape"));
    // Golden and CI rendering happen on the software adapter.
    c.env("MEMSCAPE_ADAPTER", "cpu");
    c
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn help_documents_every_subcommand() {
    let out = memscape().arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for sub in [
        "view",
        "render",
        "info",
        "convert",
        "record",
        "heaptree",
        "topology",
        "samples",
        "cluster",
        "persistence",
        "cycles",
        "layout",
        "export",
        "demo",
    ] {
        assert!(text.contains(sub), "--help does not mention {sub}:\n{text}");
    }
}

#[test]
fn render_writes_a_non_blank_png_of_the_demo() {
    let out_png = scratch("demo-alloc-map.png");
    let _ = std::fs::remove_file(&out_png);
    let out = memscape()
        .args([
            "render",
            "demo",
            "--view",
            "alloc-map",
            "--width",
            "400",
            "--height",
            "300",
            "--out",
        ])
        .arg(&out_png)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "render failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let image = memscape_render::RgbaImage::load_png(&out_png).unwrap();
    assert_eq!((image.width, image.height), (400, 300));
    assert!(
        image.distinct_colors() > 100,
        "the demo rendering looks blank ({} colours)",
        image.distinct_colors()
    );
}

#[test]
fn a_file_that_is_not_a_trace_is_a_clear_error() {
    let bad = scratch("not-a-trace.txt");
    std::fs::write(&bad, "hello, this is not a memory trace\n").unwrap();
    let out = memscape()
        .args(["render", "--out"])
        .arg(scratch("never.png"))
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not-a-trace.txt"),
        "error does not name the file: {err}"
    );
    assert!(!err.contains("panicked"), "panic on bad input: {err}");
}

#[test]
fn a_missing_file_is_a_clear_error() {
    let out = memscape()
        .args(["info", "/nonexistent/trace.raw"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/trace.raw"), "{err}");
}

/// `info` answers for every kind of file the views open, not only allocation traces: the
/// format, the counts (checked against a plain scan of the file) and the warnings.
#[test]
fn info_summarizes_every_format_the_views_open() {
    let text_of = |file: &Path| {
        let out = memscape().arg("info").arg(file).output().unwrap();
        assert!(
            out.status.success(),
            "info {}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // massif: the marked peak's heap, and a --stacks=yes profile's stack peak, as the file
    // says them (`snapshot=N`, `mem_heap_B=`, `mem_stacks_B=`, `heap_tree=peak`).
    let kate = shared("massif/massif.out.kate");
    let mut peak = None;
    let (mut number, mut heap) = (String::new(), String::new());
    for line in std::fs::read_to_string(&kate).unwrap().lines() {
        if let Some(n) = line.strip_prefix("snapshot=") {
            number = n.to_owned();
        } else if let Some(b) = line.strip_prefix("mem_heap_B=") {
            heap = b.to_owned();
        } else if line == "heap_tree=peak" {
            peak = Some((number.clone(), heap.clone()));
        }
    }
    let (number, heap) = peak.expect("massif.out.kate marks a peak");
    let out = text_of(&kate);
    assert!(out.contains("format:          valgrind massif"), "{out}");
    assert!(
        out.contains(&format!("peak heap bytes {heap} (snapshot {number} at ")),
        "{out}"
    );
    let stack = shared("massif/massif.out.stack");
    let most_stacks = std::fs::read_to_string(&stack)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("mem_stacks_B=")?.parse::<u64>().ok())
        .max()
        .unwrap();
    assert!(most_stacks > 0);
    let out = text_of(&stack);
    assert!(
        out.contains(&format!("peak stacks     {most_stacks} B (snapshot ")),
        "{out}"
    );
    // IGV XML: its nodes and edges as the file lists them.
    let igv = shared("igv/example.xml");
    let xml = std::fs::read_to_string(&igv).unwrap();
    let out = text_of(&igv);
    assert!(out.contains("format:          dependence graphs"), "{out}");
    assert!(
        out.contains(&format!(
            "({} nodes, {} edges)",
            xml.matches("<node ").count(),
            xml.matches("<edge ").count()
        )),
        "{out}"
    );
    // Graal BGV (gzip): more graphs than listed says how many more.
    let out = text_of(&shared(
        "bgv/graalvm-ce-java11-21.2.0_java_exampleArrayAllocation.bgv.gz",
    ));
    assert!(out.contains("  … ") && out.contains(" more\n"), "{out}");
    // hwloc XML: the tree with its PUs.
    let hwloc = shared("hwloc/16amd64-4distances.xml");
    let pus = std::fs::read_to_string(&hwloc)
        .unwrap()
        .matches("<object type=\"PU\"")
        .count();
    let out = text_of(&hwloc);
    assert!(out.contains("format:          hardware topology"), "{out}");
    assert_eq!(out.matches(" PU P#").count(), pus, "{out}");
    // JSON: the same, with the warnings counted.
    let json = json_of(&["info"], &kate);
    assert_eq!(json["format"], "valgrind massif");
    assert_eq!(json["warnings"], 0);
    assert!(json["summary"].as_str().unwrap().contains("snapshots"));
    // --process belongs to allocation traces: said, naming the file and what it is.
    let out = memscape()
        .args(["info", "--process", "3"])
        .arg(&kate)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("massif.out.kate") && err.contains("valgrind massif"),
        "{err}"
    );
}

/// A distance matrix (Ripser's lower-distance form, which `persistence` reads and no view
/// opens): `info` counts its points from its numbers, n(n-1)/2 of them; numbers that are no
/// triangle stay refused with the formats memscape reads.
#[test]
fn info_summarizes_a_distance_matrix() {
    for name in ["random16", "sphere_3_192"] {
        let file = shared(&format!("ripser/{name}.lower_distance_matrix"));
        let text = std::fs::read_to_string(&file).unwrap();
        let numbers: Vec<f64> = text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
            .map(|t| t.parse().unwrap())
            .collect();
        let points = (1..).find(|n| n * (n - 1) / 2 >= numbers.len()).unwrap();
        assert_eq!(points * (points - 1) / 2, numbers.len(), "{name}");
        let v = json_of(&["info"], &file);
        assert_eq!(v["points"], points, "{name}: {v}");
        assert_eq!(v["distances"], numbers.len(), "{name}: {v}");
        let max = numbers.iter().copied().fold(0.0, f64::max);
        let got = v["max_distance"].as_f64().unwrap();
        assert!((got - max).abs() <= max * 1e-6, "{name}: {got} vs {max}");
    }
    let dir = tempfile::tempdir().unwrap();
    let four = dir.path().join("four.txt");
    std::fs::write(&four, "1, 2\n3, 4\n").unwrap();
    let out = memscape().arg("info").arg(&four).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("not a file memscape can read"),
        "{err}"
    );
}

/// heaptrack's processed files name an unresolved frame's module without its load address:
/// the frames of one module are told apart by their address, not all shown as `module+0x0`;
/// the text's columns line up.
#[test]
fn info_tells_unresolved_frames_of_one_module_apart() {
    let file = shared("heaptrack/heaptrack.david.18594.gz");
    let v = json_of(&["info"], &file);
    let locations: Vec<&str> = v["top_call_sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["location"].as_str().unwrap())
        .collect();
    assert!(
        locations.iter().any(|l| l.starts_with("libGL.so.1 @0x")),
        "{locations:?}"
    );
    assert!(
        locations.iter().all(|l| !l.contains("+0x0")),
        "{locations:?}"
    );
    let out = memscape().arg("info").arg(&file).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("top call sites"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert!(rows.len() >= 5, "{text}");
    let column = |row: &str| row.find(" block").unwrap();
    assert!(
        rows.iter().all(|r| column(r) == column(rows[0])),
        "{rows:#?}"
    );
}

fn shared(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(path)
}

fn json_of(args: &[&str], file: &Path) -> serde_json::Value {
    let out = memscape()
        .args(args)
        .arg(file)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "memscape {args:?} {} failed: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"))
}

/// Every analysis subcommand runs on real data and prints the JSON keys its issue names.
#[test]
fn analysis_subcommands_print_their_documented_json() {
    let info = json_of(&["info"], &shared("heaptrack/sqlite_1M.raw.zst"));
    for key in [
        "format",
        "events",
        "allocs",
        "frees",
        "reallocs",
        "blocks",
        "unknown_frees",
        "double_frees",
        "warnings",
        "peak_live_bytes",
        "end_live_bytes",
        "never_freed",
        "regions",
    ] {
        assert!(info.get(key).is_some(), "info lacks {key}");
    }
    assert_eq!(info["peak_live_bytes"], 4_444_354);

    let heap = json_of(&["heaptree", "--peak"], &shared("massif/massif.out.kate"));
    assert!(heap["children"].is_array() && heap["total_bytes"].as_u64() > Some(0));
    assert_eq!(
        heap["bytes"], heap["total_bytes"],
        "the root holds the whole heap"
    );

    let topo = json_of(&["topology"], &shared("hwloc/24em64t-2n6c2t-pci.xml"));
    assert!(topo.is_object());

    let samples = json_of(&["samples"], &shared("memaxes/lulesh/samples.out"));
    for key in ["resources", "links", "top_lines", "top_symbols", "warnings"] {
        assert!(samples.get(key).is_some(), "samples lacks {key}");
    }

    let bars = json_of(
        &["persistence"],
        &shared("ripser/random16.lower_distance_matrix"),
    );
    assert_eq!(
        bars["dims"][0].as_array().map(Vec::len),
        Some(16),
        "16 points give 16 H0 bars"
    );

    let layout = json_of(&["layout"], &shared("igv/example.xml"));
    assert_eq!(layout["nodes"].as_array().map(Vec::len), Some(56));
    for key in ["edges", "crossings", "layers", "layout_ms"] {
        assert!(layout.get(key).is_some(), "layout lacks {key}");
    }
}

#[test]
fn convert_writes_an_msc_that_info_reads_back_identically() {
    let msc = scratch("sysroot.msc");
    let input = shared("heaptrack/test_sysroot.raw");
    let out = memscape()
        .arg("convert")
        .arg(&input)
        .arg(&msc)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let a = json_of(&["info"], &input);
    let b = json_of(&["info"], &msc);
    for key in [
        "allocs",
        "frees",
        "blocks",
        "peak_live_bytes",
        "end_live_bytes",
    ] {
        assert_eq!(a[key], b[key], "{key} differs after conversion");
    }
}

/// `--range-time` and `--range-addr` zoom the headless rendering; an address outside every used
/// region is a clear error.
#[test]
fn render_ranges_zoom_and_reject_unused_addresses() {
    let demo_dir = scratch("demo-files");
    let out = memscape().arg("demo").arg(&demo_dir).output().unwrap();
    assert!(out.status.success());
    let trace = demo_dir.join("sqlite-small.heaptrack.raw.zst");
    let info = json_of(&["info"], &trace);
    let start = info["regions"][0]["start"].as_u64().unwrap();
    let render = |extra: &[String], name: &str| {
        let png = scratch(name);
        let out = memscape()
            .args(["render", "--width", "200", "--height", "150", "--out"])
            .arg(&png)
            .args(extra)
            .arg(&trace)
            .output()
            .unwrap();
        (out, png)
    };
    let (full, full_png) = render(&[], "range-full.png");
    assert!(
        full.status.success(),
        "{}",
        String::from_utf8_lossy(&full.stderr)
    );
    let range = vec![
        "--range-time".to_owned(),
        "1000..5000".to_owned(),
        "--range-addr".to_owned(),
        format!("{start:#x}..{:#x}", start + 64 * 1024),
    ];
    let (zoomed, zoomed_png) = render(&range, "range-zoomed.png");
    assert!(
        zoomed.status.success(),
        "{}",
        String::from_utf8_lossy(&zoomed.stderr)
    );
    let a = memscape_render::RgbaImage::load_png(&full_png).unwrap();
    let b = memscape_render::RgbaImage::load_png(&zoomed_png).unwrap();
    assert!(b.distinct_colors() > 20, "the zoomed rendering looks blank");
    assert_ne!(a.pixels, b.pixels, "the ranges changed nothing");

    let outside = vec!["--range-addr".to_owned(), "0x10..0x20".to_owned()];
    let (bad, _) = render(&outside, "range-bad.png");
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("not inside a used region"), "{err}");
}

/// The analysis commands take the embedded demo's names like `render` does, and say which
/// names exist when one is wrong.
#[test]
fn analysis_subcommands_accept_demo_names() {
    let cache = scratch("demo-cache");
    let run = |args: &[&str]| {
        memscape()
            .args(args)
            .env("XDG_CACHE_HOME", &cache)
            .output()
            .unwrap()
    };
    let info = run(&["info", "demo", "--json"]);
    assert!(
        info.status.success(),
        "{}",
        String::from_utf8_lossy(&info.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(info["format"], "msc");
    assert!(info["events"].as_u64().unwrap() > 100_000, "{info}");

    let tree = run(&["heaptree", "demo:sqlite", "--peak", "--json"]);
    assert!(
        tree.status.success(),
        "{}",
        String::from_utf8_lossy(&tree.stderr)
    );
    let tree: serde_json::Value = serde_json::from_slice(&tree.stdout).unwrap();
    assert!(tree["total_bytes"].as_u64().unwrap() > 0, "{tree}");

    let layout = run(&["layout", "demo:cfg", "--snapshot", "3"]);
    assert!(
        layout.status.success(),
        "{}",
        String::from_utf8_lossy(&layout.stderr)
    );
    assert!(String::from_utf8_lossy(&layout.stdout).contains("crossings"));

    let cycles = run(&["cycles", "demo:sort", "--range", "0..300", "--json"]);
    assert!(
        cycles.status.success(),
        "{}",
        String::from_utf8_lossy(&cycles.stderr)
    );
    let cycles: serde_json::Value = serde_json::from_slice(&cycles.stdout).unwrap();
    let records = cycles["records"].as_array().unwrap();
    assert_eq!(records.len(), 300);
    // Symbolized against the embedded binary, with its source beside it.
    let in_main = records.iter().find(|r| r["function"] == "main");
    let file = in_main.expect("records of main")["file"].as_str().unwrap();
    assert!(
        file.ends_with("sort.c") && Path::new(file).starts_with(&cache),
        "{file}"
    );
    assert!(
        std::fs::read_to_string(file)
            .unwrap()
            .contains("insertion_sort")
    );
    let sorting = run(&[
        "cycles",
        "demo:sort",
        "--function",
        "insertion_sort",
        "--json",
    ]);
    assert!(
        sorting.status.success(),
        "{}",
        String::from_utf8_lossy(&sorting.stderr)
    );
    let sorting: serde_json::Value = serde_json::from_slice(&sorting.stdout).unwrap();
    assert!(
        sorting["records"].as_array().unwrap().len() > 1000,
        "the whole insertion sort"
    );

    let wrong = run(&["info", "demo:nothing"]);
    assert!(!wrong.status.success());
    let message = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        message.contains("demo:nothing") && message.contains("demo:sqlite"),
        "{message}"
    );
}

/// `cycles` on landmarks says so and bounds its error (text, JSON); no progress bar when stderr
/// is not a terminal; `render --collapse-function` draws a function's lines in one colour.
#[test]
fn cycles_level_of_detail_is_stated_and_lines_collapse_by_function() {
    let cache = scratch("lod-cache");
    let run = |args: &[&str]| {
        memscape()
            .args(args)
            .env("XDG_CACHE_HOME", &cache)
            .output()
            .unwrap()
    };
    let text = run(&["cycles", "demo:sort", "--landmarks", "300"]);
    assert!(
        text.status.success(),
        "{}",
        String::from_utf8_lossy(&text.stderr)
    );
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        stdout.contains("level of detail: 300 landmark windows of 3949 unique (--landmarks")
            && stdout.contains("within bottleneck distance"),
        "{stdout}"
    );
    // A pipe is not a terminal: no progress bar.
    let stderr = String::from_utf8_lossy(&text.stderr);
    assert!(
        !stderr.contains('%') && !stderr.contains("reduction"),
        "{stderr}"
    );

    let json = run(&["cycles", "demo:sort", "--landmarks", "300", "--json"]);
    assert!(json.status.success());
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let lod = &report["level_of_detail"];
    assert_eq!(lod["landmarks"], 300);
    assert_eq!(lod["unique_windows"], 3949);
    assert_eq!(
        lod["bottleneck_bound"].as_u64().unwrap(),
        2 * lod["covering_radius"].as_u64().unwrap()
    );
    assert_eq!(report["records"].as_array().unwrap().len(), 26053);
    assert!(String::from_utf8_lossy(&json.stderr).contains("level of detail"));
    // A full analysis has no level of detail.
    let full = run(&["cycles", "demo:sort", "--range", "0..300", "--json"]);
    let full: serde_json::Value = serde_json::from_slice(&full.stdout).unwrap();
    assert!(full.get("level_of_detail").is_none());
    let bad = run(&["cycles", "demo:sort", "--landmarks", "1"]);
    assert!(!bad.status.success());

    let render = |extra: &[&str], name: &str| {
        let png = scratch(name);
        let mut args = vec![
            "render",
            "demo:sort",
            "--view",
            "spiral",
            "--range",
            "0..4000",
            "--width",
            "320",
            "--height",
            "240",
            "--out",
        ];
        let path = png.to_string_lossy().into_owned();
        args.push(&path);
        args.extend_from_slice(extra);
        let out = run(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        memscape_render::RgbaImage::load_png(&png).unwrap()
    };
    let lines = render(&[], "lines.png");
    let collapsed = render(
        &[
            "--collapse-function",
            "*",
            "--collapse-function",
            "!insertion_sort",
        ],
        "lines-collapsed.png",
    );
    assert_ne!(lines.pixels, collapsed.pixels);
    let wrong = run(&[
        "render",
        "demo:sort",
        "--view",
        "spiral",
        "--cycle-color",
        "time",
        "--collapse-function",
        "main",
        "--out",
        "/dev/null",
    ]);
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("--cycle-color line"));
}

#[test]
fn graal_bgv_lays_out_with_input_ids_and_renders() {
    let bgv = shared("bgv/graalvm-gftc-java22-24.0.0_java_exampleIf.bgv.gz");
    let layout = json_of(&["layout", "--snapshot", "6"], &bgv);
    assert_eq!(layout["graph"], "After parsing");
    let nodes = layout["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 20);
    // BGV node ids, with the IGV-style name as the label.
    let phi = nodes.iter().find(|n| n["id"] == "18").unwrap();
    assert_eq!(phi["label"], "Phi(2, 3, i32)");
    assert!(
        layout["edges"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["from"] == "9" && e["to"] == "8")
    );
    let png = scratch("graal.png");
    let out = memscape()
        .args([
            "render",
            "--view",
            "graph",
            "--snapshot",
            "6",
            "--profile",
            "graal",
            "-o",
        ])
        .arg(&png)
        .arg(&bgv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::metadata(&png).unwrap().len() > 1000);
}

#[test]
fn export_writes_collapsed_stacks_that_sum_to_the_heaptree_total() {
    let trace = shared("heaptrack/heaptrack.david.18594.gz");
    let tree = json_of(&["heaptree", "--peak"], &trace);
    let out = memscape()
        .args(["export", "--to", "collapsed", "--peak"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let sum: u64 = text
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert_eq!(Some(sum), tree["total_bytes"].as_u64());
    let pb = scratch("david.pb.gz");
    let out = memscape()
        .args(["export", "--to", "pprof", "--peak", "-o"])
        .arg(&pb)
        .arg(&trace)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Read back through heaptree: the same total.
    let back = json_of(&["heaptree"], &pb);
    assert_eq!(back["total_bytes"], tree["total_bytes"]);
    assert_eq!(back["measure"]["name"], "inuse");
    // And opened by content in the heap views.
    let png = scratch("david-pprof.png");
    let out = memscape()
        .args(["render", "--view", "sunburst", "-o"])
        .arg(&png)
        .arg(&pb)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::metadata(&png).unwrap().len() > 1000);
    let bad = memscape()
        .args(["export", "--to", "svg"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected pprof, collapsed or parquet"));
}

#[test]
fn samples_of_a_memaxes_directory_use_its_hardware() {
    let dir = scratch("memaxes-layout/lulesh");
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::copy(
        shared("memaxes/lulesh/samples.out"),
        dir.join("data/samples.out"),
    )
    .unwrap();
    std::fs::copy(
        shared("memaxes/lulesh/hardware.xml"),
        dir.join("hardware.xml"),
    )
    .unwrap();
    let report = json_of(&["samples"], dir.parent().unwrap());
    let pus = report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "pu")
        .count();
    assert_eq!(pus, 32, "the machine of hardware.xml, not this one");
}
