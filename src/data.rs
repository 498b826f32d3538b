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
}

pub struct AllocTraceData {
    pub trace: memscape_trace::Trace,
    /// Blocks laid out for the allocation map (collapsed address axis, default colours).
    pub scene: Option<AllocScene>,
}

impl Dataset {
    pub fn format_name(&self) -> String {
        match &self.content {
            DatasetContent::AllocTrace(t) => t.trace.meta.format.name().to_owned(),
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
        }
    }

    pub fn warnings_text(&self) -> String {
        match &self.content {
            DatasetContent::AllocTrace(t) => t.trace.warnings.to_string(),
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
    let trace = memscape_trace::load_bytes(&name, &bytes)
        .with_context(|| format!("{name}: not a file memscape can read"))?;
    progress(0.7, "laying out the allocation map");
    let scene = trace
        .has_addresses()
        .then(|| AllocScene::build(&trace, crate::scene::ColorBy::default_for(&trace)));
    progress(1.0, "done");
    Ok(Dataset {
        name,
        content: DatasetContent::AllocTrace(Box::new(AllocTraceData { trace, scene })),
    })
}
