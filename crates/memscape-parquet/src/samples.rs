//! Memory-access samples as Parquet datasets: one table, `samples`, partitioned by host and
//! time window, with memscape's decoded core fields (`ms_*`) beside every attribute of the
//! input under its own name.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, StringArray, UInt32Array, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use memscape_samples::{
    AttrKind, Bitset, Column, ColumnData, MemLevel, NONE, SampleFormat, Samples,
};

use crate::schema::{self, Columns};
use crate::{DatasetKind, HostEntry, Manifest, Result, invalid, partition_dir, partition_files};

/// Core columns, before the attributes.
pub const CORE_COLUMNS: [&str; 8] = [
    "ms_row",
    "ms_line",
    "ms_latency",
    "ms_cpu",
    "ms_level",
    "ms_data_node",
    "ms_symbol",
    "ms_source_line",
];

/// How to write samples.
#[derive(Debug, Clone)]
pub struct SamplesWriteOptions {
    pub host: String,
    /// Number of windows the `time` attribute's range (or the rows, without one) is cut into.
    pub windows: u64,
}

impl Default for SamplesWriteOptions {
    fn default() -> Self {
        Self {
            host: String::from("local"),
            windows: 16,
        }
    }
}

/// An attribute as the manifest describes it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AttributeMeta {
    pub name: String,
    /// `quantitative` or `qualitative`.
    pub kind: String,
    /// `u64`, `f64` or `string`.
    #[serde(rename = "type")]
    pub ty: String,
}

/// The samples' description in the manifest.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SamplesMeta {
    /// `memaxes_csv`, `mitos_csv` or `perf_script`.
    pub format: String,
    pub file: String,
    pub attributes: Vec<AttributeMeta>,
    /// The attribute the windows cut (`time`), or `null` when windows are row ranges.
    pub time_attribute: Option<String>,
}

fn format_name(f: SampleFormat) -> &'static str {
    match f {
        SampleFormat::MemaxesCsv => "memaxes_csv",
        SampleFormat::MitosCsv => "mitos_csv",
        SampleFormat::PerfScript => "perf_script",
    }
}

fn parse_format(s: &str) -> Option<SampleFormat> {
    match s {
        "memaxes_csv" => Some(SampleFormat::MemaxesCsv),
        "mitos_csv" => Some(SampleFormat::MitosCsv),
        "perf_script" => Some(SampleFormat::PerfScript),
        _ => None,
    }
}

/// The level of a `ms_level` label.
pub fn level_of(label: &str) -> Option<MemLevel> {
    MemLevel::ALL.into_iter().find(|l| l.label() == label)
}

fn kind_name(k: AttrKind) -> &'static str {
    match k {
        AttrKind::Quantitative => "quantitative",
        AttrKind::Qualitative => "qualitative",
    }
}

/// The time attribute the windows cut: `time` when it is an integer attribute.
fn time_column(samples: &Samples) -> Option<&Column> {
    samples
        .column("time")
        .filter(|c| matches!(c.data, ColumnData::U64(_)))
}

/// Writes `samples` into the dataset at `dir` as host `options.host` (replacing it).
pub fn write_samples(
    samples: &Samples,
    dir: &Path,
    options: &SamplesWriteOptions,
) -> Result<crate::trace::WriteSummary> {
    crate::check_host(&options.host).map_err(|why| invalid(dir, why))?;
    let n = samples.len();
    if samples.columns.iter().any(|c| c.len() != n)
        || [
            samples.cpu.len(),
            samples.level.len(),
            samples.data_node.len(),
        ]
        .iter()
        .chain([samples.symbol.len(), samples.source_line.len()].iter())
        .any(|&l| l != n)
    {
        return Err(invalid(dir, "the samples' columns differ in length"));
    }
    if let Some(c) = samples
        .columns
        .iter()
        .find(|c| CORE_COLUMNS.contains(&c.name.as_str()))
    {
        return Err(invalid(
            dir,
            format!("attribute {:?} clashes with a core column", c.name),
        ));
    }
    std::fs::create_dir_all(dir).map_err(crate::io_err(dir))?;
    let mut manifest = Manifest::open_or_new(dir, DatasetKind::Samples)?;
    crate::remove_host(dir, &["samples"], &options.host)?;

    // Windows over the time attribute's known range, else over the rows.
    let time = time_column(samples);
    let key: Vec<u64> = match time {
        Some(c) => (0..n)
            .map(|i| c.value(i).map_or(u64::MAX, |v| v as u64))
            .collect(),
        None => (0..n as u64).collect(),
    };
    let (lo, hi) = key
        .iter()
        .filter(|&&k| k != u64::MAX || time.is_none())
        .fold((u64::MAX, 0u64), |(lo, hi), &k| (lo.min(k), hi.max(k)));
    let lo = if lo > hi { 0 } else { lo };
    let span = hi.saturating_sub(lo).saturating_add(1);
    let width = span.div_ceil(options.windows.max(1)).max(1);
    let mut groups: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    for (i, &k) in key.iter().enumerate() {
        // Samples without a time go to the window of their neighbour in the input.
        let w = if k == u64::MAX { 0 } else { (k - lo) / width };
        groups.entry(w).or_default().push(i as u32);
    }

    let mut fields = vec![
        Field::new("ms_row", DataType::UInt64, false),
        Field::new("ms_line", DataType::UInt64, false),
        Field::new("ms_latency", DataType::UInt64, false),
        Field::new("ms_cpu", DataType::UInt32, true),
        Field::new("ms_level", DataType::Utf8, false),
        Field::new("ms_data_node", DataType::UInt32, true),
        Field::new("ms_symbol", DataType::Utf8, true),
        Field::new("ms_source_line", DataType::Utf8, true),
    ];
    let mut attributes = Vec::new();
    for c in &samples.columns {
        let (dt, ty) = match c.data {
            ColumnData::U64(_) => (DataType::UInt64, "u64"),
            ColumnData::F64(_) => (DataType::Float64, "f64"),
            ColumnData::Category { .. } => (DataType::Utf8, "string"),
        };
        let kind = kind_name(c.kind);
        fields.push(Field::new(&c.name, dt, true).with_metadata(HashMap::from([(
            String::from("memscape.kind"),
            kind.to_owned(),
        )])));
        attributes.push(AttributeMeta {
            name: c.name.clone(),
            kind: kind.to_owned(),
            ty: ty.to_owned(),
        });
    }
    let schema = Arc::new(Schema::new(fields));
    let mut files = 0;
    for (&w, rows) in &groups {
        let path =
            partition_dir(dir, "samples", &options.host, None, Some(w)).join("part-0.parquet");
        let r = || rows.iter().map(|&r| r as usize);
        let opt_code = |codes: &[u32], labels: &[String]| -> ArrayRef {
            Arc::new(StringArray::from_iter(r().map(|i| {
                labels
                    .get(codes[i] as usize)
                    .filter(|_| codes[i] != NONE)
                    .map(String::as_str)
            })))
        };
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(UInt64Array::from_iter_values(r().map(|i| i as u64))),
            Arc::new(UInt64Array::from_iter_values(
                r().map(|i| samples.row_line.get(i).copied().unwrap_or(0)),
            )),
            Arc::new(UInt64Array::from_iter_values(
                r().map(|i| samples.latency[i]),
            )),
            Arc::new(UInt32Array::from_iter(
                r().map(|i| Some(samples.cpu[i]).filter(|&c| c != NONE)),
            )),
            Arc::new(StringArray::from_iter_values(
                r().map(|i| samples.level[i].label()),
            )),
            Arc::new(UInt32Array::from_iter(
                r().map(|i| Some(samples.data_node[i]).filter(|&c| c != NONE)),
            )),
            opt_code(&samples.symbol, &samples.symbols),
            opt_code(&samples.source_line, &samples.source_lines),
        ];
        for c in &samples.columns {
            let known = |i: usize| !c.unknown.get(i);
            columns.push(match &c.data {
                ColumnData::U64(v) => {
                    Arc::new(UInt64Array::from_iter(r().map(|i| known(i).then(|| v[i]))))
                }
                ColumnData::F64(v) => {
                    Arc::new(Float64Array::from_iter(r().map(|i| known(i).then(|| v[i]))))
                }
                ColumnData::Category { codes, labels } => {
                    Arc::new(StringArray::from_iter(r().map(|i| {
                        known(i)
                            .then(|| labels.get(codes[i] as usize).map(String::as_str))
                            .flatten()
                    })))
                }
            });
        }
        schema::write_batch(&path, &schema::batch(&path, schema.clone(), columns)?)?;
        files += 1;
    }
    let meta = SamplesMeta {
        format: format_name(samples.format).to_owned(),
        file: samples.file.clone(),
        attributes,
        time_attribute: time.map(|c| c.name.clone()),
    };
    manifest.hosts.insert(
        options.host.clone(),
        HostEntry {
            window: width,
            window_origin: lo,
            rows: n as u64,
            events: 0,
            meta: serde_json::to_value(&meta).map_err(|e| invalid(dir, e.to_string()))?,
        },
    );
    manifest.write(dir)?;
    Ok(crate::trace::WriteSummary {
        files,
        rows: n as u64,
        events: 0,
    })
}

/// Codes in order of first appearance, as the importers intern them.
#[derive(Default)]
struct Codes {
    labels: Vec<String>,
    index: HashMap<String, u32>,
}

impl Codes {
    fn code(&mut self, s: &str) -> u32 {
        if let Some(&c) = self.index.get(s) {
            return c;
        }
        let c = self.labels.len() as u32;
        self.labels.push(s.to_owned());
        self.index.insert(s.to_owned(), c);
        c
    }
}

/// The samples' description of host `host` of the dataset at `dir`.
pub fn samples_meta(dir: &Path, manifest: &Manifest, host: &str) -> Result<SamplesMeta> {
    let entry = manifest
        .hosts
        .get(host)
        .ok_or_else(|| invalid(dir, format!("no host {host:?}")))?;
    serde_json::from_value(entry.meta.clone()).map_err(|e| {
        invalid(
            &dir.join(crate::MANIFEST),
            format!("host {host:?} meta: {e}"),
        )
    })
}

/// One cell of an attribute while reading.
enum Cells {
    U64(Vec<Option<u64>>),
    F64(Vec<Option<f64>>),
    Str(Vec<Option<String>>),
}

/// Reads host `host` (the only one when `None`) of the samples dataset at `dir`.
pub fn read_samples(dir: &Path, host: Option<&str>) -> Result<Samples> {
    read_samples_rows(dir, host, None).map(|head| head.samples)
}

/// A bounded read of a samples dataset: its first rows and how many it holds.
#[derive(Debug)]
pub struct SamplesHead {
    /// The first rows of the files in partition order (numbered 0.. in that order; every
    /// row when `total` is at most the limit, then in `ms_row` order).
    pub samples: Samples,
    /// Rows of the host in the dataset (its manifest's count).
    pub total: u64,
}

/// At most `limit` samples of host `host` (the only one when `None`) of the dataset at `dir`,
/// read file by file and stopped there: what a view drawing from a query engine keeps in
/// memory (the labels, attributes and the first samples), without reading every sample.
/// At most `limit` rows: the whole host, read as [`read_samples`] reads it.
pub fn read_samples_head(dir: &Path, host: Option<&str>, limit: usize) -> Result<SamplesHead> {
    read_samples_rows(dir, host, Some(limit))
}

/// The rows of one host: every one placed by `ms_row`, or (`limit` below the count) the first
/// `limit` in file order.
fn read_samples_rows(dir: &Path, host: Option<&str>, limit: Option<usize>) -> Result<SamplesHead> {
    let manifest = Manifest::read(dir)?;
    if manifest.kind != DatasetKind::Samples {
        return Err(invalid(dir, "is an allocation-trace dataset, not samples"));
    }
    let host = manifest.pick_host(dir, host)?;
    let meta = samples_meta(dir, &manifest, &host)?;
    let total_rows = manifest.hosts[&host].rows;
    let all = usize::try_from(total_rows).map_err(|_| invalid(dir, "too many rows"))?;
    // A head: rows numbered as read, the files not read past it.
    let head = limit.filter(|&l| l < all);
    let n = head.unwrap_or(all);
    let format = parse_format(&meta.format)
        .ok_or_else(|| invalid(dir, format!("unknown samples format {:?}", meta.format)))?;
    let files = partition_files(dir, "samples", Some(&host))?;
    // Rows are placed by ms_row; the manifest's count is checked against the files first.
    let mut batches = Vec::new();
    let mut total = 0usize;
    'files: for f in &files {
        for b in schema::file_batches(&f.path)? {
            let b = b?;
            if let Some(limit) = head {
                let take = b.num_rows().min(limit - total);
                total += take;
                batches.push((f.path.clone(), b.slice(0, take)));
                if total == limit {
                    break 'files;
                }
                continue;
            }
            total += b.num_rows();
            batches.push((f.path.clone(), b));
        }
    }
    if total != n {
        return Err(invalid(
            dir,
            format!("samples: the manifest says {all} rows, the files hold {total}"),
        ));
    }
    let mut seen = vec![false; n];
    let mut row_line = vec![0u64; n];
    let mut latency = vec![0u64; n];
    let mut cpu = vec![NONE; n];
    let mut level = vec![MemLevel::Unknown; n];
    let mut data_node = vec![NONE; n];
    let mut symbol_text: Vec<Option<String>> = vec![None; n];
    let mut line_text: Vec<Option<String>> = vec![None; n];
    let mut cells: Vec<Cells> = meta
        .attributes
        .iter()
        .map(|a| match a.ty.as_str() {
            "u64" => Ok(Cells::U64(vec![None; n])),
            "f64" => Ok(Cells::F64(vec![None; n])),
            "string" => Ok(Cells::Str(vec![None; n])),
            other => Err(invalid(
                dir,
                format!("attribute {:?}: unknown type {other:?}", a.name),
            )),
        })
        .collect::<Result<_>>()?;
    let mut placed = 0usize;
    for (path, batch) in &batches {
        let c = Columns::new(path, batch);
        let rows = c.u64("ms_row")?;
        let (lines, lat) = (c.u64("ms_line")?, c.u64("ms_latency")?);
        let (cpus, nodes) = (c.opt_u32("ms_cpu")?, c.opt_u32("ms_data_node")?);
        let levels = c.str("ms_level")?;
        let (syms, srcs) = (c.opt_str("ms_symbol")?, c.opt_str("ms_source_line")?);
        let mut attr_cols = Vec::new();
        for a in &meta.attributes {
            attr_cols.push(match a.ty.as_str() {
                "u64" => Cells::U64(c.opt_u64(&a.name)?),
                "f64" => Cells::F64(c.opt_f64(&a.name)?),
                _ => Cells::Str(
                    c.opt_str(&a.name)?
                        .into_iter()
                        .map(|s| s.map(str::to_owned))
                        .collect(),
                ),
            });
        }
        for r in 0..batch.num_rows() {
            let i = match head {
                Some(_) => placed,
                None => usize::try_from(rows[r]).unwrap_or(usize::MAX),
            };
            placed += 1;
            if i >= n || std::mem::replace(&mut seen[i], true) {
                return Err(invalid(
                    path,
                    format!("ms_row {} repeated or out of range 0..{n}", rows[r]),
                ));
            }
            row_line[i] = lines[r];
            latency[i] = lat[r];
            cpu[i] = cpus[r].unwrap_or(NONE);
            data_node[i] = nodes[r].unwrap_or(NONE);
            level[i] = level_of(levels[r])
                .ok_or_else(|| invalid(path, format!("ms_level {:?} is no level", levels[r])))?;
            symbol_text[i] = syms[r].map(str::to_owned);
            line_text[i] = srcs[r].map(str::to_owned);
            for (dst, src) in cells.iter_mut().zip(&mut attr_cols) {
                match (dst, src) {
                    (Cells::U64(d), Cells::U64(s)) => d[i] = s[r],
                    (Cells::F64(d), Cells::F64(s)) => d[i] = s[r],
                    (Cells::Str(d), Cells::Str(s)) => d[i] = s[r].take(),
                    _ => {}
                }
            }
        }
    }
    let intern = |texts: Vec<Option<String>>| {
        let mut codes = Codes::default();
        let ids = texts
            .iter()
            .map(|t| t.as_deref().map_or(NONE, |s| codes.code(s)))
            .collect();
        (ids, codes.labels)
    };
    let (symbol, symbols) = intern(symbol_text);
    let (source_line, source_lines) = intern(line_text);
    let columns = meta
        .attributes
        .iter()
        .zip(cells)
        .map(|(a, cells)| {
            let mut unknown = Bitset::new(n);
            let data = match cells {
                Cells::U64(v) => ColumnData::U64(
                    v.iter()
                        .enumerate()
                        .map(|(i, x)| {
                            x.unwrap_or_else(|| {
                                unknown.set(i);
                                0
                            })
                        })
                        .collect(),
                ),
                Cells::F64(v) => ColumnData::F64(
                    v.iter()
                        .enumerate()
                        .map(|(i, x)| {
                            x.unwrap_or_else(|| {
                                unknown.set(i);
                                0.0
                            })
                        })
                        .collect(),
                ),
                Cells::Str(v) => {
                    let mut codes = Codes::default();
                    let ids = v
                        .iter()
                        .enumerate()
                        .map(|(i, s)| match s {
                            Some(s) => codes.code(s),
                            None => {
                                unknown.set(i);
                                0
                            }
                        })
                        .collect();
                    ColumnData::Category {
                        codes: ids,
                        labels: codes.labels,
                    }
                }
            };
            Column {
                name: a.name.clone(),
                kind: if a.kind == "qualitative" {
                    AttrKind::Qualitative
                } else {
                    AttrKind::Quantitative
                },
                data,
                unknown,
            }
        })
        .collect();
    let samples = Samples {
        format,
        latency,
        cpu,
        level,
        data_node,
        symbol,
        symbols,
        source_line,
        source_lines,
        columns,
        warnings: Default::default(),
        file: dir.display().to_string(),
        row_line,
    };
    Ok(SamplesHead {
        samples,
        total: total_rows,
    })
}
