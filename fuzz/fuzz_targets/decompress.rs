//! Fuzz target: the decompression front of every importer: zstd, gzip, bzip2 by magic, capped.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = memscape_io::decompress(std::path::Path::new("fuzz"), data.to_vec(), 64 << 20);
});
