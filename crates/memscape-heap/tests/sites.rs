//! Call sites that name the caller, not the wrapper, on programs recorded with heaptrack while
//! the test runs (a C++ program built on std::string, vector, map, make_unique and make_shared;
//! GCC's cc1plus compiling a C++ file), the real sqlite heaptrack trace (an unnamed allocator
//! in a stripped library), and the embedded demo: line and function keys, top-down and
//! bottom-up paths, and the default leak suppressions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_heap::suppress::Suppressions;
use memscape_heap::trace_tree::{GroupKey, HeapOptions, TraceHeap};
use memscape_heap::{Metric, trace_timeline, trace_timeline_with};
use memscape_trace::Trace;
use memscape_trace::sites::{SiteOptions, Sites, frame_text};

fn require(tool: &str, package: &str) {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        found,
        "`{tool}` is not installed: this test needs the Debian package `{package}` (apt-get install -y {package})"
    );
}

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("run tool");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Records `args` with `heaptrack --raw` in `dir` and loads and symbolizes the trace.
fn heaptrack(dir: &Path, args: &[&str]) -> Trace {
    require("heaptrack", "heaptrack");
    run(Command::new("heaptrack")
        .current_dir(dir)
        .args(["--raw", "-o"])
        .arg(dir.join("rec"))
        .args(args));
    let mut trace = memscape_trace::load(&dir.join("rec.raw.zst")).unwrap();
    memscape_trace::symbolize::symbolize(&mut trace);
    trace
}

/// Level-1 groups at the peak: (name, bytes, objects), largest first.
fn top_at_peak(trace: &Trace, keys: &[GroupKey], options: &HeapOptions) -> Vec<(String, u64, u64)> {
    let mut heap = TraceHeap::with_options(trace, keys, options);
    let sizes = heap.sizes_at(heap.peak_point());
    let trie = heap.trie();
    let mut top: Vec<(String, u64, u64)> = trie
        .children(0)
        .iter()
        .map(|&c| (trie.name(c).to_owned(), sizes.bytes(c), sizes.objects(c)))
        .filter(|t| t.1 > 0)
        .collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    top
}

const SHAPES: &str = r#"
#include <map>
#include <memory>
#include <string>
#include <vector>
#include <cstdio>

struct Node {
    std::string name;
    std::vector<int> values;
    explicit Node(int i) : name("node-" + std::to_string(i) + std::string(40, 'x')), values(64, i) {}
};

__attribute__((noinline)) std::unique_ptr<Node> make_node(int i) { return std::make_unique<Node>(i); }
__attribute__((noinline)) std::shared_ptr<Node> share_node(int i) { return std::make_shared<Node>(i); }
__attribute__((noinline)) std::string make_label(int i) {
    std::string s = "label-";
    s += std::to_string(i);
    s += std::string(100, 'y');
    return s;
}
__attribute__((noinline)) void fill_index(std::map<std::string, int> &index, int n) {
    for (int i = 0; i < n; i++) index[make_label(i)] = i;
}
__attribute__((noinline)) void grow_vector(std::vector<double> &v, int n) {
    for (int i = 0; i < n; i++) v.push_back(i * 0.5);
}
int main() {
    std::vector<std::unique_ptr<Node>> nodes;
    std::vector<std::shared_ptr<Node>> shared;
    std::map<std::string, int> index;
    std::vector<double> big;
    for (int i = 0; i < 2000; i++) nodes.push_back(make_node(i));
    for (int i = 0; i < 1000; i++) shared.push_back(share_node(i));
    fill_index(index, 3000);
    grow_vector(big, 200000);
    std::printf("%zu %zu %zu %zu\n", nodes.size(), shared.size(), index.size(), big.size());
    return 0;
}
"#;

fn function_of(name: &str) -> &str {
    name.split(['(', ' ']).next().unwrap_or(name)
}

#[test]
fn cxx_program_sites_are_its_functions() {
    require("g++", "g++");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("shapes.cpp"), SHAPES).unwrap();
    run(Command::new("g++")
        .current_dir(d)
        .args(["-O2", "-g", "-o", "shapes", "shapes.cpp"]));
    let trace = heaptrack(d, &[d.join("shapes").to_str().unwrap()]);

    // The innermost frame: operator new holds (almost) the whole heap: what users got before.
    let raw = top_at_peak(
        &trace,
        &[GroupKey::Site],
        &HeapOptions {
            sites: SiteOptions::innermost(),
            ..HeapOptions::default()
        },
    );
    assert!(raw[0].0.starts_with("operator new"), "{raw:?}");

    let top = top_at_peak(&trace, &[GroupKey::Site], &HeapOptions::default());
    let by_function: HashMap<&str, (u64, u64, &str)> = top
        .iter()
        .map(|(name, bytes, objects)| (function_of(name), (*bytes, *objects, name.as_str())))
        .collect();
    // Every site is the program's: no wrapper, no std:: frame, no C++ runtime.
    for (name, _, _) in &top {
        let f = function_of(name);
        assert!(
            !f.starts_with("operator") && !f.starts_with("std::") && !name.contains("libstdc++"),
            "{name} in {top:?}"
        );
    }
    // The largest sites at the peak, with the wrapper each came through.
    assert!(top[0].0.starts_with("grow_vector("), "{top:?}");
    assert!(
        top[0].0.contains("← std::vector::_M_realloc_insert"),
        "{top:?}"
    );
    // sizeof(Node) = 56: one per make_unique, in make_node; make_shared's block holds the
    // control block too.
    let make_node = by_function["make_node"];
    assert_eq!((make_node.0, make_node.1), (2000 * 56, 2000), "{top:?}");
    assert!(make_node.2.contains("shapes.cpp:") && make_node.2.ends_with("← operator new"));
    assert_eq!(by_function["share_node"].1, 1000, "{top:?}");
    // Strings built in make_label are make_label's, map nodes inserted in fill_index are
    // fill_index's.
    assert_eq!(by_function["make_label[abi:cxx11]"].1, 3000, "{top:?}");
    assert_eq!(by_function["fill_index"].1, 3000, "{top:?}");

    // Top-down: main → make_node; bottom-up: make_node → main.
    let mut down = TraceHeap::new(&trace, &[GroupKey::Path]);
    let sizes = down.sizes_at(down.peak_point());
    let node = down.trie().find("make_node").unwrap();
    let crumbs = down.trie().breadcrumb(node);
    assert!(
        crumbs[1].starts_with("__libc_start") || crumbs.iter().any(|c| c == "main"),
        "{crumbs:?}"
    );
    assert_eq!(crumbs.last().map(|c| function_of(c)), Some("make_node"));
    assert_eq!(crumbs[crumbs.len() - 2], "main", "{crumbs:?}");
    // Its own blocks (the Nodes); the Node constructor's strings and vectors lie below it.
    let below: u64 = down
        .trie()
        .children(node)
        .iter()
        .map(|&c| sizes.objects(c))
        .sum();
    assert_eq!(sizes.objects(node) - below, 2000);
    assert_eq!(sizes.objects(node), 6000);
    let mut up = TraceHeap::new(&trace, &[GroupKey::Callers]);
    let sizes = up.sizes_at(up.peak_point());
    let trie = up.trie();
    let site = *trie
        .children(0)
        .iter()
        .find(|&&c| function_of(trie.name(c)) == "make_node")
        .unwrap();
    assert_eq!(sizes.objects(site), 2000);
    let callers: Vec<&str> = trie.children(site).iter().map(|&c| trie.name(c)).collect();
    assert_eq!(callers, ["main"]);
}

#[test]
fn cc1plus_sites_are_gcc_functions_not_xmalloc() {
    require("g++", "g++");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("t.cpp"),
        "#include <map>\n#include <string>\n#include <vector>\nint main() { std::map<std::string, std::vector<int>> m; m[\"a\"].push_back(1); return (int)m.size(); }\n",
    )
    .unwrap();
    let out = Command::new("g++")
        .args(["-print-prog-name=cc1plus"])
        .output()
        .unwrap();
    let cc1plus = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let trace = heaptrack(
        d,
        &[
            &cc1plus,
            "-quiet",
            "-imultiarch",
            "x86_64-linux-gnu",
            "-D_GNU_SOURCE",
            "t.cpp",
            "-O2",
            "-o",
            "t.s",
        ],
    );
    let raw = top_at_peak(
        &trace,
        &[GroupKey::Site],
        &HeapOptions {
            sites: SiteOptions::innermost(),
            ..HeapOptions::default()
        },
    );
    let wrappers = ["xmalloc", "xcalloc", "xrealloc"];
    // What users got before: libiberty's wrappers at the top.
    assert!(
        raw.iter()
            .take(3)
            .any(|(n, _, _)| wrappers.contains(&function_of(n))),
        "{raw:?}"
    );
    let top = top_at_peak(&trace, &[GroupKey::Site], &HeapOptions::default());
    assert!(top.len() > 10, "{top:?}");
    for (name, _, _) in top.iter().take(10) {
        let site = name.split(" ← ").next().unwrap();
        assert!(
            !wrappers.iter().any(|w| function_of(site) == *w),
            "{name} in {top:?}"
        );
        // GCC's functions: named from its dynamic symbols, else cc1plus+offset.
        assert!(
            site.contains("cc1plus") || site.contains("libc.so") || site.contains("dl-init"),
            "{name}"
        );
    }
    assert!(
        top.iter().take(10).any(|(n, _, _)| n.contains("← xmalloc")),
        "{top:?}"
    );
}

fn shared(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(rel)
}

#[test]
fn sqlite_unnamed_allocator_is_detected() {
    let mut trace = memscape_trace::load(&shared("heaptrack/sqlite_1M.raw.zst")).unwrap();
    memscape_trace::symbolize::symbolize(&mut trace);
    let sites = Sites::new(&trace, &SiteOptions::default());
    let detected = sites.detected();
    assert!(!detected.is_empty());
    // sqlite3MemMalloc: static in the stripped libsqlite3, called through sqlite3Malloc.
    assert_eq!(
        detected[0].frames[0], "libsqlite3.so.0+0xa7503",
        "{detected:?}"
    );
    assert!(
        detected[0].share > 0.9 && detected[0].callers >= 4,
        "{detected:?}"
    );
    let top = top_at_peak(&trace, &[GroupKey::Site], &HeapOptions::default());
    for (name, _, _) in &top {
        // The exported symbol that precedes sqlite3MemMalloc, whose size ends before it.
        assert!(!name.contains("sqlite3ApiExit"), "{top:?}");
        assert!(!name.starts_with("libsqlite3.so.0+0xa7503"), "{top:?}");
    }
    assert!(top[0].0.contains(" ← "), "{top:?}");
    // info names the wrapper.
    let info = memscape_trace::info::info(&trace, &Default::default());
    assert_eq!(info.detected_wrappers, detected);
    assert!(info.to_string().contains("allocation wrapper detected"));
}

fn demo() -> Trace {
    memscape_trace::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo/kvstore.msc"),
    )
    .unwrap()
}

#[test]
fn demo_line_and_function_keys() {
    let trace = demo();
    let line = top_at_peak(&trace, &[GroupKey::Site], &HeapOptions::default());
    let get = |name: &str| line.iter().find(|t| t.0 == name).map(|t| (t.1, t.2));
    // cache_insert allocates the value at line 86 and the 32-byte entry at line 84.
    assert_eq!(
        get("cache_insert (./kvstore.c:86)"),
        Some((3_811_801, 1500))
    );
    assert_eq!(get("cache_insert (./kvstore.c:84)"), Some((48_000, 1500)));
    // Oracle: every label's bytes are those of the blocks live at the peak whose effective
    // site is at that function and line.
    let sites = Sites::new(&trace, &SiteOptions::default());
    let peak = trace.meta.peak_event;
    let b = &trace.blocks;
    let mut expected: HashMap<String, u64> = HashMap::new();
    for i in 0..b.len() {
        if b.alloc_event[i] <= peak && b.free_event[i] > peak {
            *expected
                .entry(frame_text(&trace, sites.site(b.site[i])))
                .or_default() += b.requested_size[i];
        }
    }
    for (name, bytes, _) in &line {
        assert_eq!(expected.get(name), Some(bytes), "{name}");
    }
    let function = top_at_peak(&trace, &[GroupKey::Function], &HeapOptions::default());
    let cache = function.iter().find(|t| t.0 == "cache_insert").unwrap();
    assert_eq!(cache.1, 3_811_801 + 48_000);
    assert!(
        function.iter().all(|t| !t.0.contains("kvstore.c:")),
        "{function:?}"
    );
}

#[test]
fn demo_stacks_name_libc_frames_by_the_function_that_holds_them() {
    // The worker threads start in libc's static start_thread, entered from clone3; the names
    // of the exported functions before them (pthread_condattr_setpshared, __xmknodat) were
    // what the demo showed before symbols were checked against their sizes.
    let trace = demo();
    let names: Vec<&str> = (1..trace.call_tree.len())
        .map(|n| trace.strings.get(trace.call_tree.frames[n].function))
        .collect();
    for wrong in [
        "pthread_condattr_setpshared",
        "__xmknodat",
        "__libc_init_first",
    ] {
        assert!(!names.contains(&wrong), "{wrong} in {names:?}");
    }
    for right in ["start_thread", "clone3", "worker_main"] {
        assert!(names.contains(&right), "{right} not in {names:?}");
    }
}

#[test]
fn leak_suspects_leave_out_the_runtimes_blocks() {
    let trace = demo();
    let (timeline, _) = trace_timeline(&trace, &[GroupKey::Site], Metric::Bytes, 16);
    let names: Vec<&str> = timeline.suspects.iter().map(|s| s.name.as_str()).collect();
    assert!(names[0].starts_with("audit_log"), "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| !n.contains("pthread_create") && !n.contains("_IO_file")),
        "{names:?}"
    );
    let suppressed = &timeline.suppressed;
    assert!(suppressed.applied);
    assert_eq!((suppressed.blocks, suppressed.bytes), (5, 1216 + 4096));
    assert!(
        suppressed
            .by_rule
            .iter()
            .any(|r| r.rule.contains("pthread_create") && r.blocks == 4),
        "{suppressed:?}"
    );
    // The switch shows them.
    let (all, _) = trace_timeline_with(
        &trace,
        &[GroupKey::Site],
        Metric::Bytes,
        16,
        &HeapOptions {
            suppressions: Suppressions::none(),
            ..HeapOptions::default()
        },
    );
    assert!(
        all.suspects
            .iter()
            .any(|s| s.name.contains("pthread_create")),
        "{:?}",
        all.suspects
    );
    assert!(!all.suppressed.applied);
}

const LEAKY: &str = r#"
#include <dlfcn.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static void *worker(void *arg) { (void)arg; return NULL; }
__attribute__((noinline)) void leak_here(int i) { char *p = malloc(200); memset(p, i, 200); }
int main(void) {
    setlocale(LC_ALL, "C.UTF-8");
    tzset();
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], 0, worker, 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
    void *m = dlopen("libm.so.6", RTLD_NOW);
    for (int i = 0; i < 500; i++) leak_here(i);
    printf("%p\n", m);
    return 0;
}
"#;

#[test]
fn recorded_program_leaks_only_its_own_blocks() {
    require("gcc", "gcc");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("leaky.c"), LEAKY).unwrap();
    run(Command::new("gcc")
        .current_dir(d)
        .args(["-O0", "-g", "-pthread", "-o", "leaky", "leaky.c", "-ldl"]));
    let trace = heaptrack(d, &[d.join("leaky").to_str().unwrap()]);
    let (with, _) = trace_timeline(&trace, &[GroupKey::Site], Metric::Bytes, 16);
    let names: Vec<&str> = with.suspects.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names.len(), 1, "{names:?} {:?}", with.suppressed);
    assert!(names[0].starts_with("leak_here"), "{names:?}");
    assert!(with.suppressed.blocks > 0, "{:?}", with.suppressed);
    let (without, _) = trace_timeline_with(
        &trace,
        &[GroupKey::Site],
        Metric::Bytes,
        16,
        &HeapOptions {
            suppressions: Suppressions::none(),
            ..HeapOptions::default()
        },
    );
    assert!(without.suspects.len() > 1, "{:?}", without.suspects);
}
