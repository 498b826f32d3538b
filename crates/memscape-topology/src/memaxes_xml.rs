//! MemAxes' own topology file, `hardware.xml`.
//!
//! Grammar (as MemAxes' `HWTopo::loadHardwareTopologyFromXML` reads it):
//!
//! ```text
//! hardware := <Hardware [id=N] [name=S]> numa* </Hardware>
//! numa     := <NUMA id=N size=KIB> (cache|cpu)* </NUMA>
//! cache    := <Cache id=LEVEL size=BYTES> (cache|cpu)* </Cache>      LEVEL ∈ {1, 2, 3}
//! cpu      := <CPU id=N> </CPU>  |  <CPU id=N/>
//! ```
//!
//! Units: cache `size` is in bytes (the LULESH file's L3 is 20971520 = 20 MiB, L1 32768);
//! NUMA `size` is in KiB, as Linux reports node memory (`33554432` = 32 GiB per node on a
//! 32-cpu server; read as bytes it would be 32 MiB, which no such machine has). The file has no
//! core level: cores are absent from the tree it gives (its L1 caches are per core).

use quick_xml::events::{BytesStart, Event};

use crate::{RawObject, ResourceKind, SourceFormat, Topology, TopologyError, location_at};

struct Element {
    kind: ResourceKind,
    os_index: Option<u32>,
    size_bytes: Option<u64>,
    nested_pus: Vec<u32>,
}

/// Parses a MemAxes hardware.xml document.
pub fn parse(bytes: &[u8], file: &str) -> Result<Topology, TopologyError> {
    let mut reader = quick_xml::Reader::from_reader(bytes);
    reader.config_mut().trim_text(true);
    let mut done: Vec<Element> = Vec::new();
    let mut stack: Vec<Element> = Vec::new();
    let mut saw_root = false;
    loop {
        let position = reader.buffer_position();
        let event = reader.read_event().map_err(|e| TopologyError::Xml {
            at: location_at(bytes, file, reader.error_position()),
            message: e.to_string(),
        })?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(event, Event::Empty(_));
                let element = element_of(e, bytes, file, position, stack.is_empty(), saw_root)?;
                if element.kind == ResourceKind::Machine {
                    saw_root = true;
                }
                stack.push(element);
                if empty {
                    finish(&mut stack, &mut done);
                }
            }
            Event::End(_) => finish(&mut stack, &mut done),
            Event::Eof => break,
            _ => {}
        }
    }
    if !stack.is_empty() {
        return Err(TopologyError::Xml {
            at: location_at(bytes, file, bytes.len() as u64),
            message: "unexpected end of file inside an element".into(),
        });
    }
    if !saw_root {
        return Err(TopologyError::Invalid {
            at: memscape_io::Location::line(file, 1),
            message: "expected the root element <Hardware>".into(),
        });
    }
    let mut machine_memory = None;
    let raw = done
        .into_iter()
        .filter_map(|e| {
            if e.kind == ResourceKind::Machine {
                machine_memory = e.size_bytes;
                return None;
            }
            Some(RawObject {
                kind: e.kind,
                os_index: e.os_index,
                size_bytes: e.size_bytes,
                pus: e.nested_pus,
            })
        })
        .collect::<Vec<_>>();
    // `done` is in closing order (children before parents); put parents first so siblings keep
    // file order within a level (from_raw is order-independent otherwise).
    let mut raw = raw;
    raw.sort_by_key(|o| (o.kind, o.pus.iter().min().copied()));
    Topology::from_raw(
        raw,
        machine_memory,
        file,
        SourceFormat::MemaxesHardwareXml,
        0,
    )
}

fn finish(stack: &mut Vec<Element>, done: &mut Vec<Element>) {
    let Some(mut element) = stack.pop() else {
        return;
    };
    if element.kind == ResourceKind::Pu
        && let Some(os) = element.os_index
    {
        element.nested_pus.push(os);
    }
    if let Some(parent) = stack.last_mut() {
        parent.nested_pus.extend(element.nested_pus.iter().copied());
    }
    done.push(element);
}

fn element_of(
    e: &BytesStart<'_>,
    bytes: &[u8],
    file: &str,
    position: u64,
    is_root: bool,
    saw_root: bool,
) -> Result<Element, TopologyError> {
    let invalid = |message: String| TopologyError::Invalid {
        at: location_at(bytes, file, position),
        message,
    };
    let name = e.name();
    let name = String::from_utf8_lossy(name.as_ref()).into_owned();
    let mut id: Option<u64> = None;
    let mut size: Option<u64> = None;
    for attr in e.attributes() {
        let attr = attr.map_err(|err| invalid(format!("<{name}>: malformed attribute: {err}")))?;
        let value = String::from_utf8_lossy(&attr.value).into_owned();
        let parse = |what: &str| {
            value.trim().parse::<u64>().map_err(|_| {
                invalid(format!(
                    "<{name} {what}={value:?}>: expected a non-negative integer"
                ))
            })
        };
        match attr.key.as_ref() {
            b"id" => id = Some(parse("id")?),
            b"size" => size = Some(parse("size")?),
            _ => {}
        }
    }
    let small = |v: u64, what: &str| {
        u32::try_from(v).map_err(|_| invalid(format!("<{name} {what}={v}>: too large")))
    };
    let (kind, os_index, size_bytes) = match (name.as_str(), is_root) {
        ("Hardware", true) if !saw_root => (ResourceKind::Machine, None, None),
        ("Hardware", _) => return Err(invalid("<Hardware> must be the only root".into())),
        (_, true) => {
            return Err(invalid(format!(
                "expected the root element <Hardware>, found <{name}>"
            )));
        }
        ("NUMA", false) => (
            ResourceKind::Numa,
            id.map(|v| small(v, "id")).transpose()?,
            size.map(|kib| kib.saturating_mul(1024)),
        ),
        ("Cache", false) => {
            let level = id.ok_or_else(|| invalid("<Cache> without id (its level)".into()))?;
            let kind = match level {
                1 => ResourceKind::L1,
                2 => ResourceKind::L2,
                3 => ResourceKind::L3,
                other => {
                    return Err(invalid(format!(
                        "<Cache id={other}>: expected a cache level 1, 2 or 3"
                    )));
                }
            };
            (kind, None, size)
        }
        ("CPU", false) => {
            let os = id.ok_or_else(|| invalid("<CPU> without id".into()))?;
            (ResourceKind::Pu, Some(small(os, "id")?), None)
        }
        (other, false) => {
            return Err(invalid(format!(
                "unexpected element <{other}>, expected <NUMA>, <Cache> or <CPU>"
            )));
        }
    };
    Ok(Element {
        kind,
        os_index,
        size_bytes,
        nested_pus: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_file_and_errors() {
        let xml = br#"<Hardware id="0" name="x">
  <NUMA id="0" size="4">
    <Cache id="2" size="256"><Cache id="1" size="32"><CPU id="0"/><CPU id="2"></CPU></Cache></Cache>
  </NUMA>
  <NUMA id="1" size="4"><Cache id="1" size="32"><CPU id="1"/></Cache></NUMA>
</Hardware>"#;
        let t = parse(xml, "hw.xml").unwrap();
        assert_eq!(t.nodes_of_kind(ResourceKind::Pu).count(), 3);
        let numa1 = t
            .nodes_of_kind(ResourceKind::Numa)
            .find(|n| n.os_index == Some(1))
            .unwrap();
        assert_eq!(numa1.size_bytes, Some(4096));
        assert_eq!(numa1.pus, vec![1]);
        let l2 = t.nodes_of_kind(ResourceKind::L2).next().unwrap();
        assert_eq!(l2.pus, vec![0, 2]);
        assert_eq!(l2.size_bytes, Some(256));

        let bad_level =
            br#"<Hardware><NUMA id="0"><Cache id="7"><CPU id="0"/></Cache></NUMA></Hardware>"#;
        let err = parse(bad_level, "b.xml").unwrap_err().to_string();
        assert!(
            err.contains("b.xml:1") && err.contains("cache level"),
            "{err}"
        );
        let bad_id = b"<Hardware>\n<NUMA id=\"0\">\n<CPU id=\"-3\"/></NUMA></Hardware>";
        let err = parse(bad_id, "c.xml").unwrap_err().to_string();
        assert!(err.contains("c.xml:3"), "{err}");
        let dup = br#"<Hardware><NUMA id="0"><CPU id="0"/><CPU id="0"/></NUMA></Hardware>"#;
        assert!(matches!(
            parse(dup, "d.xml"),
            Err(TopologyError::DuplicatePu { os_index: 0, .. })
        ));
    }
}
