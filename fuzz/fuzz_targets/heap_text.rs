//! Fuzz target: legacy text heap profiles (gperftools, jemalloc, Go debug=1), then the timeline of every measure.
#![no_main]

use memscape_heap::Metric;
use memscape_heap::profile::{heap_text, profile_timeline};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(profile) = heap_text::parse("fuzz.heap_text", data) {
        for measure in profile.measures() {
            let _ = profile_timeline(&profile, measure, Metric::Bytes);
        }
    }
});
