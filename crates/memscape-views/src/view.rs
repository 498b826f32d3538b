//! The views by name (`memscape render --view`, a tour step's `view`) and their settings as one
//! value: what a pane edits, `memscape render` builds from its options and a tour step holds.
//! Everything that works on "any view" (composing its picture, a tour's inheritance and
//! transitions) goes through [`ViewSettings`].

use crate::alloc_map::AllocMapSettings;
use crate::cycles::CycleSettings;
use crate::cycles::settings::Mode;
use crate::dataset::Dataset;
use crate::error::Result;
use crate::graph::GraphSettings;
use crate::heap_tree::HeapTreeSettings;
use crate::heap_tree::settings::Chart;
use crate::picture::Picture;
use crate::samples::SamplesSettings;
use crate::samples::settings::SamplesChart;

/// Every view memscape draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ViewKind {
    /// Allocation map: time × address, biased anti-aliasing, cushions (also `alloc-map`).
    #[cfg_attr(feature = "clap", value(name = "alloc", alias = "alloc-map"))]
    #[serde(rename = "alloc-map", alias = "alloc")]
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

impl ViewKind {
    pub const ALL: [ViewKind; 13] = [
        ViewKind::AllocMap,
        ViewKind::Sunburst,
        ViewKind::Icicle,
        ViewKind::Timeline,
        ViewKind::Spiral,
        ViewKind::Circular,
        ViewKind::Barcode,
        ViewKind::Projection,
        ViewKind::Graph,
        ViewKind::Topology,
        ViewKind::Offenders,
        ViewKind::Histograms,
        ViewKind::Histogram,
    ];

    /// Its name in tour files (`alloc-map`, `sunburst`, …).
    pub fn name(self) -> String {
        crate::values::value_name(&self)
    }
}

/// The settings of one view.
#[derive(Debug, Clone, PartialEq)]
pub enum ViewSettings {
    AllocMap(AllocMapSettings),
    HeapTree(HeapTreeSettings),
    Cycles(CycleSettings),
    Graph(GraphSettings),
    Samples(SamplesSettings),
}

/// The settings' own fields, in their order (what a tour step writes after its file and view).
impl serde::Serialize for ViewSettings {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ViewSettings::AllocMap(x) => x.serialize(s),
            ViewSettings::HeapTree(x) => x.serialize(s),
            ViewSettings::Cycles(x) => x.serialize(s),
            ViewSettings::Graph(x) => x.serialize(s),
            ViewSettings::Samples(x) => x.serialize(s),
        }
    }
}

impl ViewSettings {
    /// The defaults of `kind` (`memscape render`'s).
    pub fn default_for(kind: ViewKind) -> Self {
        let mut s = match kind {
            ViewKind::AllocMap => ViewSettings::AllocMap(AllocMapSettings::default()),
            ViewKind::Sunburst | ViewKind::Icicle | ViewKind::Timeline => {
                ViewSettings::HeapTree(HeapTreeSettings::default())
            }
            ViewKind::Spiral | ViewKind::Circular | ViewKind::Barcode | ViewKind::Projection => {
                ViewSettings::Cycles(CycleSettings::default())
            }
            ViewKind::Graph => ViewSettings::Graph(GraphSettings::default()),
            ViewKind::Topology
            | ViewKind::Offenders
            | ViewKind::Histograms
            | ViewKind::Histogram => ViewSettings::Samples(SamplesSettings::default()),
        };
        s.set_kind(kind);
        s
    }

    /// Which view these settings draw.
    pub fn kind(&self) -> ViewKind {
        match self {
            ViewSettings::AllocMap(_) => ViewKind::AllocMap,
            ViewSettings::HeapTree(s) => match s.chart {
                Chart::Sunburst => ViewKind::Sunburst,
                Chart::Icicle => ViewKind::Icicle,
                Chart::Timeline => ViewKind::Timeline,
            },
            ViewSettings::Cycles(s) => match s.mode {
                Mode::Spiral => ViewKind::Spiral,
                Mode::Circular => ViewKind::Circular,
                Mode::Barcode => ViewKind::Barcode,
                Mode::Projection => ViewKind::Projection,
            },
            ViewSettings::Graph(_) => ViewKind::Graph,
            ViewSettings::Samples(s) => match s.chart {
                SamplesChart::Topology => ViewKind::Topology,
                SamplesChart::Offenders => ViewKind::Offenders,
                SamplesChart::Histograms => ViewKind::Histograms,
                SamplesChart::Histogram => ViewKind::Histogram,
            },
        }
    }

    /// Sets which chart of its family the settings draw (a sunburst's settings drawn as an
    /// icicle); `kind` of another family is ignored.
    pub fn set_kind(&mut self, kind: ViewKind) {
        match self {
            ViewSettings::HeapTree(s) => {
                s.chart = match kind {
                    ViewKind::Icicle => Chart::Icicle,
                    ViewKind::Timeline => Chart::Timeline,
                    _ => Chart::Sunburst,
                }
            }
            ViewSettings::Cycles(s) => {
                s.mode = match kind {
                    ViewKind::Circular => Mode::Circular,
                    ViewKind::Barcode => Mode::Barcode,
                    ViewKind::Projection => Mode::Projection,
                    _ => Mode::Spiral,
                }
            }
            ViewSettings::Samples(s) => {
                s.chart = match kind {
                    ViewKind::Offenders => SamplesChart::Offenders,
                    ViewKind::Histograms => SamplesChart::Histograms,
                    ViewKind::Histogram => SamplesChart::Histogram,
                    _ => SamplesChart::Topology,
                }
            }
            ViewSettings::AllocMap(_) | ViewSettings::Graph(_) => {}
        }
    }

    /// The picture of `dataset` these settings describe, at `size` points.
    pub fn compose(&self, dataset: &Dataset, size: egui::Vec2) -> Result<Picture> {
        match self {
            ViewSettings::AllocMap(s) => crate::alloc_map::compose(dataset, s, size),
            ViewSettings::HeapTree(s) => crate::heap_tree::compose(dataset, s, size),
            ViewSettings::Cycles(s) => crate::cycles::compose(dataset, s, size),
            ViewSettings::Graph(s) => crate::graph::compose(dataset, s, size),
            ViewSettings::Samples(s) => crate::samples::compose(dataset, s, size),
        }
    }

    /// The settings as a TOML table (a tour step's fields).
    pub fn to_table(&self) -> Result<toml::Table> {
        let table = match self {
            ViewSettings::AllocMap(s) => toml::Table::try_from(s),
            ViewSettings::HeapTree(s) => toml::Table::try_from(s),
            ViewSettings::Cycles(s) => toml::Table::try_from(s),
            ViewSettings::Graph(s) => toml::Table::try_from(s),
            ViewSettings::Samples(s) => toml::Table::try_from(s),
        };
        table.map_err(|e| crate::error::ViewError::msg(format!("internal: settings as TOML: {e}")))
    }

    /// The settings of `kind` in `table` (unset fields at their defaults).
    pub fn from_table(kind: ViewKind, table: toml::Table) -> Result<Self> {
        fn read<T: serde::de::DeserializeOwned>(table: toml::Table) -> Result<T> {
            table
                .try_into()
                .map_err(|e: toml::de::Error| crate::error::ViewError::msg(e.message().trim()))
        }
        let mut s = match kind {
            ViewKind::AllocMap => ViewSettings::AllocMap(read(table)?),
            ViewKind::Sunburst | ViewKind::Icicle | ViewKind::Timeline => {
                ViewSettings::HeapTree(read(table)?)
            }
            ViewKind::Spiral | ViewKind::Circular | ViewKind::Barcode | ViewKind::Projection => {
                ViewSettings::Cycles(read(table)?)
            }
            ViewKind::Graph => ViewSettings::Graph(read(table)?),
            ViewKind::Topology
            | ViewKind::Offenders
            | ViewKind::Histograms
            | ViewKind::Histogram => ViewSettings::Samples(read(table)?),
        };
        s.set_kind(kind);
        Ok(s)
    }

    /// The names of the settings of `kind` (every field, set or not).
    pub fn field_names(kind: ViewKind) -> Vec<String> {
        // JSON keeps unset options as nulls, so every field shows.
        let value = match ViewSettings::default_for(kind) {
            ViewSettings::AllocMap(s) => serde_json::to_value(s),
            ViewSettings::HeapTree(s) => serde_json::to_value(s),
            ViewSettings::Cycles(s) => serde_json::to_value(s),
            ViewSettings::Graph(s) => serde_json::to_value(s),
            ViewSettings::Samples(s) => serde_json::to_value(s),
        };
        match value {
            Ok(serde_json::Value::Object(map)) => map.keys().cloned().collect(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_round_trips_through_its_settings_and_name() {
        for kind in ViewKind::ALL {
            let s = ViewSettings::default_for(kind);
            assert_eq!(s.kind(), kind);
            let back = ViewSettings::from_table(kind, s.to_table().unwrap()).unwrap();
            assert_eq!(back, s, "{kind:?}");
            let name = kind.name();
            let parsed: ViewKind = toml::Value::String(name.clone()).try_into().unwrap();
            assert_eq!(parsed, kind, "{name}");
            assert!(!ViewSettings::field_names(kind).is_empty());
        }
        assert_eq!(ViewKind::AllocMap.name(), "alloc-map");
        let alias: ViewKind = toml::Value::String("alloc".into()).try_into().unwrap();
        assert_eq!(alias, ViewKind::AllocMap);
        assert!(ViewSettings::field_names(ViewKind::Spiral).contains(&"window".to_owned()));
    }
}
