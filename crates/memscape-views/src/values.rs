//! Value types of settings that read the same on the command line and in tour files: ranges
//! (`T0..T1` there, `[t0, t1]` here), comma-separated lists (a string or an array in TOML) and
//! settings that the model crates parse from text.

use std::fmt;
use std::str::FromStr;

/// `START..END` of u64 (hex with `0x` or decimal on the command line; `[start, end]` in TOML).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(from = "[u64; 2]", into = "[u64; 2]")]
pub struct U64Range {
    pub start: u64,
    pub end: u64,
}

impl U64Range {
    pub fn new(start: u64, end: u64) -> Self {
        Self { start, end }
    }
}

impl From<[u64; 2]> for U64Range {
    fn from(r: [u64; 2]) -> Self {
        Self::new(r[0], r[1])
    }
}

impl From<U64Range> for [u64; 2] {
    fn from(r: U64Range) -> Self {
        [r.start, r.end]
    }
}

/// A u64 in hex (`0x…`) or decimal.
pub fn parse_u64(s: &str) -> Result<u64, String> {
    let t = s.trim();
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse(),
    }
    .map_err(|e| format!("{s:?}: {e}"))
}

impl FromStr for U64Range {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (a, b) = s
            .split_once("..")
            .ok_or_else(|| format!("{s:?}: expected START..END"))?;
        let (a, b) = (parse_u64(a)?, parse_u64(b)?);
        if a >= b {
            return Err(format!("{s:?}: START must be below END"));
        }
        Ok(Self::new(a, b))
    }
}

impl fmt::Display for U64Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// `A..B`: two different snapshot indices (from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(from = "[usize; 2]", into = "[usize; 2]")]
pub struct SnapshotPair {
    pub from: usize,
    pub to: usize,
}

impl From<[usize; 2]> for SnapshotPair {
    fn from(p: [usize; 2]) -> Self {
        Self {
            from: p[0],
            to: p[1],
        }
    }
}

impl From<SnapshotPair> for [usize; 2] {
    fn from(p: SnapshotPair) -> Self {
        [p.from, p.to]
    }
}

impl FromStr for SnapshotPair {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let (a, b) = s
            .split_once("..")
            .ok_or_else(|| format!("{s:?}: expected A..B (two snapshot indices)"))?;
        let parse = |t: &str| {
            t.trim()
                .parse::<usize>()
                .map_err(|e| format!("{s:?}: {t:?}: {e}"))
        };
        let (from, to) = (parse(a)?, parse(b)?);
        if from == to {
            return Err(format!("{s:?}: the two snapshots must differ"));
        }
        Ok(Self { from, to })
    }
}

/// (De)serializes a list as one comma-separated string, and reads an array too: tour files
/// written before the settings were typed say `panels = "main,occupancy"`.
pub mod comma_list {
    use std::fmt::Display;
    use std::str::FromStr;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<T: Display, S: Serializer>(items: &[T], s: S) -> Result<S::Ok, S::Error> {
        let text: Vec<String> = items.iter().map(ToString::to_string).collect();
        s.serialize_str(&text.join(","))
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Text(String),
        List(Vec<String>),
    }

    pub fn deserialize<'de, T, D>(d: D) -> Result<Vec<T>, D::Error>
    where
        T: FromStr,
        T::Err: Display,
        D: Deserializer<'de>,
    {
        // An array reads as its items joined by commas: both forms of a list mean the same
        // (the string form is what is written back), so a list read, written and read again
        // is the same list (`[" a"]` was `" a"` once and `"a"` after a round trip).
        let text = match Either::deserialize(d)? {
            Either::Text(t) => t,
            Either::List(l) => l.join(","),
        };
        text.split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| p.parse::<T>().map_err(serde::de::Error::custom))
            .collect()
    }
}

/// An `f32` written as its shortest decimal (`0.8`, not `0.800000011920929`) in tour files.
pub mod short_f32 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f32, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(format!("{v}").parse::<f64>().unwrap_or(f64::from(*v)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
        f32::deserialize(d)
    }
}

/// [`short_f32`] of an optional value.
pub mod short_f32_option {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<f32>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => super::short_f32::serialize(v, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f32>, D::Error> {
        Option::<f32>::deserialize(d)
    }
}

/// Serde through `Display`/`FromStr` for a setting whose text form a model crate defines (a
/// grouping, a metric, a topology depth).
#[macro_export]
macro_rules! text_setting {
    ($name:ty) => {
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

/// The name clap and serde give a unit variant: its value name (`IdleBlack` → `idle-black`).
pub fn value_name<T: serde::Serialize>(value: &T) -> String {
    toml::Value::try_from(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_and_reject_nonsense() {
        assert_eq!("0x10..0x20".parse(), Ok(U64Range::new(16, 32)));
        assert_eq!("5..7".parse(), Ok(U64Range::new(5, 7)));
        assert!("7..5".parse::<U64Range>().is_err());
        assert!("7".parse::<U64Range>().is_err());
        assert_eq!(
            "3..0".parse(),
            Ok(SnapshotPair { from: 3, to: 0 }),
            "B may be below A"
        );
        assert!("2..2".parse::<SnapshotPair>().is_err());
    }
}
