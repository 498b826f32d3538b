//! Fuzz target: MemAxes' hardware.xml.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = memscape_topology::memaxes_xml::parse(data, "hardware.xml");
});
