//! Histograms per attribute and top offenders.

use crate::table::{AttrKind, Column, NONE};
use crate::{Bitset, Samples, SamplesError};

/// One bar of a histogram.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Bin {
    /// Value range `[lo, hi)` (the last bin of a quantitative histogram includes `hi`); for
    /// qualitative bins `lo == hi` is the value (category code for strings).
    pub lo: f64,
    pub hi: f64,
    /// The value's label for qualitative bins.
    pub label: Option<String>,
    /// All samples in the bin.
    pub count: u64,
    /// Selected samples in the bin (equal to `count` without a selection).
    pub selected: u64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Histogram {
    pub attribute: String,
    pub kind: AttrKind,
    pub bins: Vec<Bin>,
    /// Samples whose value is unknown (`??`).
    pub unknown: u64,
}

/// Equal-width bins (or windows) over a value range `[lo, hi]`: the edges every histogram,
/// linked-selection axis and window strip uses, natively or on the query engine, so that all of
/// them put a value in the same bin bit for bit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EqualWidth {
    pub lo: f64,
    pub hi: f64,
    /// `(hi − lo) / count`, or 1 when the range is a single value.
    pub width: f64,
    /// At least 1.
    pub count: usize,
}

impl EqualWidth {
    pub fn new(lo: f64, hi: f64, count: usize) -> Self {
        let count = count.max(1);
        let width = if hi > lo {
            (hi - lo) / count as f64
        } else {
            1.0
        };
        Self {
            lo,
            hi,
            width,
            count,
        }
    }

    /// Over the known values of `column`; `None` when it has none.
    pub fn of_column(column: &Column, count: usize) -> Option<Self> {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for i in 0..column.len() {
            if let Some(v) = column.value(i) {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        (lo <= hi).then(|| Self::new(lo, hi, count))
    }

    /// The bin of `v` (`⌊(v − lo) / width⌋`, the top value in the last bin).
    pub fn index(&self, v: f64) -> usize {
        (((v - self.lo) / self.width) as usize).min(self.count - 1)
    }

    /// `[lo, hi]` of window `w` (a window strip's range).
    pub fn window(&self, w: usize) -> [f64; 2] {
        [
            self.lo + self.width * w as f64,
            self.lo + self.width * (w + 1) as f64,
        ]
    }

    /// The histogram's bars with no samples yet (the last one ends at `hi`, at least one width
    /// after `lo`).
    pub fn empty_bins(&self) -> Vec<Bin> {
        (0..self.count)
            .map(|b| Bin {
                lo: self.lo + self.width * b as f64,
                hi: if b + 1 == self.count {
                    self.hi.max(self.lo + self.width)
                } else {
                    self.lo + self.width * (b + 1) as f64
                },
                label: None,
                count: 0,
                selected: 0,
            })
            .collect()
    }
}

/// Histogram of one attribute: quantitative attributes in `bins` equal-width bins over the
/// whole data's range (so the selection is drawn against the same bins), qualitative ones one
/// bin per distinct value in order of first appearance.
pub fn histogram(
    samples: &Samples,
    attribute: &str,
    bins: usize,
    selection: Option<&Bitset>,
) -> Result<Histogram, SamplesError> {
    let column = samples
        .column(attribute)
        .ok_or_else(|| SamplesError::UnknownAttribute {
            name: attribute.to_owned(),
            available: samples.column_names().join(", "),
        })?;
    let n = column.len();
    let selected = |i: usize| selection.is_none_or(|s| s.get(i));
    let mut unknown = 0u64;
    match column.kind {
        AttrKind::Quantitative => {
            let mut out: Vec<Bin> = Vec::new();
            match EqualWidth::of_column(column, bins) {
                Some(edges) => {
                    out = edges.empty_bins();
                    for i in 0..n {
                        match column.value(i) {
                            Some(v) => {
                                let b = edges.index(v);
                                out[b].count += 1;
                                if selected(i) {
                                    out[b].selected += 1;
                                }
                            }
                            None => unknown += 1,
                        }
                    }
                }
                None => unknown = n as u64,
            }
            Ok(Histogram {
                attribute: column.name.clone(),
                kind: column.kind,
                bins: out,
                unknown,
            })
        }
        AttrKind::Qualitative => {
            // Order of first appearance; values keyed by their exact bits.
            let mut index: std::collections::HashMap<u64, usize> = Default::default();
            let mut out: Vec<Bin> = Vec::new();
            for i in 0..n {
                let Some(v) = column.value(i) else {
                    unknown += 1;
                    continue;
                };
                let slot = *index.entry(v.to_bits()).or_insert_with(|| {
                    out.push(Bin {
                        lo: v,
                        hi: v,
                        label: column.label(i),
                        count: 0,
                        selected: 0,
                    });
                    out.len() - 1
                });
                out[slot].count += 1;
                if selected(i) {
                    out[slot].selected += 1;
                }
            }
            Ok(Histogram {
                attribute: column.name.clone(),
                kind: column.kind,
                bins: out,
                unknown,
            })
        }
    }
}

/// One entry of a top-offenders chart.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Offender {
    pub name: String,
    pub samples: u64,
    pub cycles: u64,
}

/// What to rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffenderKey {
    /// `file:line`.
    SourceLine,
    /// Data symbol (MemAxes `variable`, perf `sym`).
    Symbol,
}

/// Total latency per source line or data symbol over the selection, descending by cycles
/// (ties: more samples first, then name), at most `limit` entries. Samples with an unknown
/// line or symbol are left out.
pub fn top_offenders(
    samples: &Samples,
    key: OffenderKey,
    selection: Option<&Bitset>,
    limit: usize,
) -> Vec<Offender> {
    let (codes, labels) = match key {
        OffenderKey::SourceLine => (&samples.source_line, &samples.source_lines),
        OffenderKey::Symbol => (&samples.symbol, &samples.symbols),
    };
    let mut totals = vec![(0u64, 0u64); labels.len()];
    let mut add = |i: usize| {
        let c = codes[i];
        if c != NONE
            && let Some(t) = totals.get_mut(c as usize)
        {
            t.0 += 1;
            t.1 = t.1.saturating_add(samples.latency[i]);
        }
    };
    match selection {
        Some(s) => s.iter().filter(|&i| i < codes.len()).for_each(&mut add),
        None => (0..codes.len()).for_each(&mut add),
    }
    ranked_offenders(&totals, labels, limit)
}

/// Offenders from per-code (samples, cycles) totals: cycles descending, then samples, then
/// name; codes without samples left out; at most `limit`.
pub(crate) fn ranked_offenders(
    totals: &[(u64, u64)],
    labels: &[String],
    limit: usize,
) -> Vec<Offender> {
    rank_offenders(
        totals
            .iter()
            .zip(labels)
            .map(|(&(samples, cycles), name)| Offender {
                name: name.clone(),
                samples,
                cycles,
            })
            .collect(),
        limit,
    )
}

/// The top-offenders order: cycles descending, then samples, then name; offenders without
/// samples left out; at most `limit` (also the engine's, whose totals come grouped by name).
pub fn rank_offenders(mut offenders: Vec<Offender>, limit: usize) -> Vec<Offender> {
    offenders.retain(|o| o.samples > 0);
    offenders.sort_by(|a, b| {
        b.cycles
            .cmp(&a.cycles)
            .then(b.samples.cmp(&a.samples))
            .then(a.name.cmp(&b.name))
    });
    offenders.truncate(limit);
    offenders
}

/// The samples of one offender (for "click selects those samples").
pub fn select_offender(samples: &Samples, key: OffenderKey, name: &str) -> Bitset {
    let (codes, labels) = match key {
        OffenderKey::SourceLine => (&samples.source_line, &samples.source_lines),
        OffenderKey::Symbol => (&samples.symbol, &samples.symbols),
    };
    let Some(code) = labels.iter().position(|l| l == name) else {
        return Bitset::new(samples.len());
    };
    Bitset::from_fn(samples.len(), |i| codes[i] == code as u32)
}

/// Count, total and mean latency of a selection, and its share of all samples (the selection
/// panel).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SelectionSummary {
    pub samples: u64,
    pub cycles: u64,
    pub mean_latency: Option<f64>,
    pub share: f64,
}

pub fn summarize(samples: &Samples, selection: &Bitset) -> SelectionSummary {
    let mut count = 0u64;
    let mut cycles = 0u64;
    for i in selection.iter().filter(|&i| i < samples.len()) {
        count += 1;
        cycles = cycles.saturating_add(samples.latency[i]);
    }
    SelectionSummary {
        samples: count,
        cycles,
        mean_latency: (count > 0).then(|| cycles as f64 / count as f64),
        share: if samples.is_empty() {
            0.0
        } else {
            count as f64 / samples.len() as f64
        },
    }
}
