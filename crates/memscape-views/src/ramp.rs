//! Continuous colour scales as a legend: the blue → red ramp with ticks that carry values and
//! units, composed once here for every view that colours by a quantity (the allocation map's
//! size, lifetime, waste and age; the radial topology's per-level samples or cycles).

use egui::{Align2, Color32, Rect, pos2};
use memscape_render::color::blue_red_srgb8;
use memscape_render::shapes::{Geometry, Shape};

use crate::label::{Label, approx_width};
use crate::picture::Picture;

/// How values map to the ramp's 0..1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Logarithmic (`lo` must be positive).
    Log,
}

/// What the values are, for their tick labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Bytes, in binary prefixes (`4 KiB`); logarithmic ticks at powers of 2.
    Bytes,
    /// A count with a unit word after an SI prefix (`12k events`, `3.5M cyc`).
    Count(&'static str),
    /// Percent (values 0..100).
    Percent,
}

/// One tick: where on the ramp (0..1) and its label.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub at: f32,
    pub text: String,
}

/// A continuous colour scale from `lo` (blue) to `hi` (red).
#[derive(Debug, Clone, PartialEq)]
pub struct ColorRamp {
    pub lo: f64,
    pub hi: f64,
    pub scale: Scale,
    pub unit: Unit,
}

/// Height of a ramp bar with its ticks and tick labels under it, in points.
pub const HEIGHT: f32 = 9.0 + 4.0 + 12.0;
const TICK_TEXT: f32 = 10.0;

impl ColorRamp {
    pub fn new(lo: f64, hi: f64, scale: Scale, unit: Unit) -> Self {
        let lo = if scale == Scale::Log {
            lo.max(1e-9)
        } else {
            lo
        };
        Self {
            lo,
            hi: hi.max(lo),
            scale,
            unit,
        }
    }

    /// Where `v` lies on the ramp (0 blue … 1 red), clamped.
    pub fn position(&self, v: f64) -> f32 {
        let t = match self.scale {
            Scale::Linear => (v - self.lo) / (self.hi - self.lo),
            Scale::Log => (v.max(self.lo).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln()),
        };
        if t.is_finite() {
            t.clamp(0.0, 1.0) as f32
        } else {
            1.0
        }
    }

    /// `v` in the ramp's unit.
    pub fn format(&self, v: f64) -> String {
        match self.unit {
            Unit::Bytes => bytes(v),
            Unit::Count(word) => {
                let s = short(v);
                if word.is_empty() {
                    s
                } else {
                    format!("{s} {word}")
                }
            }
            Unit::Percent => format!("{}%", short(v)),
        }
    }

    /// `v` as a whole number with thousands separated (`53,912 cyc`).
    fn format_whole(&self, v: f64) -> String {
        let digits = format!("{:.0}", v.abs());
        let mut grouped = String::new();
        for (k, c) in digits.chars().enumerate() {
            if k > 0 && (digits.len() - k) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(c);
        }
        let sign = if v < 0.0 { "-" } else { "" };
        match self.unit {
            Unit::Count(word) if !word.is_empty() => format!("{sign}{grouped} {word}"),
            _ => format!("{sign}{grouped}"),
        }
    }

    /// Round values inside the range (at most `max` of them), and the range's ends where they
    /// are far enough from a round one to be labelled too.
    pub fn ticks(&self, max: usize) -> Vec<Tick> {
        let max = max.max(2);
        let mut values = match self.scale {
            Scale::Linear => linear_ticks(self.lo, self.hi, max, self.unit == Unit::Bytes),
            Scale::Log => log_ticks(self.lo, self.hi, max, self.unit == Unit::Bytes),
        };
        if self.hi <= self.lo {
            values = vec![self.lo];
        }
        // Values that round alike in three digits (a narrow range far from 0) are written whole.
        let short_alike = values
            .windows(2)
            .any(|w| self.format(w[0]) == self.format(w[1]))
            || (values.len() < 2 && self.format(self.lo) == self.format(self.hi));
        let format = |v: f64| {
            if short_alike && matches!(self.unit, Unit::Count(_)) {
                self.format_whole(v)
            } else {
                self.format(v)
            }
        };
        let mut ticks: Vec<Tick> = values
            .into_iter()
            .map(|v| Tick {
                at: self.position(v),
                text: format(v),
            })
            .collect();
        // The ends say what the extremes are: label them when no round tick is near.
        let gap = 0.22;
        if self.hi > self.lo {
            if ticks.first().is_none_or(|t| t.at > gap) {
                ticks.insert(
                    0,
                    Tick {
                        at: 0.0,
                        text: format(self.lo),
                    },
                );
            }
            if ticks.last().is_none_or(|t| t.at < 1.0 - gap) {
                ticks.push(Tick {
                    at: 1.0,
                    text: format(self.hi),
                });
            }
        }
        ticks
    }

    /// Draws the ramp across `rect` (its top [`HEIGHT`] points): the colour bar, tick marks and
    /// their labels under it, kept inside `rect` horizontally and apart from each other.
    pub fn draw(&self, p: &mut Picture, rect: Rect, text: Color32) {
        let bar = Rect::from_min_size(rect.min, egui::vec2(rect.width(), 9.0));
        let steps = 48;
        for k in 0..steps {
            let c = blue_red_srgb8(k as f32 / (steps - 1) as f32);
            let x0 = bar.left() + bar.width() * k as f32 / steps as f32;
            let x1 = bar.left() + bar.width() * (k + 1) as f32 / steps as f32;
            p.shapes.push(Shape::new(
                Geometry::Rect {
                    min: [x0, bar.top()],
                    max: [(x1 + 0.5).min(bar.right()), bar.bottom()],
                    corner_px: 0.0,
                },
                [c[0], c[1], c[2], 255],
            ));
        }
        let max = ((rect.width() / 55.0).floor() as usize).clamp(2, 6);
        let mut right_of_last = f32::NEG_INFINITY;
        for tick in self.ticks(max) {
            let x = bar.left() + tick.at * bar.width();
            let w = approx_width(&tick.text, TICK_TEXT);
            // Labels stay inside the rectangle: centred, or flush with an end.
            let left = (x - 0.5 * w).clamp(rect.left(), (rect.right() - w).max(rect.left()));
            if left < right_of_last + 6.0 {
                continue;
            }
            right_of_last = left + w;
            p.shapes.push(Shape::new(
                Geometry::Segment {
                    a: [x, bar.top()],
                    b: [x, bar.bottom() + 3.0],
                    width_px: 1.0,
                },
                [235, 235, 240, 230],
            ));
            p.labels.push(Label::new(
                pos2(left, bar.bottom() + 3.0),
                tick.text,
                TICK_TEXT,
                text,
                Align2::LEFT_TOP,
            ));
        }
    }
}

/// Round linear ticks (1, 2, 5 × 10^k apart) inside [lo, hi]; `binary`: 1, 2, 5 × 10^j of a
/// binary prefix (1024^k), so that byte ticks read `20 KiB`, not `19.5 KiB`.
fn linear_ticks(lo: f64, hi: f64, max: usize, binary: bool) -> Vec<f64> {
    let span = hi - lo;
    if span.is_nan() || span <= 0.0 || !span.is_finite() {
        return Vec::new();
    }
    let raw = span / (max - 1).max(1) as f64;
    let prefix = if binary {
        1024f64.powf((raw.log(1024.0)).floor().max(0.0))
    } else {
        1.0
    };
    let mag = prefix * 10f64.powf((raw / prefix).log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= (max - 1) as f64 + 1e-9)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() * step;
    (0..=max)
        .map(|k| first + k as f64 * step)
        .filter(|v| *v <= hi + 1e-9 * span)
        .collect()
}

/// Logarithmic ticks at powers of 2 that are whole binary prefixes apart (bytes: 1 B, 1 KiB,
/// 1 MiB, … or every power of 4, 16, … when they fit), else powers of 10; every k-th power so
/// that at most `max` remain.
fn log_ticks(lo: f64, hi: f64, max: usize, binary: bool) -> Vec<f64> {
    if hi.is_nan() || lo.is_nan() || hi <= lo || lo <= 0.0 || !hi.is_finite() {
        return Vec::new();
    }
    let base: f64 = if binary { 2.0 } else { 10.0 };
    let e0 = (lo.log(base) - 1e-9).ceil() as i64;
    let e1 = (hi.log(base) + 1e-9).floor() as i64;
    if e1 < e0 {
        return Vec::new();
    }
    let count = (e1 - e0 + 1) as usize;
    // Strides that keep labels round: for bytes divisors/multiples of 10 (a prefix).
    let strides: &[i64] = if binary {
        &[1, 2, 10, 20, 30]
    } else {
        &[1, 2, 3, 6, 9, 12]
    };
    let stride = strides
        .iter()
        .copied()
        .find(|s| count.div_ceil(*s as usize) <= max)
        .unwrap_or(*strides.last().unwrap_or(&1));
    let start = e0 + (stride - e0.rem_euclid(stride)) % stride;
    (start..=e1)
        .step_by(stride as usize)
        .map(|e| base.powi(e as i32))
        .collect()
}

/// A number in at most three significant digits with an SI prefix (`12.5k`, `3M`, `0.25`).
/// The prefix is chosen after rounding: 999,999 reads `1M`, not `1000k`.
pub fn short(v: f64) -> String {
    const PREFIXES: [&str; 7] = ["", "k", "M", "G", "T", "P", "E"];
    let (x, u) = scaled(v, 1000.0, PREFIXES.len(), |x| round_to(x, trim_decimals(x)));
    format!("{}{}", trim(x), PREFIXES[u])
}

const BYTE_UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];

/// Bytes with a binary prefix, up to three significant digits (`1 B`, `4 KiB`, `1.5 MiB`).
/// The prefix is chosen after rounding: 1,048,575 B reads `1 MiB`, not `1024 KiB`.
pub fn bytes(v: f64) -> String {
    let (x, u) = scaled(v, 1024.0, BYTE_UNITS.len(), |x| {
        round_to(x, trim_decimals(x))
    });
    format!("{} {}", trim(x), BYTE_UNITS[u])
}

/// Bytes with a binary prefix and `decimals` decimals past bytes (`512 B`, `1.5 KiB`), the one
/// fixed-precision form of the views' labels (a heap tree's sizes, a map bin's peak). The
/// prefix is chosen after rounding, so that no label reads `1024.0 KiB`.
pub fn bytes_fixed(v: u64, decimals: usize) -> String {
    let (x, u) = scaled(v as f64, 1024.0, BYTE_UNITS.len(), |x| {
        round_to(x, decimals)
    });
    if u == 0 {
        format!("{v} B")
    } else {
        format!("{x:.decimals$} {}", BYTE_UNITS[u])
    }
}

/// `v` divided by `base` until what it rounds to (`rounded`) is below `base`, and how many
/// times it was divided (at most `units - 1`).
fn scaled(v: f64, base: f64, units: usize, rounded: impl Fn(f64) -> f64) -> (f64, usize) {
    let mut x = v;
    let mut u = 0;
    while rounded(x).abs() >= base && u + 1 < units {
        x /= base;
        u += 1;
    }
    (x, u)
}

fn round_to(x: f64, decimals: usize) -> f64 {
    let scale = 10f64.powi(decimals as i32);
    (x * scale).round() / scale
}

/// The decimals of three significant digits of `x`.
fn trim_decimals(x: f64) -> usize {
    if x.abs() >= 100.0 || x == x.round() {
        0
    } else if x.abs() >= 10.0 {
        1
    } else {
        2
    }
}

/// Three significant digits, no trailing zeros.
fn trim(x: f64) -> String {
    let decimals = trim_decimals(x);
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(r: &ColorRamp, max: usize) -> Vec<String> {
        r.ticks(max).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn byte_ramps_tick_at_binary_prefixes_and_label_the_largest_block() {
        let r = ColorRamp::new(1.0, 3.6 * 1024.0 * 1024.0, Scale::Log, Unit::Bytes);
        assert_eq!(texts(&r, 5), ["1 B", "1 KiB", "1 MiB"]);
        let t = r.ticks(5);
        assert!((t[1].at - 10.0 / (3.6f32 * 1048576.0).log2()).abs() < 1e-4);
        assert!(t[2].at < 1.0);
        // Past the last round tick by more than a fifth of the ramp: the largest is labelled.
        let r = ColorRamp::new(1.0, 400.0 * 1024.0 * 1024.0, Scale::Log, Unit::Bytes);
        assert_eq!(texts(&r, 3), ["1 B", "1 KiB", "1 MiB", "400 MiB"]);
    }

    #[test]
    fn linear_ramps_tick_at_round_values_with_their_unit() {
        let r = ColorRamp::new(0.0, 100.0, Scale::Linear, Unit::Percent);
        assert_eq!(texts(&r, 5), ["0%", "50%", "100%"]);
        assert_eq!(texts(&r, 6), ["0%", "20%", "40%", "60%", "80%", "100%"]);
        let e = ColorRamp::new(0.0, 26_013.0, Scale::Linear, Unit::Count("events"));
        assert_eq!(
            texts(&e, 4),
            ["0 events", "10k events", "20k events", "26k events"]
        );
        let c = ColorRamp::new(1234.0, 98_765.0, Scale::Log, Unit::Count("cyc"));
        assert_eq!(texts(&c, 4), ["1.23k cyc", "10k cyc", "98.8k cyc"]);
    }

    #[test]
    fn a_value_that_rounds_up_to_the_next_prefix_is_written_in_it() {
        assert_eq!(bytes(1_048_575.0), "1 MiB");
        assert_eq!(bytes(1023.9), "1 KiB");
        assert_eq!(bytes(1023.0), "1023 B");
        assert_eq!(short(999_999.0), "1M");
        assert_eq!(short(999.6), "1k");
        assert_eq!(short(999.0), "999");
        // Past giga: time stamps in ns (LULESH's 3.6e15) read in three digits too.
        assert_eq!(short(3_617_250_629_717_268.0), "3.62P");
        assert_eq!(short(999_999_999_999.0), "1T");
        assert_eq!(bytes_fixed(1_048_575, 1), "1.0 MiB");
        assert_eq!(bytes_fixed(1_048_000, 1), "1023.4 KiB");
        assert_eq!(bytes_fixed(1023, 1), "1023 B");
        assert_eq!(bytes_fixed(1536, 1), "1.5 KiB");
    }

    #[test]
    fn linear_byte_ramps_tick_at_round_binary_values() {
        let r = ColorRamp::new(-40_960.0, 40_960.0, Scale::Linear, Unit::Bytes);
        assert_eq!(
            texts(&r, 5),
            ["-40 KiB", "-20 KiB", "0 B", "20 KiB", "40 KiB"]
        );
    }

    #[test]
    fn a_narrow_range_far_from_zero_is_written_whole() {
        let r = ColorRamp::new(53_881.0, 53_947.0, Scale::Linear, Unit::Count("cyc"));
        let t = texts(&r, 3);
        assert_eq!(t, ["53,881 cyc", "53,900 cyc", "53,947 cyc"]);
    }

    #[test]
    fn a_flat_range_has_one_tick() {
        let r = ColorRamp::new(7.0, 7.0, Scale::Linear, Unit::Count("samples"));
        assert_eq!(texts(&r, 4), ["7 samples"]);
    }

    #[test]
    fn drawn_tick_labels_stay_inside_and_apart() {
        let mut p = Picture::default();
        let rect = Rect::from_min_size(pos2(10.0, 10.0), egui::vec2(180.0, HEIGHT));
        ColorRamp::new(1.0, 1e9, Scale::Log, Unit::Bytes).draw(&mut p, rect, Color32::WHITE);
        assert!(p.labels.len() >= 2);
        let mut right = f32::NEG_INFINITY;
        for l in &p.labels {
            let w = approx_width(&l.text, l.size);
            assert!(
                l.pos.x >= rect.left() && l.pos.x + w <= rect.right() + 0.5,
                "{l:?}"
            );
            assert!(l.pos.x > right, "{l:?} overlaps its left neighbour");
            right = l.pos.x + w;
        }
    }
}
