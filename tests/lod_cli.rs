//! `memscape lod` the way users run it: build the index beside a generated mappable trace,
//! reuse it, rebuild it when it is damaged, draw frames from it (the level of detail and the
//! exact path), and clear errors for bad arguments and missing files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn memscape(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_memscape"))
        .args(args)
        .output()
        .expect("run memscape");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn png_size(path: &std::path::Path) -> (u32, u32) {
    let b = std::fs::read(path).expect("png");
    assert_eq!(&b[1..4], b"PNG");
    let be = |o: usize| u32::from_be_bytes(b[o..o + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn lod_build_reuse_rebuild_and_render() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("synth.msc");
    memscape_lod::synth::write_mappable(
        memscape_lod::synth::SynthParams::new(300_000, 7),
        &trace,
        &mut |_| {},
    )
    .unwrap();
    let t = trace.to_str().unwrap();
    let (ok, out, err) = memscape(&["lod", "build", t]);
    assert!(ok, "{err}");
    assert!(out.contains("built ") && out.contains("levels"), "{out}");
    let index = dir.path().join("synth.msc.thread.lod");
    assert!(index.exists());
    let (ok, out, _) = memscape(&["lod", "build", t]);
    assert!(ok && out.contains("is current"), "{out}");
    // A damaged index is rebuilt, not trusted.
    std::fs::write(&index, b"MSCLOD\0\0garbage").unwrap();
    let (ok, out, err) = memscape(&["lod", "build", t]);
    assert!(ok && out.contains("built "), "{out}{err}");

    let lod_png = dir.path().join("lod.png");
    let (ok, out, err) = memscape(&[
        "lod",
        "render",
        t,
        "-o",
        lod_png.to_str().unwrap(),
        "--size",
        "64x36",
        "--alpha",
        "0.3",
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("from level 2^"),
        "the whole view is drawn from a level: {out}"
    );
    assert_eq!(png_size(&lod_png), (64, 36));
    let exact_png = dir.path().join("exact.png");
    let (ok, out, err) = memscape(&[
        "lod",
        "render",
        t,
        "-o",
        exact_png.to_str().unwrap(),
        "--size",
        "160x90",
        "--alpha",
        "0.3",
        "--path",
        "exact",
    ]);
    assert!(ok && out.contains("from exact blocks"), "{out}{err}");
    // Zoomed in: exact blocks through the index.
    let (ok, out, err) = memscape(&[
        "lod",
        "render",
        t,
        "-o",
        exact_png.to_str().unwrap(),
        "--size",
        "160x90",
        "--window",
        "1000:5000,*",
    ]);
    assert!(ok && out.contains("from exact blocks"), "{out}{err}");

    let (ok, _, err) = memscape(&["lod", "render", t, "-o", "x.png", "--window", "9:3,*"]);
    assert!(
        !ok && err.contains("--window \"9:3,*\": expected T0:T1,A0:A1"),
        "{err}"
    );
    let (ok, _, err) = memscape(&["lod", "render", t, "-o", "x.png", "--size", "0x5"]);
    assert!(!ok && err.contains("--size"), "{err}");
    let missing = dir.path().join("missing.msc");
    let (ok, _, err) = memscape(&["lod", "build", missing.to_str().unwrap()]);
    assert!(!ok && err.contains("missing.msc"), "{err}");
    assert_eq!(err.matches("No such file").count(), 1, "said once: {err}");
}
