//! Fuzz target: .msc files read the way `memscape` opens them: from a file, memory-mapped when the layout allows.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("memscape-fuzz-{}.msc", std::process::id()));
    if std::fs::write(&path, data).is_ok()
        && let Ok(t) = memscape_trace::read_msc(&path)
    {
        t.blocks.prefetch(&memscape_trace::model::BlockColumn::ALL);
    }
});
