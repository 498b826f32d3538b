//! What a user sees for bad inputs, through the real binary: each message names the file,
//! says its cause once and never prints raw binary; damaged and unusual inputs (a cut .zst,
//! bzip2, massif without trees) behave the same in every command; the demo names and files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn memscape() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memscape"));
    c.env("MEMSCAPE_ADAPTER", "cpu");
    c
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bad_inputs");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn shared(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(rel)
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    memscape().args(args).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Deterministic bytes that are no format (a xorshift stream).
fn noise(n: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// The printable part of a message: every line must be text a terminal shows as it is.
fn assert_printable(message: &str, context: &str) {
    for c in message.chars() {
        assert!(
            c == '\n' || c == '…' || c == '—' || c == '×' || (' '..='~').contains(&c),
            "{context}: unprintable {c:?} in {message:?}"
        );
    }
}

/// Each cause once: no `(os error N)` twice, no clause repeated after `: `.
fn assert_cause_once(message: &str, context: &str) {
    let first_line = message.lines().find(|l| l.contains("error")).unwrap_or("");
    assert!(
        first_line.matches("(os error").count() <= 1,
        "{context}: {first_line}"
    );
    let parts: Vec<&str> = first_line.split(": ").collect();
    for (i, p) in parts.iter().enumerate() {
        assert!(
            !parts[i + 1..].contains(p) || p.len() < 8,
            "{context}: {p:?} said twice in {first_line}"
        );
    }
}

#[test]
fn bad_inputs_get_one_clear_message_in_every_command() {
    let dir = scratch("a-directory");
    std::fs::create_dir_all(&dir).unwrap();
    let empty = scratch("empty.csv");
    std::fs::write(&empty, b"").unwrap();
    let random_msc = scratch("random.msc");
    std::fs::write(&random_msc, noise(4096)).unwrap();
    let random = scratch("random.bin");
    std::fs::write(&random, noise(4096)).unwrap();
    let missing = scratch("no-such-file.txt");
    let out_png = scratch("bad.png");
    let commands: Vec<Vec<&str>> = vec![
        vec!["info"],
        vec!["heaptree"],
        vec!["samples"],
        vec!["topology"],
        vec!["cycles"],
        vec!["layout"],
        vec!["persistence"],
        vec!["render", "--width", "64", "--height", "64", "--out"],
    ];
    for cmd in &commands {
        for file in [&dir, &empty, &random_msc, &random, &missing] {
            let mut args: Vec<&std::ffi::OsStr> = cmd.iter().map(|s| s.as_ref()).collect();
            if cmd[0] == "render" {
                args.push(out_png.as_os_str());
            }
            args.push(file.as_os_str());
            let out = run(&args);
            let context = format!("memscape {cmd:?} {}", file.display());
            assert!(!out.status.success(), "{context} succeeded");
            let err = stderr(&out);
            assert!(
                err.contains(&*file.file_name().unwrap().to_string_lossy()),
                "{context}: {err}"
            );
            assert!(!err.contains("panicked"), "{context}: {err}");
            assert_printable(&err, &context);
            assert_cause_once(&err, &context);
            if file == &empty {
                assert!(err.contains("the file is empty"), "{context}: {err}");
            }
            if file == &random_msc && ["info", "heaptree", "render"].contains(&cmd[0]) {
                assert!(
                    err.contains("not a memscape .msc file (bad magic \""),
                    "{context}: {err}"
                );
            }
        }
    }
}

/// A `.zst` cut short loads what is there, with a warning, in `info` and in `render` alike
/// (`render` refused with "Zstd stream is corrupt after 16777216 decompressed bytes: incomplete
/// frame: incomplete frame").
#[test]
fn a_cut_zst_loads_what_is_there_everywhere() {
    let whole = std::fs::read(shared("heaptrack/sqlite_1M.raw.zst")).unwrap();
    let cut = scratch("cut.raw.zst");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let info = run(&["info".as_ref(), "--json".as_ref(), cut.as_os_str()]);
    assert!(info.status.success(), "{}", stderr(&info));
    let json: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    let events = json["events"].as_u64().unwrap();
    assert!(events > 100_000 && events < 1_014_246, "{events}");
    let png = scratch("cut.png");
    let render = run(&[
        "render".as_ref(),
        "--width".as_ref(),
        "96".as_ref(),
        "--height".as_ref(),
        "64".as_ref(),
        "--out".as_ref(),
        png.as_os_str(),
        cut.as_os_str(),
    ]);
    assert!(render.status.success(), "{}", stderr(&render));
    for out in [&info, &render] {
        let err = stderr(out);
        assert!(err.contains("cut or corrupt"), "{err}");
        assert_printable(&err, "cut .zst");
    }
}

/// bzip2 inputs are read by their magic (heaptrack's and massif's files alike), and a massif
/// file without any heap tree gives its heap-size curve in `heaptree` and `render`.
#[test]
fn bzip2_and_massif_without_trees() {
    let raw =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo/sqlite-small.heaptrack.raw.zst");
    let text = Command::new("zstd").arg("-dc").arg(&raw).output().unwrap();
    assert!(text.status.success());
    let bz = scratch("sqlite-small.raw.bz2");
    let mut child = Command::new("bzip2")
        .arg("-c")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("bzip2 (Debian package bzip2)");
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(&text.stdout).unwrap();
    let packed = child.wait_with_output().unwrap();
    std::fs::write(&bz, &packed.stdout).unwrap();
    let a = run(&["info".as_ref(), "--json".as_ref(), bz.as_os_str()]);
    let b = run(&["info".as_ref(), "--json".as_ref(), raw.as_os_str()]);
    assert!(a.status.success(), "{}", stderr(&a));
    let a: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&b.stdout).unwrap();
    assert_eq!(a["events"], b["events"]);
    assert_eq!(a["peak_live_bytes"], b["peak_live_bytes"]);

    // Stacks only (`--stacks=yes`, no malloc): the text says so and lists the stacks.
    let stacks = shared("massif/massif.out.stack");
    let tree = run(&["heaptree".as_ref(), stacks.as_os_str()]);
    assert!(tree.status.success(), "{}", stderr(&tree));
    let shown = String::from_utf8_lossy(&tree.stdout);
    assert!(
        shown.contains("this profile has no heap bytes") && shown.contains("stacks peak:"),
        "{shown}"
    );

    let massif = shared("massif/massif.out.32406");
    let tree = run(&["heaptree".as_ref(), massif.as_os_str()]);
    assert!(tree.status.success(), "{}", stderr(&tree));
    let shown = String::from_utf8_lossy(&tree.stdout);
    assert!(shown.contains("no snapshot has a heap tree"), "{shown}");
    let json = run(&["heaptree".as_ref(), "--json".as_ref(), massif.as_os_str()]);
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["has_tree"], false);
    assert_eq!(json["snapshots"][1]["heap_bytes"], 100);
    let png = scratch("massif-curve.png");
    let render = run(&[
        "render".as_ref(),
        "--view".as_ref(),
        "sunburst".as_ref(),
        "--width".as_ref(),
        "400".as_ref(),
        "--height".as_ref(),
        "240".as_ref(),
        "--out".as_ref(),
        png.as_os_str(),
        massif.as_os_str(),
    ]);
    assert!(render.status.success(), "{}", stderr(&render));
    let image = memscape_render::RgbaImage::load_png(&png).unwrap();
    assert!(image.distinct_colors() > 8, "the curve picture looks blank");
}

/// `memscape demo DIR` writes every companion file (the traced binary and its source), so
/// that the cycle analysis of the written lackey trace finds its binary as `demo:sort` does.
#[test]
fn demo_dir_has_every_companion_and_its_trace_analyses_like_the_demo() {
    let dir = scratch("demo-dir");
    let out = run(&["demo".as_ref(), dir.as_os_str()]);
    assert!(out.status.success(), "{}", stderr(&out));
    for name in ["sort", "sort.c", "sort.lackey.zst", "kvstore.msc"] {
        assert!(dir.join(name).is_file(), "{name} not written");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(dir.join("sort"))
            .unwrap()
            .permissions()
            .mode();
        assert!(mode & 0o111 != 0, "the traced binary is not executable");
    }
    let trace = dir.join("sort.lackey.zst");
    let cycles = run(&[
        "cycles".as_ref(),
        trace.as_os_str(),
        "--function".as_ref(),
        "insertion_sort".as_ref(),
        "--json".as_ref(),
    ]);
    assert!(cycles.status.success(), "{}", stderr(&cycles));
    let json: serde_json::Value = serde_json::from_slice(&cycles.stdout).unwrap();
    assert!(
        json["records"].as_array().unwrap().len() > 1000,
        "the whole insertion sort"
    );
    // `view` takes the demo names too: an unknown one is refused before any window opens.
    let wrong = run(&["view".as_ref(), "demo:nothing".as_ref()]);
    assert!(!wrong.status.success());
    let err = stderr(&wrong);
    assert!(
        err.contains("demo:nothing") && err.contains("demo:sort"),
        "{err}"
    );
}
