//! The columnar sample table.

use memscape_io::Warnings;

use crate::datasource::MemLevel;

/// Marks "no value" in index columns (cpu, symbol, source line).
pub const NONE: u32 = u32::MAX;

/// Quantitative attributes are binned in histograms and cut into windows; qualitative ones
/// (including numeric ids such as cpu or a source line number) are counted by value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AttrKind {
    Quantitative,
    Qualitative,
}

/// The values of one attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnData {
    /// Integers (time stamps, addresses, indices, ids). `u64` so 64-bit addresses stay exact.
    U64(Vec<u64>),
    /// Signed or fractional numbers.
    F64(Vec<f64>),
    /// Strings: one code per sample into `labels`, codes in order of first appearance.
    Category {
        codes: Vec<u32>,
        labels: Vec<String>,
    },
}

/// One attribute of every sample. `unknown[i]` is set where the file said `??` (or the field
/// was empty); the stored value is then 0 / `NONE` and must not be read as data.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub kind: AttrKind,
    pub data: ColumnData,
    pub unknown: crate::Bitset,
}

impl Column {
    /// The value of sample `i` as a number, `None` when unknown. Categories give their code.
    pub fn value(&self, i: usize) -> Option<f64> {
        if self.unknown.get(i) {
            return None;
        }
        match &self.data {
            ColumnData::U64(v) => v.get(i).map(|&x| x as f64),
            ColumnData::F64(v) => v.get(i).copied(),
            ColumnData::Category { codes, .. } => codes.get(i).map(|&c| f64::from(c)),
        }
    }

    /// The label of sample `i` (the category's string, or the number as text).
    pub fn label(&self, i: usize) -> Option<String> {
        if self.unknown.get(i) {
            return None;
        }
        match &self.data {
            ColumnData::U64(v) => v.get(i).map(|x| x.to_string()),
            ColumnData::F64(v) => v.get(i).map(|x| x.to_string()),
            ColumnData::Category { codes, labels } => {
                codes.get(i).and_then(|&c| labels.get(c as usize)).cloned()
            }
        }
    }

    pub fn len(&self) -> usize {
        match &self.data {
            ColumnData::U64(v) => v.len(),
            ColumnData::F64(v) => v.len(),
            ColumnData::Category { codes, .. } => codes.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Which importer produced a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SampleFormat {
    MemaxesCsv,
    MitosCsv,
    PerfScript,
}

/// Memory-access samples: typed core fields the analyses read directly, plus every attribute as
/// a named [`Column`] for histograms and selections.
#[derive(Debug, Clone)]
pub struct Samples {
    pub format: SampleFormat,
    /// Latency in cycles.
    pub latency: Vec<u64>,
    /// OS cpu number, [`NONE`] if unknown.
    pub cpu: Vec<u32>,
    /// Decoded data source.
    pub level: Vec<MemLevel>,
    /// NUMA node the sample names for its data, when the format has one ([`NONE`] otherwise).
    pub data_node: Vec<u32>,
    /// Index into `symbols`, [`NONE`] if unknown.
    pub symbol: Vec<u32>,
    pub symbols: Vec<String>,
    /// Index into `source_lines` (`file:line`), [`NONE`] if unknown.
    pub source_line: Vec<u32>,
    pub source_lines: Vec<String>,
    /// All attributes, in file order, then derived ones (`level`).
    pub columns: Vec<Column>,
    /// Bad rows and other recoverable problems.
    pub warnings: Warnings,
    /// The input's name, for warnings found later (mapping).
    pub file: String,
    /// 1-based line of each sample in the input (empty for tables built in memory).
    pub row_line: Vec<u64>,
}

impl Samples {
    pub fn len(&self) -> usize {
        self.latency.len()
    }

    pub fn is_empty(&self) -> bool {
        self.latency.is_empty()
    }

    /// The attribute called `name` (exact match first, then case-insensitive).
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name).or_else(|| {
            self.columns
                .iter()
                .find(|c| c.name.eq_ignore_ascii_case(name))
        })
    }

    /// Where sample `i` came from: `file:line`, or the sample's 1-based index when the table was
    /// not read from a file.
    pub fn location(&self, i: usize) -> memscape_io::Location {
        match self.row_line.get(i) {
            Some(&line) => memscape_io::Location::line(self.file.clone(), line),
            None => memscape_io::Location {
                file: format!("{} (sample index)", self.file),
                line: Some(i as u64 + 1),
                offset: None,
            },
        }
    }

    pub fn column_names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }
}

/// Interns strings into codes in order of first appearance.
#[derive(Debug, Default)]
pub(crate) struct Interner {
    pub labels: Vec<String>,
    index: std::collections::HashMap<String, u32>,
}

impl Interner {
    pub fn code(&mut self, label: &str) -> u32 {
        if let Some(&c) = self.index.get(label) {
            return c;
        }
        let c = self.labels.len() as u32;
        self.labels.push(label.to_owned());
        self.index.insert(label.to_owned(), c);
        c
    }
}
