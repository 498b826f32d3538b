//! The index beside its trace: where it lives, whether it still belongs to the trace, and
//! building it from a trace file in two streaming passes (address regions, then blocks).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::build::{BuildParams, LodBuilder};
use crate::trace_source::{ColorFn, Columns, TraceFile, address_axis, lod_block};
use crate::{IndexMeta, LodError, LodIndex, SourceId};

/// The index file of `trace` for a colouring: `TRACE.COLORING.lod` beside it.
pub fn index_path(trace: &Path, coloring: &str) -> PathBuf {
    beside(trace, &format!("{coloring}.lod"))
}

/// `TRACE.SUFFIX` beside `trace`.
fn beside(trace: &Path, suffix: &str) -> PathBuf {
    let mut name = trace.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{suffix}"));
    trace.with_file_name(name)
}

/// Where the index of `trace` is looked for, in order: beside the trace, then in the user's
/// cache directory (`$XDG_CACHE_HOME` or `~/.cache`, `memscape/lod/`, named by the trace's
/// file name and a hash of its full path), used when the trace's directory is not writable.
pub fn index_locations(trace: &Path, coloring: &str) -> Vec<PathBuf> {
    locations(trace, &format!("{coloring}.lod"))
}

/// The files `TRACE.SUFFIX` beside `trace` and `NAME.HASH.SUFFIX` in the cache directory (see
/// [`index_locations`]): where files derived from a trace live.
pub fn locations(trace: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = vec![beside(trace, suffix)];
    if let Some(dir) = cache_dir() {
        let full = std::fs::canonicalize(trace).unwrap_or_else(|_| trace.to_path_buf());
        // FNV-1a: stable across builds (the name must be found again by the next run).
        let hash = full
            .to_string_lossy()
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
        let name = trace.file_name().unwrap_or_default().to_string_lossy();
        out.push(dir.join(format!("{name}.{hash:016x}.{suffix}")));
    }
    out
}

fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("memscape").join("lod"))
}

/// The first of `candidates` whose directory can be written (created when missing): where a
/// new index is built.
pub fn writable_location(candidates: &[PathBuf]) -> Option<PathBuf> {
    candidates.iter().find_map(|c| {
        let dir = match c.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        std::fs::create_dir_all(dir).ok()?;
        let probe = dir.join(format!(".memscape-lod-probe-{}", std::process::id()));
        std::fs::File::create(&probe).ok()?;
        let _ = std::fs::remove_file(&probe);
        Some(c.clone())
    })
}

/// What building is at: the pass (1: regions, 2: blocks) and the fraction of blocks done.
pub type Progress<'a> = dyn FnMut(u8, f64) + 'a;

/// How blocks are coloured in an index: its name (part of the file name) and the function.
#[derive(Clone, Copy)]
pub struct Coloring<'a> {
    pub name: &'a str,
    pub color: &'a ColorFn<'a>,
}

/// Builds the index of `file` (read from `trace_path`) into `out`.
pub fn build(
    file: &TraceFile,
    trace_path: &Path,
    out: &Path,
    coloring: Coloring<'_>,
    params: &BuildParams,
    progress: &mut Progress<'_>,
    cancel: &AtomicBool,
) -> Result<IndexMeta, LodError> {
    let source = SourceId::of_file(
        trace_path,
        file.trace.meta.events,
        file.columns().len() as u64,
    );
    build_columns(
        &file.columns(),
        source,
        out,
        coloring,
        params,
        progress,
        cancel,
    )
}

/// Builds the index of the block columns `cols` (of the trace `source` names) into `out`, in
/// one streaming pass: memory holds the builder's open cells, never a per-block array (see
/// [`LodBuilder`]).
pub fn build_columns(
    cols: &Columns<'_>,
    source: SourceId,
    out: &Path,
    coloring: Coloring<'_>,
    params: &BuildParams,
    progress: &mut Progress<'_>,
    cancel: &AtomicBool,
) -> Result<IndexMeta, LodError> {
    let n = cols.len();
    progress(1, 0.0);
    let axis = address_axis(cols);
    let extent_t = source.events.max(1) + 1;
    let scratch = out.with_extension("lod.scratch");
    let mut b = LodBuilder::new(&scratch, extent_t, axis.extent, n as u64, params)?;
    let step = (n / 200).max(1);
    for i in 0..n {
        b.push_block(
            i as u64,
            &lod_block(cols, &axis, coloring.color, i),
            cols.flags[i] & memscape_trace::model::FLAG_NEVER_FREED != 0,
        )?;
        if i.is_multiple_of(step) {
            progress(2, i as f64 / n as f64);
            if cancel.load(Ordering::Relaxed) {
                let _ = std::fs::remove_dir_all(&scratch);
                return Err(LodError::Format(String::from("cancelled")));
            }
        }
    }
    let meta = b.finish(out, source, axis, coloring.name)?;
    progress(2, 1.0);
    Ok(meta)
}

/// The index at `path` if it was built from the trace at `trace_path` as it is now (same size,
/// modification time and counts) with this colouring, and has the levels the builder lays out
/// now ([`has_current_levels`]).
pub fn open_current(
    path: &Path,
    trace_path: &Path,
    events: u64,
    blocks: u64,
    coloring: &str,
) -> Option<LodIndex> {
    let index = LodIndex::open(path).ok()?;
    let now = SourceId::of_file(trace_path, events, blocks);
    let s = &index.meta.source;
    let same_source = s.len == now.len
        && s.modified_ns == now.modified_ns
        && s.events == now.events
        && s.blocks == now.blocks
        && index.meta.coloring == coloring;
    if same_source && !has_current_levels(&index.meta) {
        tracing::info!(
            "{}: built with the levels of an older memscape (finest {}); rebuilding it",
            path.display(),
            index
                .meta
                .levels
                .iter()
                .map(|l| format!("2^{} × 2^{}", l.log_tau, l.log_sig))
                .next_back()
                .unwrap_or_default()
        );
        return None;
    }
    same_source.then_some(index)
}

/// Whether `meta`'s levels are those [`crate::build::level_specs`] lays out now for its trace
/// with the default parameters: an index of wave 13 or before, whose grid was counted over the
/// plane rounded up to powers of two, lacks the finest levels (the whole view of 50 M events at
/// 1920×1080 was drawn from every block) and is rebuilt.
pub fn has_current_levels(meta: &IndexMeta) -> bool {
    let want = crate::build::level_specs(
        meta.extent_t,
        meta.extent_y,
        meta.blocks,
        &BuildParams::default(),
    );
    want.len() == meta.levels.len()
        && want
            .iter()
            .zip(&meta.levels)
            .all(|(w, l)| w.log_tau == l.log_tau && w.log_sig == l.log_sig)
}
