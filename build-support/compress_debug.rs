//! The build script of every workspace crate (each `Cargo.toml` names this one file): on Linux,
//! the linker compresses the line tables of each test binary, example and binary it writes.
//!
//! Why: `make test` links ~130 test binaries and examples, each carrying its own copy of the
//! standard library's and our crates' line tables (≈ 2.7 GB of the ≈ 4.9 GB they weigh). A clean
//! CI run on a machine with little disk left died in the linker (SIGBUS: its output could not
//! be written, stop 35). Compressed (zlib, ≈ 4×) the sections still resolve in backtraces:
//! std's symbolizer reads them. Set here rather than in `.cargo/config.toml` so that the
//! dependencies' builds, which link nothing, keep their fingerprints.

fn main() {
    // This file, from the package's folder (the workspace root or `crates/NAME`): the script
    // reruns when it changes, not on every edit of the package.
    let this = [
        "build-support/compress_debug.rs",
        "../../build-support/compress_debug.rs",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).exists());
    if let Some(path) = this {
        println!("cargo:rerun-if-changed={path}");
    }
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg=-Wl,--compress-debug-sections=zlib");
    }
}
