//! Loading any supported file into a [`Dataset`]: the format is detected from the content (after
//! transparent zstd/gzip decompression), never from the extension alone.

use std::path::PathBuf;

use anyhow::Context as _;

use crate::scene::AllocScene;

/// Where a dataset comes from.
#[derive(Debug, Clone)]
pub enum LoadSource {
    File(PathBuf),
    /// A file embedded in the binary (the demo).
    Embedded {
        name: &'static str,
        bytes: &'static [u8],
    },
}

impl LoadSource {
    pub fn display_name(&self) -> String {
        match self {
            LoadSource::File(p) => p.display().to_string(),
            LoadSource::Embedded { name, .. } => format!("demo: {name}"),
        }
    }
}

/// A loaded file with whatever the views need precomputed (on the loader thread).
pub struct Dataset {
    pub name: String,
    pub content: DatasetContent,
}

pub enum DatasetContent {
    /// A malloc/free trace (heaptrack, CSV, memscape native).
    AllocTrace(Box<AllocTraceData>),
    /// valgrind massif snapshots with their allocation-site trees.
    Massif(Box<memscape_heap::MassifFile>),
    /// Sampled memory accesses (MemAxes/Mitos CSV, perf script).
    Samples(Box<memscape_samples::Samples>),
    /// A hardware topology (hwloc XML, MemAxes hardware.xml).
    Topology(Box<memscape_topology::Topology>),
}

/// The kinds of file memscape recognises, from the first bytes of their content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sniffed {
    Massif,
    Topology,
    Samples,
    AllocTrace,
}

fn sniff(bytes: &[u8]) -> Sniffed {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    let first_line = head.lines().next().unwrap_or("").trim();
    if first_line.starts_with("desc:") {
        Sniffed::Massif
    } else if head.contains("<topology") || head.contains("<Hardware") {
        Sniffed::Topology
    } else if first_line.contains("latency")
        && (first_line.contains("dataSource") || first_line.contains("data_src"))
        || head.contains("|OP ")
    {
        Sniffed::Samples
    } else {
        Sniffed::AllocTrace
    }
}

pub struct AllocTraceData {
    pub trace: memscape_trace::Trace,
    /// Blocks laid out for the allocation map (collapsed address axis, default colours).
    pub scene: Option<AllocScene>,
}

impl Dataset {
    /// The allocation trace, when this dataset is one.
    pub fn alloc_trace(&self) -> Option<&AllocTraceData> {
        match &self.content {
            DatasetContent::AllocTrace(t) => Some(t),
            _ => None,
        }
    }

    pub fn format_name(&self) -> String {
        match &self.content {
            DatasetContent::AllocTrace(t) => t.trace.meta.format.name().to_owned(),
            DatasetContent::Massif(_) => "valgrind massif".to_owned(),
            DatasetContent::Samples(s) => format!("{:?} samples", s.format),
            DatasetContent::Topology(_) => "hardware topology".to_owned(),
        }
    }

    /// A few lines of counts for the summary view.
    pub fn summary_text(&self) -> String {
        match &self.content {
            DatasetContent::AllocTrace(t) => {
                let m = &t.trace.meta;
                let mut s = format!(
                    "events          {}\nallocations     {}\nfrees           {}\nreallocations   {}\nblocks          {}\nnever freed     {}\npeak live bytes {} (at event {})\nlive at end     {}\nthreads         {}\naddresses       {}\n",
                    m.events,
                    m.allocs,
                    m.frees,
                    m.reallocs,
                    t.trace.blocks.len(),
                    t.trace.never_freed(),
                    m.peak_live_bytes,
                    m.peak_event,
                    m.end_live_bytes,
                    t.trace.threads.len(),
                    if m.has_addresses {
                        "yes"
                    } else {
                        "no (processed heaptrack file)"
                    },
                );
                if let Some(scene) = &t.scene {
                    s.push_str(&format!("regions         {}\n", scene.regions.len()));
                }
                s
            }
            DatasetContent::Massif(m) => {
                let detailed = m.snapshots.iter().filter(|s| s.tree.is_some()).count();
                let peak = m
                    .peak_snapshot()
                    .and_then(|i| m.snapshots.get(i))
                    .map_or(0, |s| s.mem_heap_b);
                format!(
                    "command         {}\ntime unit       {}\nsnapshots       {} ({} detailed)\npeak heap bytes {}\n",
                    m.cmd,
                    m.time_unit,
                    m.snapshots.len(),
                    detailed,
                    peak
                )
            }
            DatasetContent::Samples(s) => format!(
                "samples         {}\nsource lines    {}\ndata symbols    {}\n",
                s.len(),
                s.source_lines.len(),
                s.symbols.len()
            ),
            DatasetContent::Topology(t) => memscape_topology::render_tree(t),
        }
    }

    pub fn warnings_text(&self) -> String {
        match &self.content {
            DatasetContent::AllocTrace(t) => t.trace.warnings.to_string(),
            DatasetContent::Massif(m) => m.warnings.to_string(),
            DatasetContent::Samples(s) => s.warnings.to_string(),
            DatasetContent::Topology(_) => String::new(),
        }
    }
}

/// Reads, detects and parses `source`. Runs on a loader thread; `progress(fraction, message)`
/// reports how far it got (fraction < 0: unknown).
pub fn load(source: &LoadSource, progress: &dyn Fn(f32, &str)) -> anyhow::Result<Dataset> {
    let name = source.display_name();
    progress(-1.0, "reading");
    let bytes = match source {
        LoadSource::File(path) => memscape_io::read_input(path)?,
        LoadSource::Embedded { name, bytes } => memscape_io::decompress(
            std::path::Path::new(name),
            bytes.to_vec(),
            memscape_io::DEFAULT_MAX_DECOMPRESSED,
        )?,
    };
    progress(0.1, "detecting the format");
    let content = match sniff(&bytes) {
        Sniffed::Massif => {
            DatasetContent::Massif(Box::new(memscape_heap::parse_massif(&name, &bytes)?))
        }
        Sniffed::Topology => DatasetContent::Topology(Box::new(
            memscape_topology::Topology::from_bytes(&bytes, &name)?,
        )),
        Sniffed::Samples => DatasetContent::Samples(Box::new(memscape_samples::parse_samples(
            &bytes,
            &name,
            memscape_samples::ImportOptions::default(),
        )?)),
        Sniffed::AllocTrace => {
            let trace = memscape_trace::load_bytes(&name, &bytes).with_context(|| {
                format!(
                    "{name}: not a file memscape can read (tried: heaptrack raw/processed, CSV allocation trace, memscape .msc; massif, hwloc/MemAxes XML and sample CSVs are recognised by their first line)"
                )
            })?;
            progress(0.7, "laying out the allocation map");
            let scene = trace
                .has_addresses()
                .then(|| AllocScene::build(&trace, crate::scene::ColorBy::default_for(&trace)));
            DatasetContent::AllocTrace(Box::new(AllocTraceData { trace, scene }))
        }
    };
    progress(1.0, "done");
    Ok(Dataset { name, content })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_recognised_by_content() {
        assert_eq!(sniff(b"desc: --time-unit=B\ncmd: ./a\n"), Sniffed::Massif);
        assert_eq!(
            sniff(b"<?xml version=\"1.0\"?>\n<topology version=\"2.0\">"),
            Sniffed::Topology
        );
        assert_eq!(
            sniff(b"variable,source,line,time,iter,latency,dataSource,cpu\n"),
            Sniffed::Samples
        );
        assert_eq!(sniff(b"v 10200\nX ./prog\n"), Sniffed::AllocTrace);
    }
}
