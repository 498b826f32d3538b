//! Fuzz target: valgrind DHAT / dhat-rs JSON, then the timeline of every measure.
#![no_main]

use memscape_heap::Metric;
use memscape_heap::profile::{dhat, profile_timeline};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(profile) = dhat::parse("fuzz.dhat", data) {
        for measure in profile.measures() {
            let _ = profile_timeline(&profile, measure, Metric::Bytes);
        }
    }
});
