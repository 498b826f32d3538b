//! Mutated real massif files: the importer and everything built on it never panic or hang.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use memscape_heap::massif::parse_massif;
use memscape_heap::report::{HeapTreeOptions, heaptree_massif};
use memscape_heap::suspects::massif_leak_suspects;
use memscape_heap::{MassifHeap, sunburst};
use proptest::prelude::*;

fn real(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/massif")
            .join(name),
    )
    .unwrap()
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    DeleteLine(usize),
    DuplicateLine(usize),
    Truncate(usize),
    Insert(usize, Vec<u8>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        any::<usize>().prop_map(Mutation::Truncate),
        (
            any::<usize>(),
            prop_oneof![
                Just(b"n99999999999999999999: 5 x\n".to_vec()),
                Just(b"      n1: 18446744073709551615 0x0: f (a:1)\n".to_vec()),
                Just(b"snapshot=7\n".to_vec()),
                Just(b"heap_tree=peak\n".to_vec()),
                Just(b"\xff\xfe garbage\n".to_vec()),
                proptest::collection::vec(any::<u8>(), 0..40),
            ]
        )
            .prop_map(|(i, v)| Mutation::Insert(i, v)),
    ]
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        if bytes.is_empty() {
            break;
        }
        let line_starts: Vec<usize> = std::iter::once(0)
            .chain(
                bytes
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| **b == b'\n')
                    .map(|(i, _)| i + 1),
            )
            .filter(|&i| i < bytes.len())
            .collect();
        let line = |i: usize| {
            let start = line_starts[i % line_starts.len()];
            let end = bytes[start..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |p| start + p + 1);
            (start, end)
        };
        match m {
            Mutation::Flip(i, b) => {
                let i = i % bytes.len();
                bytes[i] = *b;
            }
            Mutation::DeleteLine(i) => {
                let (s, e) = line(*i);
                bytes.drain(s..e);
            }
            Mutation::DuplicateLine(i) => {
                let (s, e) = line(*i);
                let copy = bytes[s..e].to_vec();
                bytes.splice(s..s, copy);
            }
            Mutation::Truncate(i) => bytes.truncate(i % bytes.len()),
            Mutation::Insert(i, v) => {
                let (s, _) = line(*i);
                bytes.splice(s..s, v.iter().copied());
            }
        }
    }
    bytes
}

fn exercise(bytes: &[u8]) {
    if let Ok(file) = parse_massif("mutated", bytes) {
        let heap = MassifHeap::new(&file);
        let _ = massif_leak_suspects(&file, &heap, Some(1));
        if let Ok(report) = heaptree_massif(&file, &HeapTreeOptions::default()) {
            let _ = sunburst(&report.tree, report.metric, 2);
        }
        // Warnings carry line numbers inside the file.
        let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        for kind in file.warnings.kinds() {
            for at in &kind.first {
                assert!(at.line.is_some_and(|l| l >= 1 && l <= lines), "{at}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn mutated_stack_file(mutations in proptest::collection::vec(mutation(), 1..8)) {
        exercise(&apply(real("massif.out.stack"), &mutations));
    }

    /// The head of the kate file: header, empty snapshots and the first deep detailed tree.
    #[test]
    fn mutated_kate_head(mutations in proptest::collection::vec(mutation(), 1..8)) {
        let kate = real("massif.out.kate");
        let end = kate
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .nth(400)
            .map_or(kate.len(), |(i, _)| i + 1);
        exercise(&apply(kate[..end].to_vec(), &mutations));
    }

    #[test]
    fn mutated_minimal_file(mutations in proptest::collection::vec(mutation(), 1..8)) {
        exercise(&apply(real("massif.out.32406"), &mutations));
    }

    #[test]
    fn arbitrary_bytes_after_a_header(tail in proptest::collection::vec(any::<u8>(), 0..400)) {
        let mut bytes = b"desc: x\ncmd: y\ntime_unit: i\nsnapshot=0\nheap_tree=detailed\n".to_vec();
        bytes.extend(tail);
        exercise(&bytes);
    }
}

#[test]
fn mutated_kate_file_once() {
    // The big file once with a few fixed mutations (it is too large for many cases).
    let bytes = apply(
        real("massif.out.kate"),
        &[
            Mutation::DeleteLine(40),
            Mutation::Flip(5000, b'x'),
            Mutation::DuplicateLine(37),
        ],
    );
    let file = parse_massif("kate-mutated", &bytes).unwrap();
    assert!(file.warnings.total() >= 1, "{}", file.warnings);
    assert_eq!(file.snapshots.len(), 74);
}
