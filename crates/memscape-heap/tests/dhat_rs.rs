//! dhat-rs output (the `dhat` crate's `dhat-heap.json`, mode `rust-heap`, time in µs), made by
//! profiling this test process itself, read back: totals per function and the blocks kept to
//! the end. One test in this file: a process holds one DHAT profiler.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use memscape_heap::ProfileHeap;
use memscape_heap::profile::{ProfileFormat, read_profile};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[inline(never)]
fn kept_block() -> Vec<u8> {
    std::hint::black_box(vec![7u8; 1000])
}

#[inline(never)]
fn short_lived() -> usize {
    let v = std::hint::black_box(vec![1u64; 50]);
    v.iter().sum::<u64>() as usize
}

#[test]
fn dhat_rs_heap_profiles_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dhat-heap.json");
    let mut kept = Vec::new();
    {
        let _profiler = dhat::Profiler::builder().file_name(&path).build();
        kept.reserve(64);
        for _ in 0..40 {
            kept.push(kept_block());
            std::hint::black_box(short_lived());
        }
    }
    let profile = read_profile(&path).unwrap();
    assert_eq!(profile.format, ProfileFormat::Dhat);
    assert!(profile.warnings.is_empty(), "{}", profile.warnings);
    // dhat-rs keeps Rust's allocation plumbing in its stacks (`alloc`, `with_capacity_in<…>`):
    // sum the outermost nodes of the function, wherever they are in the tree.
    let bytes_of = |measure: &str, function: &str| {
        let heap = ProfileHeap::new(&profile, profile.measure(Some(measure)).unwrap());
        let sizes = heap.sizes(0).unwrap();
        let trie = heap.trie();
        let mut total = 0;
        let mut stack = vec![0u32];
        while let Some(n) = stack.pop() {
            if n != 0 && trie.name(n).starts_with(function) {
                total += sizes.bytes(n);
            } else {
                stack.extend(trie.children(n));
            }
        }
        total
    };
    assert_eq!(bytes_of("total", "kept_block"), 40 * 1000);
    assert_eq!(bytes_of("total", "short_lived"), 40 * 50 * 8);
    // At the end (the profiler dropped while `kept` lives): only the kept blocks.
    assert_eq!(bytes_of("at_end", "kept_block"), 40 * 1000);
    assert_eq!(bytes_of("at_end", "short_lived"), 0);
    drop(kept);
}
