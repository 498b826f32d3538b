//! Hostile massif files: a heap tree tens of thousands of levels deep and absurd counts must
//! load (or warn) in linear time without recursing on the input's depth.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use memscape_heap::report::{HeapTreeOptions, heaptree_massif};
use memscape_heap::{Metric, massif_timeline, parse_massif};

const HEADER: &str = "desc: x\ncmd: ./deep\ntime_unit: i\n#-----------\nsnapshot=0\n#-----------\ntime=0\nmem_heap_B=100\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=peak\n";

#[test]
fn a_very_deep_heap_tree_loads_without_recursion() {
    // A call chain 3,000 frames deep (massif indents each level by one space: ~4.5 MB).
    let depth = 3_000;
    let mut text = String::from(HEADER);
    text.push_str("n1: 100 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n");
    for d in 1..depth {
        let children = usize::from(d + 1 < depth);
        text.push_str(&format!(
            "{:indent$}n{children}: 100 0x{d:x}: f{d} (deep.c:{d})\n",
            "",
            indent = d
        ));
    }
    let start = Instant::now();
    let file = parse_massif("deep.massif", text.as_bytes()).unwrap();
    assert_eq!(file.snapshots[0].tree.as_ref().unwrap().nodes.len(), depth);
    assert!(file.warnings.is_empty(), "{}", file.warnings);
    let report = heaptree_massif(&file, &HeapTreeOptions::default()).unwrap();
    assert_eq!(report.total_bytes, 100);
    let (timeline, _) = massif_timeline(&file, Metric::Bytes);
    assert_eq!(timeline.points.len(), 1);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn absurd_counts_are_warnings_not_allocations() {
    let text = format!(
        "{HEADER}n18446744073709551615: 18446744073709551615 (heap allocation functions) x\n n99999999999: 5 0x1: f (a.c:1)\n"
    );
    let file = parse_massif("absurd.massif", text.as_bytes()).unwrap();
    let tree = file.snapshots[0].tree.as_ref().unwrap();
    assert_eq!(tree.nodes.len(), 2);
    // Both declared child counts disagree with the lines present: counted, nothing sized.
    assert_eq!(file.warnings.count("child_count"), 2);
    let snapshot_storm = "snapshot=99999999999999\n".repeat(3);
    let file = parse_massif(
        "storm.massif",
        format!("desc: x\n{snapshot_storm}").as_bytes(),
    )
    .unwrap();
    assert_eq!(file.snapshots.len(), 3);
}
