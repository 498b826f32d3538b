//! Samples mapped onto the hardware they ran on.

/// Maps a dataset's samples onto `hardware`, else the hardware.xml beside them (MemAxes'
/// layout), else this machine: the topology, its mapping and the whole-set report.
pub fn map_samples(
    samples: &memscape_samples::Samples,
    samples_path: &std::path::Path,
    hardware: Option<&std::path::Path>,
) -> crate::error::Result<(
    memscape_topology::Topology,
    memscape_samples::Mapping,
    memscape_samples::SamplesReport,
)> {
    let hw = hardware
        .map(std::path::Path::to_path_buf)
        .or_else(|| memscape_samples::report::default_hardware(samples_path));
    let topology = memscape_topology::Topology::load(hw.as_deref())?;
    let mapping = memscape_samples::Mapping::new(samples, &topology);
    let report = memscape_samples::samples_report(samples, &topology, &mapping, &[])?;
    Ok((topology, mapping, report))
}
