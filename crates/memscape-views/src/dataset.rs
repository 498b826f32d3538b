//! Loading any supported file into a [`Dataset`]: the format is detected from the content (after
//! transparent zstd/gzip/bzip2 decompression), never from the extension alone.

use std::path::PathBuf;

use crate::alloc_map::scene::{AllocScene, ColorBy, SceneCarry};
use crate::error::Result;

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
    /// Time cursor and highlighted blocks shared by the views on this dataset.
    pub links: crate::links::Links,
}

pub enum DatasetContent {
    /// A malloc/free trace (heaptrack, CSV, memscape native).
    AllocTrace(Box<AllocTraceData>),
    /// valgrind massif snapshots with their allocation-site trees.
    Massif(Box<memscape_heap::MassifFile>),
    /// Heap profiles: pprof, text heap profiles (gperftools, jemalloc, Go), DHAT.
    HeapProfile(Box<memscape_heap::StackProfile>),
    /// Sampled memory accesses (MemAxes/Mitos CSV, perf script).
    Samples(Box<memscape_samples::Samples>),
    /// A hardware topology (hwloc XML, MemAxes hardware.xml).
    Topology(Box<memscape_topology::Topology>),
    /// A memory reference trace (valgrind lackey, pinatrace, CSV).
    RefTrace(Box<memscape_cycles::ReferenceTrace>),
    /// Dependence graphs (IGV XML, Graal BGV, Graphviz DOT).
    Graphs(Box<memscape_graph::Imported>),
}

/// The kinds of file memscape recognises, from the first bytes of their content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sniffed {
    Massif,
    HeapProfile,
    Topology,
    Samples,
    Graph,
    RefTrace,
    AllocTrace,
}

/// A DOT file starts (after comments) with `strict`, `graph` or `digraph`.
fn is_dot(head: &str) -> bool {
    let code = head
        .lines()
        .map(str::trim)
        .find(|l| {
            !l.is_empty() && !l.starts_with("//") && !l.starts_with('#') && !l.starts_with("/*")
        })
        .unwrap_or("");
    let word = code
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("");
    matches!(
        word.to_ascii_lowercase().as_str(),
        "strict" | "graph" | "digraph"
    )
}

fn sniff(bytes: &[u8]) -> Sniffed {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    let first_line = head.lines().next().unwrap_or("").trim();
    if first_line.starts_with("desc:") {
        Sniffed::Massif
    } else if head.contains("<topology") || head.contains("<Hardware") {
        Sniffed::Topology
    } else if head.contains("<graphDocument") || is_dot(&head) || memscape_graph::bgv::is_bgv(bytes)
    {
        Sniffed::Graph
    } else if memscape_heap::ProfileFormat::sniff(bytes).is_some() {
        Sniffed::HeapProfile
    } else if first_line.starts_with("==")
        || memscape_cycles::trace::detect_format(&bytes[..bytes.len().min(4096)])
            .is_some_and(|f| f != memscape_cycles::TraceFormat::Csv)
    {
        // lackey (valgrind's banner lines start with ==pid==) and pinatrace; a CSV reference
        // trace is only tried when the allocation-trace importers reject the file.
        Sniffed::RefTrace
    } else if first_line.contains("latency")
        && (first_line.contains("dataSource") || first_line.contains("data_src"))
        || head.contains("|OP ")
    {
        Sniffed::Samples
    } else {
        Sniffed::AllocTrace
    }
}

/// The format `load` would read `head` (a file's first bytes) as, when the bytes say so; None
/// for what only the allocation-trace importers can tell (their fallback).
pub fn sniff_head(head: &[u8]) -> Option<&'static str> {
    match sniff(head) {
        Sniffed::Massif => Some("massif"),
        Sniffed::Topology => Some("topology"),
        Sniffed::Graph => Some("graph"),
        Sniffed::HeapProfile => Some("heap profile"),
        Sniffed::RefTrace => Some("reference trace"),
        Sniffed::Samples => Some("samples"),
        Sniffed::AllocTrace => None,
    }
}

/// Whether `bytes` are memory-access samples (by content, as `load` decides).
pub fn is_samples(bytes: &[u8]) -> bool {
    sniff(bytes) == Sniffed::Samples
}

/// The heap views' model: the timeline and its sizes at each time point.
pub type HeapModel = (
    memscape_heap::HeapTimeline,
    Box<dyn memscape_heap::SizesSource>,
);

/// The heap views' model computed elsewhere than from a trace's blocks in memory: the query
/// engine over a Parquet trace dataset (`memscape_engine::Engine::heap_timeline`, attached by
/// a `memscape` built with the engine). It returns the same model the blocks give
/// (`memscape_heap::grouped`), so the views draw one picture whatever computed it.
pub trait HeapQuery: Send + Sync {
    /// The timeline grouped by `keys` with `points` time points (suppressions as `options`
    /// say) and its sizes.
    fn timeline(
        &self,
        keys: &[memscape_heap::GroupKey],
        metric: memscape_heap::Metric,
        points: usize,
        options: &memscape_heap::HeapOptions,
    ) -> Result<HeapModel, String>;

    /// What computes it ("embedded DataFusion", a Ballista scheduler), for messages.
    fn engine(&self) -> String;
}

/// The allocation map's level-of-detail index built elsewhere than from a trace file's blocks:
/// the query engine over a Parquet trace dataset (`memscape_engine::Engine::lod_index`, every
/// level bit for bit memscape-lod's builder's, attached by a `memscape` built with the engine).
/// The GUI's map pane opens it on its level-of-detail thread and draws from it as from the
/// index beside a big trace.
pub trait LodQuery: Send + Sync {
    /// Builds the index of the dataset `trace` was read from and opens it over `trace`'s blocks
    /// (the views finer than every level draw those exactly).
    fn open(
        &self,
        trace: &std::sync::Arc<memscape_trace::Trace>,
    ) -> Result<memscape_lod::LodTrace, String>;

    /// An index with only the level the whole plane at `size` pixels is drawn from (and the
    /// size classes): a first picture from the engine in a fraction of [`Self::open`]'s time,
    /// views finer than that level drawn from the blocks until the whole index replaces it.
    /// `None`: not offered, or the whole plane is finer than every level.
    fn open_first(
        &self,
        _trace: &std::sync::Arc<memscape_trace::Trace>,
        _size: [u32; 2],
    ) -> Option<Result<memscape_lod::LodTrace, String>> {
        None
    }

    /// What builds it ("Embedded", a Ballista scheduler), for messages.
    fn engine(&self) -> String;

    /// Whether a whole index is kept from an earlier open ([`Self::open`] opens it at once).
    fn kept(&self) -> bool {
        false
    }

    /// How far the index being built is (fraction, stage), for the map pane's status line.
    fn progress(&self) -> Option<(f32, String)> {
        None
    }
}

pub struct AllocTraceData {
    /// Shared with what draws from its blocks off the dataset (a query engine's level-of-detail
    /// index opened over them), so that none copies them.
    pub trace: std::sync::Arc<memscape_trace::Trace>,
    /// Blocks laid out for the allocation map (collapsed address axis, default colours).
    pub scene: Option<AllocScene>,
    /// The file it was read from (a big trace's map draws from its level-of-detail index
    /// beside it, `alloc_map::lod`).
    pub path: Option<std::path::PathBuf>,
    /// Where the heap views' model comes from when not from the blocks here: the query engine
    /// over the Parquet dataset this trace was read from (set by a `memscape` built with the
    /// engine; see [`HeapQuery`]).
    pub heap_query: Option<std::sync::Arc<dyn HeapQuery>>,
    /// Where the map pane's level-of-detail index comes from when not from a trace file: the
    /// query engine (see [`LodQuery`]).
    pub lod_query: Option<std::sync::Arc<dyn LodQuery>>,
}

impl AllocTraceData {
    /// `trace` with its allocation-map scene (when it has addresses).
    pub fn new(trace: memscape_trace::Trace) -> Self {
        Self::shared(std::sync::Arc::new(trace))
    }

    /// [`AllocTraceData::new`] of a trace shared with its maker (a live recording's last
    /// one, whose file is being written from it meanwhile).
    pub fn shared(trace: std::sync::Arc<memscape_trace::Trace>) -> Self {
        Self::with_scene(trace, &mut SceneCarry::default(), false)
    }

    /// [`AllocTraceData::new`] of a live recording's snapshot: the scene continues `carry`, the
    /// previous snapshot's occupancy sweep and call-site classification (see
    /// [`AllocScene::live`]), and leaves this snapshot's there for the next (left empty without
    /// addresses).
    /// Its map is laid out in a live frame with room to grow (`alloc_map::live_frame`).
    pub fn continued(trace: memscape_trace::Trace, carry: &mut SceneCarry) -> Self {
        Self::with_scene(std::sync::Arc::new(trace), carry, true)
    }

    /// `trace`, a part of a bigger one (a dataset's first blocks), with its scene laid out on
    /// the whole trace's address regions `ranges` (sorted `[start, end)`: the query engine's
    /// axis, which its level-of-detail index draws on).
    pub fn on_ranges(trace: memscape_trace::Trace, ranges: &[(u64, u64)]) -> Self {
        let scene = trace
            .has_addresses()
            .then(|| AllocScene::on_ranges(&trace, ColorBy::default_for(&trace), ranges));
        Self {
            trace: std::sync::Arc::new(trace),
            scene,
            path: None,
            heap_query: None,
            lod_query: None,
        }
    }

    fn with_scene(
        trace: std::sync::Arc<memscape_trace::Trace>,
        carry: &mut SceneCarry,
        following: bool,
    ) -> Self {
        let scene = if trace.has_addresses() {
            let color_by = ColorBy::default_for(&trace);
            let (scene, next) =
                AllocScene::live(&trace, color_by, std::mem::take(carry), following);
            *carry = next;
            Some(scene)
        } else {
            *carry = SceneCarry::default();
            None
        };
        Self {
            trace,
            scene,
            path: None,
            heap_query: None,
            lod_query: None,
        }
    }
}

impl Dataset {
    /// The allocation trace, mutable (to attach a [`AllocTraceData::heap_query`]).
    pub fn alloc_trace_mut(&mut self) -> Option<&mut AllocTraceData> {
        match &mut self.content {
            DatasetContent::AllocTrace(t) => Some(t),
            _ => None,
        }
    }

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
            DatasetContent::HeapProfile(p) => p.format.name().to_owned(),
            DatasetContent::Samples(s) => format!("{:?} samples", s.format),
            DatasetContent::Topology(_) => "hardware topology".to_owned(),
            DatasetContent::RefTrace(t) => format!("{:?} reference trace", t.format),
            DatasetContent::Graphs(_) => "dependence graphs".to_owned(),
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
                if let Some(e) = trace_extent(self).filter(|e| !e.is_whole()) {
                    // The counts above are the whole trace's (its manifest), but for the
                    // blocks and never-freed ones, which are of the blocks read.
                    s = s.replacen(
                        &format!("blocks          {}\n", t.trace.blocks.len()),
                        &format!(
                            "blocks          {} (the first {} read; the map and heap views draw \
                             from the query engine)\n",
                            e.total, e.read
                        ),
                        1,
                    );
                    s = s.replacen("never freed     ", "never freed     (of those read) ", 1);
                }
                s
            }
            DatasetContent::Massif(m) => {
                let detailed = m.snapshots.iter().filter(|s| s.tree.is_some()).count();
                let mut s = format!(
                    "command         {}\ntime unit       {}{}\nsnapshots       {} ({} detailed)\n",
                    m.cmd,
                    m.time_unit,
                    match m.time_unit.as_str() {
                        "i" => " (instructions executed)",
                        "ms" => " (milliseconds)",
                        "B" => " (bytes allocated and freed)",
                        _ => "",
                    },
                    m.snapshots.len(),
                    detailed,
                );
                // Where the peak is, not only how high: the snapshot a user opens next.
                if let Some(p) = m.peak_snapshot().and_then(|i| m.snapshots.get(i)) {
                    s.push_str(&format!(
                        "peak heap bytes {} (snapshot {} at {} {}; {} B extra)\n",
                        p.mem_heap_b, p.number, p.time, m.time_unit, p.mem_heap_extra_b
                    ));
                }
                // A `--stacks=yes` profile's stacks have their own peak (all of it when the
                // heap is empty: `--heap=no`).
                if let Some(p) = m
                    .snapshots
                    .iter()
                    .filter(|s| s.mem_stacks_b > 0)
                    .max_by_key(|s| (s.mem_stacks_b, std::cmp::Reverse(s.number)))
                {
                    s.push_str(&format!(
                        "peak stacks     {} B (snapshot {} at {} {})\n",
                        p.mem_stacks_b, p.number, p.time, m.time_unit
                    ));
                }
                s
            }
            DatasetContent::HeapProfile(p) => {
                let types: Vec<&str> = p.sample_types.iter().map(|t| t.name.as_str()).collect();
                format!(
                    "profiles        {}\nsample types    {}\nframes          {}\n",
                    p.snapshots.len(),
                    types.join(", "),
                    p.frames.list.len()
                )
            }
            DatasetContent::Samples(s) => match samples_extent(self) {
                Some(e) if !e.is_whole() => format!(
                    "samples         {} (the first {} read; every view draws from the query engine)\nsource lines    {} among those read\ndata symbols    {} among those read\n",
                    e.total,
                    e.read,
                    s.source_lines.len(),
                    s.symbols.len()
                ),
                _ => format!(
                    "samples         {}\nsource lines    {}\ndata symbols    {}\n",
                    s.len(),
                    s.source_lines.len(),
                    s.symbols.len()
                ),
            },
            DatasetContent::Topology(t) => memscape_topology::render_tree(t),
            DatasetContent::RefTrace(t) => format!(
                "memory accesses   {}\ninstructions      {}\n",
                t.accesses.len(),
                t.instruction_addresses.len()
            ),
            DatasetContent::Graphs(g) => {
                let snapshots = g.document.snapshots();
                let mut s = format!("snapshots       {}\n", snapshots.len());
                const LISTED: usize = 20;
                for (i, graph) in snapshots.iter().enumerate().take(LISTED) {
                    s.push_str(&format!(
                        "  {i:>3}  {} ({} nodes, {} edges)\n",
                        graph.name,
                        graph.nodes.len(),
                        graph.edges.len()
                    ));
                }
                if snapshots.len() > LISTED {
                    s.push_str(&format!("  … {} more\n", snapshots.len() - LISTED));
                }
                s
            }
        }
    }

    pub fn warnings_text(&self) -> String {
        self.warnings().map(ToString::to_string).unwrap_or_default()
    }

    /// What the importer warned of (counted, with the first places); None for a topology,
    /// whose reader rejects what it cannot use instead.
    pub fn warnings(&self) -> Option<&memscape_io::Warnings> {
        match &self.content {
            DatasetContent::AllocTrace(t) => Some(&t.trace.warnings),
            DatasetContent::Massif(m) => Some(&m.warnings),
            DatasetContent::HeapProfile(p) => Some(&p.warnings),
            DatasetContent::Samples(s) => Some(&s.warnings),
            DatasetContent::Topology(_) => None,
            DatasetContent::RefTrace(t) => Some(&t.warnings),
            DatasetContent::Graphs(g) => Some(&g.warnings),
        }
    }
}

/// The samples a dataset whose views draw from a query engine keeps in memory (a bounded
/// read, [`load_samples_head`]): what a view that needs samples themselves (a cluster or
/// offender picked, the selection's members) marks among them.
pub const SAMPLES_HEAD: usize = 100_000;

/// How much of a samples dataset is in memory: `read` of its `total` samples (its first rows),
/// the rest left to the query engine its views draw from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SamplesExtent {
    pub read: usize,
    pub total: u64,
}

impl SamplesExtent {
    /// Whether every sample is in memory.
    pub fn is_whole(&self) -> bool {
        self.read as u64 >= self.total
    }
}

/// Hung on the links of a dataset read by [`load_samples_head`].
struct SamplesExtentSlot(Option<SamplesExtent>);

/// How much of `dataset`'s samples is in memory: None when every sample is (a file, a
/// dataset read whole).
pub fn samples_extent(dataset: &Dataset) -> Option<SamplesExtent> {
    dataset
        .links
        .shared(|| std::sync::Arc::new(SamplesExtentSlot(None)))
        .0
}

/// The blocks a trace dataset whose map and heap views draw from a query engine keeps in
/// memory by default (a bounded read, [`load_trace_head`]): what the views that need blocks
/// themselves (hover, the occupancy bar, views finer than every level of the index) show.
pub const TRACE_HEAD: usize = 1_000_000;

/// How much of a trace dataset is in memory: its first `read` blocks of `total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceExtent {
    pub read: usize,
    pub total: u64,
}

impl TraceExtent {
    /// Whether every block is in memory.
    pub fn is_whole(&self) -> bool {
        self.read as u64 >= self.total
    }

    /// The line a pane shows about what it drew from the blocks read.
    pub fn bound_line(&self) -> String {
        format!(
            "blocks read: the first {} of {} (hover, views finer than the index and the \
             occupancy bar, which ends at the last of them, draw from those)",
            self.read, self.total
        )
    }
}

/// Hangs `extent` on `dataset`'s links: a dataset read in part (a `.msc`'s first blocks,
/// `crate::msc_head`).
pub(crate) fn set_trace_extent(dataset: &Dataset, extent: TraceExtent) {
    let slot = std::sync::Arc::new(TraceExtentSlot(Some(extent)));
    let _ = dataset.links.shared(|| slot);
}

/// Hung on the links of a dataset read by [`load_trace_head`].
struct TraceExtentSlot(Option<TraceExtent>);

/// How much of `dataset`'s blocks is in memory: None when every block is (a file, a dataset
/// read whole).
pub fn trace_extent(dataset: &Dataset) -> Option<TraceExtent> {
    dataset
        .links
        .shared(|| std::sync::Arc::new(TraceExtentSlot(None)))
        .0
}

/// The Parquet trace dataset `dir` with at most `limit` of its blocks read (the first
/// allocated, `memscape_parquet::read_trace_head`) and its count, the map's scene laid out on
/// the whole dataset's address regions `ranges` (the query engine's axis) when given: for views
/// that draw from a query engine over the dataset, which a dataset of any size opens with.
/// Every block is read when it holds at most `limit`.
pub fn load_trace_head(
    dir: &std::path::Path,
    limit: usize,
    ranges: Option<&[(u64, u64)]>,
    progress: &dyn Fn(f32, &str),
) -> Result<Dataset> {
    progress(-1.0, "reading the first blocks of the Parquet dataset");
    let head = memscape_parquet::read_trace_head(dir, None, limit)?;
    let extent = TraceExtent {
        read: head.trace.blocks.len(),
        total: head.total,
    };
    tracing::info!(
        "{}: {} of {} blocks read ({} rows decoded); the map and heap views draw from the \
         query engine",
        dir.display(),
        extent.read,
        extent.total,
        head.rows_read
    );
    progress(0.7, "laying out the allocation map");
    let mut data = match ranges {
        Some(ranges) => AllocTraceData::on_ranges(head.trace, ranges),
        None => AllocTraceData::new(head.trace),
    };
    if !extent.is_whole()
        && let Some(scene) = data.scene.as_mut()
    {
        scene.known_until_last_allocation(&data.trace);
    }
    let dataset = Dataset {
        name: dir.display().to_string(),
        content: DatasetContent::AllocTrace(Box::new(data)),
        links: Default::default(),
    };
    let slot = std::sync::Arc::new(TraceExtentSlot(Some(extent)));
    let _ = dataset.links.shared(|| slot);
    progress(1.0, "done");
    Ok(dataset)
}

/// The Parquet samples dataset `dir` with at most `limit` of its samples read (its first rows,
/// `memscape_parquet::read_samples_head`) and its count: for views that draw from a query
/// engine over the dataset, which a dataset of any size opens with. Every sample is read when
/// it holds at most `limit`.
pub fn load_samples_head(
    dir: &std::path::Path,
    limit: usize,
    progress: &dyn Fn(f32, &str),
) -> Result<Dataset> {
    progress(-1.0, "reading the first samples of the Parquet dataset");
    let head = memscape_parquet::read_samples_head(dir, None, limit)?;
    tracing::info!(
        "{}: {} of {} samples read; the views draw from the query engine",
        dir.display(),
        head.samples.len(),
        head.total
    );
    let extent = SamplesExtent {
        read: head.samples.len(),
        total: head.total,
    };
    let dataset = Dataset {
        name: dir.display().to_string(),
        content: DatasetContent::Samples(Box::new(head.samples)),
        links: Default::default(),
    };
    let slot = std::sync::Arc::new(SamplesExtentSlot(Some(extent)));
    let _ = dataset.links.shared(|| slot);
    progress(1.0, "done");
    Ok(dataset)
}

/// Whether `path`'s first bytes are an uncompressed `.msc`'s magic.
pub(crate) fn starts_as_msc(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| &magic == memscape_trace::msc::MAGIC)
}

/// The dataset of `trace`, read from the `.msc` file `path`, as [`load`] makes it (a live
/// recording's last dataset is made from its trace in memory this way: `live.rs`).
pub(crate) fn msc_dataset(
    name: String,
    trace: impl Into<std::sync::Arc<memscape_trace::Trace>>,
    path: std::path::PathBuf,
) -> Dataset {
    let mut data = AllocTraceData::shared(trace.into());
    data.path = Some(path);
    Dataset {
        name,
        content: DatasetContent::AllocTrace(Box::new(data)),
        links: Default::default(),
    }
}

/// Reads, detects and parses `source`. Runs on a loader thread; `progress(fraction, message)`
/// reports how far it got (fraction < 0: unknown).
pub fn load(source: &LoadSource, progress: &dyn Fn(f32, &str)) -> Result<Dataset> {
    let name = source.display_name();
    if let LoadSource::File(dir) = source
        && let Some(kind) = memscape_parquet::dataset_kind(dir)
    {
        // A Parquet dataset directory (`memscape export --to parquet`).
        progress(-1.0, "reading the Parquet dataset");
        let content = match kind {
            memscape_parquet::DatasetKind::Samples => {
                DatasetContent::Samples(Box::new(memscape_parquet::read_samples(dir, None)?))
            }
            memscape_parquet::DatasetKind::Trace => DatasetContent::AllocTrace(Box::new(
                AllocTraceData::new(memscape_parquet::read_trace(dir, None)?),
            )),
        };
        return Ok(Dataset {
            name,
            content,
            links: Default::default(),
        });
    }
    // An uncompressed `.msc` is read as the command line reads it: a mappable one's block
    // columns are mapped and used in place, not read into memory and copied into aligned words
    // (at 10 M blocks that was 2 × 1.46 GB of the open's 5.25 GB peak and most of its system
    // time; issue 25).
    if let LoadSource::File(path) = source
        && starts_as_msc(path)
    {
        progress(-1.0, "reading");
        let trace = memscape_trace::read_msc(path)?;
        progress(0.7, "laying out the allocation map");
        return Ok(msc_dataset(name, trace, path.clone()));
    }
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
        Sniffed::HeapProfile => DatasetContent::HeapProfile(Box::new(
            memscape_heap::profile::parse_profile(&name, &bytes)?,
        )),
        Sniffed::Topology => DatasetContent::Topology(Box::new(
            memscape_topology::Topology::from_bytes(&bytes, &name)?,
        )),
        Sniffed::Samples => DatasetContent::Samples(Box::new(memscape_samples::parse_samples(
            &bytes,
            &name,
            memscape_samples::ImportOptions::default(),
        )?)),
        Sniffed::Graph => {
            DatasetContent::Graphs(Box::new(memscape_graph::import_contents(vec![(
                name.clone(),
                bytes,
            )])?))
        }
        Sniffed::RefTrace => DatasetContent::RefTrace(Box::new(
            memscape_cycles::trace::parse_trace(&name, &bytes, None)?,
        )),
        Sniffed::AllocTrace => {
            let trace = match memscape_trace::load_bytes(&name, &bytes) {
                Ok(trace) => trace,
                // A file named .msc whose magic is wrong says so, and nothing more.
                Err(e @ memscape_trace::LoadError::NotMsc { .. }) => return Err(e.into()),
                Err(alloc_error) => {
                    // A CSV of memory references (ip,address,kind,size) looks like a CSV
                    // allocation trace to the sniffer; try it before giving up.
                    if let Ok(refs) = memscape_cycles::trace::parse_trace(
                        &name,
                        &bytes,
                        Some(memscape_cycles::TraceFormat::Csv),
                    ) && !refs.accesses.is_empty()
                    {
                        return Ok(Dataset {
                            name,
                            content: DatasetContent::RefTrace(Box::new(refs)),
                            links: Default::default(),
                        });
                    }
                    // Said once: what was tried and how the file starts (not the trace
                    // importer's own "expected" again under it).
                    return Err(match alloc_error {
                        memscape_trace::LoadError::NotATrace { start, .. } => {
                            crate::error::ViewError::msg(format!(
                                "{name}: not a file memscape can read: expected heaptrack raw/processed, a CSV allocation trace (`time,op,address,…`), memscape .msc or a CSV reference trace (`ip,address,kind,size`), or massif, pprof, text heap profiles, DHAT, hwloc/MemAxes XML, sample CSVs, lackey, pinatrace, IGV XML, Graal BGV or DOT (recognised by their first bytes); the input starts with {start}"
                            ))
                        }
                        other => other.into(),
                    });
                }
            };
            progress(0.7, "laying out the allocation map");
            let mut data = AllocTraceData::new(trace);
            if let LoadSource::File(path) = source {
                data.path = Some(path.clone());
            }
            DatasetContent::AllocTrace(Box::new(data))
        }
    };
    progress(1.0, "done");
    Ok(Dataset {
        name,
        content,
        links: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A samples dataset read in part holds the bound's samples and says how many of how many
    /// (the summary), a file or a dataset read whole says nothing.
    #[test]
    fn a_samples_dataset_read_in_part_says_how_much() {
        #![allow(clippy::unwrap_used)]
        let lulesh = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/memaxes/lulesh/samples.out");
        let samples = memscape_samples::load_samples(&lulesh, Default::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let options = memscape_parquet::samples::SamplesWriteOptions {
            host: String::from("rank0"),
            windows: 4,
        };
        memscape_parquet::write_samples(&samples, dir.path(), &options).unwrap();
        let part = load_samples_head(dir.path(), 100, &|_, _| {}).unwrap();
        assert_eq!(
            samples_extent(&part),
            Some(SamplesExtent {
                read: 100,
                total: samples.len() as u64
            })
        );
        let read = match &part.content {
            DatasetContent::Samples(s) => s.len(),
            _ => 0,
        };
        assert_eq!(read, 100);
        assert!(
            part.summary_text().starts_with(&format!(
                "samples         {} (the first 100 read",
                samples.len()
            )),
            "{}",
            part.summary_text()
        );
        let whole = load_samples_head(dir.path(), samples.len(), &|_, _| {}).unwrap();
        assert!(samples_extent(&whole).unwrap().is_whole());
        assert!(
            whole
                .summary_text()
                .starts_with(&format!("samples         {}\n", samples.len()))
        );
        let file = load(&LoadSource::File(lulesh), &|_, _| {}).unwrap();
        assert_eq!(samples_extent(&file), None);
    }

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
        assert_eq!(
            sniff(b"// cfg\ndigraph \"CFG for 'main'\" {\n"),
            Sniffed::Graph
        );
        assert_eq!(sniff(b"<graphDocument>\n"), Sniffed::Graph);
        assert_eq!(sniff(b"BIGV\x07\x00\x03\x00\x00"), Sniffed::Graph);
        assert_eq!(
            sniff(b"heap profile: 1: 2 [3: 4] @ heap/2\n"),
            Sniffed::HeapProfile
        );
        assert_eq!(
            sniff(b"{\"dhatFileVersion\":2,\"mode\":\"heap\"}"),
            Sniffed::HeapProfile
        );
        assert_eq!(sniff(b"==123== Lackey\nI  04001000,3\n"), Sniffed::RefTrace);
        assert_eq!(
            sniff(b"time,op,address,size\n1,alloc,0x10,8\n"),
            Sniffed::AllocTrace
        );
    }
}
