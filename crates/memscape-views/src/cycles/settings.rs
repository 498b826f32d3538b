//! The cycle views' settings (spiral, circular, barcode, projection): which records are
//! analysed and how, which parameterizations are drawn and how far the morph is. The pane edits
//! them, `memscape render` takes them as options (the analysis part also `memscape cycles`), a
//! tour step holds them.

use std::path::PathBuf;

use memscape_cycles::records::{parse_ip_range, parse_load_base, parse_record_range};
use memscape_cycles::symbolize::LoadBase;

use super::draw::ColorBy;
use crate::error::Result;

/// Which records of a reference trace are analysed, and the window and threshold: shared by
/// `memscape cycles` and the cycle views.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default)]
pub struct CycleAnalysisSettings {
    /// The traced executable, for symbols and the --function/--file filters.
    #[cfg_attr(feature = "clap", arg(long))]
    pub binary: Option<PathBuf>,
    /// Load base of a PIE binary (hex); detected from the trace by default.
    #[cfg_attr(feature = "clap", arg(long))]
    pub load_base: Option<String>,
    /// Keep records of this function (repeatable; needs --binary).
    #[cfg_attr(feature = "clap", arg(long = "function"))]
    pub functions: Vec<String>,
    /// Keep records of this source file (suffix match, repeatable; needs --binary).
    #[cfg_attr(feature = "clap", arg(long = "file", id = "source_files"))]
    #[serde(rename = "files")]
    pub source_files: Vec<String>,
    /// Keep records whose instruction address is in A..B (hex).
    #[cfg_attr(feature = "clap", arg(long))]
    pub ip_range: Option<String>,
    /// Keep records with index in A..B (indices into the trace's accesses).
    #[cfg_attr(feature = "clap", arg(long))]
    pub range: Option<String>,
    /// Keep every k-th record.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1))]
    pub sample: usize,
    /// Records per window (points of the metric space).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 10))]
    pub window: usize,
    /// Rips threshold (default: the enclosing radius).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(with = "crate::values::short_f32_option")]
    pub threshold: Option<f32>,
    /// Above this many unique windows, analyse that many landmark windows instead (maxmin by
    /// Levenshtein distance: a level of detail that keeps cycles; the output says so and
    /// bounds the barcode's error).
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "N", default_value_t = memscape_cycles::DEFAULT_MAX_POINTS)
    )]
    pub max_windows: usize,
    /// Seconds the persistence of the windows may take before the analysis takes landmarks
    /// instead (half as many each time it takes longer); 0: no limit.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "SECONDS", default_value_t = memscape_cycles::DEFAULT_BUDGET_SECONDS)
    )]
    pub time_budget: u32,
    /// Analyse N landmark windows, however few windows there are.
    #[cfg_attr(feature = "clap", arg(long, value_name = "N", conflicts_with = "full"))]
    pub landmarks: Option<usize>,
    /// Analyse every unique window, however many (no level of detail).
    #[cfg_attr(feature = "clap", arg(long))]
    pub full: bool,
}

impl Default for CycleAnalysisSettings {
    fn default() -> Self {
        Self {
            binary: None,
            load_base: None,
            functions: Vec::new(),
            source_files: Vec::new(),
            ip_range: None,
            range: None,
            sample: 1,
            window: 10,
            threshold: None,
            max_windows: memscape_cycles::DEFAULT_MAX_POINTS,
            time_budget: memscape_cycles::DEFAULT_BUDGET_SECONDS,
            landmarks: None,
            full: false,
        }
    }
}

impl CycleAnalysisSettings {
    /// The analysis of these settings with `top` parameterizations.
    pub fn options(&self, top: usize) -> Result<memscape_cycles::CyclesOptions> {
        Ok(memscape_cycles::CyclesOptions {
            binary: self.binary.clone(),
            load_base: match &self.load_base {
                Some(text) => LoadBase::Given(parse_load_base(text)?),
                None => LoadBase::Detect,
            },
            filter: memscape_cycles::RecordFilter {
                functions: self.functions.clone(),
                files: self.source_files.clone(),
                ip_range: self.ip_range.as_deref().map(parse_ip_range).transpose()?,
                record_range: self.range.as_deref().map(parse_record_range).transpose()?,
                sample: self.sample.max(1),
            },
            window: self.window.max(1),
            threshold: self.threshold,
            top,
            detail: self.detail()?,
            ..memscape_cycles::CyclesOptions::default()
        })
    }

    /// The level of detail asked for: `--full`, `--landmarks N`, else landmarks above
    /// `--max-windows` or past `--time-budget`.
    pub fn detail(&self) -> Result<memscape_cycles::Detail> {
        Ok(if self.full {
            memscape_cycles::Detail::Full
        } else if let Some(count) = self.landmarks {
            crate::ensure!(count >= 2, "--landmarks {count}: expected at least 2");
            memscape_cycles::Detail::Landmarks(count)
        } else {
            crate::ensure!(
                self.max_windows >= 2,
                "--max-windows {}: expected at least 2",
                self.max_windows
            );
            memscape_cycles::Detail::Auto {
                max_points: self.max_windows,
                seconds: self.time_budget,
            }
        })
    }

    /// Whether both analyse at the same level of detail.
    pub fn same_detail(&self, other: &Self) -> bool {
        self.full == other.full
            && self.landmarks == other.landmarks
            && self.max_windows == other.max_windows
            && self.time_budget == other.time_budget
    }
}

/// What a level of detail means, for the output of `memscape cycles` and `memscape render`.
pub fn detail_note(lod: &memscape_cycles::LevelOfDetail) -> String {
    format!(
        "level of detail: {} landmark windows of {} unique ({}; maxmin by Levenshtein distance, \
         every window within {} edit(s) of its landmark): the H1 barcode is within bottleneck \
         distance {} of the full analysis's; --full analyses every window",
        lod.landmarks,
        lod.unique_windows,
        match lod.reason.as_str() {
            "budget" => "more than --max-windows",
            "time" => "the full analysis passed --time-budget",
            _ => "--landmarks",
        },
        lod.covering_radius,
        lod.bottleneck_bound
    )
}

/// Cycle-view settings.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default)]
pub struct CycleSettings {
    /// Which cycle view (`--view spiral|circular|barcode|projection`).
    #[cfg_attr(feature = "clap", arg(skip))]
    #[serde(skip)]
    pub mode: Mode,
    #[cfg_attr(feature = "clap", command(flatten))]
    #[serde(flatten)]
    pub analysis: CycleAnalysisSettings,
    /// Keep at most this many records after the filters (the first ones).
    #[cfg_attr(feature = "clap", arg(long))]
    pub max_records: Option<usize>,
    /// Parameterization drawn (0 = most persistent; at most 63).
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value_t = 0, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..64))
    )]
    pub param: usize,
    /// Morph towards this parameterization.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..64))
    )]
    pub morph_to: Option<usize>,
    /// Morph position, 0 (--param) to 1 (--morph-to).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0.0))]
    #[serde(with = "crate::values::short_f32")]
    pub t: f32,
    /// Colours of records: line, function, file, time or address.
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value = "line"))]
    pub cycle_color: ColorBy,
    /// With --cycle-color line: draw this function's lines in one colour (repeatable; `*`:
    /// every function; `!NAME`: keep NAME's lines apart, e.g. `'*' '!matmul'`).
    #[cfg_attr(feature = "clap", arg(long, value_name = "FUNCTION"))]
    pub collapse_function: Vec<String>,
    /// Spiral and circular views: draw isocontours of the density of the drawn points.
    #[cfg_attr(feature = "clap", arg(long))]
    pub contours: bool,
    /// Select every record on the source line of record N (as a click on it in the GUI): the
    /// other records are dimmed.
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub select_record: Option<usize>,
}

impl Default for CycleSettings {
    fn default() -> Self {
        Self {
            mode: Mode::Spiral,
            analysis: CycleAnalysisSettings::default(),
            max_records: None,
            param: 0,
            morph_to: None,
            t: 0.0,
            cycle_color: ColorBy::Line,
            collapse_function: Vec::new(),
            contours: false,
            select_record: None,
        }
    }
}

impl CycleSettings {
    /// The parameterizations the analysis computes: at least three, and every one drawn.
    pub fn top(&self) -> usize {
        3.max(self.param + 1)
            .max(self.morph_to.map_or(0, |m| m + 1))
    }

    /// Which of `functions` (the trace's, as `ViewTables::functions_by_count` lists them) have
    /// their lines drawn in one colour: the checklist of "colour by line, functions collapsed".
    pub fn collapsed_checklist(&self, functions: &[String]) -> Vec<bool> {
        let collapsed = memscape_cycles::CollapsedFunctions(self.collapse_function.clone());
        functions.iter().map(|f| collapsed.collapses(f)).collect()
    }

    /// Sets the collapsed functions from the checklist over `functions`: `*` when every one is
    /// checked (so that it reads short in a tour step and on the command line), else the
    /// checked names; none checked is plain colour by line.
    pub fn set_collapsed(&mut self, functions: &[String], checked: &[bool]) {
        let names: Vec<String> = functions
            .iter()
            .zip(checked)
            .filter(|(_, c)| **c)
            .map(|(f, _)| f.clone())
            .collect();
        self.cycle_color = ColorBy::Line;
        self.collapse_function = if !names.is_empty() && names.len() == functions.len() {
            vec!["*".to_owned()]
        } else {
            names
        };
    }
}

/// The cycle views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// Radius = record index, angle = a circle-valued parameterization.
    #[default]
    Spiral,
    /// Cycle members on a circle, pre-/post-amble inside/outside.
    Circular,
    /// The H1 persistence barcode.
    Barcode,
    /// Classical MDS of the windows, coloured by θ.
    Projection,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collapse_checklist_round_trips_through_the_setting() {
        let functions: Vec<String> = ["sort", "swap", "main", "??"]
            .iter()
            .map(|f| (*f).to_owned())
            .collect();
        let mut s = CycleSettings {
            collapse_function: vec!["*".into(), "!sort".into()],
            ..CycleSettings::default()
        };
        assert_eq!(
            s.collapsed_checklist(&functions),
            [false, true, true, true],
            "every function but sort"
        );
        s.set_collapsed(&functions, &[false, true, false, false]);
        assert_eq!(s.collapse_function, ["swap"]);
        assert_eq!(
            s.collapsed_checklist(&functions),
            [false, true, false, false]
        );
        s.set_collapsed(&functions, &[true; 4]);
        assert_eq!(s.collapse_function, ["*"]);
        s.set_collapsed(&functions, &[false; 4]);
        assert!(s.collapse_function.is_empty());
        assert_eq!(s.cycle_color, ColorBy::Line);
    }
}
