//! Fuzz target: Ripser's input formats: lower-distance matrix, full distance matrix, point cloud.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    for format in [
        memscape_cycles::MatrixFormat::LowerDistance,
        memscape_cycles::MatrixFormat::Distance,
        memscape_cycles::MatrixFormat::PointCloud,
    ] {
        let _ = memscape_cycles::metric::parse_matrix("fuzz.txt", data, format);
    }
});
