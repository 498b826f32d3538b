//! Fuzz target: MemAxes and Mitos sample CSVs.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = memscape_samples::parse_samples(data, "fuzz.csv", memscape_samples::ImportOptions::default());
});
