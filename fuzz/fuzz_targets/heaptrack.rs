//! Fuzz target: heaptrack raw and processed text (and whatever else `load_bytes` detects in the mutants).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = memscape_trace::load_bytes("fuzz.heaptrack", data);
});
