//! `memscape samples FILE [--hardware HW.xml] [--select ATTR=LO..HI]… [--json]` and
//! `memscape cluster …`: serde reports whose field names are the JSON keys of issues 8 and 9.

use std::path::{Path, PathBuf};

use memscape_io::Warnings;
use memscape_topology::{NodeId, ResourceKind, Topology};

use crate::analysis::{Offender, OffenderKey, top_offenders};
use crate::import::{ImportOptions, load_samples};
use crate::mapping::Mapping;
use crate::metrics::{ClusterParams, ClusterReport, Metric, cluster_report, cluster_tree};
use crate::selection::{RangeSpec, select_all_ranges};
use crate::{Samples, SamplesError};

/// JSON of `memscape samples … --json`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SamplesReport {
    pub resources: Vec<ResourceOut>,
    pub links: Vec<LinkOut>,
    pub top_lines: Vec<Offender>,
    pub top_symbols: Vec<Offender>,
    /// Samples and cycles of the selection per memory level that served them (levels with
    /// samples only), `level unknown` included: samples whose data source names no level.
    pub levels: Vec<LevelOut>,
    pub warnings: Warnings,
}

/// One memory level's share of the selection.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LevelOut {
    /// The level's label (`L1`, `Local RAM`, …, `level unknown`).
    pub level: &'static str,
    pub samples: u64,
    pub cycles: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ResourceOut {
    pub id: NodeId,
    pub kind: ResourceKind,
    pub depth: u32,
    pub samples: u64,
    pub cycles: u64,
    /// Of `samples`, those whose memory level is unknown (PUs only; absent when 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub level_unknown: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// A tree edge between `from` (the child) and `to` (its parent).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LinkOut {
    pub from: NodeId,
    pub to: NodeId,
    pub transfers: u64,
}

/// How many entries `top_lines` and `top_symbols` keep.
pub const TOP_OFFENDERS: usize = 20;

/// Samples + topology + mapping, loaded once and shared by the views and reports.
pub struct Session {
    pub samples: Samples,
    pub topology: Topology,
    pub mapping: Mapping,
}

/// The hardware file used when none is given: `hardware.xml` next to the samples file or one
/// directory up (MemAxes' layout: `lulesh/data/samples.out`, `lulesh/hardware.xml`).
pub fn default_hardware(samples_path: &Path) -> Option<PathBuf> {
    let dir = samples_path.parent()?;
    [dir.join("hardware.xml"), dir.join("../hardware.xml")]
        .into_iter()
        .find(|p| p.is_file())
}

impl Session {
    /// Loads samples and a topology (`hardware`, else [`default_hardware`], else the running
    /// machine) and maps them.
    pub fn open(
        samples_path: &Path,
        hardware: Option<&Path>,
        options: ImportOptions,
    ) -> Result<Session, SamplesError> {
        let samples = load_samples(samples_path, options)?;
        let hw = hardware
            .map(Path::to_path_buf)
            .or_else(|| default_hardware(samples_path));
        let topology = Topology::load(hw.as_deref())?;
        let mapping = Mapping::new(&samples, &topology);
        Ok(Session {
            samples,
            topology,
            mapping,
        })
    }

    /// The `memscape samples` report for the samples matching every range in `selects`.
    pub fn report(&self, selects: &[RangeSpec]) -> Result<SamplesReport, SamplesError> {
        samples_report(&self.samples, &self.topology, &self.mapping, selects)
    }
}

/// Builds the `memscape samples` report.
pub fn samples_report(
    samples: &Samples,
    topology: &Topology,
    mapping: &Mapping,
    selects: &[RangeSpec],
) -> Result<SamplesReport, SamplesError> {
    let selection = select_all_ranges(samples, selects)?;
    let agg = mapping.aggregate(samples, Some(&selection));
    let resources = topology
        .nodes()
        .iter()
        .map(|n| ResourceOut {
            id: n.id,
            kind: n.kind,
            depth: n.depth,
            samples: agg.samples[n.id as usize],
            cycles: agg.cycles[n.id as usize],
            level_unknown: agg.level_unknown[n.id as usize],
        })
        .collect();
    let mut per_level = [(0u64, 0u64); crate::datasource::MemLevel::ALL.len()];
    for i in selection.iter().filter(|&i| i < samples.len()) {
        let at = crate::datasource::MemLevel::ALL
            .iter()
            .position(|l| *l == samples.level[i])
            .unwrap_or(0);
        let slot = &mut per_level[at];
        slot.0 += 1;
        slot.1 = slot.1.saturating_add(samples.latency[i]);
    }
    let levels = crate::datasource::MemLevel::ALL
        .iter()
        .zip(per_level)
        .filter(|(_, (n, _))| *n > 0)
        .map(|(level, (samples, cycles))| LevelOut {
            level: level.label(),
            samples,
            cycles,
        })
        .collect();
    let links = topology
        .nodes()
        .iter()
        .filter_map(|n| {
            n.parent.map(|p| LinkOut {
                from: n.id,
                to: p,
                transfers: agg.transfers[n.id as usize],
            })
        })
        .collect();
    let mut warnings = samples.warnings.clone();
    warnings.merge(mapping.warnings.clone());
    Ok(SamplesReport {
        resources,
        links,
        top_lines: top_offenders(
            samples,
            OffenderKey::SourceLine,
            Some(&selection),
            TOP_OFFENDERS,
        ),
        top_symbols: top_offenders(
            samples,
            OffenderKey::Symbol,
            Some(&selection),
            TOP_OFFENDERS,
        ),
        levels,
        warnings,
    })
}

/// `memscape cluster FILE [--hardware HW] --attribute A --metric M --depth D [--window W]
/// [--step S] [--clusters K] [--json]`.
#[allow(clippy::too_many_arguments)]
pub fn cluster_command(
    session: &Session,
    attribute: &str,
    metric: Metric,
    depth: ResourceKind,
    window: usize,
    step: usize,
    clusters: usize,
) -> Result<ClusterReport, SamplesError> {
    let tree = cluster_tree(
        &session.samples,
        &session.topology,
        &session.mapping,
        ClusterParams {
            attribute: attribute.to_owned(),
            metric,
            kind: depth,
            window,
            step,
        },
        None,
    )?;
    Ok(cluster_report(&tree, clusters))
}
