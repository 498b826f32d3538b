//! The command line. `memscape --help` documents every subcommand.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use memscape_views::alloc_map::AllocMapSettings;
use memscape_views::cycles::CycleSettings;
use memscape_views::cycles::settings::CycleAnalysisSettings;
use memscape_views::graph::GraphSettings;
use memscape_views::heap_tree::HeapTreeSettings;
use memscape_views::samples::SamplesSettings;
use memscape_views::{ViewKind, ViewSettings};

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
    /// Two runs compared: per call site (or group) bytes and blocks in A and B, the change, and
    /// grown/shrunk/new/gone, at each run's time point (traces, massif, pprof, DHAT).
    Diff(DiffArgs),
    /// Aggregations of a Parquet dataset (`export --to parquet`) on the query engine: heap-size
    /// series and live heap by call site (traces); histograms, top offenders, resources and
    /// window scores (samples). Embedded DataFusion, or a Ballista cluster with --engine.
    Index(IndexArgs),
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
    Lod(LodArgs),
    /// Time the standard frames on this machine's GPU (allocation maps of synthetic traces by
    /// each path, the cycle morph, the demo tour's pacing) and print them beside the targets.
    Bench(BenchArgs),
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
    pub select: CycleAnalysisSettings,
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
    /// `64ns`, `1us` = 512 ns…); finer times make larger files (16 ns: ≈ 1.4× the default's on
    /// a clock that steps 6 ns), the event order is exact at any resolution.
    #[arg(long, default_value = "64ns", value_parser = memscape_record::parse_time_resolution)]
    pub time_resolution: u8,
    /// Watch the recording while the program runs: the GUI opens on it (allocation map, heap
    /// tree and heap-size curve growing several times a second) and ends on the finished file;
    /// without a display (or with `--no-window`), a running summary (processes, events, live
    /// heap) is printed 4 times a second.
    #[arg(long)]
    pub live: bool,
    /// With `--live`: print the running summary instead of opening the GUI.
    #[arg(long, requires = "live")]
    pub no_window: bool,
    /// With `--live`, self-test: once the program has ended and the finished file is drawn,
    /// save the window as PNG to this path and close it.
    #[arg(long, value_name = "PNG", requires = "live")]
    pub screenshot: Option<PathBuf>,
    /// With `--live`: initial window size in logical pixels (at least 800x560).
    #[arg(long, value_parser = parse_size, default_value = "1280x800")]
    pub window_size: (u32, u32),
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
    /// matched against the program names (the command lines when it matches no name).
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
    #[command(flatten)]
    pub time: HeapTimeArgs,
    #[command(flatten)]
    pub grouping: HeapGroupArgs,
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

/// Which time point of a heap a command looks at (`heaptree`, `export`, `diff`): one of them,
/// else each input's default (a trace's end, massif's peak snapshot, the last profile).
#[derive(Debug, Args)]
pub struct HeapTimeArgs {
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
}

/// Which processes a heap tree holds and how it groups them (`heaptree`, `diff`).
#[derive(Debug, Args)]
pub struct HeapGroupArgs {
    /// Only these processes of a multi-process recording: a pid, or a regular expression
    /// matched against the program names (the command lines when it matches no name).
    #[arg(long, value_name = "PID|NAME-REGEX")]
    pub process: Option<String>,
    /// Grouping keys for traces, outermost first: process, thread, line (= site: function and
    /// line), function, path (top-down), callers (bottom-up), module, size.
    #[arg(long, default_value = "line")]
    pub group: String,
    /// Invert call paths: `path` becomes `callers` (each site, then its callers outwards).
    #[arg(long)]
    pub bottom_up: bool,
}

/// `memscape export FILE --to pprof|collapsed [-o OUT]`, with `heaptree`'s time point,
/// grouping and measure options.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// An allocation trace, massif file, profile (pprof, DHAT, heap profile), or a directory of
    /// profiles taken over time.
    pub file: PathBuf,
    /// pprof (gzipped profile.proto), collapsed (`a;b;c bytes` lines), or parquet (a dataset
    /// directory of an allocation trace or samples; see the README's "Parquet datasets").
    #[arg(long)]
    pub to: String,
    /// Where to write; default: standard output (parquet: the dataset directory, required).
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Parquet: the host partition written (another host adds to the same directory).
    #[arg(long, default_value = "local")]
    pub host: String,
    /// Parquet: time windows the trace (or the samples' time range) is cut into.
    #[arg(long, default_value_t = 16)]
    pub windows: u64,
    #[command(flatten)]
    pub time: HeapTimeArgs,
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

/// `memscape diff A B`: two heap trees compared, with `heaptree`'s time point and grouping
/// options (each applied to both runs).
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The run compared against (an allocation trace, massif file, profile, or a directory of
    /// profiles).
    pub a: PathBuf,
    /// The run compared (same kinds as A).
    pub b: PathBuf,
    /// The time point, in each run (`--peak`: each at its own peak).
    #[command(flatten)]
    pub time: HeapTimeArgs,
    /// The processes and grouping, in both runs.
    #[command(flatten)]
    pub grouping: HeapGroupArgs,
    /// What decides grown/shrunk/new/gone and the order: bytes or objects.
    #[arg(long, default_value = "bytes")]
    pub metric: String,
    /// Profiles: the measure compared (see `heaptree --measure`).
    #[arg(long)]
    pub measure: Option<String>,
    /// Text: the sites listed (largest change first); JSON lists every site.
    #[arg(long, default_value_t = 25)]
    pub top: usize,
    #[command(flatten)]
    pub sites: SiteArgs,
    #[arg(long)]
    pub json: bool,
}

/// `memscape index DATASET/`: the engine's aggregations of a Parquet dataset, as JSON.
#[derive(Debug, Args)]
#[cfg_attr(not(feature = "engine"), allow(dead_code))]
pub struct IndexArgs {
    /// A dataset directory written by `memscape export --to parquet`.
    pub dataset: PathBuf,
    /// embedded (DataFusion in this process), ballista://HOST:PORT, or standalone[:N]
    /// (a Ballista scheduler and N executors in this process, on loopback).
    #[arg(long, default_value = "embedded")]
    pub engine: String,
    /// The host partition to aggregate (default: the only one).
    #[arg(long)]
    pub host: Option<String>,
    /// Traces: points of the heap-size series, evenly spaced over the events (and windows of
    /// the size-class bins: occupancy, live blocks, events and waste per bin).
    #[arg(long, default_value_t = 100)]
    pub points: usize,
    /// Traces: the live heap by call site after this many events (default: the peak).
    #[arg(long)]
    pub at_event: Option<u64>,
    /// Traces: also the allocation map's level-of-detail tiles (memscape-lod's levels: cells,
    /// buckets and blocks of each, computed by the engine).
    #[arg(long)]
    pub lod: bool,
    /// Samples: topology for per-resource totals and window scores.
    #[arg(long)]
    pub hardware: Option<PathBuf>,
    /// Samples: keep samples with ATTR in [LO, HI] (repeatable, all must hold).
    #[arg(long = "select", value_name = "ATTR=LO..HI")]
    pub select: Vec<String>,
    /// Samples: bins of quantitative histograms.
    #[arg(long, default_value_t = 32)]
    pub bins: usize,
    /// Samples: the attribute the window scores run along.
    #[arg(long, default_value = "time")]
    pub along: String,
    /// Samples: number of windows of the scores.
    #[arg(long, default_value_t = 16)]
    pub score_windows: usize,
    /// Samples: latency or imbalance.
    #[arg(long, default_value = "latency")]
    pub metric: String,
    /// Samples: the topology level scored (pu, core, l1, l2, l3, numa, machine).
    #[arg(long, default_value = "l1")]
    pub level: String,
    /// Where to write the JSON; default: standard output.
    #[arg(short, long)]
    pub out: Option<PathBuf>,
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

    /// Two runs compared in one difference pane (heap trees side by side and as a difference
    /// sunburst/icicle, allocation maps stacked); View ▸ Compare does the same for open files.
    #[arg(long, num_args = 2, value_names = ["A", "B"], alias = "compare")]
    pub diff: Vec<PathBuf>,

    /// Self-test: wait until everything is loaded and one full frame is drawn, save the window
    /// as PNG to this path and exit (non-zero with a message on failure).
    #[arg(long, value_name = "PNG")]
    pub screenshot: Option<PathBuf>,

    /// Give up the screenshot after this many seconds.
    #[arg(long, default_value_t = 120, requires = "screenshot")]
    pub screenshot_timeout: u64,

    /// Initial window size in logical pixels, e.g. 1280x800 (at least 800x560).
    #[arg(long, value_parser = parse_size, default_value = "1280x800")]
    pub window_size: (u32, u32),

    /// Start with the frame-statistics overlay shown (F3 toggles it): frame and CPU times,
    /// GPU time per pass, the path each allocation map took.
    #[arg(long)]
    pub frame_stats: bool,

    /// Follow a recording in progress: FILE is the `.msc` a `memscape record -o FILE` (started
    /// elsewhere) is writing, or a raw recording directory; the views grow while it runs and
    /// end on the finished file.
    #[arg(long)]
    pub live: bool,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The input file; `demo` renders the embedded demo.
    #[arg(required_unless_present = "compare")]
    pub file: Option<PathBuf>,
    /// Two runs compared instead of one file (`--diff A..B` is the graph's snapshot pair): `--view sunburst|icicle` draws the difference
    /// chart (sized by the larger run, coloured by the change), `timeline` A's and B's trees
    /// side by side, `alloc` the two allocation maps one above the other (time normalized);
    /// the heap options (`--peak`, `--at`, `--group`, `--metric`, `--depth`) apply to both.
    #[arg(long, num_args = 2, value_names = ["A", "B"], conflicts_with = "file")]
    pub compare: Vec<PathBuf>,
    /// Which view to render.
    #[arg(long, value_enum, default_value = "alloc")]
    pub view: ViewKind,
    /// Output image: PNG, or SVG when it ends in .svg (or with --format svg).
    #[arg(long, short)]
    pub out: PathBuf,
    /// Output format (default: from --out's extension, PNG unless .svg). SVG keeps shapes and
    /// text as vectors and embeds the allocation map and other GPU-only layers as images.
    #[arg(long, value_enum)]
    pub format: Option<ImageFormat>,
    #[arg(long, default_value_t = 1280)]
    pub width: u32,
    #[arg(long, default_value_t = 800)]
    pub height: u32,
    /// Which GPU to use (also MEMSCAPE_ADAPTER=cpu|gpu|auto).
    #[arg(long, value_enum)]
    pub adapter: Option<AdapterArg>,
    /// Also measure the frame: print its statistics as JSON on stdout, in place of the output's
    /// path (the image is still written to --out): GPU nanoseconds per pass (timestamp queries,
    /// where the adapter has them), wall milliseconds, the path each allocation map took with
    /// its blocks and size, and the adapter (name, backend, driver).
    #[arg(long)]
    pub stats: bool,
    /// A Parquet trace dataset's heap views (sunburst, icicle, timeline) are computed by the
    /// query engine: embedded (DataFusion in this process), ballista://HOST:PORT, or
    /// standalone[:N] (needs a memscape built with `--features engine`).
    #[arg(long, default_value = "embedded")]
    pub engine: String,
    // Each view's settings are its options (the settings' doc comments are their help).
    #[command(flatten)]
    pub alloc: AllocMapSettings,
    #[command(flatten)]
    pub heap: HeapTreeSettings,
    #[command(flatten)]
    pub cycles: CycleSettings,
    #[command(flatten)]
    pub graph: GraphSettings,
    #[command(flatten)]
    pub samples: SamplesSettings,
}

impl RenderArgs {
    /// The settings of the view asked for.
    pub fn settings(&self) -> ViewSettings {
        let mut settings = match ViewSettings::default_for(self.view) {
            ViewSettings::AllocMap(_) => ViewSettings::AllocMap(self.alloc.clone()),
            // `--process` is the allocation map's and the heap tree's.
            ViewSettings::HeapTree(_) => ViewSettings::HeapTree(HeapTreeSettings {
                process: self.alloc.process.clone(),
                ..self.heap.clone()
            }),
            ViewSettings::Cycles(_) => ViewSettings::Cycles(self.cycles.clone()),
            ViewSettings::Graph(_) => ViewSettings::Graph(GraphSettings {
                // `--snapshot` is the heap views' and the graph's.
                snapshot: usize::try_from(self.heap.snapshot.unwrap_or(0)).unwrap_or(usize::MAX),
                ..self.graph.clone()
            }),
            ViewSettings::Samples(_) => ViewSettings::Samples(self.samples.clone()),
        };
        settings.set_kind(self.view);
        settings
    }
}

/// What `memscape render` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImageFormat {
    Png,
    Svg,
}

impl ImageFormat {
    /// `format` if given, else SVG for a `.svg` path and PNG otherwise.
    pub fn of(format: Option<ImageFormat>, out: &std::path::Path) -> ImageFormat {
        format.unwrap_or_else(|| {
            let svg = out
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
            if svg {
                ImageFormat::Svg
            } else {
                ImageFormat::Png
            }
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AdapterArg {
    Auto,
    Cpu,
    Gpu,
}

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Any file memscape reads (allocation traces, massif, heap profiles, samples, topologies,
    /// reference traces, graphs), a directory of them, or `demo`, `demo:sqlite` (the embedded
    /// traces).
    pub file: PathBuf,
    /// Only these processes of a multi-process recording: a pid, or a regular expression
    /// matched against the program names (the command lines when it matches no name).
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
    /// Also write each step's picture as step_00.svg, step_01.svg, … (vectors and text, the
    /// allocation map embedded as an image; the caption as plain text): slides for papers.
    #[arg(long)]
    pub svg: bool,
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

    /// What `memscape render` draws without options is what a view's settings are by default
    /// (tours and panes start from those).
    #[test]
    fn render_defaults_are_the_settings_defaults() {
        for kind in ViewKind::ALL {
            let name = kind.name();
            let cli =
                Cli::parse_from(["memscape", "render", "f", "--out", "x.png", "--view", &name]);
            let Some(Command::Render(args)) = cli.command else {
                panic!("{name}: not a render command");
            };
            assert_eq!(args.settings(), ViewSettings::default_for(kind), "{name}");
        }
    }

    #[test]
    fn window_sizes_parse_and_reject_nonsense() {
        assert_eq!(parse_size("1280x800"), Ok((1280, 800)));
        assert!(parse_size("12x8").is_err());
        assert!(parse_size("wide").is_err());
    }
}

/// `memscape lod`: the level-of-detail index of a big trace.
#[derive(Debug, Args)]
pub struct LodArgs {
    #[command(subcommand)]
    pub command: LodCommand,
}

#[derive(Debug, Subcommand)]
pub enum LodCommand {
    /// Build the index beside TRACE (TRACE.COLORING.lod), or report that it is current.
    Build(LodBuildArgs),
    /// Draw the allocation map of TRACE from its index (built first when missing) to a PNG.
    Render(LodRenderArgs),
    /// Print TRACE's heap-size curve from its index (built first when missing): per column of
    /// time, the lowest, highest and last live bytes, tab-separated.
    Curve(LodCurveArgs),
}

#[derive(Debug, Args)]
pub struct LodCurveArgs {
    pub trace: PathBuf,
    /// Columns of the curve.
    #[arg(long, default_value_t = 100)]
    pub columns: usize,
    /// T0:T1 in events (default: the whole trace).
    #[arg(long)]
    pub window: Option<String>,
    #[arg(long, default_value = "thread")]
    pub coloring: String,
}

#[derive(Debug, Args)]
pub struct LodBuildArgs {
    pub trace: PathBuf,
    /// Block colouring the index holds.
    #[arg(long, default_value = "thread")]
    pub coloring: String,
    /// Rebuild even when the index is current.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct LodRenderArgs {
    pub trace: PathBuf,
    #[arg(short, long)]
    pub output: PathBuf,
    #[arg(long, default_value = "1920x1080")]
    pub size: String,
    /// Eq. 1's bias α.
    #[arg(long, default_value_t = 0.5)]
    pub alpha: f32,
    /// parabolic, plateau or none.
    #[arg(long, default_value = "parabolic")]
    pub cushion: String,
    /// T0:T1,A0:A1 in events and collapsed bytes, `*` for a whole axis (default: `*,*`).
    #[arg(long)]
    pub window: Option<String>,
    /// lod or exact (default: MEMSCAPE_ALLOC_MAP_PATH when it says one of them, else lod).
    #[arg(long)]
    pub path: Option<String>,
    #[arg(long, default_value = "thread")]
    pub coloring: String,
}

/// `memscape bench`: the standard frames, timed. Without options: 1,000,000 and 10,000,000
/// blocks at 1920x1080 and 3840x2160, every path, morphs of 100,000 and 1,000,000 records, the
/// demo tour at 1280x720 (minutes on a GPU, far longer on a software rasterizer: see --quick).
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// A run of seconds, even on lavapipe: 10,000 blocks at 320x180, a 10,000-record morph, 3
    /// frames per case, 10 tour frames. The options below override its choices.
    #[arg(long)]
    pub quick: bool,
    /// Allocation-map block counts, comma-separated (0: no allocation-map cases).
    #[arg(long, value_delimiter = ',')]
    pub blocks: Option<Vec<usize>>,
    /// Frame sizes WIDTHxHEIGHT, comma-separated (maps and morphs).
    #[arg(long, value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Option<Vec<(u32, u32)>>,
    /// Allocation-map paths, comma-separated: raster, dense (GPU), lod (memscape-lod on the CPU,
    /// and the same views on the GPU), lod-gpu (those views on the GPU alone).
    #[arg(long, value_delimiter = ',')]
    pub paths: Option<Vec<String>>,
    /// Morph record counts, comma-separated (0: no morph cases).
    #[arg(long, value_delimiter = ',')]
    pub records: Option<Vec<usize>>,
    /// Timed frames per case (after one untimed warm-up frame).
    #[arg(long)]
    pub frames: Option<usize>,
    /// The demo tour's frame size.
    #[arg(long, value_parser = parse_size)]
    pub tour_size: Option<(u32, u32)>,
    /// Stop the tour after this many new frames.
    #[arg(long)]
    pub tour_frames: Option<usize>,
    /// Leave the demo tour out.
    #[arg(long)]
    pub no_tour: bool,
    /// Print the report as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Where the lod path's synthetic trace and index are written and removed (default: the
    /// system's temporary directory).
    #[arg(long)]
    pub scratch: Option<PathBuf>,
    /// Which GPU to use (also MEMSCAPE_ADAPTER=cpu|gpu|auto).
    #[arg(long, value_enum)]
    pub adapter: Option<AdapterArg>,
}
