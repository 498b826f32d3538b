//! The command line. `memscape --help` documents every subcommand.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "memscape",
    version,
    about = "GPU-accelerated visualizer of how programs use memory",
    long_about = "memscape shows how programs use memory: allocation maps (time × address), heap \
trees over time, cycles in memory reference traces, sampled accesses on the hardware topology \
and compiler dependence graphs.\n\nWith no subcommand it opens the GUI: on the FILEs given, or on \
the embedded demo.",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// More log output (-v info, -vv debug, -vvv trace). RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    #[command(subcommand)]
    pub command: Option<Command>,

    /// Files to open in the GUI (same as `memscape view FILE…`).
    #[command(flatten)]
    pub view: ViewArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open the GUI on files (format detected from content), or on the embedded demo.
    View(ViewArgs),
    /// Render one view headless to a PNG, with the same GPU pipelines as the GUI.
    Render(Box<RenderArgs>),
    /// Summarize a file: format, counts, warnings (allocation traces: peaks, regions, sites).
    Info(InfoArgs),
    /// Record every allocation of a program (LD_PRELOAD shim) into memscape's native .msc.
    Record(RecordArgs),
    /// Convert an allocation trace (heaptrack, CSV) to memscape's native .msc.
    Convert(ConvertArgs),
    /// The heap tree at one time point (massif, allocation traces, pprof/DHAT/heap profiles), as JSON or text.
    Heaptree(HeaptreeArgs),
    /// A heap tree at one time point as pprof (profile.proto) or collapsed stacks (inferno, FlameGraph, speedscope).
    Export(ExportArgs),
    /// Print a hardware topology: this machine, an hwloc XML file or a MemAxes hardware.xml.
    Topology(TopologyArgs),
    /// Sampled memory accesses mapped onto the hardware topology.
    Samples(SamplesArgs),
    /// Neighbour-constrained clustering of samples along one attribute (MemAxes).
    Cluster(ClusterArgs),
    /// Persistent homology barcode (Vietoris–Rips, Ripser's algorithm) of a finite metric.
    Persistence(PersistenceArgs),
    /// Cycles in a memory reference trace: windows, persistent cohomology, circular coordinates.
    Cycles(CyclesArgs),
    /// Layered layout of dependence graphs (IGV XML, Graal BGV, DOT) as JSON: nodes by their input ids, with labels.
    Layout(LayoutArgs),
    /// Write the embedded demo files to a directory.
    Demo(DemoArgs),
    /// Render every frame of a presentation tour (transitions included) as numbered PNGs.
    RenderTour(RenderTourArgs),
    /// Play a presentation tour full screen (→/space next, ← previous, Home, P pause, 1–9, Esc).
    Present(PresentArgs),
    /// Level of detail for big traces: build the index beside a trace, draw frames from it.
    Lod(crate::commands::lod::LodArgs),
}

#[derive(Debug, Args)]
pub struct PersistenceArgs {
    pub file: PathBuf,
    /// lower-distance, distance or point-cloud.
    #[arg(long, default_value = "lower-distance")]
    pub format: String,
    /// Highest homology dimension.
    #[arg(long, default_value_t = 1)]
    pub dim: usize,
    /// Rips threshold (default: the enclosing radius).
    #[arg(long)]
    pub threshold: Option<f32>,
    /// Prime modulus of the coefficients.
    #[arg(long, default_value_t = 2)]
    pub modulus: u16,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CyclesArgs {
    /// valgrind lackey --trace-mem=yes output, pinatrace, or CSV ip,address,kind,size
    /// (`demo:sort`: the embedded lackey trace).
    pub trace: PathBuf,
    #[command(flatten)]
    pub select: CycleSelectArgs,
    /// Prime modulus of the coefficients.
    #[arg(long, default_value_t = 47)]
    pub modulus: u16,
    /// Parameterizations to compute, by decreasing persistence.
    #[arg(long, default_value_t = 3)]
    pub top: usize,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct LayoutArgs {
    /// IGV XML, Graal BGV (.bgv, .bgv.gz), or DOT files forming a snapshot sequence (`demo:cfg`: the embedded CFGs).
    #[arg(required = true)]
    pub graphs: Vec<PathBuf>,
    /// Which snapshot (0-based, document order).
    #[arg(long, default_value_t = 0)]
    pub snapshot: usize,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Where the trace goes.
    #[arg(short, long, default_value = "memscape.msc")]
    pub output: PathBuf,
    /// Call-stack frames kept per event.
    #[arg(long, default_value_t = 32)]
    pub stack_depth: usize,
    /// Record no call stacks (fastest).
    #[arg(long)]
    pub no_stacks: bool,
    /// Event times rounded down to this resolution (a power of two ns: `exact`, `1ns`, `16ns`,
    /// `1us` = 512 ns…); coarser times make smaller files.
    #[arg(long, default_value = "16ns", value_parser = memscape_record::parse_time_resolution)]
    pub time_resolution: u8,
    /// The program and its arguments, after `--`.
    #[arg(trailing_var_arg = true, required = true, value_name = "PROG ARGS")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// Any allocation trace memscape reads (`demo`, `demo:sqlite`: the embedded ones), or the
    /// raw recording directory a failed `memscape record` kept.
    pub input: PathBuf,
    pub output: PathBuf,
    /// Only these processes of a multi-process recording: a pid, or a regular expression
    /// matched against the program name and the command line.
    #[arg(long, value_name = "PID|NAME-REGEX")]
    pub process: Option<String>,

    /// Store the block columns uncompressed so that loading maps them in place (about 73 bytes
    /// per block on disk instead of ~1; for large traces opened again and again).
    #[arg(long)]
    pub mappable: bool,
}

#[derive(Debug, Args)]
pub struct HeaptreeArgs {
    /// An allocation trace, massif file or heap profile (pprof, DHAT, text), or a directory of
    /// profiles taken over time (`demo`, `demo:sqlite`: the embedded traces).
    pub file: PathBuf,
    /// Only these processes of a multi-process recording: a pid, or a regular expression
    /// matched against the program name and the command line.
    #[arg(long, value_name = "PID|NAME-REGEX")]
    pub process: Option<String>,
    /// Time point: wall ns for traces (events when they have no wall time), massif's time unit;
    /// profiles: ns since the first (or their number).
    #[arg(long, conflicts_with_all = ["snapshot", "peak"])]
    pub at: Option<u64>,
    /// Massif snapshot number; profiles: the profile's number (from 0).
    #[arg(long, conflicts_with = "peak")]
    pub snapshot: Option<u64>,
    /// The heap peak.
    #[arg(long)]
    pub peak: bool,
    /// Grouping keys for traces, outermost first: thread, line (= site: function and line),
    /// function, path (top-down), callers (bottom-up), module, size.
    #[arg(long, default_value = "line")]
    pub group: String,
    /// Invert call paths: `path` becomes `callers` (each site, then its callers outwards).
    #[arg(long)]
    pub bottom_up: bool,
    /// Node size: bytes or objects.
    #[arg(long, default_value = "bytes")]
    pub metric: String,
    /// Levels below the root.
    #[arg(long)]
    pub depth: Option<usize>,
    /// Profiles (pprof, DHAT, heap profiles): what the tree measures (inuse, alloc, total,
    /// reads, never_read, …, or a sample type); default: the profile's own default.
    #[arg(long)]
    pub measure: Option<String>,
    /// Leak suspects (groups that grew and were not freed) instead of the tree.
    #[arg(long)]
    pub leaks: bool,
    /// With --leaks: keep the C library's and the loader's never-freed blocks (thread control
    /// blocks, dlopen, locale, stdio buffers…) that are suppressed by default.
    #[arg(long, requires = "leaks")]
    pub no_suppressions: bool,
    #[command(flatten)]
    pub sites: SiteArgs,
    #[arg(long)]
    pub json: bool,
}

/// `memscape export FILE --to pprof|collapsed [-o OUT]`, with `heaptree`'s time point,
/// grouping and measure options.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// An allocation trace, massif file, profile (pprof, DHAT, heap profile), or a directory of
    /// profiles taken over time.
    pub file: PathBuf,
    /// pprof (gzipped profile.proto) or collapsed (`a;b;c bytes` lines).
    #[arg(long)]
    pub to: String,
    /// Where to write; default: standard output.
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Time point: wall ns for traces (events when they have no wall time), massif's time unit;
    /// profiles: ns since the first (or their number).
    #[arg(long, conflicts_with_all = ["snapshot", "peak"])]
    pub at: Option<u64>,
    /// Massif snapshot number; profiles: the profile's number (from 0).
    #[arg(long, conflicts_with = "peak")]
    pub snapshot: Option<u64>,
    /// The heap peak.
    #[arg(long)]
    pub peak: bool,
    /// Grouping keys for traces, outermost first: thread,site,size,path,module (`path`: whole
    /// call stacks).
    #[arg(long, default_value = "path")]
    pub group: String,
    /// Collapsed stacks: bytes or objects per stack.
    #[arg(long, default_value = "bytes")]
    pub metric: String,
    /// Invert call paths: `path` becomes `callers` (as `heaptree --bottom-up`).
    #[arg(long)]
    pub bottom_up: bool,
    /// Profiles: the measure exported (see `heaptree --measure`).
    #[arg(long)]
    pub measure: Option<String>,
    #[command(flatten)]
    pub sites: SiteArgs,
}

/// How call sites see through allocation wrappers (`heaptree`, `info`).
#[derive(Debug, Args)]
pub struct SiteArgs {
    /// Treat frames whose function (or `module+0xoffset` when unnamed) matches REGEX as
    /// allocation wrappers, like the built-in operator new, std::, xmalloc, g_malloc…
    /// (repeatable).
    #[arg(long = "wrapper", value_name = "REGEX")]
    pub wrappers: Vec<String>,
    /// Do not detect wrappers (frames through which most bytes pass from many callers).
    #[arg(long)]
    pub no_wrapper_detection: bool,
    /// The innermost frame is the call site: no wrapper is skipped.
    #[arg(long, conflicts_with_all = ["wrappers", "no_wrapper_detection"])]
    pub innermost_sites: bool,
}

#[derive(Debug, Args)]
pub struct TopologyArgs {
    /// hwloc XML or MemAxes hardware.xml; none: this machine.
    pub file: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SamplesArgs {
    /// MemAxes CSV, Mitos CSV or `perf script` text, or a directory (MemAxes' layout:
    /// DIR/data/samples.*, DIR/hardware.xml, DIR/src/).
    pub file: PathBuf,
    /// Topology of the machine the samples came from (default: hardware.xml beside FILE, else this machine).
    #[arg(long)]
    pub hardware: Option<PathBuf>,
    /// Keep samples with ATTR in LO..HI (repeatable; ranges combine with "and").
    #[arg(long = "select", value_name = "ATTR=LO..HI")]
    pub select: Vec<String>,
    /// How to read MemAxes' dataSource column: auto, hex or decimal.
    #[arg(long, default_value = "auto")]
    pub data_source_radix: String,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ClusterArgs {
    pub file: PathBuf,
    #[arg(long)]
    pub hardware: Option<PathBuf>,
    /// The continuous attribute to cluster along (e.g. time, zidx).
    #[arg(long)]
    pub attribute: String,
    /// latency or imbalance.
    #[arg(long, default_value = "latency")]
    pub metric: String,
    /// Topology depth: numa, l3, l2, l1, core, pu.
    #[arg(long, default_value = "l1")]
    pub depth: String,
    /// Samples per window.
    #[arg(long, default_value_t = 1000)]
    pub window: usize,
    /// Window step (< window).
    #[arg(long, default_value_t = 250)]
    pub step: usize,
    /// Clusters to cut the tree into.
    #[arg(long, default_value_t = 8)]
    pub clusters: usize,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args, Default)]
pub struct ViewArgs {
    /// Files to open; several open side by side. None: the embedded demo.
    pub files: Vec<PathBuf>,

    /// Self-test: wait until everything is loaded and one full frame is drawn, save the window
    /// as PNG to this path and exit (non-zero with a message on failure).
    #[arg(long, value_name = "PNG")]
    pub screenshot: Option<PathBuf>,

    /// Give up the screenshot after this many seconds.
    #[arg(long, default_value_t = 120, requires = "screenshot")]
    pub screenshot_timeout: u64,

    /// Initial window size in logical pixels, e.g. 1280x800.
    #[arg(long, value_parser = parse_size, default_value = "1280x800")]
    pub window_size: (u32, u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ViewKindArg {
    /// Allocation map: time × address, biased anti-aliasing, cushions (also `alloc-map`).
    #[value(name = "alloc", alias = "alloc-map")]
    AllocMap,
    /// Heap tree at one time point as a sunburst (root in the centre).
    Sunburst,
    /// Heap tree at one time point as an icicle (hierarchy left to right).
    Icicle,
    /// Heap trees at several time points side by side, with one stable layout.
    Timeline,
    /// Reference trace: radius = record index, angle = a circle-valued parameterization.
    Spiral,
    /// Reference trace: cycle members on a circle, pre-/post-amble inside/outside.
    Circular,
    /// Reference trace: the H1 persistence barcode.
    Barcode,
    /// Reference trace: classical MDS of the windows, coloured by θ (the paper's baseline).
    Projection,
    /// Dependence graph (IGV XML, Graal BGV, DOT): layered layout; --snapshot N, --profile, --diff-from.
    Graph,
    /// Samples on the hardware topology (radial; --hardware HW), or a topology file alone.
    Topology,
    /// Samples: total latency per source line and per data symbol.
    Offenders,
    /// Samples: one histogram per attribute side by side, the selection over the whole
    /// (--select, --axes, --strips, --cluster-attribute).
    Histograms,
    /// Samples: the histogram of one attribute (--histogram-attribute).
    Histogram,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The input file; `demo` renders the embedded demo.
    pub file: PathBuf,
    /// Only these processes of a multi-process recording: a pid, or a regular expression
    /// matched against the program name and the command line.
    #[arg(long, value_name = "PID|NAME-REGEX")]
    pub process: Option<String>,
    /// Which view to render.
    #[arg(long, value_enum, default_value = "alloc")]
    pub view: ViewKindArg,
    /// Output PNG.
    #[arg(long, short)]
    pub out: PathBuf,
    #[arg(long, default_value_t = 1280)]
    pub width: u32,
    #[arg(long, default_value_t = 800)]
    pub height: u32,
    /// Bias α of the anti-aliasing (lower shows thin blocks more).
    #[arg(long, default_value_t = 0.5)]
    pub alpha: f32,
    /// Cushion profile.
    #[arg(long, value_enum, default_value = "parabolic")]
    pub cushion: CushionArg,
    /// Time axis.
    #[arg(long, value_enum, default_value = "events")]
    pub time: TimeAxisArg,
    /// Block colours (default: thread when the trace has several, else call site).
    #[arg(long, value_enum)]
    pub color: Option<ColorByArg>,
    /// Time range shown, `T0..T1` on the chosen time axis (events or ns); default: the whole trace.
    #[arg(long, value_name = "T0..T1", value_parser = parse_u64_range)]
    pub range_time: Option<(u64, u64)>,
    /// Address range shown, `A0..A1` (hex with 0x or decimal); default: every used region.
    /// Both ends must lie inside used regions.
    #[arg(long, value_name = "A0..A1", value_parser = parse_u64_range)]
    pub range_addr: Option<(u64, u64)>,
    /// Which GPU to use (also MEMSCAPE_ADAPTER=cpu|gpu|auto).
    #[arg(long, value_enum)]
    pub adapter: Option<AdapterArg>,
    #[command(flatten)]
    pub alloc: AllocRenderArgs,
    #[command(flatten)]
    pub heap: HeapRenderArgs,
    #[command(flatten)]
    pub cycles: CycleRenderArgs,
    #[command(flatten)]
    pub graph: GraphRenderArgs,
    /// Graph view: a shipped filter profile (hotspot, llvm-cfg) or a profile TOML file.
    #[arg(long)]
    pub profile: Option<String>,
    /// Graph view: colour the differences from this snapshot (added, removed, changed).
    #[arg(long)]
    pub diff_from: Option<usize>,
    /// Samples views: the hardware topology (hwloc XML or MemAxes hardware.xml; default:
    /// hardware.xml beside the samples, else this machine).
    #[arg(long)]
    pub hardware: Option<PathBuf>,
    /// Topology view: colour by samples or cycles.
    #[arg(long, default_value = "cycles")]
    pub measure: String,
    #[command(flatten)]
    pub samples: SamplesRenderArgs,
}

/// Options of the samples views of `render` (topology, offenders, histograms, histogram): the
/// linked selection, the histograms' axes, window-score strips and cluster markers. The
/// clustering options mean what `memscape cluster`'s do.
#[derive(Debug, Args)]
pub struct SamplesRenderArgs {
    /// Samples views: select the samples with ATTR in LO..HI (repeatable; ranges combine with
    /// "and"; on a qualitative attribute, its values in the range).
    #[arg(long = "select", value_name = "ATTR=LO..HI")]
    pub select: Vec<String>,
    /// Samples views: select only the samples of this source line (as the offender chart
    /// names it, e.g. LULESH_OMP.cc:2035), as a click on its bar does.
    #[arg(long, value_name = "FILE:LINE")]
    pub select_line: Option<String>,
    /// Samples views: select only the samples of this data symbol.
    #[arg(long, value_name = "SYMBOL")]
    pub select_symbol: Option<String>,
    /// Histograms: the attributes shown, in this order (default: every attribute with more
    /// than one value, in file order).
    #[arg(long, value_delimiter = ',', value_name = "ATTR,…")]
    pub axes: Vec<String>,
    /// Histogram view: its attribute (default: --cluster-attribute, else latency).
    #[arg(long, value_name = "ATTR")]
    pub histogram_attribute: Option<String>,
    /// Histograms: bar lengths proportional to the counts, or to ln(1 + count).
    #[arg(long, value_enum, default_value = "linear")]
    pub bars: BarScaleArg,
    /// Histograms: bins of every quantitative axis (4–256; default 32, as in the GUI).
    #[arg(long, value_name = "N")]
    pub histogram_bins: Option<usize>,
    /// Histograms: a window-score strip along each axis, its attribute cut into N windows (0:
    /// none), scored by --cluster-metric at --cluster-depth.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub strips: usize,
    /// Histograms: cluster markers along this attribute (as `memscape cluster --attribute`).
    #[arg(long, value_name = "ATTR")]
    pub cluster_attribute: Option<String>,
    /// Strips and clusters: latency or imbalance (as `memscape cluster --metric`).
    #[arg(long, default_value = "latency")]
    pub cluster_metric: String,
    /// Strips and clusters: topology depth numa, l3, l2, l1, core, pu (as `memscape cluster
    /// --depth`).
    #[arg(long, default_value = "l1")]
    pub cluster_depth: String,
    /// Clusters: samples per window (as `memscape cluster --window`).
    #[arg(long, default_value_t = 1000)]
    pub cluster_window: usize,
    /// Clusters: window step, at most the window (as `memscape cluster --step`).
    #[arg(long, default_value_t = 250)]
    pub cluster_step: usize,
    /// Clusters: the tree cut into K clusters (as `memscape cluster --clusters`).
    #[arg(long, default_value_t = 8, value_name = "K")]
    pub clusters: usize,
    /// Clusters: expand the radial-topology glyph of cluster I (0-based, in attribute order),
    /// as hovering its marker does.
    #[arg(long, value_name = "I")]
    pub glyph: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BarScaleArg {
    Linear,
    Log,
}

/// Which records of a reference trace are analysed, and the window and threshold: shared by
/// `cycles` and the cycle views of `render`.
#[derive(Debug, Args)]
pub struct CycleSelectArgs {
    /// The traced executable, for symbols and the --function/--file filters.
    #[arg(long)]
    pub binary: Option<PathBuf>,
    /// Load base of a PIE binary (hex); detected from the trace by default.
    #[arg(long)]
    pub load_base: Option<String>,
    /// Keep records of this function (repeatable; needs --binary).
    #[arg(long)]
    pub function: Vec<String>,
    /// Keep records of this source file (suffix match, repeatable; needs --binary).
    #[arg(long = "file", id = "source_files")]
    pub source_files: Vec<String>,
    /// Keep records whose instruction address is in A..B (hex).
    #[arg(long)]
    pub ip_range: Option<String>,
    /// Keep records with index in A..B (indices into the trace's accesses).
    #[arg(long)]
    pub range: Option<String>,
    /// Keep every k-th record.
    #[arg(long, default_value_t = 1)]
    pub sample: usize,
    /// Records per window (points of the metric space).
    #[arg(long, default_value_t = 10)]
    pub window: usize,
    /// Rips threshold (default: the enclosing radius).
    #[arg(long)]
    pub threshold: Option<f32>,
    /// Above this many unique windows, analyse that many landmark windows instead (maxmin by
    /// Levenshtein distance: a level of detail that keeps cycles; the output says so and
    /// bounds the barcode's error).
    #[arg(long, value_name = "N", default_value_t = memscape_cycles::DEFAULT_MAX_POINTS)]
    pub max_windows: usize,
    /// Seconds the persistence of the windows may take before the analysis takes landmarks
    /// instead (half as many each time it takes longer); 0: no limit.
    #[arg(long, value_name = "SECONDS", default_value_t = memscape_cycles::DEFAULT_BUDGET_SECONDS)]
    pub time_budget: u32,
    /// Analyse N landmark windows, however few windows there are.
    #[arg(long, value_name = "N", conflicts_with = "full")]
    pub landmarks: Option<usize>,
    /// Analyse every unique window, however many (no level of detail).
    #[arg(long)]
    pub full: bool,
}

/// Cycle-view options of `render` (spiral, circular, barcode, projection): the analysis options
/// of `cycles`, plus which parameterizations to draw.
#[derive(Debug, Args)]
pub struct CycleRenderArgs {
    #[command(flatten)]
    pub select: CycleSelectArgs,
    /// Keep at most this many records after the filters (the first ones).
    #[arg(long)]
    pub max_records: Option<usize>,
    /// Parameterization drawn (0 = most persistent; at most 63).
    #[arg(long, default_value_t = 0, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..64))]
    pub param: usize,
    /// Morph towards this parameterization.
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..64))]
    pub morph_to: Option<usize>,
    /// Morph position, 0 (--param) to 1 (--morph-to).
    #[arg(long, default_value_t = 0.0)]
    pub t: f32,
    /// Colours of records: line, function, file, time or address.
    #[arg(long, value_enum, default_value = "line")]
    pub cycle_color: CycleColorArg,
    /// With --cycle-color line: draw this function's lines in one colour (repeatable; `*`:
    /// every function; `!NAME`: keep NAME's lines apart, e.g. `'*' '!matmul'`).
    #[arg(long, value_name = "FUNCTION")]
    pub collapse_function: Vec<String>,
    /// Spiral and circular views: draw isocontours of the density of the drawn points.
    #[arg(long)]
    pub contours: bool,
    /// Select every record on the source line of record N (as a click on it in the GUI): the
    /// other records are dimmed.
    #[arg(long, value_name = "N")]
    pub select_record: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CycleColorArg {
    Line,
    Function,
    File,
    Time,
    Address,
}

/// Graph-view options of `render` beyond `--snapshot`, `--profile` and `--diff-from`.
#[derive(Debug, Args)]
pub struct GraphRenderArgs {
    /// Graph view: snapshot B coloured by its differences from snapshot A (`A..B`, indices
    /// from 0; B may be below A).
    #[arg(long, value_name = "A..B", value_parser = parse_snapshot_pair, conflicts_with_all = ["diff_from", "snapshot"])]
    pub diff: Option<(usize, usize)>,
    /// Graph view, with a difference: only the changed nodes (and the ends of changed edges).
    #[arg(long)]
    pub changes_only: bool,
    /// Graph view: lay out the blocks (CFG basic blocks, DOT clusters) as boxes.
    #[arg(long)]
    pub blocks: bool,
    /// Graph view: outline the nodes matching `[property=]regex`; with --zoom, centre on the
    /// first.
    #[arg(long, value_name = "[PROPERTY=]REGEX")]
    pub search: Option<String>,
    /// Graph view: show only the nodes matching `[property=]regex` fully, their neighbours
    /// semi-transparent, nothing else (IGV's extraction).
    #[arg(long, value_name = "[PROPERTY=]REGEX")]
    pub focus: Option<String>,
    /// Graph view: magnification over the fitted picture (about the centre, or the first
    /// --search match).
    #[arg(long, default_value_t = 1.0)]
    pub zoom: f32,
    /// Graph view: draw the satellite (overview) inset with the visible part framed.
    #[arg(long)]
    pub satellite: bool,
}

/// Allocation-map options of `render` beyond α, cushion, colour, time axis and ranges.
#[derive(Debug, Args)]
pub struct AllocRenderArgs {
    /// Allocation map: what the picture holds, comma-separated. `main` alone: only the plot
    /// area (no axes, no margins; pixels map linearly onto --range-time × --range-addr); with
    /// `occupancy` and/or `context` the GUI's picture: axes, labels, legend, free bars, the
    /// occupancy bar under each bin (and the stacked bar of all bins), the context view.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "main")]
    pub panels: Vec<PanelArg>,
    /// Allocation map: one view per bin (address region, power-of-two size class, thread).
    #[arg(long, value_enum)]
    pub bins: Option<BinsArg>,
    /// Allocation map with --bins: `address` (bins side by side, each scaled to the same
    /// height: relative occupancy compares) or `time` (stacked on one time axis: activity
    /// compares).
    #[arg(long, value_enum, default_value = "address")]
    pub layout: LayoutArg,
    /// Allocation map: the occupancy bar's variant (with --panels …,occupancy).
    #[arg(long, value_enum, default_value = "flat")]
    pub occupancy: OccupancyArg,
    /// Allocation map: cushion cursors at these times (comma-separated, on the --time axis).
    #[arg(long, value_delimiter = ',')]
    pub cursors: Vec<u64>,
    /// Allocation map: opacity of the cushion cursors, 0..1.
    #[arg(long, default_value_t = 0.8)]
    pub cursor_opacity: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PanelArg {
    /// The map (one cell per bin).
    Main,
    /// Occupancy bars (per bin, and stacked when binned).
    Occupancy,
    /// The context view at the right.
    Context,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BinsArg {
    /// One bin per used address region.
    Region,
    /// One bin per power-of-two class of the requested size.
    Size,
    Thread,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LayoutArg {
    Address,
    Time,
}

/// The occupancy bar variants of Moreta & Telea.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OccupancyArg {
    /// Mean occupancy per column.
    Flat,
    /// Idle gaps (no allocation or free for at least 4 pixels) black.
    IdleBlack,
    /// Idle gaps drawn as plateau cushions.
    IdlePlateau,
    /// Idle gaps drawn as parabolic cushions.
    IdleParabolic,
    /// Every inter-event interval a plateau cushion, with the biased anti-aliasing: activity
    /// shows as cushion density.
    IntervalsPlateau,
    /// Every inter-event interval a parabolic cushion.
    IntervalsParabolic,
}

/// Heap-tree options of `render` (sunburst, icicle, timeline), as for `heaptree`.
#[derive(Debug, Args)]
pub struct HeapRenderArgs {
    /// Time point: wall ns for traces (events when they have no wall time), massif's time unit.
    #[arg(long, conflicts_with_all = ["snapshot", "peak"])]
    pub at: Option<u64>,
    /// Massif snapshot number; for graphs, the snapshot's index (from 0).
    #[arg(long, conflicts_with = "peak")]
    pub snapshot: Option<u64>,
    /// The heap peak.
    #[arg(long)]
    pub peak: bool,
    /// Grouping keys for traces, outermost first: thread,site,size,path,module.
    #[arg(long, default_value = "site")]
    pub group: String,
    /// Node size: bytes or objects.
    #[arg(long, default_value = "bytes")]
    pub metric: String,
    /// Levels below the root.
    #[arg(long, default_value_t = 2)]
    pub depth: usize,
    /// Drill down: show the subtree of the first group whose name contains this text.
    #[arg(long)]
    pub root: Option<String>,
    /// Timeline: number of time points side by side (evenly spaced).
    #[arg(long, default_value_t = 4)]
    pub points: usize,
    /// Timeline: these times instead (comma-separated, in the input's time unit: ns or events
    /// for traces, massif's time unit). Traces show the exact state at each time; massif the
    /// detailed snapshot at or before it (massif has no tree in between).
    #[arg(long, value_delimiter = ',')]
    pub times: Vec<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CushionArg {
    None,
    Parabolic,
    Plateau,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TimeAxisArg {
    /// Event index: spreads dense bursts.
    Events,
    /// Wall time: shows pauses.
    Wall,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorByArg {
    Thread,
    Site,
    Size,
    Lifetime,
    Waste,
    /// Time since allocation at the trace's end.
    Age,
    /// The bin (the address region without --bins).
    Bin,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AdapterArg {
    Auto,
    Cpu,
    Gpu,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// An allocation trace (`demo`, `demo:sqlite`: the embedded traces).
    pub file: PathBuf,
    /// Only these processes of a multi-process recording: a pid, or a regular expression
    /// matched against the program name and the command line.
    #[arg(long, value_name = "PID|NAME-REGEX")]
    pub process: Option<String>,
    #[command(flatten)]
    pub sites: SiteArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RenderTourArgs {
    /// The tour (TOML; see the README). Omit with --demo.
    #[arg(required_unless_present = "demo")]
    pub tour: Option<PathBuf>,
    /// The tour of the embedded demo.
    #[arg(long, conflicts_with = "tour")]
    pub demo: bool,
    /// Directory for frame_00000.png, frame_00001.png, …
    #[arg(long, short)]
    pub out: PathBuf,
    #[arg(long, default_value_t = 30.0)]
    pub fps: f32,
    #[arg(long, default_value_t = 1280)]
    pub width: u32,
    #[arg(long, default_value_t = 720)]
    pub height: u32,
    /// Also encode the frames into this video (needs ffmpeg).
    #[arg(long)]
    pub video: Option<PathBuf>,
    #[arg(long, value_enum)]
    pub adapter: Option<AdapterArg>,
}

#[derive(Debug, Args)]
pub struct PresentArgs {
    /// The tour (TOML). Omit with --demo.
    #[arg(required_unless_present = "demo")]
    pub tour: Option<PathBuf>,
    #[arg(long, conflicts_with = "tour")]
    pub demo: bool,
    #[arg(long, default_value_t = 30.0)]
    pub fps: f32,
    /// Start windowed rather than full screen.
    #[arg(long)]
    pub windowed: bool,
    /// Keys pressed for you once the window is up, one each time the step shown has finished
    /// its transition (comma-separated: right, left, space, home, p, 1–9): a scripted run.
    #[arg(long, value_delimiter = ',', value_name = "KEYS")]
    pub keys: Vec<String>,
    /// After the scripted keys, when the step shown has finished its transition, save the
    /// window as PNG to this path and exit (non-zero with a message on failure).
    #[arg(long, value_name = "PNG")]
    pub screenshot: Option<PathBuf>,
    /// Give up the screenshot after this many seconds.
    #[arg(long, default_value_t = 240)]
    pub screenshot_timeout: u64,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Directory to write the demo files into.
    pub dir: PathBuf,
}

fn parse_u64(s: &str) -> Result<u64, String> {
    let t = s.trim();
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse(),
    }
    .map_err(|e| format!("{s:?}: {e}"))
}

fn parse_u64_range(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("{s:?}: expected START..END"))?;
    let (a, b) = (parse_u64(a)?, parse_u64(b)?);
    if a >= b {
        return Err(format!("{s:?}: START must be below END"));
    }
    Ok((a, b))
}

fn parse_snapshot_pair(s: &str) -> Result<(usize, usize), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("{s:?}: expected A..B (two snapshot indices)"))?;
    let parse = |t: &str| {
        t.trim()
            .parse::<usize>()
            .map_err(|e| format!("{s:?}: {t:?}: {e}"))
    };
    let (a, b) = (parse(a)?, parse(b)?);
    if a == b {
        return Err(format!("{s:?}: the two snapshots must differ"));
    }
    Ok((a, b))
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("{s:?}: expected WIDTHxHEIGHT"))?;
    let w: u32 = w.trim().parse().map_err(|e| format!("{s:?}: width: {e}"))?;
    let h: u32 = h
        .trim()
        .parse()
        .map_err(|e| format!("{s:?}: height: {e}"))?;
    if !(100..=16384).contains(&w) || !(100..=16384).contains(&h) {
        return Err(format!("{s:?}: each side must be within 100..=16384"));
    }
    Ok((w, h))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn window_sizes_parse_and_reject_nonsense() {
        assert_eq!(parse_size("1280x800"), Ok((1280, 800)));
        assert!(parse_size("12x8").is_err());
        assert!(parse_size("wide").is_err());
        assert_eq!(parse_u64_range("0x10..0x20"), Ok((16, 32)));
        assert_eq!(parse_u64_range("5..7"), Ok((5, 7)));
        assert!(parse_u64_range("7..5").is_err());
        assert!(parse_u64_range("7").is_err());
    }
}
