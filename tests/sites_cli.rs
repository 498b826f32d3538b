//! Call sites, lines, wrappers, debug files and leak suppressions through the `memscape`
//! binary: `heaptree` and `info` on the embedded demo, on a C++ program recorded with
//! `memscape record` while the test runs, and on a stripped program whose debug file lies in a
//! build-id tree named by `MEMSCAPE_DEBUG_ROOT`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

fn memscape() -> Command {
    Command::new(env!("CARGO_BIN_EXE_memscape"))
}

fn output(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&output(memscape().args(args))).unwrap()
}

fn require(tool: &str, package: &str) {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "`{tool}` not found: this test needs the Debian package `{package}`"
    );
}

#[test]
fn heaptree_demo_peak_names_the_line_that_holds_the_bytes() {
    let text = output(memscape().args(["heaptree", "demo", "--peak"]));
    // 3,811,801 B from `e->value = malloc(size)` at line 86, not 3,859,801 B labelled 84.
    assert!(
        text.lines()
            .any(|l| l.contains("3811801 B") && l.ends_with("cache_insert (./kvstore.c:86)")),
        "{text}"
    );
    assert!(!text.contains("3859801"), "{text}");
    let tree = json(&["heaptree", "demo", "--peak", "--depth", "1", "--json"]);
    let children = tree["children"].as_array().unwrap();
    assert!(
        children
            .iter()
            .any(|c| c["name"] == "cache_insert (./kvstore.c:86)" && c["bytes"] == 3_811_801),
        "{tree}"
    );
    // The function key merges the lines and names none.
    let by_function = json(&[
        "heaptree", "demo", "--peak", "--group", "function", "--json",
    ]);
    let cache = by_function["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "cache_insert")
        .expect("cache_insert");
    assert_eq!(cache["bytes"], 3_811_801 + 48_000);
}

#[test]
fn leak_suspects_of_the_demo_leave_out_thread_control_blocks() {
    let leaks = json(&["heaptree", "demo", "--leaks", "--json"]);
    let names: Vec<&str> = leaks["suspects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(names[0].starts_with("audit_log"), "{names:?}");
    assert!(
        names.iter().all(|n| !n.contains("pthread_create")),
        "{names:?}"
    );
    assert_eq!(leaks["suppressed"]["blocks"], 5, "{leaks}");
    assert_eq!(leaks["suppressed"]["applied"], true);
    let text = output(memscape().args(["heaptree", "demo", "--leaks"]));
    assert!(text.contains("suppressed: 5 blocks"), "{text}");
    let all = json(&["heaptree", "demo", "--leaks", "--no-suppressions", "--json"]);
    assert!(
        all["suspects"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"].as_str().unwrap().contains("pthread_create")),
        "{all}"
    );
    assert_eq!(all["suppressed"]["applied"], false);
}

/// The recorder shim, built once into a nested target directory (the outer `cargo test`
/// holds the lock on its own).
fn shim() -> PathBuf {
    static SHIM: OnceLock<PathBuf> = OnceLock::new();
    SHIM.get_or_init(|| {
        let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
        let nested = target.join("memscape-recorder-shim");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let status = Command::new(cargo)
            .args(["build", "--quiet", "-p", "memscape-recorder"])
            .env("CARGO_TARGET_DIR", &nested)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .unwrap();
        assert!(status.success(), "building memscape-recorder failed");
        nested.join("debug").join("libmemscape_recorder.so")
    })
    .clone()
}

const SHAPES: &str = r#"
#include <map>
#include <memory>
#include <string>
#include <vector>
struct Node {
    std::string name;
    std::vector<int> values;
    explicit Node(int i) : name("node-" + std::to_string(i) + std::string(40, 'x')), values(64, i) {}
};
__attribute__((noinline)) std::unique_ptr<Node> make_node(int i) { return std::make_unique<Node>(i); }
__attribute__((noinline)) std::shared_ptr<Node> share_node(int i) { return std::make_shared<Node>(i); }
__attribute__((noinline)) void fill_index(std::map<std::string, int> &index, int n) {
    for (int i = 0; i < n; i++) index["key-" + std::to_string(i) + std::string(60, 'k')] = i;
}
int main() {
    std::vector<std::unique_ptr<Node>> nodes;
    std::vector<std::shared_ptr<Node>> shared;
    std::map<std::string, int> index;
    for (int i = 0; i < 2000; i++) nodes.push_back(make_node(i));
    for (int i = 0; i < 1000; i++) shared.push_back(share_node(i));
    fill_index(index, 3000);
    return (int)(nodes.size() + shared.size() + index.size()) & 1;
}
"#;

#[test]
fn recorded_cxx_program_heap_tree_names_its_functions() {
    require("g++", "g++");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("shapes.cpp"), SHAPES).unwrap();
    output(
        Command::new("g++")
            .current_dir(d)
            .args(["-O0", "-g", "-o", "shapes", "shapes.cpp"]),
    );
    let msc = d.join("shapes.msc");
    output(
        memscape()
            .current_dir(d)
            .env("MEMSCAPE_SHIM", shim())
            .args(["record", "-o"])
            .arg(&msc)
            .args(["--", "./shapes"]),
    );
    let msc = msc.to_str().unwrap();
    let tree = json(&["heaptree", msc, "--peak", "--depth", "1", "--json"]);
    let names: Vec<&str> = tree["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for name in &names {
        assert!(
            !name.starts_with("operator new")
                && !name.starts_with("std::")
                && !name.starts_with("void std::"),
            "{names:?}"
        );
    }
    // At -O0 the std::string and std::vector of Node are built in its constructor; the Node
    // itself in make_node; the map's nodes and keys in fill_index.
    for expected in ["Node::Node(int)", "make_node(int)", "fill_index("] {
        assert!(
            names.iter().any(|n| n.starts_with(expected)),
            "{expected} not in {names:?}"
        );
    }
    let info = json(&["info", msc, "--json"]);
    let sites = info["top_call_sites"].as_array().unwrap();
    let make_node = sites
        .iter()
        .find(|s| {
            s["location"]
                .as_str()
                .unwrap()
                .starts_with("make_node(int)")
        })
        .expect("make_node among the top call sites");
    assert_eq!(make_node["peak_blocks"], 2000);
    // The wrappers it came through: std::make_unique, then operator new.
    let location = make_node["location"].as_str().unwrap();
    assert!(
        location.contains("shapes.cpp:") && location.contains(" ← std::make_unique"),
        "{location}"
    );
    let wrappers: Vec<&str> = make_node["wrappers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(wrappers.first(), Some(&"operator new"), "{wrappers:?}");
    // Bottom-up: make_node's caller is main.
    let up = json(&[
        "heaptree",
        msc,
        "--peak",
        "--bottom-up",
        "--depth",
        "2",
        "--json",
    ]);
    let site = up["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "make_node(int)")
        .expect("make_node at the first level");
    assert_eq!(site["children"][0]["name"], "main");
    // The user's own pattern turns make_node into a wrapper too: main allocates then.
    let wrapped = json(&[
        "heaptree",
        msc,
        "--peak",
        "--wrapper",
        "^make_node",
        "--json",
    ]);
    assert!(
        wrapped["children"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"].as_str().unwrap().ends_with("← make_node")),
        "{wrapped}"
    );
}

const STRIPPED: &str = r#"
#include <stdlib.h>
#include <string.h>
__attribute__((noinline)) static void *hidden_builder(size_t n) {
    void *p = malloc(n); /* BUILDER */
    memset(p, 2, n);
    return p;
}
int main(void) {
    void *keep[40];
    for (int i = 0; i < 40; i++) keep[i] = hidden_builder(1000 + i);
    return keep[3] == keep[4];
}
"#;

#[test]
fn debug_root_environment_variable_names_stripped_frames() {
    for (tool, package) in [
        ("gcc", "gcc"),
        ("objcopy", "binutils"),
        ("strip", "binutils"),
    ] {
        require(tool, package);
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("prog.c"), STRIPPED).unwrap();
    output(Command::new("gcc").current_dir(d).args([
        "-O0",
        "-g",
        "-Wl,--build-id",
        "-o",
        "prog",
        "prog.c",
    ]));
    output(Command::new("objcopy").current_dir(d).args([
        "--only-keep-debug",
        "prog",
        "prog.debug",
    ]));
    output(
        Command::new("strip")
            .current_dir(d)
            .args(["--strip-all", "prog"]),
    );
    let notes = output(Command::new("readelf").args(["-n"]).arg(d.join("prog")));
    let id = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .expect("build id")
        .to_owned();
    let root = d.join("debug");
    std::fs::create_dir_all(root.join(".build-id").join(&id[..2])).unwrap();
    std::fs::copy(
        d.join("prog.debug"),
        root.join(".build-id")
            .join(&id[..2])
            .join(format!("{}.debug", &id[2..])),
    )
    .unwrap();
    let empty = d.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let record = |name: &str, debug_root: &Path| {
        let msc = d.join(name);
        output(
            memscape()
                .current_dir(d)
                .env("MEMSCAPE_SHIM", shim())
                .env("MEMSCAPE_DEBUG_ROOT", debug_root)
                .args(["record", "-o"])
                .arg(&msc)
                .args(["--", "./prog"]),
        );
        let info = json(&["info", msc.to_str().unwrap(), "--json"]);
        info["top_call_sites"][0]["location"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let line = STRIPPED
        .lines()
        .position(|l| l.contains("BUILDER"))
        .unwrap()
        + 1;
    let with = record("with.msc", &root);
    assert!(
        with.starts_with("hidden_builder (") && with.ends_with(&format!("prog.c:{line})")),
        "{with}"
    );
    let without = record("without.msc", &empty);
    assert!(without.starts_with("prog+0x"), "{without}");
}
