//! Fuzz target: the recorder's raw per-process files (`.msr`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(raw) = memscape_record::read_raw_bytes("fuzz.msr", data) {
        let _ = memscape_record::convert_raw("fuzz.msr", &raw);
    }
});
