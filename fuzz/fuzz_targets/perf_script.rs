//! Fuzz target: `perf script` text of `perf mem record`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = memscape_samples::parse_samples(data, "fuzz.perf", memscape_samples::ImportOptions::default());
});
