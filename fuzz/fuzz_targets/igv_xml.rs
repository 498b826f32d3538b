//! Fuzz target: IGV XML graph documents.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = memscape_graph::import_contents(vec![("fuzz.xml".to_owned(), data.to_vec())]);
});
