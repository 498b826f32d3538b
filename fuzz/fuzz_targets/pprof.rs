//! Fuzz target: pprof's profile.proto (decompressed), then the timeline of every measure.
#![no_main]

use memscape_heap::Metric;
use memscape_heap::profile::{pprof, profile_timeline};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(profile) = pprof::parse("fuzz.pprof", data) {
        for measure in profile.measures() {
            let _ = profile_timeline(&profile, measure, Metric::Bytes);
        }
    }
});
