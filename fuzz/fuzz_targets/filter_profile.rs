//! Fuzz target: IGV-style filter profiles (TOML), compiled (their regexes too).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = memscape_graph::filter::Profile::from_toml(text, "fuzz.toml");
    }
});
