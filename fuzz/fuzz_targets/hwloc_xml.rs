//! Fuzz target: hwloc XML (v1, v2, v3) through memscape's own reader (libhwloc is not involved).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = memscape_topology::hwloc_xml::parse(data, "fuzz.xml");
});
