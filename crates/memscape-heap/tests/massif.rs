//! The massif importer against valgrind's own `ms_print` (package `valgrind`) on the shared
//! massif files and on a massif file recorded while the test runs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use memscape_heap::massif::{MassifFile, read_massif};
use memscape_heap::report::{HeapTreeOptions, TimeSelect, heaptree_file, heaptree_massif};
use memscape_heap::suspects::massif_leak_suspects;
use memscape_heap::view::{Metric, PruneOptions, StableOrder, build_view};
use memscape_heap::{MassifHeap, TreeKind};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/massif")
        .join(name)
}

fn tool(name: &str, package: &str) -> Command {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        found,
        "`{name}` is not installed: this test needs the Debian package `{package}` (apt-get install -y {package})"
    );
    Command::new(name)
}

/// What ms_print says about a massif file.
#[derive(Debug, Default)]
struct MsPrint {
    count: usize,
    detailed: Vec<u64>,
    peak: Option<u64>,
    /// n → (time, total, useful heap, extra heap, stacks)
    rows: BTreeMap<u64, [u64; 5]>,
    /// Per detailed snapshot, in order: the root's bytes and the (address, bytes) of the
    /// top-level sites ms_print shows.
    trees: Vec<(u64, Vec<(u64, u64)>)>,
}

/// `(1,776,070B)` → 1776070
fn ms_bytes(line: &str) -> Option<u64> {
    let open = line.find('(')?;
    let close = line[open..].find("B)")? + open;
    line[open + 1..close].replace(',', "").parse().ok()
}

fn ms_print(path: &Path) -> MsPrint {
    let out = tool("ms_print", "valgrind").arg(path).output().unwrap();
    assert!(
        out.status.success(),
        "ms_print failed on {}",
        path.display()
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut result = MsPrint::default();
    for line in text.lines() {
        if line.contains("(heap allocation functions)") && !line.starts_with("->") {
            result.trees.push((ms_bytes(line).unwrap(), Vec::new()));
        } else if let Some(rest) = line.strip_prefix("->")
            && let Some(tree) = result.trees.last_mut()
        {
            let after = &rest[rest.find("B) ").unwrap() + 3..];
            if let Some(hex) = after.strip_prefix("0x") {
                let addr = u64::from_str_radix(hex.split(':').next().unwrap(), 16).unwrap();
                tree.1.push((addr, ms_bytes(rest).unwrap()));
            }
        }
        if let Some(n) = line.trim().strip_prefix("Number of snapshots:") {
            result.count = n.trim().parse().unwrap();
        } else if let Some(list) = line.trim().strip_prefix("Detailed snapshots:") {
            let list = list.trim().trim_start_matches('[').trim_end_matches(']');
            for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let (number, peak) = match item.strip_suffix("(peak)") {
                    Some(n) => (n.trim(), true),
                    None => (item, false),
                };
                let number: u64 = number.parse().unwrap();
                result.detailed.push(number);
                if peak {
                    result.peak = Some(number);
                }
            }
        } else {
            let fields: Vec<Option<u64>> = line
                .split_whitespace()
                .map(|f| f.replace(',', "").parse().ok())
                .collect();
            if fields.len() == 6 && fields.iter().all(Option::is_some) {
                let v: Vec<u64> = fields.into_iter().map(Option::unwrap).collect();
                result.rows.insert(v[0], [v[1], v[2], v[3], v[4], v[5]]);
            }
        }
    }
    result
}

/// Checks everything ms_print shows against our parse; returns the parse.
fn check_against_ms_print(path: &Path) -> MassifFile {
    let file = read_massif(path).unwrap();
    let oracle = ms_print(path);
    assert!(oracle.count > 0, "ms_print printed no snapshot count");
    assert_eq!(file.snapshots.len(), oracle.count, "snapshot count");
    assert_eq!(oracle.rows.len(), oracle.count, "ms_print table rows");
    for s in &file.snapshots {
        let row = oracle.rows[&s.number];
        assert_eq!(s.time, row[0], "time of snapshot {}", s.number);
        assert_eq!(s.total_b(), row[1], "total of snapshot {}", s.number);
        assert_eq!(s.mem_heap_b, row[2], "mem_heap_B of snapshot {}", s.number);
        assert_eq!(s.mem_heap_extra_b, row[3], "extra of snapshot {}", s.number);
        assert_eq!(s.mem_stacks_b, row[4], "stacks of snapshot {}", s.number);
    }
    let detailed: Vec<u64> = file
        .detailed()
        .into_iter()
        .map(|i| file.snapshots[i].number)
        .collect();
    assert_eq!(detailed, oracle.detailed, "detailed snapshots");
    let peak = file.marked_peak().map(|i| file.snapshots[i].number);
    assert_eq!(peak, oracle.peak, "peak snapshot");
    for s in &file.snapshots {
        if let Some(tree) = &s.tree {
            assert_eq!(
                tree.root_bytes(),
                Some(s.mem_heap_b),
                "root of the tree of snapshot {} vs its mem_heap_B",
                s.number
            );
        }
    }
    // The trees themselves: ms_print's root and top-level sites against ours.
    let trees: Vec<_> = file
        .snapshots
        .iter()
        .filter_map(|s| s.tree.as_ref())
        .collect();
    assert_eq!(trees.len(), oracle.trees.len(), "trees printed by ms_print");
    let nonempty = trees
        .iter()
        .any(|t| t.nodes.iter().any(|n| n.depth == 1 && n.bytes > 0));
    assert_eq!(nonempty, oracle.trees.iter().any(|t| !t.1.is_empty()));
    for (tree, (root, sites)) in trees.iter().zip(&oracle.trees) {
        assert_eq!(tree.root_bytes(), Some(*root));
        for &(addr, bytes) in sites {
            let ours = tree.nodes.iter().find(|n| {
                n.depth == 1
                    && matches!(n.label, memscape_heap::MassifLabel::Site { address, .. } if address == addr)
            });
            assert_eq!(ours.map(|n| n.bytes), Some(bytes), "site {addr:#x}");
        }
    }
    assert!(file.warnings.is_empty(), "{}", file.warnings);
    file
}

#[test]
fn kate_agrees_with_ms_print() {
    let file = check_against_ms_print(&data("massif.out.kate"));
    assert_eq!(file.snapshots.len(), 74);
    assert_eq!(file.cmd, "kate");
    assert_eq!(file.time_unit, "i");
    assert!(file.snapshots.iter().any(|s| s.heap_tree == TreeKind::Peak));
    // Deep trees: some path is more than 15 frames deep.
    let deepest = file
        .snapshots
        .iter()
        .filter_map(|s| s.tree.as_ref())
        .flat_map(|t| t.nodes.iter().map(|n| n.depth))
        .max()
        .unwrap();
    assert!(deepest > 15, "deepest {deepest}");
}

#[test]
fn stack_file_agrees_with_ms_print() {
    let file = check_against_ms_print(&data("massif.out.stack"));
    assert!(file.desc.contains("--stacks=yes"));
    assert!(file.snapshots.iter().any(|s| s.mem_stacks_b > 0));
}

#[test]
fn minimal_file_agrees_with_ms_print() {
    let file = check_against_ms_print(&data("massif.out.32406"));
    assert!(file.detailed().is_empty());
    // No tree, still a heap-size series.
    assert_eq!(file.heap_series(), [(0, 0), (123_667, 100)]);
    // And heaptree says clearly that there is no tree to show.
    let err = heaptree_massif(&file, &HeapTreeOptions::default()).unwrap_err();
    assert!(err.to_string().contains("no heap tree"), "{err}");
}

#[test]
fn heap_tree_over_kate_snapshots() {
    let file = read_massif(&data("massif.out.kate")).unwrap();
    let heap = MassifHeap::new(&file);
    assert_eq!(heap.len(), file.detailed().len());
    let last = heap.sizes(heap.len() - 1).unwrap();
    let order = StableOrder::new(heap.trie(), &last, None, Metric::Bytes);
    let options = PruneOptions::default();
    for (point, &snapshot) in heap.snapshot_indices().iter().enumerate() {
        let sizes = heap.sizes(point).unwrap();
        let view = build_view(heap.trie(), &sizes, &order, 0, &options);
        let s = &file.snapshots[snapshot];
        assert_eq!(view.bytes, s.mem_heap_b);
        assert!(view.children.len() <= 10);
        // Pruned children (with Other) never exceed their parent.
        let sum: u64 = view.children.iter().map(|c| c.bytes).sum();
        assert!(sum <= view.bytes);
        // The same site keeps its sibling position at every snapshot.
        let ranks: Vec<u32> = view
            .children
            .iter()
            .filter_map(|c| c.group)
            .map(|g| order.rank(g))
            .collect();
        assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{ranks:?}");
    }
    let report = heaptree_file(&data("massif.out.kate"), &HeapTreeOptions::default()).unwrap();
    let peak = &file.snapshots[file.marked_peak().unwrap()];
    assert_eq!(report.total_bytes, peak.mem_heap_b);
    assert_eq!(report.snapshot, Some(peak.number));
    let json = serde_json_value(&report);
    for key in [
        "name",
        "bytes",
        "objects",
        "children",
        "time",
        "total_bytes",
    ] {
        assert!(json.get(key).is_some(), "missing key {key}: {json}");
    }
    let suspects = massif_leak_suspects(&file, &heap, Some(1));
    assert!(!suspects.is_empty());
    assert!(suspects.windows(2).all(|w| w[0].score() >= w[1].score()));
    assert!(
        suspects
            .iter()
            .all(|s| s.slope > 0.0 && s.end_bytes > s.start_bytes)
    );
    // --snapshot of a snapshot without a tree is a clear error naming the file.
    let opts = HeapTreeOptions {
        select: TimeSelect::Snapshot(0),
        ..HeapTreeOptions::default()
    };
    let err = heaptree_massif(&file, &opts).unwrap_err().to_string();
    assert!(
        err.contains("massif.out.kate") && err.contains("no heap tree"),
        "{err}"
    );
}

#[test]
fn neither_massif_nor_trace_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "hello world\n").unwrap();
    let err = heaptree_file(&path, &HeapTreeOptions::default())
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("notes.txt") && err.contains("massif") && err.contains("hello world"),
        "{err}"
    );
    // A gzip-compressed massif file is read by content.
    let gz = dir.path().join("massif.gz");
    let enc = stored_gzip(&std::fs::read(data("massif.out.stack")).unwrap());
    std::fs::write(&gz, &enc).unwrap();
    let report = heaptree_file(&gz, &HeapTreeOptions::default()).unwrap();
    assert_eq!(report.time_unit, "i");
}

/// A gzip member with stored (uncompressed) deflate blocks, written by hand so that the test
/// needs no compression crate.
fn stored_gzip(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
    let chunks: Vec<&[u8]> = data.chunks(65_535).collect();
    for (i, chunk) in chunks.iter().enumerate() {
        out.push(u8::from(i + 1 == chunks.len()));
        let len = chunk.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn serde_json_value(report: &memscape_heap::HeapTreeReport) -> serde_json::Value {
    serde_json::to_value(report).unwrap()
}

const PROGRAM: &str = r#"
#include <stdlib.h>
#include <string.h>
static void *keep[400];
__attribute__((noinline)) void *grow(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
__attribute__((noinline)) void *scratch(size_t n) { void *p = malloc(n); memset(p, 2, n); return p; }
int main(void) {
    for (int i = 0; i < 400; i++) {
        keep[i] = grow(1000 + 10 * i);
        void *t = scratch(5000);
        if (i % 3 == 0) free(t);
    }
    for (int i = 0; i < 400; i += 2) free(keep[i]);
    return 0;
}
"#;

#[test]
fn recorded_massif_file_agrees_with_ms_print() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("prog.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let exe = dir.path().join("prog");
    let status = tool("gcc", "gcc")
        .args(["-g", "-O0", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(status.success());
    let out = dir.path().join("massif.out.test");
    let status = tool("valgrind", "valgrind")
        .arg("--tool=massif")
        .arg(format!("--massif-out-file={}", out.display()))
        .arg("--detailed-freq=3")
        .arg("-q")
        .arg(&exe)
        .status()
        .unwrap();
    assert!(status.success());
    let file = check_against_ms_print(&out);
    assert!(
        file.snapshots.len() > 10,
        "{} snapshots",
        file.snapshots.len()
    );
    assert!(file.detailed().len() > 2);
    // The grow() site holds the most at the peak.
    let opts = HeapTreeOptions {
        select: TimeSelect::Peak,
        prune: PruneOptions {
            depth: 1,
            ..PruneOptions::default()
        },
        ..HeapTreeOptions::default()
    };
    let report = heaptree_massif(&file, &opts).unwrap();
    // Both sites hold a large share at the peak: both are shown, with file:line from -g.
    for site in ["grow (prog.c:", "scratch (prog.c:"] {
        assert!(
            report.tree.children.iter().any(|c| c.name.contains(site)),
            "{site}: {:?}",
            report.tree.children
        );
    }
}

/// massif-visualizer's own test file `massif.out.duchainify.bz2` was refused ("not a valgrind
/// massif file … found \"BZh91AY&SY…\""): bzip2 is detected by its magic and decompressed, the
/// same file as the plain one.
#[test]
fn bzip2_massif_files_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let packed = dir.path().join("massif.out.stack.bz2");
    let out = tool("bzip2", "bzip2")
        .arg("-c")
        .arg(data("massif.out.stack"))
        .output()
        .unwrap();
    assert!(out.status.success() && out.stdout.starts_with(b"BZh"));
    std::fs::write(&packed, &out.stdout).unwrap();
    let plain = read_massif(&data("massif.out.stack")).unwrap();
    let unpacked = read_massif(&packed).unwrap();
    assert_eq!(unpacked.snapshots, plain.snapshots);
    let report = heaptree_file(&packed, &HeapTreeOptions::default()).unwrap();
    assert_eq!(report.time_unit, "i");
}

/// A program that only allocates gives massif no peak to keep; with `--detailed-freq` above the
/// snapshot count no snapshot has a tree (massif-visualizer's `massif.out.huge` is such a
/// file). The heap-size curve is still there, and the report says why there is no tree.
#[test]
fn massif_without_any_tree_gives_its_heap_curve() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("grow.c");
    std::fs::write(
        &src,
        "#include <stdlib.h>\nvoid *keep[300];\nint main(void) { for (int i = 0; i < 300; i++) keep[i] = malloc(1000 + i); return 0; }\n",
    )
    .unwrap();
    let exe = dir.path().join("grow");
    let status = tool("gcc", "gcc")
        .args(["-O0", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(status.success());
    let out = dir.path().join("massif.out.grow");
    let status = tool("valgrind", "valgrind")
        .arg("--tool=massif")
        .arg(format!("--massif-out-file={}", out.display()))
        .arg("--detailed-freq=1000000")
        .arg("-q")
        .arg(&exe)
        .status()
        .unwrap();
    assert!(status.success());
    let file = read_massif(&out).unwrap();
    assert!(file.snapshots.len() > 10, "{}", file.snapshots.len());
    assert!(file.detailed().is_empty(), "the shape under test: no tree");
    let curve = file.curve_without_tree().unwrap();
    assert_eq!(curve.snapshots.len(), file.snapshots.len());
    assert!(
        curve.message.contains("no snapshot has a heap tree"),
        "{}",
        curve.message
    );
    // Grow-only: the peak is the largest heap, near the 300 blocks' bytes.
    let peak = curve.peak.unwrap();
    let most = curve
        .snapshots
        .iter()
        .map(|p| p.heap_bytes + p.heap_extra_bytes)
        .max();
    assert_eq!(Some(peak.heap_bytes + peak.heap_extra_bytes), most);
    assert!(peak.heap_bytes > 200 * 1000, "{peak:?}");
    // The shared minimal file is one too; a file with trees has no such curve.
    assert!(
        read_massif(&data("massif.out.32406"))
            .unwrap()
            .curve_without_tree()
            .is_some()
    );
    assert!(
        read_massif(&data("massif.out.stack"))
            .unwrap()
            .curve_without_tree()
            .is_none()
    );
}

/// `valgrind --stacks=yes` on a program without malloc: every tree is one empty root, so the
/// views show the stacks' curve and say why instead of an empty "0 B" tree.
#[test]
fn a_profile_of_stacks_only_shows_the_stack_curve() {
    let file = read_massif(&data("massif.out.stack")).unwrap();
    assert!(
        !file.detailed().is_empty(),
        "the shape under test: empty trees"
    );
    let curve = file
        .curve_instead_of_tree()
        .expect("no heap bytes: a curve");
    assert!(curve.no_heap_bytes && curve.has_tree);
    assert!(
        curve.message.starts_with("this profile has no heap bytes")
            && curve.message.contains("--stacks=yes"),
        "{}",
        curve.message
    );
    let most = file.snapshots.iter().map(|s| s.mem_stacks_b).max().unwrap();
    let peak = curve.peak.unwrap();
    assert_eq!(peak.stacks_bytes, most);
    assert!(
        curve.message.contains(&format!("{most} B")),
        "{}",
        curve.message
    );
    // The first snapshot holding the most.
    let first = file
        .snapshots
        .iter()
        .find(|s| s.mem_stacks_b == most)
        .unwrap();
    assert_eq!(peak.snapshot, first.number);
    assert_eq!(curve.snapshots.len(), file.snapshots.len());
    // Files with heap bytes keep their tree; tree-less files keep their own curve.
    let with_heap = read_massif(&data("massif.out.kate")).unwrap();
    assert!(with_heap.curve_instead_of_tree().is_none());
    let tree_less = read_massif(&data("massif.out.32406")).unwrap();
    assert_eq!(
        tree_less.curve_instead_of_tree(),
        tree_less.curve_without_tree()
    );
    assert!(!tree_less.curve_without_tree().unwrap().no_heap_bytes);
}
