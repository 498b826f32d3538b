//! Symbolization from separate debug information, found as gdb finds it (build id,
//! `.gnu_debuglink`, debuginfod's cache when asked), and symbols used only inside their size:
//! a program and a shared library compiled, stripped and recorded with heaptrack while the
//! test runs, and the C library's frames of a threaded program checked against `readelf`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::require_tool;
use memscape_trace::Trace;
use memscape_trace::debuginfo::{DebugSearch, FoundBy};
use memscape_trace::symbolize::symbolize_with;
use object::Object;

/// The library: an exported function first, then a static one that allocates. Without debug
/// information the static function's addresses lie past the end of `shape_make`.
const LIB: &str = r#"
#include <stdlib.h>
#include <string.h>
static void *internal_pool_grow(size_t n);
__attribute__((noinline)) void *shape_make(size_t n) { return internal_pool_grow(n); }
__attribute__((noinline)) static void *internal_pool_grow(size_t n) {
    void *p = malloc(n); /* POOL_MALLOC */
    memset(p, 1, n);
    return p;
}
"#;

const PROG: &str = r#"
#include <stdlib.h>
#include <string.h>
void *shape_make(size_t n);
__attribute__((noinline)) static void *hidden_builder(size_t n) {
    void *p = malloc(n); /* BUILDER_MALLOC */
    memset(p, 2, n);
    return p;
}
int main(void) {
    void *keep[64];
    for (int i = 0; i < 32; i++) keep[i] = hidden_builder(100 + i);
    for (int i = 32; i < 64; i++) keep[i] = shape_make(200 + i);
    for (int i = 0; i < 64; i += 2) free(keep[i]);
    return 0;
}
"#;

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("run tool");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn line_of(source: &str, marker: &str) -> u32 {
    source
        .lines()
        .position(|l| l.contains(marker))
        .map(|i| i as u32 + 1)
        .unwrap()
}

fn build_id(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let id = file.build_id().unwrap().expect("gcc writes a build id");
    id.iter().map(|b| format!("{b:02x}")).collect()
}

struct Built {
    dir: tempfile::TempDir,
    raw: PathBuf,
    prog: PathBuf,
    lib: PathBuf,
}

/// Compiles, splits the debug information off (`objcopy --only-keep-debug`), strips both
/// binaries, and records the program with heaptrack.
fn build_and_record() -> Built {
    for (tool, package) in [
        ("gcc", "gcc"),
        ("objcopy", "binutils"),
        ("strip", "binutils"),
        ("heaptrack", "heaptrack"),
    ] {
        require_tool(tool, package);
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("shape.c"), LIB).unwrap();
    std::fs::write(d.join("prog.c"), PROG).unwrap();
    run(Command::new("gcc").current_dir(d).args([
        "-O0",
        "-g",
        "-fPIC",
        "-shared",
        "-Wl,--build-id",
        "-o",
        "libshape.so",
        "shape.c",
    ]));
    run(Command::new("gcc").current_dir(d).args([
        "-O0",
        "-g",
        "-Wl,--build-id",
        "-Wl,-rpath,$ORIGIN",
        "-o",
        "prog",
        "prog.c",
        "-L.",
        "-lshape",
    ]));
    for bin in ["prog", "libshape.so"] {
        run(Command::new("objcopy").current_dir(d).args([
            "--only-keep-debug",
            bin,
            &format!("{bin}.debug"),
        ]));
        run(Command::new("strip")
            .current_dir(d)
            .args(["--strip-all", bin]));
    }
    run(Command::new("heaptrack")
        .current_dir(d)
        .args(["-r", "-o"])
        .arg(d.join("rec"))
        .arg(d.join("prog")));
    let raw = ["rec.raw.zst", "rec.raw.gz", "rec.raw"]
        .iter()
        .map(|n| d.join(n))
        .find(|p| p.is_file())
        .expect("heaptrack wrote no raw file");
    Built {
        raw,
        prog: d.join("prog"),
        lib: d.join("libshape.so"),
        dir,
    }
}

/// (function, file, line) of the frames that called malloc, by the blocks' sizes: 100..132
/// from the program, 232..264 from the library.
/// (function, file name, line) of a frame.
type Named = Option<(String, String, u32)>;

fn malloc_callers(trace: &Trace) -> (Named, Named) {
    let frame_of = |size: u64| {
        let i = (0..trace.blocks.len()).find(|&i| trace.blocks.requested_size[i] == size)?;
        let f = trace.call_tree.frames[trace.blocks.site[i] as usize];
        let name = trace.strings.get(f.function);
        // The file as its name (addr2line joins the compilation directory).
        let file = trace.strings.get(f.file);
        let file = file.rsplit('/').next().unwrap_or(file);
        (!name.is_empty()).then(|| (name.to_owned(), file.to_owned(), f.line))
    };
    (frame_of(100), frame_of(232))
}

fn place_under_build_id(root: &Path, binary: &Path, debug: &Path) {
    let id = build_id(binary);
    let dir = root.join(".build-id").join(&id[..2]);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(debug, dir.join(format!("{}.debug", &id[2..]))).unwrap();
}

#[test]
fn stripped_binaries_find_their_debug_files_by_build_id() {
    let b = build_and_record();
    let d = b.dir.path();
    // No debug directory: the static functions are module + offset, never the exported
    // `shape_make` that precedes `internal_pool_grow` in the library.
    let mut trace = memscape_trace::load(&b.raw).unwrap();
    let report = symbolize_with(&mut trace, &DebugSearch::in_roots(Vec::new()));
    assert_eq!(report.separate_debug_files, 0, "{report:?}");
    assert!(report.frames_outside_symbols > 0, "{report:?}");
    let (prog_site, lib_site) = malloc_callers(&trace);
    assert_eq!(
        prog_site, None,
        "stripped program: no name for hidden_builder"
    );
    assert_eq!(
        lib_site, None,
        "internal_pool_grow lies past shape_make's size"
    );
    let described: Vec<String> = (1..trace.call_tree.len() as u32)
        .map(|n| memscape_trace::sites::frame_text(&trace, n))
        .collect();
    assert!(
        described.iter().any(|t| t.starts_with("libshape.so+0x")),
        "{described:?}"
    );
    assert!(
        described.iter().any(|t| t.starts_with("shape_make")),
        "the exported function keeps its name: {described:?}"
    );

    // A debug root with the build-id tree Debian's -dbgsym packages install.
    let root = d.join("debug-root");
    place_under_build_id(&root, &b.prog, &d.join("prog.debug"));
    place_under_build_id(&root, &b.lib, &d.join("libshape.so.debug"));
    let mut trace = memscape_trace::load(&b.raw).unwrap();
    let report = symbolize_with(&mut trace, &DebugSearch::in_roots([root.clone()]));
    assert_eq!(report.separate_debug_files, 2, "{report:?}");
    assert!(
        report
            .debug_info
            .iter()
            .filter(|m| m.found_by == Some(FoundBy::BuildId))
            .count()
            == 2,
        "{report:?}"
    );
    let (prog_site, lib_site) = malloc_callers(&trace);
    assert_eq!(
        prog_site,
        Some((
            "hidden_builder".to_owned(),
            "prog.c".to_owned(),
            line_of(PROG, "BUILDER_MALLOC")
        ))
    );
    assert_eq!(
        lib_site,
        Some((
            "internal_pool_grow".to_owned(),
            "shape.c".to_owned(),
            line_of(LIB, "POOL_MALLOC")
        ))
    );
}

#[test]
fn debuglink_and_debuginfod_cache() {
    let b = build_and_record();
    let d = b.dir.path();
    // .gnu_debuglink to a file in `.debug/` beside the binary (gdb's second place).
    run(Command::new("objcopy").current_dir(d).args([
        "--add-gnu-debuglink=prog.debug",
        "prog",
        "prog.linked",
    ]));
    std::fs::create_dir_all(d.join(".debug")).unwrap();
    std::fs::rename(d.join("prog.debug"), d.join(".debug/prog.debug")).unwrap();
    std::fs::rename(d.join("prog.linked"), &b.prog).unwrap();
    let mut trace = memscape_trace::load(&b.raw).unwrap();
    let report = symbolize_with(&mut trace, &DebugSearch::in_roots(Vec::new()));
    let prog = report
        .debug_info
        .iter()
        .find(|m| m.module.ends_with("/prog"))
        .expect("prog opened");
    assert_eq!(prog.found_by, Some(FoundBy::Debuglink), "{report:?}");
    assert_eq!(malloc_callers(&trace).0.unwrap().0, "hidden_builder");

    // debuginfod: its client cache holds the library's debug file; consulted only when
    // DEBUGINFOD_URLS is set (no network here: the cache answers).
    let cache = d.join("debuginfod-cache");
    let id = build_id(&b.lib);
    std::fs::create_dir_all(cache.join(&id)).unwrap();
    std::fs::copy(
        d.join("libshape.so.debug"),
        cache.join(&id).join("debuginfo"),
    )
    .unwrap();
    let off = DebugSearch {
        roots: Vec::new(),
        debuginfod_urls: None,
        debuginfod_cache: Some(cache.clone()),
    };
    let mut trace = memscape_trace::load(&b.raw).unwrap();
    symbolize_with(&mut trace, &off);
    assert_eq!(
        malloc_callers(&trace).1,
        None,
        "debuginfod is off by default"
    );
    let on = DebugSearch {
        debuginfod_urls: Some("http://127.0.0.1:9".to_owned()),
        ..off
    };
    let mut trace = memscape_trace::load(&b.raw).unwrap();
    let report = symbolize_with(&mut trace, &on);
    let lib = report
        .debug_info
        .iter()
        .find(|m| m.module.ends_with("/libshape.so"))
        .unwrap();
    assert_eq!(lib.found_by, Some(FoundBy::Debuginfod), "{report:?}");
    assert_eq!(malloc_callers(&trace).1.unwrap().0, "internal_pool_grow");
}

const THREADS: &str = r#"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
static void *worker(void *arg) { void *p = malloc(64); memset(p, 3, 64); return p; }
int main(void) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], 0, worker, 0);
    for (int i = 0; i < 4; i++) { void *r; pthread_join(t[i], &r); free(r); }
    return 0;
}
"#;

/// `readelf --dyn-syms` of a library: (value, size, name) of its defined functions.
fn dynamic_functions(library: &str) -> Vec<(u64, u64, String)> {
    let out = Command::new("readelf")
        .args(["--dyn-syms", "-W", library])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // Num: Value Size Type Bind Vis Ndx Name
            if f.len() < 8 || f[3] != "FUNC" || f[6] == "UND" {
                return None;
            }
            let value = u64::from_str_radix(f[1], 16).ok()?;
            let size = f[2].parse().ok()?;
            let name = f[7].split('@').next()?.to_owned();
            Some((value, size, name))
        })
        .collect()
}

#[test]
fn libc_frames_are_named_only_inside_their_symbols() {
    require_tool("readelf", "binutils");
    require_tool("heaptrack", "heaptrack");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("threads.c"), THREADS).unwrap();
    run(Command::new("gcc").current_dir(d).args([
        "-O0",
        "-g",
        "-pthread",
        "-o",
        "threads",
        "threads.c",
    ]));
    run(Command::new("heaptrack")
        .current_dir(d)
        .args(["-r", "-o"])
        .arg(d.join("rec"))
        .arg(d.join("threads")));
    let raw = d.join("rec.raw.zst");
    let mut trace = memscape_trace::load(&raw).unwrap();
    // Symbol tables only (no debug directory): what a machine without libc6-dbg sees.
    symbolize_with(&mut trace, &DebugSearch::in_roots(Vec::new()));
    let libc = trace
        .strings
        .iter()
        .find(|s| s.contains("libc.so.6"))
        .expect("libc in the trace")
        .to_owned();
    let symbols = dynamic_functions(&libc);
    assert!(
        symbols.len() > 1000,
        "readelf found {} functions",
        symbols.len()
    );
    let mut named = 0;
    let mut unnamed = 0;
    for n in 1..trace.call_tree.len() {
        let f = trace.call_tree.frames[n];
        if trace.strings.get(f.module) != libc {
            continue;
        }
        let probe = f.module_offset - 1;
        let name = trace.strings.get(f.function);
        if name.is_empty() {
            unnamed += 1;
            // Really outside every exported function.
            assert!(
                !symbols.iter().any(|(v, s, _)| *v <= probe && probe < v + s),
                "libc+{probe:#x} is inside a symbol but left unnamed"
            );
            continue;
        }
        named += 1;
        assert!(
            symbols
                .iter()
                .any(|(v, s, n)| n == name && *v <= probe && probe < v + s),
            "libc+{probe:#x} named {name}, whose range does not hold it"
        );
    }
    // The threads' stacks pass through start_thread, a static function of libc.
    assert!(unnamed > 0 && named > 0, "named {named}, unnamed {unnamed}");

    // With the C library's debug file (package libc6-dbg, build-id tree): start_thread.
    let bytes = std::fs::read(&libc).unwrap();
    let id = object::File::parse(&*bytes)
        .unwrap()
        .build_id()
        .unwrap()
        .map(|id| id.iter().map(|b| format!("{b:02x}")).collect::<String>())
        .unwrap();
    let debug = Path::new("/usr/lib/debug/.build-id")
        .join(&id[..2])
        .join(format!("{}.debug", &id[2..]));
    assert!(
        debug.is_file(),
        "{} missing: this test needs the Debian package `libc6-dbg` (apt-get install -y libc6-dbg)",
        debug.display()
    );
    let mut trace = memscape_trace::load(&raw).unwrap();
    let report = symbolize_with(
        &mut trace,
        &DebugSearch::in_roots([PathBuf::from("/usr/lib/debug")]),
    );
    assert!(report.separate_debug_files >= 1, "{report:?}");
    let names: Vec<&str> = (1..trace.call_tree.len())
        .map(|n| trace.strings.get(trace.call_tree.frames[n].function))
        .collect();
    assert!(names.contains(&"start_thread"), "{names:?}");
}
