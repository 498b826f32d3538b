//! The samples views' settings (radial topology, top offenders, parallel and single
//! histograms): the hardware, the measure, the linked selection, the histograms' axes and bins,
//! window-score strips and cluster markers. The clustering options mean what
//! `memscape cluster`'s do. The panes edit them, `memscape render` takes them as options, a tour
//! step holds them.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use memscape_samples::metrics::Metric;
use memscape_topology::ResourceKind;

use super::histograms_draw::Scale;
use super::topology_draw::Measure;
use crate::values::comma_list;

/// Samples-view settings.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default)]
pub struct SamplesSettings {
    /// Which samples view (`--view topology|offenders|histograms|histogram`).
    #[cfg_attr(feature = "clap", arg(skip))]
    #[serde(skip)]
    pub chart: SamplesChart,
    /// Samples views: the hardware topology (hwloc XML or MemAxes hardware.xml; default:
    /// hardware.xml beside the samples, else this machine).
    #[cfg_attr(feature = "clap", arg(long))]
    pub hardware: Option<PathBuf>,
    /// Topology view: colour by samples or cycles.
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value = "cycles"))]
    pub measure: Measure,
    /// Samples views: select the samples with ATTR in LO..HI (repeatable; ranges combine with
    /// "and"; on a qualitative attribute, its values in the range).
    #[cfg_attr(feature = "clap", arg(long = "select", value_name = "ATTR=LO..HI"))]
    pub select: Vec<String>,
    /// Samples views: select only the samples of this source line (as the offender chart
    /// names it, e.g. LULESH_OMP.cc:2035), as a click on its bar does.
    #[cfg_attr(feature = "clap", arg(long, value_name = "FILE:LINE"))]
    pub select_line: Option<String>,
    /// Samples views: select only the samples of this data symbol.
    #[cfg_attr(feature = "clap", arg(long, value_name = "SYMBOL"))]
    pub select_symbol: Option<String>,
    /// Histograms: the attributes shown, in this order (default: every attribute with more
    /// than one value, in file order).
    #[cfg_attr(
        feature = "clap",
        arg(long, value_delimiter = ',', value_name = "ATTR,…")
    )]
    #[serde(with = "comma_list")]
    pub axes: Vec<String>,
    /// Histogram view: its attribute (default: --cluster-attribute, else latency).
    #[cfg_attr(feature = "clap", arg(long, value_name = "ATTR"))]
    pub histogram_attribute: Option<String>,
    /// Histograms: bar lengths proportional to the counts, or to ln(1 + count).
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value = "linear"))]
    pub bars: Scale,
    /// Histograms: bins of every quantitative axis (4–256; default 32, as in the GUI).
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub histogram_bins: Option<usize>,
    /// Histograms: a window-score strip along each axis, its attribute cut into N windows (0:
    /// none), scored by --cluster-metric at --cluster-depth.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0, value_name = "N"))]
    pub strips: usize,
    /// Histograms: cluster markers along this attribute (as `memscape cluster --attribute`).
    #[cfg_attr(feature = "clap", arg(long, value_name = "ATTR"))]
    pub cluster_attribute: Option<String>,
    /// Strips and clusters: latency or imbalance (as `memscape cluster --metric`).
    #[cfg_attr(feature = "clap", arg(long, default_value = "latency"))]
    pub cluster_metric: ScoreMetric,
    /// Strips and clusters: topology depth numa, l3, l2, l1, core, pu (as `memscape cluster
    /// --depth`).
    #[cfg_attr(feature = "clap", arg(long, default_value = "l1"))]
    pub cluster_depth: Depth,
    /// Clusters: samples per window (as `memscape cluster --window`).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1000))]
    pub cluster_window: usize,
    /// Clusters: window step, at most the window (as `memscape cluster --step`).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 250))]
    pub cluster_step: usize,
    /// Clusters: the tree cut into K clusters (as `memscape cluster --clusters`).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 8, value_name = "K"))]
    pub clusters: usize,
    /// Clusters: expand the radial-topology glyph of cluster I (0-based, in attribute order),
    /// as hovering its marker does.
    #[cfg_attr(feature = "clap", arg(long, value_name = "I"))]
    pub glyph: Option<usize>,
}

impl Default for SamplesSettings {
    fn default() -> Self {
        Self {
            chart: SamplesChart::Topology,
            hardware: None,
            measure: Measure::Cycles,
            select: Vec::new(),
            select_line: None,
            select_symbol: None,
            axes: Vec::new(),
            histogram_attribute: None,
            bars: Scale::Linear,
            histogram_bins: None,
            strips: 0,
            cluster_attribute: None,
            cluster_metric: ScoreMetric(Metric::Latency),
            cluster_depth: Depth(ResourceKind::L1),
            cluster_window: 1000,
            cluster_step: 250,
            clusters: 8,
            glyph: None,
        }
    }
}

/// The samples views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SamplesChart {
    /// Samples on the hardware topology (radial), or a topology file alone.
    #[default]
    Topology,
    /// Total latency per source line and per data symbol.
    Offenders,
    /// One histogram per attribute side by side, the selection over the whole.
    Histograms,
    /// The histogram of one attribute.
    Histogram,
}

/// The window score: latency or imbalance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScoreMetric(pub Metric);

impl FromStr for ScoreMetric {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Metric::parse(s)
            .map(ScoreMetric)
            .ok_or_else(|| format!("expected latency or imbalance, got {s:?}"))
    }
}

impl fmt::Display for ScoreMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            Metric::Latency => "latency",
            Metric::Imbalance => "imbalance",
        })
    }
}

crate::text_setting!(ScoreMetric);

/// A topology depth: numa, l3, l2, l1, core or pu.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Depth(pub ResourceKind);

impl FromStr for Depth {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        ResourceKind::parse(s)
            .map(Depth)
            .ok_or_else(|| format!("expected numa, l3, l2, l1, core or pu, got {s:?}"))
    }
}

impl fmt::Display for Depth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str())
    }
}

crate::text_setting!(Depth);
