//! Fuzz target: valgrind massif output, then the heap tree of its peak.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(file) = memscape_heap::parse_massif("fuzz.massif", data) {
        let _ = memscape_heap::massif_timeline(&file, memscape_heap::Metric::Bytes);
    }
});
