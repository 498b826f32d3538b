//! Fuzz target: tour TOML (`memscape_views::tour::parse`), then what a tour is used for
//! without a GPU: the frame count, every step written back as TOML (as the GUI's "record
//! step" does) and read again, and the interpolation between consecutive steps.
#![no_main]

use memscape_views::tour;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(steps) = tour::parse(text, "fuzz.toml") else {
        return;
    };
    let _ = tour::frame_count(&steps, 30.0);
    for step in &steps {
        // A step that was read writes back to a tour that reads again, and writing that one
        // gives the same text (a fixed point: NaN settings compare unequal, their text does not).
        let written = tour::step_text(step).expect("a parsed step serializes");
        let again = tour::parse(&written, "written.toml").expect("a written step parses");
        assert_eq!(again.len(), 1);
        let rewritten = tour::step_text(&again[0]).expect("a parsed step serializes");
        assert_eq!(written, rewritten, "writing a step is not stable");
    }
    for pair in steps.windows(2) {
        let _ = tour::same_picture(&pair[0], &pair[1]);
        for u in [0.0, 0.37, 1.0] {
            let _ = tour::interpolate(&pair[0], &pair[1], u);
        }
    }
});
