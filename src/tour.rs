//! Presentation tours: a TOML list of steps, each a view of a file with its settings and an
//! optional caption, reached by an eased transition. Everything numeric interpolates (α, the
//! allocation map's camera, the heap's time point, the morph parameter; between two states of
//! one graph file — snapshots, profiles, differences — the nodes glide from one layout to the
//! other, see [`Renderer::graph_scenes`]); what cannot (another view or file) cross-fades. `memscape render-tour` writes every frame as PNG through the same
//! headless code as `memscape render`; `memscape present` plays the same frames full screen.
//!
//! ```toml
//! [[step]]
//! file = "demo"                 # a path, `demo` (sqlite heaptrack) or `demo:sort` (lackey)
//! view = "alloc-map"            # any `memscape render --view` value
//! caption = "The **whole** heap of `sqlite3`"
//! alpha = 0.5
//!
//! [[step]]
//! duration = 1.5                # seconds of transition into this step
//! hold = 2.0                    # seconds shown after it (render-tour)
//! easing = "smooth"             # or "linear"
//! range_time = [40000, 80000]   # allocation map camera: time and address ranges
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Parser as _;
use memscape_render::{GpuContext, RgbaImage};

use crate::data::Dataset;

/// One step as written in the tour file; unset fields keep the previous step's value.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    pub file: Option<String>,
    pub view: Option<String>,
    pub caption: Option<String>,
    pub duration: Option<f32>,
    pub hold: Option<f32>,
    pub easing: Option<Easing>,
    // Allocation map.
    pub alpha: Option<f32>,
    pub cushion: Option<String>,
    pub color: Option<String>,
    pub time: Option<String>,
    pub range_time: Option<[u64; 2]>,
    pub range_addr: Option<[u64; 2]>,
    /// `main`, `occupancy`, `context`, comma-separated (`memscape render --panels`).
    pub panels: Option<String>,
    /// `none`, `region`, `size` or `thread`.
    pub bins: Option<String>,
    /// `address` or `time` (with bins).
    pub layout: Option<String>,
    /// The occupancy bar's variant (`memscape render --occupancy`).
    pub occupancy: Option<String>,
    /// Cushion cursors, on the step's time axis.
    pub cursors: Option<Vec<u64>>,
    pub cursor_opacity: Option<f32>,
    // Heap trees.
    pub at: Option<u64>,
    pub peak: Option<bool>,
    pub snapshot: Option<u64>,
    pub group: Option<String>,
    pub metric: Option<String>,
    pub depth: Option<usize>,
    pub root: Option<String>,
    // Cycles.
    pub range: Option<String>,
    pub param: Option<usize>,
    pub morph_to: Option<usize>,
    pub t: Option<f32>,
    pub cycle_color: Option<String>,
    /// The analysis: window width, sampling, ε, the traced binary and functions to keep.
    pub window: Option<usize>,
    pub sample: Option<usize>,
    pub threshold: Option<f32>,
    pub binary: Option<String>,
    pub functions: Option<Vec<String>>,
    /// Records on the source line of this record selected (others dimmed).
    pub select_record: Option<usize>,
    // Graphs and samples.
    pub profile: Option<String>,
    pub diff_from: Option<usize>,
    pub measure: Option<String>,
    // Samples: the linked selection and the histograms (`memscape render` options of the same
    // names). Ranges of the same attributes glide between steps.
    pub select: Option<Vec<String>>,
    pub select_line: Option<String>,
    pub select_symbol: Option<String>,
    /// Histogram axes, comma-separated.
    pub axes: Option<String>,
    pub histogram_attribute: Option<String>,
    /// Bins of every quantitative histogram axis.
    pub histogram_bins: Option<usize>,
    pub strips: Option<usize>,
    pub cluster_attribute: Option<String>,
    pub cluster_metric: Option<String>,
    pub cluster_depth: Option<String>,
    pub clusters: Option<usize>,
    pub glyph: Option<usize>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Easing {
    Linear,
    #[default]
    Smooth,
}

impl Easing {
    pub fn apply(self, u: f32) -> f32 {
        let u = u.clamp(0.0, 1.0);
        match self {
            Easing::Linear => u,
            Easing::Smooth => crate::views::picture::ease(u),
        }
    }
}

#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TourFile {
    #[serde(rename = "step")]
    pub steps: Vec<StepSpec>,
}

/// A step with every field resolved (inherited from the steps before it).
pub type State = StepSpec;

/// Appends `step` to the tour file at `path` (created if missing) as a `[[step]]` table.
pub fn append_step(path: &Path, step: &StepSpec) -> anyhow::Result<()> {
    #[derive(serde::Serialize)]
    struct One<'a> {
        step: [&'a StepSpec; 1],
    }
    let text = toml::to_string(&One { step: [step] })
        .context("internal: a tour step that does not serialize")?;
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("{}: cannot open the tour for appending", path.display()))?;
    writeln!(file, "\n{}", text.trim_end())
        .with_context(|| format!("{}: cannot write the tour", path.display()))?;
    Ok(())
}

/// The demo tour, over the embedded demo files.
pub const DEMO_TOUR: &str = include_str!("../assets/demo/tour.toml");

/// Parses a tour; `source` names it in errors. Resolves inheritance: each step starts from the
/// previous step's state (the first from nothing) and must end with a file and a view.
pub fn parse(text: &str, source: &str) -> anyhow::Result<Vec<State>> {
    let file: TourFile =
        toml::from_str(text).with_context(|| format!("{source}: not a valid tour file"))?;
    anyhow::ensure!(!file.steps.is_empty(), "{source}: the tour has no [[step]]");
    let mut states = Vec::with_capacity(file.steps.len());
    let mut current = State::default();
    for (i, step) in file.steps.into_iter().enumerate() {
        let file_changed = step.file.is_some() && step.file != current.file;
        let view_changed = step.view.is_some() && step.view != current.view;
        if file_changed || view_changed {
            // A different picture: its settings start afresh, the caption too.
            current = State {
                file: current.file.clone(),
                view: current.view.clone(),
                ..State::default()
            };
        }
        current.caption = None;
        current.duration = None;
        current.hold = None;
        current.easing = None;
        merge(&mut current, step);
        anyhow::ensure!(
            current.file.is_some() && current.view.is_some(),
            "{source}: step {} has no file or view (the first step must name both)",
            i + 1
        );
        states.push(current.clone());
    }
    Ok(states)
}

fn merge(into: &mut State, step: StepSpec) {
    // `at`, `peak` and `snapshot` each choose the time point: a step that sets one of them
    // does not inherit the others.
    if step.at.is_some() || step.peak == Some(true) || step.snapshot.is_some() {
        into.at = None;
        into.peak = None;
        into.snapshot = None;
    }
    // Each bin has its own address axis: a step that bins the map does not inherit an address
    // range.
    if step.bins.as_deref().is_some_and(|b| b != "none") {
        into.range_addr = None;
    }
    macro_rules! take {
        ($($f:ident),*) => { $( if step.$f.is_some() { into.$f = step.$f.clone(); } )* };
    }
    take!(
        file,
        view,
        caption,
        duration,
        hold,
        easing,
        alpha,
        cushion,
        color,
        time,
        range_time,
        range_addr,
        panels,
        bins,
        layout,
        occupancy,
        cursors,
        cursor_opacity,
        at,
        peak,
        snapshot,
        group,
        metric,
        depth,
        root,
        range,
        param,
        morph_to,
        t,
        cycle_color,
        window,
        sample,
        threshold,
        binary,
        functions,
        select_record,
        profile,
        diff_from,
        measure,
        select,
        select_line,
        select_symbol,
        axes,
        histogram_attribute,
        histogram_bins,
        strips,
        cluster_attribute,
        cluster_metric,
        cluster_depth,
        clusters,
        glyph
    );
}

fn lerp(a: f32, b: f32, u: f32) -> f32 {
    a + (b - a) * u
}

fn lerp_u64(a: u64, b: u64, u: f32) -> u64 {
    (a as f64 + (b as f64 - a as f64) * f64::from(u))
        .round()
        .max(0.0) as u64
}

/// Whether two states show the same picture (same file and view) and so can be interpolated
/// rather than cross-faded.
pub fn same_picture(a: &State, b: &State) -> bool {
    a.file == b.file
        && a.view == b.view
        && a.param == b.param
        && a.morph_to == b.morph_to
        && a.group == b.group
        && a.root == b.root
        && a.range == b.range
        && a.panels == b.panels
        && a.bins == b.bins
        && a.layout == b.layout
        && a.window == b.window
        && a.sample == b.sample
        && a.threshold == b.threshold
        && a.binary == b.binary
        && a.functions == b.functions
        && a.select_record == b.select_record
        && a.select_line == b.select_line
        && a.select_symbol == b.select_symbol
        && select_attributes(a) == select_attributes(b)
        && a.axes == b.axes
        && a.histogram_attribute == b.histogram_attribute
        && a.histogram_bins == b.histogram_bins
        && a.cluster_attribute == b.cluster_attribute
        && a.cluster_metric == b.cluster_metric
        && a.cluster_depth == b.cluster_depth
        && a.clusters == b.clusters
        && a.glyph == b.glyph
}

/// The attributes a state's `select` ranges are on, in order.
fn select_attributes(state: &State) -> Vec<String> {
    state
        .select
        .iter()
        .flatten()
        .map(|r| {
            r.split_once('=')
                .map_or(r.as_str(), |(a, _)| a)
                .trim()
                .to_owned()
        })
        .collect()
}

/// `ATTR=LO..HI` between two ranges of one attribute (open ends stay open).
fn interpolate_select(a: &str, b: &str, u: f32) -> Option<String> {
    let (x, y) = (
        memscape_samples::RangeSpec::parse(a).ok()?,
        memscape_samples::RangeSpec::parse(b).ok()?,
    );
    if x.attribute != y.attribute {
        return None;
    }
    let mix = |p: Option<f64>, q: Option<f64>| match (p, q) {
        (Some(p), Some(q)) => Some(p + (q - p) * f64::from(u)),
        _ => q,
    };
    let show = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
    Some(format!(
        "{}={}..{}",
        y.attribute,
        show(mix(x.lo, y.lo)),
        show(mix(x.hi, y.hi))
    ))
}

/// The state between `a` and `b` at eased position `u` (only when [`same_picture`]), with
/// address ranges interpolated on the raw address axis.
pub fn interpolate(a: &State, b: &State, u: f32) -> State {
    interpolate_on(a, b, u, &RawAddresses)
}

/// How the allocation map's address axis is laid out, for interpolating address ranges where
/// the picture is linear: on the collapsed axis (regions concatenated), not across the gaps of
/// the 64-bit address space.
pub trait AddressAxis {
    /// The position of a real address on the axis.
    fn to_axis(&self, address: u64) -> u64;
    /// The real address at an axis position (the nearest used one).
    fn to_address(&self, position: u64) -> u64;
}

/// Addresses as they are (no collapsing).
pub struct RawAddresses;

impl AddressAxis for RawAddresses {
    fn to_axis(&self, address: u64) -> u64 {
        address
    }
    fn to_address(&self, position: u64) -> u64 {
        position
    }
}

impl AddressAxis for crate::scene::AllocScene {
    fn to_axis(&self, address: u64) -> u64 {
        // Inside a region: its collapsed position; in a gap: the start of the next region.
        let next = self.regions.partition_point(|r| r.end <= address);
        match self.regions.get(next) {
            Some(r) => r.collapsed_start + address.saturating_sub(r.start),
            None => self.collapsed_extent,
        }
    }
    fn to_address(&self, position: u64) -> u64 {
        // In a separator between regions: the last byte of the region below it.
        let i = self
            .regions
            .partition_point(|r| r.collapsed_start <= position)
            .saturating_sub(1);
        match self.regions.get(i) {
            Some(r) => {
                r.start + (position - r.collapsed_start.min(position)).min(r.end - r.start - 1)
            }
            None => position,
        }
    }
}

/// [`interpolate`] with address ranges interpolated on `axis`. Time and address ranges move as
/// a zoom: the width geometrically (a constant zoom speed, however deep the zoom) and the
/// centre in proportion to the change of width, so that what the zoom goes to stays in view.
pub fn interpolate_on(a: &State, b: &State, u: f32, axis: &dyn AddressAxis) -> State {
    let mut s = b.clone();
    if let (Some(x), Some(y)) = (a.alpha, b.alpha) {
        s.alpha = Some(lerp(x, y, u));
    }
    if let (Some(x), Some(y)) = (a.t, b.t) {
        s.t = Some(lerp(x, y, u));
    }
    if let (Some(x), Some(y)) = (a.cursor_opacity, b.cursor_opacity) {
        s.cursor_opacity = Some(lerp(x, y, u));
    }
    if let (Some(x), Some(y)) = (&a.cursors, &b.cursors)
        && x.len() == y.len()
    {
        // As many cursors before as after: each glides to its new time.
        s.cursors = Some(x.iter().zip(y).map(|(&p, &q)| lerp_u64(p, q, u)).collect());
    }
    if let (Some(x), Some(y)) = (a.at, b.at) {
        s.at = Some(lerp_u64(x, y, u));
    }
    if let (Some(x), Some(y)) = (&a.select, &b.select)
        && x.len() == y.len()
    {
        let glided: Option<Vec<String>> = x
            .iter()
            .zip(y)
            .map(|(p, q)| interpolate_select(p, q, u))
            .collect();
        if let Some(glided) = glided {
            s.select = Some(glided);
        }
    }
    if let (Some(x), Some(y)) = (a.range_time, b.range_time) {
        s.range_time = Some(zoom_between(x, y, u));
    }
    if let (Some(x), Some(y)) = (a.range_addr, b.range_addr) {
        let on_axis = |r: [u64; 2]| [axis.to_axis(r[0]), axis.to_axis(r[1])];
        let r = zoom_between(on_axis(x), on_axis(y), u);
        s.range_addr = Some([axis.to_address(r[0]), axis.to_address(r[1])]);
    }
    s
}

/// The range between `a` and `b` at `u` as a zoom moves it (see [`interpolate_on`]).
fn zoom_between(a: [u64; 2], b: [u64; 2], u: f32) -> [u64; 2] {
    let u = f64::from(u.clamp(0.0, 1.0));
    let width = |r: [u64; 2]| (r[1].saturating_sub(r[0]) as f64).max(1.0);
    let centre = |r: [u64; 2]| (r[0] as f64 + r[1] as f64) / 2.0;
    let (wa, wb) = (width(a), width(b));
    let w = wa.powf(1.0 - u) * wb.powf(u);
    // The share of the zoom done so far (by width), which also moves the centre; a pure pan
    // (equal widths) moves linearly.
    let progress = if (wa - wb).abs() > 0.5 {
        ((wa - w) / (wa - wb)).clamp(0.0, 1.0)
    } else {
        u
    };
    let c = centre(a) + (centre(b) - centre(a)) * progress;
    let to_u64 = |v: f64| v.round().max(0.0) as u64;
    [to_u64(c - w / 2.0), to_u64(c + w / 2.0)]
}

/// The `memscape render` arguments of a state (parsed by the same CLI definition).
pub fn render_args(
    state: &State,
    width: u32,
    height: u32,
) -> anyhow::Result<crate::cli::RenderArgs> {
    let mut argv: Vec<String> = vec!["memscape".into(), "render".into()];
    argv.push(state.file.clone().unwrap_or_default());
    let mut opt = |name: &str, value: Option<String>| {
        if let Some(v) = value {
            argv.push(format!("--{name}"));
            argv.push(v);
        }
    };
    opt("view", state.view.clone());
    opt("out", Some("-".into()));
    opt("width", Some(width.to_string()));
    opt("height", Some(height.to_string()));
    opt("alpha", state.alpha.map(|v| v.to_string()));
    opt("cushion", state.cushion.clone());
    opt("color", state.color.clone());
    opt("time", state.time.clone());
    opt(
        "range-time",
        state.range_time.map(|r| format!("{}..{}", r[0], r[1])),
    );
    opt(
        "range-addr",
        state
            .range_addr
            .map(|r| format!("{:#x}..{:#x}", r[0], r[1])),
    );
    opt("panels", state.panels.clone());
    opt("bins", state.bins.clone().filter(|b| b != "none"));
    opt("layout", state.layout.clone());
    opt("occupancy", state.occupancy.clone());
    opt(
        "cursors",
        state
            .cursors
            .as_ref()
            .filter(|c| !c.is_empty())
            .map(|c| c.iter().map(u64::to_string).collect::<Vec<_>>().join(",")),
    );
    opt(
        "cursor-opacity",
        state.cursor_opacity.map(|v| v.to_string()),
    );
    opt("at", state.at.map(|v| v.to_string()));
    opt("snapshot", state.snapshot.map(|v| v.to_string()));
    opt("group", state.group.clone());
    opt("metric", state.metric.clone());
    opt("depth", state.depth.map(|v| v.to_string()));
    opt("root", state.root.clone());
    opt("range", state.range.clone());
    opt("param", state.param.map(|v| v.to_string()));
    opt("morph-to", state.morph_to.map(|v| v.to_string()));
    opt("t", state.t.map(|v| v.to_string()));
    opt("cycle-color", state.cycle_color.clone());
    opt("window", state.window.map(|v| v.to_string()));
    opt("sample", state.sample.map(|v| v.to_string()));
    opt("threshold", state.threshold.map(|v| v.to_string()));
    opt("binary", state.binary.clone());
    for function in state.functions.iter().flatten() {
        opt("function", Some(function.clone()));
    }
    opt("select-record", state.select_record.map(|v| v.to_string()));
    opt("profile", state.profile.clone());
    opt("diff-from", state.diff_from.map(|v| v.to_string()));
    opt("measure", state.measure.clone());
    for range in state.select.iter().flatten() {
        opt("select", Some(range.clone()));
    }
    opt("select-line", state.select_line.clone());
    opt("select-symbol", state.select_symbol.clone());
    opt("axes", state.axes.clone());
    opt("histogram-attribute", state.histogram_attribute.clone());
    opt(
        "histogram-bins",
        state.histogram_bins.map(|v| v.to_string()),
    );
    opt("strips", state.strips.map(|v| v.to_string()));
    opt("cluster-attribute", state.cluster_attribute.clone());
    opt("cluster-metric", state.cluster_metric.clone());
    opt("cluster-depth", state.cluster_depth.clone());
    opt("clusters", state.clusters.map(|v| v.to_string()));
    opt("glyph", state.glyph.map(|v| v.to_string()));
    if state.peak == Some(true) {
        argv.push("--peak".into());
    }
    let cli = crate::cli::Cli::try_parse_from(&argv)
        .map_err(|e| anyhow::anyhow!("tour step {:?}: {e}", state.view))?;
    match cli.command {
        Some(crate::cli::Command::Render(args)) => Ok(*args),
        _ => anyhow::bail!("internal: tour arguments did not parse as render"),
    }
}

/// Renders states to images, keeping each file loaded once.
pub struct Renderer {
    ctx: GpuContext,
    datasets: HashMap<String, Dataset>,
    base_dir: PathBuf,
    pub width: u32,
    pub height: u32,
}

impl Renderer {
    pub fn new(ctx: GpuContext, base_dir: &Path, width: u32, height: u32) -> Self {
        Self {
            ctx,
            datasets: HashMap::new(),
            base_dir: base_dir.to_path_buf(),
            width,
            height,
        }
    }

    fn dataset(&mut self, file: &str) -> anyhow::Result<&Dataset> {
        if !self.datasets.contains_key(file) {
            let path = if file.starts_with("demo") || Path::new(file).is_absolute() {
                PathBuf::from(file)
            } else {
                self.base_dir.join(file)
            };
            let d = crate::commands::load_for_render(&path)?;
            self.datasets.insert(file.to_owned(), d);
        }
        self.datasets.get(file).context("internal: dataset cache")
    }

    /// The picture of one state, caption included.
    pub fn render(&mut self, state: &State) -> anyhow::Result<RgbaImage> {
        let file = state.file.clone().unwrap_or_default();
        let args = render_args(state, self.width, self.height)?;
        // Borrow the dataset and the context together.
        self.dataset(&file)?;
        let dataset = self
            .datasets
            .get(&file)
            .context("internal: dataset cache")?;
        let image = crate::commands::render_dataset(&self.ctx, dataset, &args)?;
        self.caption(&image, state.caption.as_deref())
    }

    /// The scenes of two states of the same graph file (another snapshot, profile or
    /// difference), each exactly as `memscape render` draws it, for a transition in which
    /// nodes glide ([`crate::commands::render_graph::picture_between`]).
    pub fn graph_scenes(
        &mut self,
        a: &State,
        b: &State,
    ) -> anyhow::Result<(
        crate::commands::render_graph::GraphScene,
        crate::commands::render_graph::GraphScene,
    )> {
        let file = b.file.clone().unwrap_or_default();
        anyhow::ensure!(
            a.file == b.file,
            "internal: a graph transition between two files"
        );
        let (args_a, args_b) = (
            render_args(a, self.width, self.height)?,
            render_args(b, self.width, self.height)?,
        );
        self.dataset(&file)?;
        let dataset = self
            .datasets
            .get(&file)
            .context("internal: dataset cache")?;
        Ok((
            crate::commands::render_graph::scene(dataset, &args_a)?,
            crate::commands::render_graph::scene(dataset, &args_b)?,
        ))
    }

    /// The frame `u` (eased) of the way between two graph scenes, without caption.
    pub fn graph_between(
        &self,
        scenes: &(
            crate::commands::render_graph::GraphScene,
            crate::commands::render_graph::GraphScene,
        ),
        u: f32,
    ) -> anyhow::Result<RgbaImage> {
        let picture = crate::commands::render_graph::picture_between(&scenes.0, &scenes.1, u);
        crate::commands::render_graph::paint(&self.ctx, &picture, self.width, self.height)
    }

    /// [`interpolate_on`] the address axis of the states' dataset (collapsed regions for an
    /// allocation trace with addresses).
    pub fn interpolate(&mut self, a: &State, b: &State, u: f32) -> anyhow::Result<State> {
        let file = b.file.clone().unwrap_or_default();
        let dataset = self.dataset(&file)?;
        let scene = dataset.alloc_trace().and_then(|t| t.scene.as_ref());
        Ok(match scene {
            Some(scene) => interpolate_on(a, b, u, scene),
            None => interpolate(a, b, u),
        })
    }

    /// `image` with `caption` drawn over it (unchanged without one).
    pub fn caption(&self, image: &RgbaImage, caption: Option<&str>) -> anyhow::Result<RgbaImage> {
        match caption {
            Some(text) => crate::headless::caption_over(&self.ctx, image, text),
            None => Ok(image.clone()),
        }
    }
}

/// Frames of the whole tour: for each step, its transition (none for the first) then its hold.
/// Calls `emit` with (frame index, step index, image).
pub fn render_frames(
    renderer: &mut Renderer,
    states: &[State],
    fps: f32,
    emit: &mut dyn FnMut(usize, usize, &RgbaImage) -> anyhow::Result<()>,
) -> anyhow::Result<usize> {
    let mut frame = 0usize;
    for (i, state) in states.iter().enumerate() {
        let end = renderer.render(state)?;
        if i > 0 {
            let prev = &states[i - 1];
            let n = frames_of(state.duration.unwrap_or(1.0), fps);
            let easing = state.easing.unwrap_or_default();
            // Cross-fade endpoints are rendered once.
            let start = if same_picture(prev, state) {
                None
            } else {
                Some(renderer.render(prev)?)
            };
            // Two states of one graph: the layouts are blended, not the images.
            let graph = if start.is_none() && state.view.as_deref() == Some("graph") {
                Some(renderer.graph_scenes(prev, state)?)
            } else {
                None
            };
            for k in 1..=n {
                let u = easing.apply(k as f32 / n as f32);
                let image = match &start {
                    None => {
                        if k == n {
                            end.clone()
                        } else {
                            let plain = match &graph {
                                Some(scenes) => renderer.graph_between(scenes, u)?,
                                None => {
                                    let mut s = renderer.interpolate(prev, state, u)?;
                                    s.caption = None;
                                    renderer.render(&s)?
                                }
                            };
                            // Captions cross-fade rather than switch.
                            let from = renderer.caption(&plain, prev.caption.as_deref())?;
                            let to = renderer.caption(&plain, state.caption.as_deref())?;
                            crossfade(&from, &to, u)
                        }
                    }
                    Some(a) => crossfade(a, &end, u),
                };
                emit(frame, i, &image)?;
                frame += 1;
            }
        }
        for _ in 0..frames_of(state.hold.unwrap_or(2.0), fps).max(1) {
            emit(frame, i, &end)?;
            frame += 1;
        }
    }
    Ok(frame)
}

/// Frames for `seconds` at `fps` (at least one).
pub fn frames_of(seconds: f32, fps: f32) -> usize {
    ((seconds.max(0.0) * fps).round() as usize).max(1)
}

/// Total frames a tour renders to.
pub fn frame_count(states: &[State], fps: f32) -> usize {
    states
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let transition = if i > 0 {
                frames_of(s.duration.unwrap_or(1.0), fps)
            } else {
                0
            };
            transition + frames_of(s.hold.unwrap_or(2.0), fps).max(1)
        })
        .sum()
}

/// Pixelwise blend of two images of the same size.
pub fn crossfade(a: &RgbaImage, b: &RgbaImage, u: f32) -> RgbaImage {
    let mut out = b.clone();
    if a.width != b.width || a.height != b.height {
        return out;
    }
    for (o, (x, y)) in out.pixels.iter_mut().zip(a.pixels.iter().zip(&b.pixels)) {
        *o = (f32::from(*x) + (f32::from(*y) - f32::from(*x)) * u).round() as u8;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_tour_parses_with_inheritance() {
        let states = parse(DEMO_TOUR, "demo").unwrap();
        assert_eq!(states.len(), 14);
        // Step 2 keeps the file, view, colours, time axis and camera of step 1 and moves α.
        assert_eq!(states[1].file.as_deref(), Some("demo"));
        assert_eq!(states[1].view.as_deref(), Some("alloc-map"));
        assert_eq!(states[1].color.as_deref(), Some("thread"));
        assert_eq!(states[1].time.as_deref(), Some("wall"));
        assert_eq!(states[1].range_time, states[0].range_time);
        assert_eq!(states[1].alpha, Some(0.12));
        assert!(same_picture(&states[0], &states[1]));
        assert_eq!(interpolate(&states[1], &states[2], 0.5).alpha, Some(0.56));
        // The zoom keeps the colours of the step before and moves both ranges.
        assert_eq!(states[5].color.as_deref(), Some("size"));
        assert_eq!(states[5].range_time, Some([92_952_247, 93_392_247]));
        assert!(same_picture(&states[4], &states[5]));
        // Binning drops the zoom's address range (bins have their own axes), keeps its view.
        assert_eq!(states[6].bins.as_deref(), Some("thread"));
        assert_eq!(states[6].range_addr, None);
        assert_eq!(states[6].cursors, Some(vec![93_312_247]));
        assert!(!same_picture(&states[5], &states[6]));
        render_args(&states[6], 64, 64).unwrap();
        // A new view starts afresh: the map's colours do not leak into the sunburst.
        assert_eq!(states[7].view.as_deref(), Some("sunburst"));
        assert_eq!(
            (states[7].color.as_deref(), states[7].range_time),
            (None, None)
        );
        assert_eq!(states[7].peak, Some(true));
        // Choosing a time point drops the inherited peak; time travel interpolates `at`.
        assert_eq!((states[8].peak, states[8].at), (None, Some(15_000_000)));
        assert!(same_picture(&states[8], &states[9]));
        assert_eq!(
            interpolate(&states[8], &states[9], 0.5).at,
            Some(90_465_000)
        );
        // The morph only moves t: it interpolates with the step before.
        assert!(same_picture(&states[10], &states[11]));
        assert_eq!(interpolate(&states[10], &states[11], 0.25).t, Some(0.125));
        // The graph difference keeps the file and view of the step before.
        assert_eq!(states[13].file.as_deref(), Some("demo:cfg"));
        assert_eq!(
            (states[13].snapshot, states[13].diff_from),
            (Some(3), Some(0))
        );
        assert_eq!(
            frame_count(&states, 10.0),
            25 + (15 + 15)
                + (15 + 15)
                + (10 + 20)
                + (10 + 20)
                + (30 + 25)
                + (10 + 30)
                + (10 + 20)
                + (10 + 10)
                + (30 + 20)
                + (10 + 15)
                + (20 + 20)
                + (10 + 20)
                + (10 + 25)
        );
    }

    #[test]
    fn recorded_steps_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tour.toml");
        let step = StepSpec {
            file: Some("/data/x.raw".into()),
            view: Some("alloc-map".into()),
            alpha: Some(0.75),
            range_time: Some([10, 20]),
            caption: Some("a **b** `c`".into()),
            ..Default::default()
        };
        append_step(&path, &step).unwrap();
        let second = StepSpec {
            view: Some("sunburst".into()),
            peak: Some(true),
            ..Default::default()
        };
        append_step(&path, &second).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("hold"), "unset fields are left out:\n{text}");
        let states = parse(&text, "tour.toml").unwrap();
        assert_eq!(states.len(), 2);
        assert_eq!(states[0], step);
        assert_eq!(states[1].file.as_deref(), Some("/data/x.raw"));
        assert_eq!(states[1].peak, Some(true));
    }

    #[test]
    fn ranges_zoom_at_a_constant_speed_and_keep_the_target_in_view() {
        let (a, b) = ([0u64, 1_000_000], [400_000u64, 401_000]);
        assert_eq!(zoom_between(a, b, 0.0), a);
        assert_eq!(zoom_between(a, b, 1.0), b);
        let width = |r: [u64; 2]| (r[1] - r[0]) as f64;
        // Geometric: halfway through, the width is the geometric mean (31,623), not the
        // arithmetic one (500,500).
        let mid = zoom_between(a, b, 0.5);
        assert!((width(mid) - 31_623.0).abs() < 2.0, "{mid:?}");
        let mut previous = width(a);
        for k in 1..=20 {
            let r = zoom_between(a, b, k as f32 / 20.0);
            // The target stays inside the view all the way in, and each step zooms by the
            // same factor.
            assert!(r[0] <= b[0] && r[1] >= b[1], "step {k}: {r:?}");
            let factor = previous / width(r);
            assert!((factor - 1000f64.powf(1.0 / 20.0)).abs() < 0.01, "{factor}");
            previous = width(r);
        }
        // A pan at one width moves linearly.
        assert_eq!(zoom_between([0, 100], [1000, 1100], 0.25), [250, 350]);
    }

    #[test]
    fn address_ranges_interpolate_on_the_collapsed_axis() {
        let demo = crate::demo::by_name("demo").unwrap();
        let dataset = crate::data::load(&demo.source(), &|_, _| {}).unwrap();
        let scene = dataset.alloc_trace().unwrap().scene.as_ref().unwrap();
        assert!(scene.regions.len() >= 2);
        for r in &scene.regions {
            for address in [r.start, r.start + (r.end - r.start) / 3, r.end - 1] {
                let y = scene.to_axis(address);
                assert_eq!(scene.collapse(address), Some(y));
                assert_eq!(scene.to_address(y), address);
            }
        }
        // Between two regions (a separator on the axis): the last byte of the lower region.
        let (low, high) = (scene.regions[0], scene.regions[1]);
        assert_eq!(scene.to_axis(low.end + 1), high.collapsed_start);
        let separator = low.collapsed_start + (low.end - low.start) + 1;
        assert!(separator < high.collapsed_start);
        assert_eq!(scene.to_address(separator), low.end - 1);
        // From the whole trace to the first region: every intermediate range stays inside
        // used regions (the render accepts it) and shrinks steadily on the axis.
        let whole = [
            scene.regions[0].start,
            scene.regions.last().unwrap().end - 1,
        ];
        let first = [low.start, low.end - 1];
        let a = State {
            range_addr: Some(whole),
            ..State::default()
        };
        let b = State {
            range_addr: Some(first),
            ..State::default()
        };
        let mut previous = u64::MAX;
        for k in 0..=10 {
            let r = interpolate_on(&a, &b, k as f32 / 10.0, scene)
                .range_addr
                .unwrap();
            let (y0, y1) = (scene.collapse(r[0]), scene.collapse(r[1]));
            assert!(
                y0.is_some() && y1.is_some(),
                "step {k}: {r:x?} leaves the regions"
            );
            let span = y1.unwrap() - y0.unwrap();
            assert!(span <= previous, "step {k}");
            previous = span;
        }
    }

    #[test]
    fn allocation_map_settings_reach_render_and_cursors_glide() {
        let text = r#"
            [[step]]
            file = "demo"
            view = "alloc"
            bins = "thread"
            layout = "time"
            panels = "main,occupancy"
            occupancy = "intervals-parabolic"
            cursors = [100, 2000]
            cursor_opacity = 0.2
            [[step]]
            cursors = [300, 1000]
            cursor_opacity = 0.6
            [[step]]
            bins = "none"
        "#;
        let states = parse(text, "t.toml").unwrap();
        let args = render_args(&states[0], 64, 64).unwrap();
        assert_eq!(args.alloc.bins, Some(crate::cli::BinsArg::Thread));
        assert_eq!(args.alloc.layout, crate::cli::LayoutArg::Time);
        assert_eq!(
            args.alloc.panels,
            [crate::cli::PanelArg::Main, crate::cli::PanelArg::Occupancy]
        );
        assert_eq!(
            args.alloc.occupancy,
            crate::cli::OccupancyArg::IntervalsParabolic
        );
        assert_eq!(args.alloc.cursors, [100, 2000]);
        // Cursors glide and fade between steps of one picture; other bins are another picture.
        assert!(same_picture(&states[0], &states[1]));
        let mid = interpolate(&states[0], &states[1], 0.5);
        assert_eq!(mid.cursors, Some(vec![200, 1500]));
        assert!((mid.cursor_opacity.unwrap() - 0.4).abs() < 1e-6);
        assert!(!same_picture(&states[1], &states[2]));
        assert_eq!(render_args(&states[2], 64, 64).unwrap().alloc.bins, None);
    }

    #[test]
    fn sample_selections_reach_render_and_ranges_glide() {
        let text = r#"
            [[step]]
            file = "samples.out"
            view = "histograms"
            select = ["latency=100..200", "cpu=2..5"]
            strips = 20
            histogram_bins = 8
            [[step]]
            select = ["latency=300..600", "cpu=2..5"]
            [[step]]
            select_line = "LULESH_OMP.cc:2035"
            [[step]]
            histogram_bins = 64
        "#;
        let states = parse(text, "t.toml").unwrap();
        let args = render_args(&states[0], 64, 64).unwrap();
        assert_eq!(args.samples.select, ["latency=100..200", "cpu=2..5"]);
        assert_eq!(args.samples.strips, 20);
        // The same attributes: the brushes glide; another pick cross-fades.
        assert!(same_picture(&states[0], &states[1]));
        let mid = interpolate(&states[0], &states[1], 0.5);
        assert_eq!(
            mid.select,
            Some(vec!["latency=200..400".to_owned(), "cpu=2..5".to_owned()])
        );
        assert!(!same_picture(&states[1], &states[2]));
        let args = render_args(&states[2], 64, 64).unwrap();
        assert_eq!(
            args.samples.select_line.as_deref(),
            Some("LULESH_OMP.cc:2035")
        );
        assert_eq!(args.samples.select.len(), 2, "inherited");
        assert_eq!(args.samples.histogram_bins, Some(8), "inherited");
        // Other bins are another picture.
        assert!(!same_picture(&states[2], &states[3]));
        assert_eq!(
            render_args(&states[3], 64, 64)
                .unwrap()
                .samples
                .histogram_bins,
            Some(64)
        );
    }

    #[test]
    fn cycle_analysis_settings_and_a_selected_line_reach_render() {
        let text = r#"
            [[step]]
            file = "demo:sort"
            view = "spiral"
            window = 8
            sample = 2
            threshold = 3.5
            functions = ["insertion_sort", "bubble_sort"]
            select_record = 40
            [[step]]
            window = 12
        "#;
        let states = parse(text, "t.toml").unwrap();
        let args = render_args(&states[0], 64, 64).unwrap();
        assert_eq!(args.cycles.select.window, 8);
        assert_eq!(args.cycles.select.sample, 2);
        assert_eq!(args.cycles.select.threshold, Some(3.5));
        assert_eq!(
            args.cycles.select.function,
            ["insertion_sort", "bubble_sort"]
        );
        assert_eq!(args.cycles.select_record, Some(40));
        // Another analysis is another picture.
        assert!(!same_picture(&states[0], &states[1]));
    }

    #[test]
    fn a_time_point_is_not_inherited_beside_another() {
        let text = r#"
            [[step]]
            file = "demo"
            view = "sunburst"
            peak = true
            [[step]]
            at = 5
            [[step]]
            group = "thread"
            [[step]]
            snapshot = 2
        "#;
        let states = parse(text, "t.toml").unwrap();
        let times: Vec<_> = states.iter().map(|s| (s.peak, s.at, s.snapshot)).collect();
        assert_eq!(
            times,
            [
                (Some(true), None, None),
                (None, Some(5), None),
                (None, Some(5), None),
                (None, None, Some(2))
            ]
        );
        for state in &states {
            render_args(state, 64, 64).unwrap();
        }
    }

    #[test]
    fn render_args_parse_for_every_view() {
        for view in [
            "alloc-map",
            "sunburst",
            "icicle",
            "timeline",
            "spiral",
            "circular",
            "barcode",
            "projection",
            "graph",
            "topology",
            "offenders",
        ] {
            let state = StepSpec {
                file: Some("demo".into()),
                view: Some(view.into()),
                alpha: Some(0.3),
                t: Some(0.5),
                ..Default::default()
            };
            render_args(&state, 320, 200).unwrap_or_else(|e| panic!("{view}: {e}"));
        }
        let bad = StepSpec {
            file: Some("demo".into()),
            view: Some("pie-chart".into()),
            ..Default::default()
        };
        assert!(render_args(&bad, 320, 200).is_err());
    }

    #[test]
    fn crossfade_blends_linearly() {
        let a = RgbaImage::new(2, 1, [0, 0, 0, 255]);
        let b = RgbaImage::new(2, 1, [200, 100, 50, 255]);
        let m = crossfade(&a, &b, 0.5);
        assert_eq!(m.pixel(1, 0), [100, 50, 25, 255]);
        assert_eq!(crossfade(&a, &b, 0.0).pixel(0, 0), a.pixel(0, 0));
        assert_eq!(crossfade(&a, &b, 1.0).pixel(0, 0), b.pixel(0, 0));
    }
}
