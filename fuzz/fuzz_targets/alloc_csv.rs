//! Fuzz target: CSV allocation traces (`time,op,address,…`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = memscape_trace::load_bytes("fuzz.csv", data);
});
