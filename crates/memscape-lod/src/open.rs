//! A trace opened for the level of detail: the trace (block columns mapped when the file is a
//! mappable `.msc`), its index beside it (built when missing or stale), and frames at any zoom.
//! This is what `memscape lod` and the allocation-map pane call.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::resolve::{ResolveStats, accumulate};
use crate::sidecar::{self, Coloring};
use crate::source::palette_color;
use crate::trace_source::{ColorFn, TraceBlocks, TraceFile, lod_block};
use crate::{BuildParams, IndexMeta, LodBlock, LodError, LodIndex, LodView, PixelSums, exact};

/// How frames are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FramePath {
    /// From the index's levels where one applies, else exactly (blocks found through the
    /// index's classes and the trace's allocation order: work bounded by the view).
    #[default]
    Lod,
    /// Every block of the trace through exact Eq. 1 accumulation (the judge; O(blocks)).
    Exact,
}

impl FramePath {
    /// `MEMSCAPE_ALLOC_MAP_PATH=lod` or `exact`; `None` when unset or another path.
    pub fn from_env() -> Option<Self> {
        match std::env::var("MEMSCAPE_ALLOC_MAP_PATH").ok()?.as_str() {
            "lod" => Some(Self::Lod),
            "exact" => Some(Self::Exact),
            _ => None,
        }
    }
}

/// Block colourings an index can be built with (part of its file name).
pub const COLORINGS: &[&str] = &["thread"];

fn thread_color(thread: u32, _site: u32, _size: u64, _life: u64) -> (u32, f32) {
    (palette_color(thread), 0.0)
}

fn color_fn(coloring: &str) -> Result<&'static ColorFn<'static>, LodError> {
    match coloring {
        "thread" => Ok(&thread_color),
        other => Err(LodError::Format(format!(
            "unknown colouring {other:?} (known: {})",
            COLORINGS.join(", ")
        ))),
    }
}

/// What opening did: whether the index was built, how long it took.
#[derive(Debug, Clone)]
pub struct OpenReport {
    pub opened_trace: Duration,
    /// `Some(time)` when the index was (re)built.
    pub built: Option<Duration>,
    pub opened_index: Duration,
}

/// A trace with its level-of-detail index.
pub struct LodTrace {
    pub path: PathBuf,
    pub index_path: PathBuf,
    pub file: TraceFile,
    pub index: LodIndex,
    color: &'static ColorFn<'static>,
}

impl LodTrace {
    /// Opens `trace` and its index for `coloring`, building the index beside the trace when it
    /// is missing, stale (the trace changed) or `rebuild` is set. `progress` gets the build's
    /// pass and fraction; `cancel` stops it.
    pub fn open(
        trace: &Path,
        coloring: &str,
        rebuild: bool,
        progress: &mut sidecar::Progress<'_>,
        cancel: &AtomicBool,
    ) -> Result<(Self, OpenReport), LodError> {
        let color = color_fn(coloring)?;
        let start = Instant::now();
        let file = TraceFile::open(trace)?;
        let opened_trace = start.elapsed();
        let locations = sidecar::index_locations(trace, coloring);
        let (events, blocks) = (file.trace.meta.events, file.columns().len() as u64);
        let current = if rebuild {
            None
        } else {
            locations.iter().find_map(|p| {
                sidecar::open_current(p, trace, events, blocks, coloring).map(|i| (p.clone(), i))
            })
        };
        let mut built = None;
        let (index_path, index) = match current {
            Some(found) => found,
            None => {
                let index_path = sidecar::writable_location(&locations).ok_or_else(|| {
                    LodError::Format(format!(
                        "no writable place for the index of {} (tried {})",
                        trace.display(),
                        locations
                            .iter()
                            .map(|p| p.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })?;
                let b = Instant::now();
                sidecar::build(
                    &file,
                    trace,
                    &index_path,
                    Coloring {
                        name: coloring,
                        color,
                    },
                    &BuildParams::default(),
                    progress,
                    cancel,
                )?;
                built = Some(b.elapsed());
                let index = LodIndex::open(&index_path)?;
                (index_path, index)
            }
        };
        let opened_index = start.elapsed() - opened_trace - built.unwrap_or_default();
        Ok((
            Self {
                path: trace.to_path_buf(),
                index_path,
                file,
                index,
                color,
            },
            OpenReport {
                opened_trace,
                built,
                opened_index,
            },
        ))
    }

    /// `file` with an index built elsewhere, opened from `index_path`: the query engine's, of a
    /// Parquet trace dataset (`memscape_engine::lod_index`), whose classes hold every large
    /// block (copied), so `file` needs only the small blocks of the views finer than every
    /// level that it is asked to draw (none for views a level draws). `path` names the source.
    pub fn with_index(path: &Path, index_path: &Path, file: TraceFile) -> Result<Self, LodError> {
        let index = LodIndex::open(index_path)?;
        let color = color_fn(&index.meta.coloring)?;
        Ok(Self {
            path: path.to_path_buf(),
            index_path: index_path.to_path_buf(),
            file,
            index,
            color,
        })
    }

    pub fn meta(&self) -> &IndexMeta {
        &self.index.meta
    }

    /// The heap-size curve of `[t0, t1)` (events) in `columns` columns, from the index
    /// ([`LodIndex::heap_curve`]): what a curve of the whole trace or any window draws without
    /// passing over the blocks.
    pub fn heap_curve(&self, t: [u64; 2], columns: usize) -> Vec<crate::curve::CurveBin> {
        self.index.heap_curve(t, columns)
    }

    /// The whole plane: `[0, extent_t) × [0, extent_y)` (events × collapsed bytes).
    pub fn extent(&self) -> [u64; 2] {
        [self.index.meta.extent_t, self.index.meta.axis.extent]
    }

    /// Whether an index of `trace` for `coloring` already exists (beside it or in the cache
    /// directory; current or not: opening tells).
    pub fn index_exists(trace: &Path, coloring: &str) -> bool {
        sidecar::index_locations(trace, coloring)
            .iter()
            .any(|p| p.is_file())
    }

    /// A view of the whole plane at `width`×`height`.
    pub fn whole_view(&self, width: u32, height: u32) -> LodView {
        let [t, y] = self.extent();
        LodView::fit(0, t, 0, y, width, height)
    }

    /// The blocks of the trace `view` shows when no level of the index applies to it (the view
    /// is finer than every level), found through the index's classes and the trace's
    /// allocation order; `None` when a level applies or there are more than `limit`. What the
    /// exact GPU pipeline draws when few blocks are in view (blocks outside the view may come
    /// too; they add nothing).
    pub fn exact_blocks(&self, view: &LodView, limit: usize) -> Option<Vec<LodBlock>> {
        use crate::resolve::BlockSource as _;
        if self.index.level_for(view.pixel_size()).is_some() {
            return None;
        }
        // Clearly over the limit by the index's count: the scan below would read every block
        // in view before saying so (6.3 M of them in the 1/4 view of a 50 M-event trace).
        if self.index.small_blocks_in(view.window()) > 2.0 * limit as f64 {
            return None;
        }
        let source = self.blocks();
        let mut out = Vec::new();
        let mut over = false;
        source.blocks_in(view.window(), 0, 1, &mut |b| {
            if out.len() < limit {
                out.push(*b);
            } else {
                over = true;
            }
        });
        (!over).then_some(out)
    }

    /// The trace's blocks as the resolve reads them (by number, or those meeting a window).
    fn blocks(&self) -> TraceBlocks<'_> {
        TraceBlocks {
            columns: self.file.columns(),
            axis: &self.index.meta.axis,
            color: self.color,
            index: &self.index,
        }
    }

    /// The view's Eq. 1 sums (add a pane's own passes to them before resolving).
    pub fn sums(&self, view: &LodView, path: FramePath) -> (PixelSums, ResolveStats) {
        let mut sums = PixelSums::new(view.width, view.height);
        let stats = match path {
            FramePath::Lod => {
                let source = self.blocks();
                accumulate(&self.index, &source, view, &mut sums)
            }
            FramePath::Exact => {
                // Streamed through the accumulator: no per-block array.
                let cols = self.file.columns();
                let axis = &self.index.meta.axis;
                let mut acc = exact::Accumulator::new(view);
                for i in 0..cols.len() {
                    acc.add(&lod_block(&cols, axis, self.color, i));
                }
                acc.finish().add_to(&mut sums);
                ResolveStats {
                    level: None,
                    cells: 0,
                    exact_blocks: cols.len() as u64,
                }
            }
        };
        (sums, stats)
    }

    /// The blocks large at level `li` that meet `view` (what a level's resolve draws exactly
    /// beside its cells; `resolve::accumulate` adds the same ones).
    pub fn large_blocks(&self, view: &LodView, li: usize) -> Vec<LodBlock> {
        let Some(level) = self.index.levels.get(li) else {
            return Vec::new();
        };
        let source = self.blocks();
        let mut out = Vec::new();
        self.index.large_blocks(
            &level.desc,
            view.window(),
            0,
            1,
            &|id| crate::resolve::BlockSource::block(&source, id),
            |b| out.push(*b),
        );
        out
    }

    /// The exact Eq. 1 sums of `blocks` in `view` (the large blocks of a level), the work split
    /// over `resolve::threads` threads as `resolve::accumulate` splits it.
    pub fn block_sums(view: &LodView, blocks: &[LodBlock]) -> PixelSums {
        let parts = crate::resolve::threads();
        let results: Vec<exact::ColumnSums> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..parts)
                .map(|part| {
                    scope.spawn(move || {
                        let mut acc = exact::Accumulator::new(view);
                        for b in &blocks[crate::resolve::part_range(blocks.len(), part, parts)] {
                            acc.add(b);
                        }
                        acc.finish()
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        let mut sums = PixelSums::new(view.width, view.height);
        let mut total: Option<exact::ColumnSums> = None;
        for s in results {
            match &mut total {
                Some(t) => t.add(&s),
                None => total = Some(s),
            }
        }
        if let Some(t) = total {
            t.add_to(&mut sums);
        }
        sums
    }

    /// The view's pixels, sRGB RGBA, row 0 at the top.
    pub fn frame(&self, view: &LodView, path: FramePath) -> (Vec<[u8; 4]>, ResolveStats) {
        let (sums, stats) = self.sums(view, path);
        (sums.resolve(view), stats)
    }
}
