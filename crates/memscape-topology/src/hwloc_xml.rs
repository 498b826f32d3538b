//! hwloc XML as `lstopo --of xml` writes it, read with quick-xml (libhwloc 2.9, the version
//! Debian ships, refuses the hwloc 3 format, so we do not delegate parsing to it).
//!
//! Grammar used (only what the tree needs; everything else is skipped):
//!
//! ```text
//! topology      := <topology [version="2.0"|"3.0"]> object* (distances|support|memattr|…)* </topology>
//!                  no version attribute = hwloc 1.x format (v1)
//! object        := <object type=T [os_index=N] [cpuset=BITMAP] [cache_size=N] [depth=N]
//!                          [cache_type=N] [local_memory=N]> (object|info|page_type|…)* </object>
//! BITMAP        := "0x" hex8 ("," ["0x" hex8])*  most significant 32-bit word first, an empty
//!                  word is zero (hwloc abbreviates runs of zero words this way);
//!                  a leading "0xf...f" word means "all higher bits set" (infinite) and is ignored
//! ```
//!
//! Object types: `Machine` (root; `local_memory` sizes it in v1), `NUMANode` (v1: parent of its
//! packages; v2/v3: memory child of a package or group, covering the PUs of its `cpuset`),
//! `L3Cache`/`L2Cache`/`L1Cache` (v2/v3) or `Cache depth=1..3` (v1; `cache_type="2"` is an
//! instruction cache and skipped), `L1iCache`…  (skipped), `Core`, `PU`. `Package`/`Socket`,
//! `Die`, `Group`, `System`, `L4Cache`, `L5Cache`, `MemCache`, `Misc`, `Bridge`, `PCIDev`,
//! `OSDev` are flattened (see the crate docs).
//!
//! An object's PU set is the set of PUs nested inside it in the file; objects with no nested PU
//! (v2/v3 NUMA nodes) use their `cpuset` attribute instead.

use quick_xml::events::{BytesStart, Event};

use crate::{RawObject, ResourceKind, SourceFormat, Topology, TopologyError, location_at};

/// Bitmaps longer than this many 32-bit words (about 33 million PUs) are refused.
const MAX_BITMAP_WORDS: usize = 1 << 20;

struct XmlObject {
    kind: Option<ResourceKind>,
    os_index: Option<u32>,
    size_bytes: Option<u64>,
    cpuset: Vec<u32>,
    nested_pus: Vec<u32>,
}

/// Parses an hwloc XML document.
pub fn parse(bytes: &[u8], file: &str) -> Result<Topology, TopologyError> {
    let mut reader = quick_xml::Reader::from_reader(bytes);
    reader.config_mut().trim_text(true);
    let mut objects: Vec<XmlObject> = Vec::new();
    // One entry per open element: the index of the object it opened, if it was an object.
    let mut stack: Vec<Option<usize>> = Vec::new();
    let mut format: Option<SourceFormat> = None;
    let mut machine_memory: Option<u64> = None;
    let mut groups = 0u32;
    let xml_error = |reader: &quick_xml::Reader<&[u8]>, e: quick_xml::Error| TopologyError::Xml {
        at: location_at(bytes, file, reader.error_position()),
        message: e.to_string(),
    };
    loop {
        let position = reader.buffer_position();
        let event = reader.read_event().map_err(|e| xml_error(&reader, e))?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(event, Event::Empty(_));
                let name = e.name();
                let opened = match name.as_ref() {
                    b"topology" if stack.is_empty() => {
                        format = Some(version_of(e, bytes, file, position)?);
                        None
                    }
                    _ if stack.is_empty() => {
                        return Err(TopologyError::Invalid {
                            at: location_at(bytes, file, position),
                            message: "expected the root element <topology>".into(),
                        });
                    }
                    b"object" => {
                        let attrs = ObjectAttrs::read(e, bytes, file, position)?;
                        if attrs.type_name == "Group" {
                            groups += 1;
                        }
                        if attrs.type_name == "Machine" && attrs.local_memory.is_some() {
                            machine_memory = attrs.local_memory;
                        }
                        objects.push(attrs.into_object());
                        Some(objects.len() - 1)
                    }
                    _ => None,
                };
                if empty {
                    close(&mut objects, &stack, opened);
                } else {
                    stack.push(opened);
                }
            }
            Event::End(_) => {
                let closed = stack.pop().flatten();
                close(&mut objects, &stack, closed);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let Some(format) = format else {
        return Err(TopologyError::Invalid {
            at: memscape_io::Location::line(file, 1),
            message: "expected the root element <topology>, found none".into(),
        });
    };
    if !stack.is_empty() {
        return Err(TopologyError::Xml {
            at: location_at(bytes, file, bytes.len() as u64),
            message: "unexpected end of file inside an element".into(),
        });
    }
    let raw = objects
        .into_iter()
        .filter_map(|o| {
            let kind = o.kind?;
            let pus = if o.nested_pus.is_empty() {
                o.cpuset
            } else {
                o.nested_pus
            };
            Some(RawObject {
                kind,
                os_index: o.os_index,
                size_bytes: o.size_bytes,
                pus,
            })
        })
        .collect();
    Topology::from_raw(raw, machine_memory, file, format, groups)
}

/// Closing an object hands its PUs (its own index if it is a PU) to the enclosing object.
fn close(objects: &mut [XmlObject], stack: &[Option<usize>], closed: Option<usize>) {
    let Some(index) = closed else { return };
    let mut pus = std::mem::take(&mut objects[index].nested_pus);
    if objects[index].kind == Some(ResourceKind::Pu) {
        match objects[index].os_index {
            Some(os) => pus.push(os),
            None => pus.extend(objects[index].cpuset.iter().copied()),
        }
    }
    let parent = stack.iter().rev().find_map(|s| *s);
    if let Some(p) = parent {
        objects[p].nested_pus.extend(pus.iter().copied());
    }
    objects[index].nested_pus = pus;
}

fn version_of(
    e: &BytesStart<'_>,
    bytes: &[u8],
    file: &str,
    position: u64,
) -> Result<SourceFormat, TopologyError> {
    for attr in e.attributes().flatten() {
        if attr.key.as_ref() == b"version" {
            let v = String::from_utf8_lossy(&attr.value).into_owned();
            return match v.split('.').next() {
                Some("1") => Ok(SourceFormat::HwlocXmlV1),
                Some("2") => Ok(SourceFormat::HwlocXmlV2),
                Some("3") => Ok(SourceFormat::HwlocXmlV3),
                _ => Err(TopologyError::Invalid {
                    at: location_at(bytes, file, position),
                    message: format!("unsupported hwloc XML version {v:?}, expected 2.x or 3.x"),
                }),
            };
        }
    }
    Ok(SourceFormat::HwlocXmlV1)
}

struct ObjectAttrs {
    type_name: String,
    os_index: Option<u32>,
    cpuset: Vec<u32>,
    cache_size: Option<u64>,
    cache_depth: Option<u32>,
    cache_type: Option<u32>,
    local_memory: Option<u64>,
}

impl ObjectAttrs {
    fn read(
        e: &BytesStart<'_>,
        bytes: &[u8],
        file: &str,
        position: u64,
    ) -> Result<Self, TopologyError> {
        let invalid = |message: String| TopologyError::Invalid {
            at: location_at(bytes, file, position),
            message,
        };
        let mut attrs = ObjectAttrs {
            type_name: String::new(),
            os_index: None,
            cpuset: Vec::new(),
            cache_size: None,
            cache_depth: None,
            cache_type: None,
            local_memory: None,
        };
        for attr in e.attributes() {
            let attr = attr.map_err(|err| invalid(format!("malformed attribute: {err}")))?;
            let value = std::str::from_utf8(&attr.value)
                .map_err(|_| invalid("attribute value is not UTF-8".into()))?;
            let key = attr.key.as_ref();
            let number = |what: &str| {
                value.trim().parse::<u64>().map_err(|_| {
                    invalid(format!("{what}={value:?}: expected a non-negative integer"))
                })
            };
            match key {
                b"type" => attrs.type_name = value.to_owned(),
                b"os_index" => {
                    attrs.os_index = Some(u32::try_from(number("os_index")?).map_err(|_| {
                        invalid(format!("os_index={value:?}: larger than 32 bits"))
                    })?);
                }
                b"cpuset" => {
                    attrs.cpuset =
                        parse_bitmap(value).map_err(|m| invalid(format!("cpuset: {m}")))?;
                }
                b"cache_size" => attrs.cache_size = Some(number("cache_size")?),
                b"depth" => attrs.cache_depth = u32::try_from(number("depth")?).ok(),
                b"cache_type" => attrs.cache_type = u32::try_from(number("cache_type")?).ok(),
                b"local_memory" => attrs.local_memory = Some(number("local_memory")?),
                _ => {}
            }
        }
        if attrs.type_name.is_empty() {
            return Err(invalid("<object> without a type attribute".into()));
        }
        Ok(attrs)
    }

    fn into_object(self) -> XmlObject {
        // hwloc cache_type: 0 unified, 1 data, 2 instruction.
        let data_cache = self.cache_type != Some(2);
        let kind = match self.type_name.as_str() {
            "NUMANode" => Some(ResourceKind::Numa),
            "L3Cache" => Some(ResourceKind::L3),
            "L2Cache" => Some(ResourceKind::L2),
            "L1Cache" => Some(ResourceKind::L1),
            "Cache" if data_cache => match self.cache_depth {
                Some(1) => Some(ResourceKind::L1),
                Some(2) => Some(ResourceKind::L2),
                Some(3) => Some(ResourceKind::L3),
                _ => None,
            },
            "Core" => Some(ResourceKind::Core),
            "PU" => Some(ResourceKind::Pu),
            _ => None,
        };
        let size_bytes = match kind {
            Some(ResourceKind::Numa) => self.local_memory,
            Some(ResourceKind::L1 | ResourceKind::L2 | ResourceKind::L3) => self.cache_size,
            _ => None,
        };
        XmlObject {
            kind,
            os_index: self.os_index,
            size_bytes,
            cpuset: self.cpuset,
            nested_pus: Vec::new(),
        }
    }
}

/// Parses an hwloc bitmap string (`0x00000fff,0xffffffff`) into the indices of its set bits.
pub fn parse_bitmap(text: &str) -> Result<Vec<u32>, String> {
    let words: Vec<&str> = text.trim().split(',').collect();
    if words.len() > MAX_BITMAP_WORDS {
        return Err(format!(
            "{} words, more than the {MAX_BITMAP_WORDS} we accept",
            words.len()
        ));
    }
    let mut bits = Vec::new();
    let count = words.len();
    for (i, word) in words.iter().enumerate() {
        let digits = word
            .trim()
            .strip_prefix("0x")
            .or_else(|| word.trim().strip_prefix("0X"))
            .unwrap_or(word.trim());
        if i == 0 && digits.starts_with("f...f") {
            // "0xf...f,": every higher bit is set; an infinite set has no PU list.
            continue;
        }
        if digits.is_empty() && count > 1 {
            // hwloc writes all-zero words as nothing: "0x0000ffff,,,0x0000ffff".
            continue;
        }
        if digits.is_empty() || digits.len() > 8 {
            return Err(format!("word {word:?}: expected 1 to 8 hexadecimal digits"));
        }
        let value = u32::from_str_radix(digits, 16)
            .map_err(|_| format!("word {word:?}: expected hexadecimal digits"))?;
        let base = 32 * (count - 1 - i) as u64;
        for bit in 0..32u64 {
            if value & (1 << bit) != 0 {
                let index = u32::try_from(base + bit)
                    .map_err(|_| "bit index beyond 32 bits".to_string())?;
                bits.push(index);
            }
        }
    }
    bits.sort_unstable();
    Ok(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmaps() {
        assert_eq!(parse_bitmap("0x00000003").unwrap(), vec![0, 1]);
        assert_eq!(parse_bitmap("0x00000001,0x80000000").unwrap(), vec![31, 32]);
        assert_eq!(parse_bitmap("0xf...f,0x00000001").unwrap(), vec![0]);
        assert_eq!(parse_bitmap("0x0").unwrap(), Vec::<u32>::new());
        assert_eq!(parse_bitmap("0x00000001,,0x00000001").unwrap(), vec![0, 64]);
        assert!(parse_bitmap("0xzz").is_err());
        assert!(parse_bitmap("0x123456789").is_err());
    }

    #[test]
    fn errors_name_the_line() {
        let xml = b"<topology version=\"2.0\">\n<object type=\"Machine\">\n<object type=\"PU\" os_index=\"x\"/>\n</object></topology>";
        let err = parse(xml, "m.xml").unwrap_err().to_string();
        assert!(err.contains("m.xml:3"), "{err}");
        assert!(err.contains("os_index"), "{err}");
        let truncated = b"<topology version=\"2.0\">\n<object type=\"Machine\">\n<object type=\"PU\" os_index=\"0\"/>\n";
        let err = parse(truncated, "t.xml").unwrap_err().to_string();
        assert!(err.starts_with("t.xml:"), "{err}");
        let wrong_root = b"<nope/>";
        assert!(parse(wrong_root, "w.xml").is_err());
    }
}
