//! Fuzz target: reference traces: valgrind lackey, pinatrace, `ip,address,kind,size` CSV.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = memscape_cycles::trace::parse_trace("fuzz.trace", data, None);
});
