//! The running machine, and hwloc XML loaded by libhwloc itself, through `hwlocality`.
//!
//! Both go through the same flattening as our XML reader, so the tree libhwloc sees for an XML
//! file and the tree [`crate::hwloc_xml`] builds from the same file can be compared node by node
//! (the tests do).

use hwlocality::object::TopologyObject;
use hwlocality::object::attributes::ObjectAttributes;
use hwlocality::object::types::ObjectType;

use crate::{RawObject, ResourceKind, SourceFormat, Topology, TopologyError};

/// Discovers the running machine.
pub fn running_machine() -> Result<Topology, TopologyError> {
    let topology = hwlocality::Topology::new().map_err(|e| TopologyError::Hwloc(e.to_string()))?;
    convert(&topology, "running machine", SourceFormat::RunningMachine)
}

/// Loads hwloc XML with libhwloc (the system library; 2.9 on Debian 12 reads formats v1 and
/// v2 only). Used as an independent oracle for [`crate::hwloc_xml`].
pub fn from_libhwloc_xml(xml: &str, name: &str) -> Result<Topology, TopologyError> {
    let format = if xml.contains("version=\"2.") {
        SourceFormat::HwlocXmlV2
    } else {
        SourceFormat::HwlocXmlV1
    };
    let topology = hwlocality::Topology::builder()
        .from_xml(xml)
        .map_err(|e| TopologyError::Hwloc(format!("{name}: {e}")))?
        .build()
        .map_err(|e| TopologyError::Hwloc(format!("{name}: {e}")))?;
    convert(&topology, name, format)
}

fn kind_of(object: &TopologyObject) -> Option<ResourceKind> {
    match object.object_type() {
        ObjectType::NUMANode => Some(ResourceKind::Numa),
        ObjectType::L3Cache => Some(ResourceKind::L3),
        ObjectType::L2Cache => Some(ResourceKind::L2),
        ObjectType::L1Cache => Some(ResourceKind::L1),
        ObjectType::Core => Some(ResourceKind::Core),
        ObjectType::PU => Some(ResourceKind::Pu),
        _ => None,
    }
}

fn convert(
    topology: &hwlocality::Topology,
    name: &str,
    format: SourceFormat,
) -> Result<Topology, TopologyError> {
    let mut raw = Vec::new();
    let mut groups = 0u32;
    for object in topology.objects() {
        if object.object_type() == ObjectType::Group {
            groups += 1;
        }
        let Some(kind) = kind_of(object) else {
            continue;
        };
        let pus: Vec<u32> = object
            .cpuset()
            .map(|set| {
                set.iter_set()
                    .filter_map(|i| u32::try_from(usize::from(i)).ok())
                    .collect()
            })
            .unwrap_or_default();
        let size_bytes = match object.attributes() {
            Some(ObjectAttributes::NUMANode(numa)) => numa.local_memory().map(|m| m.get()),
            Some(ObjectAttributes::Cache(cache)) => cache.size().map(|s| s.get()),
            _ => None,
        };
        raw.push(RawObject {
            kind,
            os_index: object.os_index().and_then(|i| u32::try_from(i).ok()),
            size_bytes,
            pus,
        });
    }
    Topology::from_raw(raw, None, name, format, groups)
}
