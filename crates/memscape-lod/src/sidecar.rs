//! The index beside its trace: where it lives, whether it still belongs to the trace, and
//! building it from a trace file in two streaming passes (address regions, then blocks).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::build::{BuildParams, LodBuilder};
use crate::trace_source::{ColorFn, Columns, TraceFile, address_axis, lod_block};
use crate::{IndexMeta, LodError, LodIndex, SourceId};

/// The index file of `trace` for a colouring: `TRACE.COLORING.lod` beside it.
pub fn index_path(trace: &Path, coloring: &str) -> PathBuf {
    let mut name = trace.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{coloring}.lod"));
    trace.with_file_name(name)
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
        b.push(i as u64, &lod_block(cols, &axis, coloring.color, i))?;
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
/// modification time and counts) with this colouring.
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
    (s.len == now.len
        && s.modified_ns == now.modified_ns
        && s.events == now.events
        && s.blocks == now.blocks
        && index.meta.coloring == coloring)
        .then_some(index)
}
