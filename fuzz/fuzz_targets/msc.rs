//! Fuzz target: .msc files, compact and mappable layouts, every version, decoded from bytes; every block column decoded.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(t) = memscape_trace::from_msc_bytes("fuzz.msc", data) {
        t.blocks.prefetch(&memscape_trace::model::BlockColumn::ALL);
        let _ = memscape_trace::info::info(&t, &memscape_trace::info::InfoOptions::default());
    }
});
