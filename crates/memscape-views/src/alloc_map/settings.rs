//! The allocation map's settings: what the pane edits, `memscape render` takes as options (its
//! doc comments are the `--help` text) and a tour step holds. Defaults are `memscape render`'s.

use memscape_render::alloc_map::{CushionKind, OccupancyVariant};

use super::bins::BinBy;
use super::camera::BinLayout;
use super::colors::ColorBy;
use super::scene::TimeAxis;
use crate::values::{U64Range, comma_list};

/// Allocation-map settings.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default)]
pub struct AllocMapSettings {
    /// Bias α of the anti-aliasing (lower shows thin blocks more).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0.5))]
    #[serde(with = "crate::values::short_f32")]
    pub alpha: f32,
    /// Cushion profile.
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value = "parabolic"))]
    pub cushion: Cushion,
    /// Allocation map: relief of the cushions (0 flat, 1 the paper's; the GUI's slider).
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 1.0))]
    #[serde(with = "crate::values::short_f32")]
    pub relief: f32,
    /// Time axis.
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value = "events"))]
    pub time: TimeAxis,
    /// Block colours (default: thread when the trace has several, else call site).
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    pub color: Option<ColorBy>,
    /// Time range shown, `T0..T1` on the chosen time axis (events or ns); default: the whole trace.
    #[cfg_attr(feature = "clap", arg(long, value_name = "T0..T1"))]
    pub range_time: Option<U64Range>,
    /// Address range shown, `A0..A1` (hex with 0x or decimal); default: every used region.
    /// Both ends must lie inside used regions.
    #[cfg_attr(feature = "clap", arg(long, value_name = "A0..A1"))]
    pub range_addr: Option<U64Range>,
    /// Allocation map: what the picture holds, comma-separated. `main` alone: only the plot
    /// area (no axes, no margins; pixels map linearly onto --range-time × --range-addr); with
    /// `occupancy` and/or `context` the GUI's picture: axes, labels, legend, free bars, the
    /// occupancy bar under each bin (and the stacked bar of all bins), the context view;
    /// `curves`: waste and external fragmentation over time under each bin.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_enum, value_delimiter = ',', default_value = "main")
    )]
    #[serde(with = "comma_list")]
    pub panels: Vec<Panel>,
    /// Allocation map: one view per bin (address region, power-of-two size class, thread,
    /// process). Default: by process when several processes of a recording have events, else
    /// none.
    #[cfg_attr(feature = "clap", arg(long, value_enum))]
    pub bins: Option<BinBy>,
    /// Only these processes of a multi-process recording: a pid, pids (`PID,PID`), or a
    /// regular expression matched against the program names (the command lines when it matches no name).
    #[cfg_attr(feature = "clap", arg(long, value_name = "PID|NAME-REGEX"))]
    pub process: Option<String>,
    /// Allocation map with --bins: `address` (bins side by side, each scaled to the same
    /// height: relative occupancy compares) or `time` (stacked on one time axis: activity
    /// compares).
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value = "address"))]
    pub layout: BinLayout,
    /// Allocation map: the occupancy bar's variant (with --panels …,occupancy).
    #[cfg_attr(feature = "clap", arg(long, value_enum, default_value = "flat"))]
    pub occupancy: Occupancy,
    /// Allocation map: the first bin (from 1) at the top of the stacked occupancy bar when
    /// the bins do not all fit (the bar then shows those that do, and says which).
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "BIN", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))
    )]
    pub stacked_from: u32,
    /// Allocation map: cushion cursors at these times (comma-separated, on the --time axis).
    #[cfg_attr(feature = "clap", arg(long, value_delimiter = ','))]
    pub cursors: Vec<u64>,
    /// Allocation map: opacity of the cushion cursors, 0..1.
    #[cfg_attr(feature = "clap", arg(long, default_value_t = 0.8))]
    #[serde(with = "crate::values::short_f32")]
    pub cursor_opacity: f32,
}

impl Default for AllocMapSettings {
    fn default() -> Self {
        Self {
            alpha: 0.5,
            cushion: Cushion::Parabolic,
            relief: 1.0,
            time: TimeAxis::Events,
            color: None,
            range_time: None,
            range_addr: None,
            panels: vec![Panel::Main],
            bins: None,
            process: None,
            layout: BinLayout::Address,
            occupancy: Occupancy::Flat,
            stacked_from: 1,
            cursors: Vec::new(),
            cursor_opacity: 0.8,
        }
    }
}

impl AllocMapSettings {
    /// The GUI pane's start: the whole picture (occupancy bars and context view too).
    pub fn gui() -> Self {
        Self {
            panels: vec![Panel::Main, Panel::Occupancy, Panel::Context],
            ..Self::default()
        }
    }

    /// The binning shown for `trace`: the one asked for, else [`BinBy::default_for`].
    pub fn bins_for(&self, trace: &memscape_trace::Trace) -> BinBy {
        self.bins.unwrap_or_else(|| BinBy::default_for(trace))
    }

    /// The picture's parts besides the maps.
    pub fn has(&self, panel: Panel) -> bool {
        self.panels.contains(&panel)
    }

    /// Shows or hides a panel (`Main` stays).
    pub fn set(&mut self, panel: Panel, on: bool) {
        self.panels.retain(|p| *p != panel);
        if on {
            self.panels.push(panel);
            self.panels.sort();
        }
    }

    /// Only the plot area: no decorations, pixels map linearly onto the ranges.
    pub fn only_main(&self) -> bool {
        self.panels.iter().all(|p| *p == Panel::Main)
    }
}

/// Cushion profile of the blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Cushion {
    None,
    #[default]
    Parabolic,
    Plateau,
}

impl Cushion {
    pub const ALL: [Cushion; 3] = [Cushion::Parabolic, Cushion::Plateau, Cushion::None];

    /// The renderer's shading.
    pub fn kind(self) -> CushionKind {
        match self {
            Cushion::None => CushionKind::None,
            Cushion::Parabolic => CushionKind::Parabolic,
            Cushion::Plateau => CushionKind::Plateau,
        }
    }
}

/// What the picture holds besides the maps.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Panel {
    /// The map (one cell per bin).
    Main,
    /// Occupancy bars (per bin, and stacked when binned).
    Occupancy,
    /// The context view at the right.
    Context,
    /// Under each bin, its waste and external fragmentation over time (1 − largest free gap
    /// ÷ free bytes inside the bin's span; a pool's span is its declared range).
    Curves,
}

impl std::fmt::Display for Panel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::values::value_name(self))
    }
}

impl std::str::FromStr for Panel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "main" => Ok(Panel::Main),
            "occupancy" => Ok(Panel::Occupancy),
            "context" => Ok(Panel::Context),
            "curves" => Ok(Panel::Curves),
            other => Err(format!(
                "{other:?}: expected main, occupancy, context or curves"
            )),
        }
    }
}

/// The occupancy bar variants of Moreta & Telea.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Occupancy {
    /// Mean occupancy per column.
    #[default]
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

impl Occupancy {
    pub const ALL: [Occupancy; 6] = [
        Occupancy::Flat,
        Occupancy::IdleBlack,
        Occupancy::IdlePlateau,
        Occupancy::IdleParabolic,
        Occupancy::IntervalsPlateau,
        Occupancy::IntervalsParabolic,
    ];

    /// The renderer's variant.
    pub fn variant(self) -> OccupancyVariant {
        match self {
            Occupancy::Flat => OccupancyVariant::Flat,
            Occupancy::IdleBlack => OccupancyVariant::BlackGaps,
            Occupancy::IdlePlateau => OccupancyVariant::GapCushions(CushionKind::Plateau),
            Occupancy::IdleParabolic => OccupancyVariant::GapCushions(CushionKind::Parabolic),
            Occupancy::IntervalsPlateau => OccupancyVariant::EventCushions(CushionKind::Plateau),
            Occupancy::IntervalsParabolic => {
                OccupancyVariant::EventCushions(CushionKind::Parabolic)
            }
        }
    }

    /// Its name on the command line and in tours (`idle-black`).
    pub fn key(self) -> String {
        crate::values::value_name(&self)
    }

    /// Why this variant looks like [`Occupancy::Flat`] on `time`, if it does: on event-index
    /// time there is an event at every step, so no stretch is idle and every interval is one
    /// event wide (the cushions show only zoomed to a few events per pixel). Said in the
    /// control and in the bar's caption.
    pub fn same_as_flat_on(self, time: super::scene::TimeAxis) -> Option<&'static str> {
        match (self, time) {
            (Occupancy::Flat, _) | (_, super::scene::TimeAxis::Wall) => None,
            (Occupancy::IdleBlack | Occupancy::IdlePlateau | Occupancy::IdleParabolic, _) => Some(
                "on event-index time every step is an event, so nothing is idle: this looks \
                 like flat; wall time shows the pauses",
            ),
            _ => Some(
                "on event-index time every interval is one event wide: the cushions show only \
                 zoomed in to a few events per pixel, else this looks like flat; wall time \
                 shows intervals of their real length",
            ),
        }
    }

    /// Menu text.
    pub fn label(self) -> &'static str {
        match self {
            Occupancy::Flat => "occupancy: flat",
            Occupancy::IdleBlack => "occupancy: idle gaps black",
            Occupancy::IdleParabolic => "occupancy: parabolic cushions on idle gaps",
            Occupancy::IdlePlateau => "occupancy: plateau cushions on idle gaps",
            Occupancy::IntervalsParabolic => "occupancy: parabolic cushion per interval",
            Occupancy::IntervalsPlateau => "occupancy: plateau cushion per interval",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panels_read_as_text_or_list_and_write_as_text() {
        let s: AllocMapSettings = toml::from_str("panels = \"main,occupancy\"").unwrap();
        assert_eq!(s.panels, [Panel::Main, Panel::Occupancy]);
        let s: AllocMapSettings = toml::from_str("panels = [\"context\"]").unwrap();
        assert_eq!(s.panels, [Panel::Context]);
        let text = toml::to_string(&AllocMapSettings::gui()).unwrap();
        assert!(
            text.contains("panels = \"main,occupancy,context\""),
            "{text}"
        );
        assert_eq!(Occupancy::IdleBlack.key(), "idle-black");
    }
}
