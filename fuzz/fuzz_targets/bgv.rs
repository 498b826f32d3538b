//! Fuzz target: Graal's binary graph dumps (BGV), imported into graph documents.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = memscape_graph::bgv::parse_bgv(data, "fuzz.bgv");
});
