//! A level-of-detail view's cells resolved on the GPU (issue 25): memscape-lod's `resolve.rs`
//! (`add_cell`: each cell's area buckets spread over the pixels its blocks may reach, f^α per
//! bucket) as the compute pass `shaders/lod_cells.wgsl`, one invocation per cell in view, its
//! per-pixel f32 sums added into the accumulation targets by a full-screen pass
//! (`shaders/lod_cells_add.wgsl`, additive blending) after the exact pipeline drew the blocks
//! large at the level. The resolve of Eq. 1 is the frame's usual one.
//!
//! The cells come from the index's mapped cell array in fixed chunks of its cells
//! ([`LodCellsInput::chunk_cells`]), uploaded once and kept in a [`LodCellsCache`] under their
//! level while the bytes of the chunks kept stay within [`LOD_CELLS_GPU_BUDGET`]: a pan or zoom
//! within a level uploads only the chunks it has not uploaded yet. Per frame the tables of the
//! view's columns and rows (a few KB) and the sums buffer (20 bytes per pixel) are written.
//!
//! CPU twin: memscape-lod's `resolve::accumulate` on the same view
//! (`crates/memscape-render/tests/alloc_map_lod_gpu.rs`).

use std::collections::HashMap;
use std::ops::Range;

use wgpu::util::DeviceExt;

use super::{AllocMapFrame, AllocMapPipelines};
use crate::binding::{FormatCache, float_texture_entry, storage_entry, uniform_entry};
use crate::{RenderError, shader};

/// Bytes of cell chunks a cache keeps on the GPU (with a 4K frame's 166 MB of sums: < 1 GB).
pub const LOD_CELLS_GPU_BUDGET: u64 = 768 << 20;

/// Invocations per workgroup of the cells pass (keep in sync with `lod_cells.wgsl`).
const WORKGROUP: u32 = 64;
/// Workgroups along x of a 2-D dispatch (the per-dimension limit is 65,535).
const DISPATCH_ROW: u32 = 65_535;
/// f32 sums per pixel: the weighted sums (4) and the coverage.
const SUMS_PER_PIXEL: u64 = 5;

/// Where the cells of a view lie (memscape-lod's `gpu_plan::CellsPlan`, in plain types).
#[derive(Debug, Clone, Copy)]
pub struct LodCellsInput<'a> {
    /// Which index and level the chunks belong to (chunks are cached under it).
    pub level_key: u64,
    /// Cells per chunk.
    pub chunk_cells: u64,
    /// The level's first cell in view and how many are in view.
    pub first_cell: u64,
    pub cells: u32,
    /// Per column: (first position among the view's cells, first cell relative to
    /// `first_cell`, pixel origin as i32 bits, left edge − origin as f32 bits).
    pub columns: &'a [[u32; 4]],
    /// Per row `ky0 + i`: (pixel origin as i32 bits, bottom edge − origin as f32 bits).
    pub rows: &'a [[u32; 2]],
    pub ky0: u64,
    /// Cell size in pixels.
    pub rx: f32,
    pub ry: f32,
    /// The view's size in pixels.
    pub width: u32,
    pub height: u32,
    /// Each chunk used, with the positions of its cells among the view's.
    pub chunks: &'a [(u64, Range<u32>)],
}

/// The bytes of one chunk: its cells (96 bytes each), its buckets (16 bytes each) and the number
/// of its first bucket in the level.
pub type ChunkBytes<'a> = (&'a [u8], &'a [u8], u64);

/// What a GPU resolve of cells did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LodCellsStats {
    pub cells: u32,
    /// Chunks the view used and how many of them were uploaded for it.
    pub chunks: usize,
    pub uploaded_chunks: usize,
    pub uploaded_bytes: u64,
}

/// Why a view's cells could not be resolved on the GPU (the caller resolves them on the CPU).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LodCellsError {
    #[error("the view's cell chunks need {0} bytes, over the GPU budget")]
    OverBudget(u64),
    #[error("chunk {0} is missing or larger than a storage binding")]
    BadChunk(u64),
    #[error("the cells pipeline could not be made on this device")]
    NoPipeline,
}

struct Chunk {
    cells: wgpu::Buffer,
    buckets: wgpu::Buffer,
    bucket_base: u64,
    bytes: u64,
    last_used: u64,
}

/// The cell chunks uploaded for one map layer, its sums buffer, and the blocks the exact
/// pipeline draws beside them (kept across frames: a repaint, or a pan or zoom within the region
/// they were gathered for, uploads nothing).
#[derive(Default)]
pub struct LodCellsCache {
    chunks: HashMap<(u64, u64), Chunk>,
    sums: Option<(wgpu::Buffer, u64)>,
    frame: u64,
    /// The blocks large at a level, gathered for a region around a view.
    pub large_blocks: Option<LodBlocksUpload>,
    /// The exact blocks of a view finer than every level, gathered for a region around it.
    pub exact_blocks: Option<LodBlocksUpload>,
    /// Gather and upload the blocks of every frame's view alone, keeping none (as before the
    /// blocks were kept: the baseline that tests and benchmarks compare with).
    pub blocks_per_frame: bool,
    /// Add the cells' sums into the accumulation targets by a pass of their own
    /// (`lod_cells_add.wgsl`) rather than in the frame's resolve, as before wave 26: the
    /// baseline that tests and benchmarks compare with (`MEMSCAPE_LOD_CELLS_ADD=pass` sets it
    /// in `memscape bench`). 16-bit targets always take the pass.
    pub cells_add_pass: bool,
}

impl LodCellsCache {
    /// Bytes of chunks held on the GPU.
    pub fn bytes(&self) -> u64 {
        self.chunks.values().map(|c| c.bytes).sum()
    }
}

/// Blocks found through a level-of-detail index and uploaded for the exact pipeline, with what
/// they were gathered for: the caller's `key` (index, level, limit) and the plane's region
/// `[t0, t1) × [a0, a1)` (trace units). Every block meeting the region is here, in the order the
/// index gives them, so a view within the region draws the same sums from them as from a fresh
/// gather of its own blocks (the others lie outside the view and add nothing).
pub struct LodBlocksUpload {
    pub key: u64,
    pub region: ([f64; 2], [f64; 2]),
    pub data: super::AllocMapData,
    /// The last view window the caller checked these blocks against (the index's count of
    /// blocks in view, which a repaint of the same window need not read again).
    pub checked: Option<([f64; 2], [f64; 2])>,
}

impl LodBlocksUpload {
    /// Whether the blocks gathered for `self.region` under `key` are every block that meets
    /// `window`: the window lies within the region, except on a side where the region already
    /// reaches the plane's edge (`0`, or `extent` = `[t, a]`, beyond which there are no blocks).
    pub fn covers(&self, key: u64, window: ([f64; 2], [f64; 2]), extent: [f64; 2]) -> bool {
        let within = |w: [f64; 2], r: [f64; 2], end: f64| {
            (w[0] >= r[0] || r[0] <= 0.0) && (w[1] <= r[1] || r[1] >= end)
        };
        self.key == key
            && within(window.0, self.region.0, extent[0])
            && within(window.1, self.region.1, extent[1])
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct CellsParams {
    rx: f32,
    ry: f32,
    alpha: f32,
    mode: u32,
    width: u32,
    height: u32,
    n_cells: u32,
    view_first: u32,
    chunk_delta: u32,
    n_columns: u32,
    ky0_lo: u32,
    ky0_hi: u32,
    rows: u32,
    bucket_base: u32,
    _pad: [u32; 2],
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct AddParams {
    width: u32,
    height: u32,
    _pad: [u32; 2],
}

/// The cells' pipelines (made on first use): the cells pass, the add pass, and per target
/// format the resolve that adds the cells' sums itself (`alloc_map_resolve.wgsl`'s
/// `fs_with_cells`).
pub(crate) struct LodCellsPipelines {
    cells_layout: wgpu::BindGroupLayout,
    cells: wgpu::ComputePipeline,
    add_layout: wgpu::BindGroupLayout,
    add: wgpu::RenderPipeline,
    /// Whether the accumulation targets are 32-bit floats, where the add pass's blending is
    /// the f32 addition that `fs_with_cells` makes (16-bit targets round each sum: the add pass
    /// draws there).
    f32_targets: bool,
    resolve_layout: wgpu::BindGroupLayout,
    resolve_pipeline_layout: wgpu::PipelineLayout,
    pub(crate) resolve: FormatCache<wgpu::RenderPipeline>,
}

impl LodCellsPipelines {
    pub(crate) fn new(
        device: &wgpu::Device,
        targets: &[Option<wgpu::ColorTargetState>; 2],
    ) -> Result<Self, RenderError> {
        let cs = wgpu::ShaderStages::COMPUTE;
        let cells_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("LodCells::cells_layout"),
            entries: &[
                uniform_entry(0, cs),
                storage_entry(1, cs),
                storage_entry(2, cs),
                storage_entry(3, cs),
                storage_entry(4, cs),
                wgpu::BindGroupLayoutEntry {
                    binding: 5,
                    visibility: cs,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage { read_only: false },
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
            ],
        });
        let module = shader::create_module(device, "lod_cells.wgsl")?;
        let cells = crate::binding::compute_pipeline(
            device,
            "LodCells::cells",
            &[Some(&cells_layout)],
            &module,
            "cells_main",
        );
        let fs = wgpu::ShaderStages::FRAGMENT;
        let add_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("LodCells::add_layout"),
            entries: &[uniform_entry(0, fs), storage_entry(1, fs)],
        });
        let add_module = shader::create_module(device, "lod_cells_add.wgsl")?;
        let add_pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("LodCells::add_pipeline_layout"),
            bind_group_layouts: &[Some(&add_layout)],
            immediate_size: 0,
        });
        let add = crate::binding::buffer_free_pipeline(
            device,
            "LodCells::add",
            &add_pipeline_layout,
            &add_module,
            "vs_main",
            "fs_main",
            targets,
        );
        let resolve_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("LodCells::resolve_layout"),
            entries: &[
                uniform_entry(0, fs),
                float_texture_entry(1),
                float_texture_entry(2),
                storage_entry(3, fs),
            ],
        });
        let resolve_pipeline_layout =
            device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("LodCells::resolve_pipeline_layout"),
                bind_group_layouts: &[Some(&resolve_layout)],
                immediate_size: 0,
            });
        let f32_targets = targets[0]
            .as_ref()
            .is_some_and(|t| t.format == wgpu::TextureFormat::Rgba32Float)
            && targets[1]
                .as_ref()
                .is_some_and(|t| t.format == wgpu::TextureFormat::R32Float);
        Ok(Self {
            cells_layout,
            cells,
            add_layout,
            add,
            f32_targets,
            resolve_layout,
            resolve_pipeline_layout,
            resolve: FormatCache::default(),
        })
    }

    pub(crate) fn resolve_layout(&self) -> &wgpu::BindGroupLayout {
        &self.resolve_layout
    }

    /// Makes the resolve with the cells' sums for `format` unless made (`module`: the resolve's,
    /// `alloc_map_resolve.wgsl`).
    pub(crate) fn ensure_resolve(
        &mut self,
        device: &wgpu::Device,
        module: &wgpu::ShaderModule,
        format: wgpu::TextureFormat,
    ) {
        if !self.f32_targets {
            return;
        }
        let layout = &self.resolve_pipeline_layout;
        self.resolve.ensure(format, || {
            crate::binding::buffer_free_pipeline(
                device,
                "LodCells::resolve",
                layout,
                module,
                "vs_main",
                "fs_with_cells",
                &[Some(wgpu::ColorTargetState {
                    format,
                    blend: None,
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            )
        });
    }
}

impl LodCellsCache {
    /// Uploads the chunks of `input` not yet here (evicting the least recently used ones that
    /// this view does not use beyond [`LOD_CELLS_GPU_BUDGET`]) and makes the pipelines: call
    /// before [`AllocMapFrame::prepare_with`] draws the view's large blocks, then
    /// [`AllocMapFrame::add_lod_cells`]. On an error nothing is recorded: resolve the view's
    /// cells on the CPU.
    pub fn upload<'a>(
        &mut self,
        device: &wgpu::Device,
        pipelines: &mut AllocMapPipelines,
        input: &LodCellsInput<'_>,
        chunk_bytes: &dyn Fn(u64) -> Option<ChunkBytes<'a>>,
    ) -> Result<LodCellsStats, LodCellsError> {
        let mut stats = LodCellsStats {
            cells: input.cells,
            chunks: input.chunks.len(),
            ..LodCellsStats::default()
        };
        let max_binding = pipelines.features.max_storage_binding_bytes;
        let sums_bytes = sums_bytes([input.width, input.height]);
        if sums_bytes > max_binding {
            return Err(LodCellsError::OverBudget(sums_bytes));
        }
        pipelines.ensure_lod_cells(device);
        if pipelines.lod_cells.is_none() {
            return Err(LodCellsError::NoPipeline);
        }
        let cache = self;
        cache.frame += 1;
        let frame = cache.frame;
        let mut needed = 0u64;
        for (j, _) in input.chunks {
            let key = (input.level_key, *j);
            if let Some(c) = cache.chunks.get_mut(&key) {
                c.last_used = frame;
                needed += c.bytes;
                continue;
            }
            let (cells, buckets, bucket_base) =
                chunk_bytes(*j).ok_or(LodCellsError::BadChunk(*j))?;
            let bytes = (cells.len() + buckets.len()) as u64;
            if cells.len() as u64 > max_binding || buckets.len() as u64 > max_binding {
                return Err(LodCellsError::BadChunk(*j));
            }
            needed += bytes;
            if needed > LOD_CELLS_GPU_BUDGET {
                return Err(LodCellsError::OverBudget(needed));
            }
            // Make room: the least recently used chunks that this view does not use.
            while cache.bytes() + bytes > LOD_CELLS_GPU_BUDGET {
                let Some(old) = cache
                    .chunks
                    .iter()
                    .filter(|(_, c)| c.last_used != frame)
                    .min_by_key(|(_, c)| c.last_used)
                    .map(|(k, _)| *k)
                else {
                    break;
                };
                cache.chunks.remove(&old);
            }
            let make = |label: &str, contents: &[u8]| {
                crate::binding::storage_buffer_init(device, label, contents)
            };
            cache.chunks.insert(
                key,
                Chunk {
                    cells: make("LodCells::cells", cells),
                    buckets: make("LodCells::buckets", buckets),
                    bucket_base,
                    bytes,
                    last_used: frame,
                },
            );
            stats.uploaded_chunks += 1;
            stats.uploaded_bytes += bytes;
        }
        Ok(stats)
    }
}

/// Bytes of the sums buffer of a view of `size` pixels.
fn sums_bytes(size: [u32; 2]) -> u64 {
    u64::from(size[0].max(1)) * u64::from(size[1].max(1)) * SUMS_PER_PIXEL * 4
}

impl AllocMapFrame {
    /// Records the GPU resolve of a level's cells for this frame, whose accumulation targets
    /// [`Self::prepare_with`] has just cleared and filled with the view's large blocks (the
    /// chunks uploaded by [`LodCellsCache::upload`]): the cells pass into a sums buffer, which
    /// the frame's resolve then adds to the targets' sums (32-bit float targets; elsewhere, or
    /// with [`LodCellsCache::cells_add_pass`], a full-screen pass adds it into the targets).
    /// `view` is the frame's view (α, colour mode, size).
    pub fn add_lod_cells(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        pipelines: &AllocMapPipelines,
        cache: &mut LodCellsCache,
        view: &memscape_eq1::MapView,
        input: &LodCellsInput<'_>,
    ) {
        let size = [view.width.max(1), view.height.max(1)];
        let sums_bytes = sums_bytes(size);
        let Some(lod) = pipelines.lod_cells.as_ref() else {
            return;
        };
        if input.cells == 0 {
            return;
        }
        if self.accumulation_views().is_none() {
            return;
        }
        if cache.sums.as_ref().is_none_or(|(_, b)| *b != sums_bytes) {
            cache.sums = Some((
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("LodCells::sums"),
                    size: sums_bytes,
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                }),
                sums_bytes,
            ));
        }
        let Some((sums, _)) = &cache.sums else {
            return;
        };
        encoder.clear_buffer(sums, 0, None);
        let storage = |label: &str, contents: &[u8]| {
            crate::binding::storage_buffer_init(device, label, contents)
        };
        let columns = storage("LodCells::columns", bytemuck::cast_slice(input.columns));
        let rows = storage("LodCells::rows", bytemuck::cast_slice(input.rows));
        let mode = match view.color_mode {
            memscape_eq1::ColorMode::Categorical => 0,
            memscape_eq1::ColorMode::Quantitative => 1,
        };
        let mut dispatches = Vec::new();
        for (j, range) in input.chunks {
            let Some(chunk) = cache.chunks.get(&(input.level_key, *j)) else {
                continue;
            };
            let params = CellsParams {
                rx: input.rx,
                ry: input.ry,
                alpha: view.alpha,
                mode,
                width: size[0],
                height: size[1],
                n_cells: range.end.saturating_sub(range.start),
                view_first: range.start,
                // The view's first cell's index in this chunk (wrapping u32 arithmetic).
                chunk_delta: input.first_cell.wrapping_sub(j * input.chunk_cells) as u32,
                n_columns: input.columns.len() as u32,
                ky0_lo: input.ky0 as u32,
                ky0_hi: (input.ky0 >> 32) as u32,
                rows: input.rows.len() as u32,
                bucket_base: chunk.bucket_base as u32,
                _pad: [0; 2],
            };
            let uniform = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("LodCells::params"),
                contents: bytemuck::bytes_of(&params),
                usage: wgpu::BufferUsages::UNIFORM,
            });
            let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("LodCells::cells_bind_group"),
                layout: &lod.cells_layout,
                entries: &[
                    entry(0, &uniform),
                    entry(1, &chunk.cells),
                    entry(2, &chunk.buckets),
                    entry(3, &columns),
                    entry(4, &rows),
                    entry(5, sums),
                ],
            });
            dispatches.push((bind_group, params.n_cells));
        }
        {
            let queries = pipelines.pass_queries("alloc_map lod cells");
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("LodCells::cells"),
                timestamp_writes: queries.compute(),
            });
            pass.set_pipeline(&lod.cells);
            for (bind_group, n) in &dispatches {
                let groups = n.div_ceil(WORKGROUP);
                if groups == 0 {
                    continue;
                }
                pass.set_bind_group(0, bind_group, &[]);
                pass.dispatch_workgroups(
                    groups.min(DISPATCH_ROW),
                    groups.div_ceil(DISPATCH_ROW),
                    1,
                );
            }
        }
        if !cache.cells_add_pass && self.resolve_with_cells(device, pipelines, sums) {
            return;
        }
        let Some((weighted, coverage)) = self.accumulation_views() else {
            return;
        };
        let add_params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("LodCells::add_params"),
            contents: bytemuck::bytes_of(&AddParams {
                width: size[0],
                height: size[1],
                _pad: [0; 2],
            }),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let add_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("LodCells::add_bind_group"),
            layout: &lod.add_layout,
            entries: &[entry(0, &add_params), entry(1, sums)],
        });
        let queries = pipelines.pass_queries("alloc_map lod cells add");
        let load = wgpu::Operations {
            load: wgpu::LoadOp::Load,
            store: wgpu::StoreOp::Store,
        };
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("LodCells::add"),
            color_attachments: &[
                Some(wgpu::RenderPassColorAttachment {
                    view: weighted,
                    depth_slice: None,
                    resolve_target: None,
                    ops: load,
                }),
                Some(wgpu::RenderPassColorAttachment {
                    view: coverage,
                    depth_slice: None,
                    resolve_target: None,
                    ops: load,
                }),
            ],
            depth_stencil_attachment: None,
            timestamp_writes: queries.render(),
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&lod.add);
        pass.set_bind_group(0, &add_group, &[]);
        pass.draw(0..3, 0..1);
        drop(pass);
    }
}

fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}
