//! Selections as bitsets over sample indices, and range selections on attributes.

use crate::{Samples, SamplesError};

/// A set of sample indices, one bit per sample.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Bitset {
    words: Vec<u64>,
    len: usize,
}

impl Bitset {
    /// All clear.
    pub fn new(len: usize) -> Self {
        Bitset {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// All set.
    pub fn full(len: usize) -> Self {
        let mut b = Bitset {
            words: vec![u64::MAX; len.div_ceil(64)],
            len,
        };
        b.clear_tail();
        b
    }

    /// The set of `i < len` with `f(i)`, built a word at a time.
    pub fn from_fn(len: usize, mut f: impl FnMut(usize) -> bool) -> Self {
        let mut words = vec![0u64; len.div_ceil(64)];
        for (wi, word) in words.iter_mut().enumerate() {
            let base = wi * 64;
            let mut bits = 0u64;
            for j in 0..(len - base).min(64) {
                bits |= u64::from(f(base + j)) << j;
            }
            *word = bits;
        }
        Bitset { words, len }
    }

    /// The 64-bit words (bit `i % 64` of word `i / 64` is sample `i`; bits past the universe
    /// are clear).
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Keeps only the members also in `other`, in place (one pass over the words).
    pub fn intersect_with(&mut self, other: &Bitset) {
        for (i, w) in self.words.iter_mut().enumerate() {
            *w &= other.words.get(i).copied().unwrap_or(0);
        }
    }

    /// Adds the members of `other`, in place (one pass over the words).
    pub fn union_with(&mut self, other: &Bitset) {
        if other.len > self.len {
            self.len = other.len;
            self.words.resize(self.len.div_ceil(64), 0);
        }
        for (w, o) in self.words.iter_mut().zip(&other.words) {
            *w |= o;
        }
    }

    fn clear_tail(&mut self) {
        let rem = self.len % 64;
        if rem != 0
            && let Some(last) = self.words.last_mut()
        {
            *last &= (1u64 << rem) - 1;
        }
    }

    /// Number of samples the set ranges over (not the number selected).
    pub fn universe(&self) -> usize {
        self.len
    }

    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] & (1 << (i % 64)) != 0
    }

    /// Grows the universe to `len` if needed and sets bit `i`.
    pub fn set(&mut self, i: usize) {
        if i >= self.len {
            self.len = i + 1;
            self.words.resize(self.len.div_ceil(64), 0);
        }
        self.words[i / 64] |= 1 << (i % 64);
    }

    /// How many are selected.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    fn zip(&self, other: &Bitset, f: impl Fn(u64, u64) -> u64) -> Bitset {
        let len = self.len.max(other.len);
        let n = len.div_ceil(64);
        let words = (0..n)
            .map(|i| {
                f(
                    self.words.get(i).copied().unwrap_or(0),
                    other.words.get(i).copied().unwrap_or(0),
                )
            })
            .collect();
        let mut b = Bitset { words, len };
        b.clear_tail();
        b
    }

    pub fn union(&self, other: &Bitset) -> Bitset {
        self.zip(other, |a, b| a | b)
    }

    pub fn intersection(&self, other: &Bitset) -> Bitset {
        self.zip(other, |a, b| a & b)
    }

    pub fn difference(&self, other: &Bitset) -> Bitset {
        self.zip(other, |a, b| a & !b)
    }

    pub fn complement(&self) -> Bitset {
        let mut b = Bitset {
            words: self.words.iter().map(|w| !w).collect(),
            len: self.len,
        };
        b.clear_tail();
        b
    }

    /// Selected indices in ascending order, in time linear in the number of words plus the
    /// number selected.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &w)| {
            let mut word = w;
            std::iter::from_fn(move || {
                if word == 0 {
                    return None;
                }
                let bit = word.trailing_zeros() as usize;
                word &= word - 1;
                Some(wi * 64 + bit)
            })
        })
    }
}

/// `ATTR=LO..HI` (either bound may be omitted: `latency=100..`), inclusive on both ends.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RangeSpec {
    pub attribute: String,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

impl RangeSpec {
    /// Parses the CLI's `--select ATTR=LO..HI`.
    pub fn parse(text: &str) -> Result<Self, SamplesError> {
        let bad = |why: &str| SamplesError::BadSelection {
            spec: text.to_owned(),
            why: why.to_owned(),
        };
        let (attribute, range) = text
            .split_once('=')
            .ok_or_else(|| bad("expected ATTR=LO..HI"))?;
        let (lo, hi) = range
            .split_once("..")
            .ok_or_else(|| bad("expected LO..HI after '='"))?;
        let number = |s: &str| -> Result<Option<f64>, SamplesError> {
            let s = s.trim().trim_start_matches('=');
            if s.is_empty() {
                return Ok(None);
            }
            if let Some(hex) = s.strip_prefix("0x") {
                return u64::from_str_radix(hex, 16)
                    .map(|v| Some(v as f64))
                    .map_err(|_| bad("bound is not a number"));
            }
            s.parse::<f64>()
                .map(Some)
                .map_err(|_| bad("bound is not a number"))
        };
        let attribute = attribute.trim();
        if attribute.is_empty() {
            return Err(bad("empty attribute name"));
        }
        Ok(RangeSpec {
            attribute: attribute.to_owned(),
            lo: number(lo)?,
            hi: number(hi)?,
        })
    }
}

/// Samples whose attribute lies in `[lo, hi]` (unknown values never match). For categorical
/// attributes the bounds apply to the category codes; numbers as labels are better selected
/// on numeric attributes.
pub fn select_range(samples: &Samples, spec: &RangeSpec) -> Result<Bitset, SamplesError> {
    let column = samples
        .column(&spec.attribute)
        .ok_or_else(|| SamplesError::UnknownAttribute {
            name: spec.attribute.clone(),
            available: samples.column_names().join(", "),
        })?;
    let lo = spec.lo.unwrap_or(f64::NEG_INFINITY);
    let hi = spec.hi.unwrap_or(f64::INFINITY);
    Ok(Bitset::from_fn(samples.len(), |i| {
        column.value(i).is_some_and(|v| v >= lo && v <= hi)
    }))
}

/// The intersection of several range selections (all samples when `specs` is empty).
pub fn select_all_ranges(samples: &Samples, specs: &[RangeSpec]) -> Result<Bitset, SamplesError> {
    let mut selection = Bitset::full(samples.len());
    for spec in specs {
        selection = selection.intersection(&select_range(samples, spec)?);
    }
    Ok(selection)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_algebra() {
        let a = Bitset::from_fn(130, |i| i % 2 == 0);
        let b = Bitset::from_fn(130, |i| i % 3 == 0);
        let u = a.union(&b);
        let n = a.intersection(&b);
        for i in 0..130 {
            assert_eq!(u.get(i), i % 2 == 0 || i % 3 == 0);
            assert_eq!(n.get(i), i % 6 == 0);
            assert_eq!(a.difference(&b).get(i), i % 2 == 0 && i % 3 != 0);
            assert_eq!(a.complement().get(i), i % 2 != 0);
        }
        assert_eq!(n.count(), n.iter().count());
        assert_eq!(
            n.iter().collect::<Vec<_>>(),
            (0..130).filter(|i| i % 6 == 0).collect::<Vec<_>>()
        );
        assert_eq!(Bitset::full(130).count(), 130);
        assert_eq!(Bitset::full(130).complement().count(), 0);
    }

    #[test]
    fn range_specs() {
        let r = RangeSpec::parse("latency=100..200").unwrap();
        assert_eq!((r.lo, r.hi), (Some(100.0), Some(200.0)));
        let r = RangeSpec::parse("time=0x10..").unwrap();
        assert_eq!((r.lo, r.hi), (Some(16.0), None));
        assert!(RangeSpec::parse("latency").is_err());
        assert!(RangeSpec::parse("latency=a..b").is_err());
    }
}
