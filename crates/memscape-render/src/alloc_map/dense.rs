//! The allocation map's dense path: a frame whose cost grows with blocks + pixels, not with the
//! pixels each block covers.
//!
//! Rasterizing every block as an inflated quad costs one fragment per pixel it touches: zoomed
//! out, a long-lived block less than a pixel tall still touches a whole row of pixels. The dense
//! path instead runs three passes (see the shaders for the details):
//!
//! 1. `alloc_map_dense.wgsl`, one invocation per block of the draw range: blocks outside the view
//!    are dropped; blocks taller than [`DENSE_MAX_ROWS`] pixel rows, or of several rows and
//!    narrower than [`DENSE_MIN_COLUMNS`], go to a raster list; every other block adds its Eq. 1 sums to per-row difference arrays in 64-bit fixed point, in
//!    O(rows × cushion pieces): its two first and two last columns exactly per pixel, the
//!    interior (f = f_y) as constant or piecewise-linear pieces of the cushion luminance.
//! 2. `alloc_map_dense_scan.wgsl`, one workgroup of [`SCAN_WORKGROUP`] invocations per pixel
//!    row: prefix sums along the row (segment sums, then workgroup prefix sums of them, all in
//!    exact integers), written into the accumulation targets (this also clears them).
//! 3. The usual accumulation pass (`alloc_map_accumulate.wgsl`, entry `vs_listed`), loading the
//!    targets, draws only the raster list, with one indirect draw per chunk.
//!
//! The resolve pass is unchanged. The picture is the one the CPU reference defines
//! (`cpu_reference.rs`); the only change the dense path needed there is that the parabolic
//! cushion's horizontal profile is interpolated linearly between knots
//! ([`super::cpu_reference::block_cushion_luminance`]), for every path alike.
//!
//! Memory: [`DENSE_BYTES_PER_PIXEL`] per pixel and frame (the difference arrays), and 4 bytes
//! per block and upload (the raster list). The path needs 32-bit float accumulation targets (they
//! are written as storage textures) and 5 storage buffers per shader stage.

use std::ops::Range;

use crate::context::RendererFeatures;
use crate::stats::PassQueries;

/// Fixed-point pairs per pixel: Σf, F, three colour sums and three colour slopes.
/// Keep in sync with `PAIRS_PER_PIXEL` in `shaders/alloc_map_dense*.wgsl`.
pub const PAIRS_PER_PIXEL: u64 = 8;
/// Bytes of difference arrays per pixel of a frame drawn by the dense path.
pub const DENSE_BYTES_PER_PIXEL: u64 = PAIRS_PER_PIXEL * 8;
/// Blocks touching more pixel rows than this are rasterized. Keep in sync with
/// `DENSE_MAX_ROWS` in `shaders/alloc_map_dense.wgsl`.
pub const DENSE_MAX_ROWS: u32 = 16;
/// Blocks of more than one row narrower than this many columns are rasterized too. Keep in sync
/// with `DENSE_MIN_COLUMNS` in `shaders/alloc_map_dense.wgsl`.
pub const DENSE_MIN_COLUMNS: u32 = 16;

/// The block pass's raster-list thresholds where the environment overrides them
/// (`MEMSCAPE_DENSE_MAX_ROWS`, `MEMSCAPE_DENSE_MIN_COLUMNS`: pipeline-overridable constants of
/// `alloc_map_dense.wgsl`, [`DENSE_MAX_ROWS`] and [`DENSE_MIN_COLUMNS`] otherwise). They were
/// chosen on lavapipe; a hardware GPU's rasterizer and atomics trade differently, so that
/// `benches/gpu/device_run.sh` measures other values there. Either choice draws the same picture
/// within the paths' tolerance (the raster and dense paths are both held to the CPU reference).
fn raster_list_thresholds() -> Vec<(&'static str, f64)> {
    [
        ("DENSE_MAX_ROWS", "MEMSCAPE_DENSE_MAX_ROWS"),
        ("DENSE_MIN_COLUMNS", "MEMSCAPE_DENSE_MIN_COLUMNS"),
    ]
    .into_iter()
    .filter_map(|(constant, var)| {
        let value = std::env::var(var).ok()?;
        match value.parse::<u32>() {
            Ok(n) if n >= 1 => Some((constant, f64::from(n))),
            _ => {
                tracing::warn!("{var}={value:?} is not a whole number ≥ 1; ignored");
                None
            }
        }
    })
    .collect()
}
/// Rows of a block whose fully covered part is shorter than this many columns are added pixel by
/// pixel (parabolic cushions; 4 otherwise). Keep in sync with `CHAIN_MAX` in
/// `shaders/alloc_map_dense.wgsl`.
pub const CHAIN_MAX: u32 = 12;
/// [`AccumPath::Auto`] takes the dense path from this many blocks in the draw range on (where
/// [`auto_takes_dense`]).
pub const DENSE_AUTO_MIN_BLOCKS: usize = 4096;
/// Invocations per workgroup of the dense block pass.
const WORKGROUP: u32 = 64;
/// Invocations per pixel row of the scan pass, each walking one segment of the row. Keep in sync
/// with `SCAN_WG` in `shaders/alloc_map_dense_scan.wgsl`.
pub const SCAN_WORKGROUP: u32 = 128;
/// Blocks per invocation of the block pass. Keep in sync with `BLOCKS_PER_INVOCATION` in
/// `shaders/alloc_map_dense.wgsl`.
const BLOCKS_PER_INVOCATION: usize = 16;
/// Workgroups per row of a 2-D dispatch (the per-dimension limit is 65,535).
const DISPATCH_ROW: u32 = 32_768;

/// Whether [`AccumPath::Auto`] draws by the dense path on `device`: on hardware GPUs, not on
/// software rasterizers (lavapipe), where the raster path measured as fast or faster on a real
/// trace (BENCHMARKS.md, "Dense path vs raster path"). `MEMSCAPE_ALLOC_MAP_PATH=dense|raster`
/// overrides the choice (benchmarks, experiments); explicit [`AccumPath::Dense`] and
/// [`AccumPath::Raster`] draws are not affected.
pub fn auto_takes_dense(device: &wgpu::Device) -> bool {
    match std::env::var("MEMSCAPE_ALLOC_MAP_PATH").as_deref() {
        Ok("dense") => true,
        Ok("raster") => false,
        _ => !crate::context::is_software(device),
    }
}

/// Blocks from which a draw on a software rasterizer computes Eq. 1's sums on the CPU
/// ([`super::cpu_reference::exact_sums`]) rather than rasterizing every block: lavapipe spends
/// seconds per million blocks of a zoomed-out frame, the CPU accumulation a few tenths
/// (BENCHMARKS.md, "GUI first full window"). Below it the GPU pipelines draw (the goldens').
pub const CPU_SUMS_MIN_BLOCKS: usize = 1_000_000;

/// Whether a draw of `blocks` blocks on `device` should take its sums from the CPU: on software
/// rasterizers from [`CPU_SUMS_MIN_BLOCKS`] blocks; `MEMSCAPE_ALLOC_MAP_PATH=cpu` always,
/// `raster` or `dense` never.
pub fn prefers_cpu_sums(device: &wgpu::Device, blocks: usize) -> bool {
    match std::env::var("MEMSCAPE_ALLOC_MAP_PATH").as_deref() {
        Ok("cpu") => true,
        Ok("dense" | "raster") => false,
        _ => blocks >= CPU_SUMS_MIN_BLOCKS && crate::context::is_software(device),
    }
}

/// How a draw accumulates Eq. 1's sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AccumPath {
    /// Dense where the device supports it, [`auto_takes_dense`], the draw has at least
    /// [`DENSE_AUTO_MIN_BLOCKS`] blocks and the difference arrays fit in one buffer binding;
    /// raster otherwise.
    #[default]
    Auto,
    /// Every block an instanced quad, additive blending into the float targets.
    Raster,
    /// The dense path wherever it is possible (raster otherwise).
    Dense,
}

impl RendererFeatures {
    /// Whether the device can run the dense path.
    pub fn dense_accumulation(&self) -> bool {
        self.float32_blendable
            && self.max_storage_buffers_per_stage >= 5
            && self.max_storage_textures_per_stage >= 2
    }
}

/// The dense path's pipelines and layouts.
pub(crate) struct DensePipelines {
    pub accum_layout: wgpu::BindGroupLayout,
    pub list_rw_layout: wgpu::BindGroupLayout,
    pub list_ro_layout: wgpu::BindGroupLayout,
    pub scan_layout: wgpu::BindGroupLayout,
    pub blocks: wgpu::ComputePipeline,
    pub scan: wgpu::ComputePipeline,
    /// The accumulation pass over the raster list only.
    pub listed: wgpu::RenderPipeline,
}

fn buffer_entry(
    binding: u32,
    visibility: wgpu::ShaderStages,
    read_only: bool,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

fn storage_texture_entry(binding: u32, format: wgpu::TextureFormat) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::StorageTexture {
            access: wgpu::StorageTextureAccess::WriteOnly,
            format,
            view_dimension: wgpu::TextureViewDimension::D2,
        },
        count: None,
    }
}

impl DensePipelines {
    /// `accumulate` is the raster pipeline's descriptor parts: its module, fragment targets and
    /// the view and block layouts shared with it.
    pub fn new(
        device: &wgpu::Device,
        features: &RendererFeatures,
        view_layout: &wgpu::BindGroupLayout,
        blocks_layout: &wgpu::BindGroupLayout,
        accumulate_module: &wgpu::ShaderModule,
        accumulate_targets: &[Option<wgpu::ColorTargetState>],
    ) -> Result<Self, crate::RenderError> {
        let compute = wgpu::ShaderStages::COMPUTE;
        let accum_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("AllocMap::dense_accum_layout"),
            entries: &[buffer_entry(0, compute, false)],
        });
        let list_rw_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("AllocMap::raster_list_rw_layout"),
            entries: &[buffer_entry(0, compute, false)],
        });
        let list_ro_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("AllocMap::raster_list_ro_layout"),
            entries: &[buffer_entry(0, wgpu::ShaderStages::VERTEX, true)],
        });
        let scan_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("AllocMap::dense_scan_layout"),
            entries: &[
                buffer_entry(0, compute, true),
                storage_texture_entry(1, features.accumulation_format()),
                storage_texture_entry(2, features.coverage_format()),
            ],
        });
        let blocks_module = crate::shader::create_module(device, "alloc_map_dense.wgsl")?;
        let scan_module = crate::shader::create_module(device, "alloc_map_dense_scan.wgsl")?;
        let constants = raster_list_thresholds();
        let blocks = crate::binding::compute_pipeline_with(
            device,
            "AllocMap::dense_blocks",
            &[
                Some(view_layout),
                Some(blocks_layout),
                Some(&accum_layout),
                Some(&list_rw_layout),
            ],
            &blocks_module,
            "cs_blocks",
            &constants,
        );
        let scan = crate::binding::compute_pipeline(
            device,
            "AllocMap::dense_scan",
            &[Some(view_layout), Some(&scan_layout)],
            &scan_module,
            "cs_scan",
        );
        let listed_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("AllocMap::accumulate_listed_layout"),
            bind_group_layouts: &[
                Some(view_layout),
                Some(blocks_layout),
                Some(&list_ro_layout),
            ],
            immediate_size: 0,
        });
        let listed = crate::binding::buffer_free_pipeline(
            device,
            "AllocMap::accumulate_listed",
            &listed_layout,
            accumulate_module,
            "vs_listed",
            "fs_main",
            accumulate_targets,
        );
        Ok(Self {
            accum_layout,
            list_rw_layout,
            list_ro_layout,
            scan_layout,
            blocks,
            scan,
            listed,
        })
    }
}

/// Per upload: the blocks the dense pass leaves to the rasterizer. A header of indirect draw
/// arguments (16 bytes per chunk), then one u32 per block (chunk-local indices, each chunk's
/// entries from its base). Frames drawing the same upload reuse it one after the other: each
/// frame records the compute pass that fills it and the draw that reads it back to back.
pub(crate) struct RasterList {
    buffer: wgpu::Buffer,
    /// The header as each frame starts it: (6 vertices, 0 instances, 0, 0) per chunk.
    template: wgpu::Buffer,
    header_bytes: u64,
    rw_bind_group: wgpu::BindGroup,
    ro_bind_group: wgpu::BindGroup,
}

impl RasterList {
    /// Words before the list's entries for `chunks` chunks.
    pub fn header_words(chunks: usize) -> u32 {
        (4 * chunks) as u32
    }

    /// `None` when the list would not fit in one storage binding.
    pub fn new(
        device: &wgpu::Device,
        pipelines: &DensePipelines,
        features: &RendererFeatures,
        chunks: usize,
        blocks: usize,
    ) -> Option<Self> {
        use wgpu::util::DeviceExt;
        let header_bytes = 16 * chunks.max(1) as u64;
        let size = header_bytes + 4 * blocks.max(1) as u64;
        if size > features.max_storage_binding_bytes {
            tracing::info!(
                "allocation map: a raster list of {blocks} blocks exceeds the storage-binding \
                 limit; this upload is drawn by the raster path only"
            );
            return None;
        }
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("AllocMapData::raster_list"),
            size,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::INDIRECT
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let header: Vec<u32> = (0..chunks.max(1)).flat_map(|_| [6, 0, 0, 0]).collect();
        let template = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("AllocMapData::raster_list_header"),
            contents: bytemuck::cast_slice(&header),
            usage: wgpu::BufferUsages::COPY_SRC,
        });
        let bind = |layout, label| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(label),
                layout,
                entries: &[wgpu::BindGroupEntry {
                    binding: 0,
                    resource: buffer.as_entire_binding(),
                }],
            })
        };
        let rw_bind_group = bind(&pipelines.list_rw_layout, "AllocMapData::raster_list_rw");
        let ro_bind_group = bind(&pipelines.list_ro_layout, "AllocMapData::raster_list_ro");
        Some(Self {
            buffer,
            template,
            header_bytes,
            rw_bind_group,
            ro_bind_group,
        })
    }
}

/// Per frame: the difference arrays and the bind groups of the dense passes.
pub(crate) struct DenseTargets {
    accum: wgpu::Buffer,
    accum_bind_group: wgpu::BindGroup,
    scan_bind_group: wgpu::BindGroup,
}

impl DenseTargets {
    pub fn bytes(size: [u32; 2]) -> u64 {
        u64::from(size[0]) * u64::from(size[1]) * DENSE_BYTES_PER_PIXEL
    }

    pub fn new(
        device: &wgpu::Device,
        pipelines: &DensePipelines,
        size: [u32; 2],
        weighted: &wgpu::TextureView,
        coverage: &wgpu::TextureView,
    ) -> Self {
        let accum = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("AllocMapFrame::dense_sums"),
            size: Self::bytes(size),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let accum_bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("AllocMapFrame::dense_accum"),
            layout: &pipelines.accum_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: accum.as_entire_binding(),
            }],
        });
        let scan_bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("AllocMapFrame::dense_scan"),
            layout: &pipelines.scan_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: accum.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(weighted),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: wgpu::BindingResource::TextureView(coverage),
                },
            ],
        });
        Self {
            accum,
            accum_bind_group,
            scan_bind_group,
        }
    }
}

/// One chunk of the upload as the dense passes see it.
pub(crate) struct DenseChunk<'a> {
    pub bind_group: &'a wgpu::BindGroup,
    pub index: u32,
    /// Chunk-local blocks of the draw range.
    pub local: Range<u32>,
}

/// Everything one dense draw needs.
pub(crate) struct DenseDraw<'a> {
    pub pipelines: &'a DensePipelines,
    pub list: &'a RasterList,
    pub targets: &'a DenseTargets,
    pub view_bind_group: &'a wgpu::BindGroup,
    pub weighted: &'a wgpu::TextureView,
    pub coverage: &'a wgpu::TextureView,
    pub size: [u32; 2],
}

impl DenseDraw<'_> {
    /// Records the three passes of a dense draw into `encoder`. The view uniform (with the draw
    /// range) must already be written.
    /// `queries`: the timestamp writes of the three passes (blocks, scan, listed).
    pub fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        chunks: &[DenseChunk<'_>],
        queries: &[PassQueries; 3],
    ) {
        encoder.clear_buffer(&self.targets.accum, 0, None);
        encoder.copy_buffer_to_buffer(
            &self.list.template,
            0,
            &self.list.buffer,
            0,
            self.list.header_bytes,
        );
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("AllocMap::dense_blocks"),
                timestamp_writes: queries[0].compute(),
            });
            pass.set_pipeline(&self.pipelines.blocks);
            pass.set_bind_group(0, self.view_bind_group, &[]);
            pass.set_bind_group(2, &self.targets.accum_bind_group, &[]);
            pass.set_bind_group(3, &self.list.rw_bind_group, &[]);
            for chunk in chunks {
                let groups = chunk
                    .local
                    .len()
                    .div_ceil(WORKGROUP as usize * BLOCKS_PER_INVOCATION)
                    as u32;
                if groups == 0 {
                    continue;
                }
                pass.set_bind_group(1, chunk.bind_group, &[]);
                let x = groups.min(DISPATCH_ROW);
                pass.dispatch_workgroups(x, groups.div_ceil(x), 1);
            }
        }
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("AllocMap::dense_scan"),
                timestamp_writes: queries[1].compute(),
            });
            pass.set_pipeline(&self.pipelines.scan);
            pass.set_bind_group(0, self.view_bind_group, &[]);
            pass.set_bind_group(1, &self.targets.scan_bind_group, &[]);
            pass.dispatch_workgroups(self.size[1], 1, 1);
        }
        let load = wgpu::Operations {
            load: wgpu::LoadOp::Load,
            store: wgpu::StoreOp::Store,
        };
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("AllocMap::accumulate_listed"),
            color_attachments: &[
                Some(wgpu::RenderPassColorAttachment {
                    view: self.weighted,
                    depth_slice: None,
                    resolve_target: None,
                    ops: load,
                }),
                Some(wgpu::RenderPassColorAttachment {
                    view: self.coverage,
                    depth_slice: None,
                    resolve_target: None,
                    ops: load,
                }),
            ],
            depth_stencil_attachment: None,
            timestamp_writes: queries[2].render(),
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&self.pipelines.listed);
        pass.set_bind_group(0, self.view_bind_group, &[]);
        pass.set_bind_group(2, &self.list.ro_bind_group, &[]);
        for chunk in chunks {
            if chunk.local.is_empty() {
                continue;
            }
            pass.set_bind_group(1, chunk.bind_group, &[]);
            pass.draw_indirect(&self.list.buffer, 16 * u64::from(chunk.index));
        }
    }
}

/// CPU twin of `shaders/utils/fixed64.wgsl` and of the dense pass's row bookkeeping
/// (`add_fixed`, `set_at` in `alloc_map_dense.wgsl`, the scan in `alloc_map_dense_scan.wgsl`),
/// with the same 32-bit word operations, for the unit tests below.
pub mod fixed {
    /// Fixed-point units per 1.0 (24 fractional bits).
    pub const ONE: f32 = 16_777_216.0;

    fn split(v: u64) -> (u32, u32) {
        (v as u32, (v >> 32) as u32)
    }

    fn join(lo: u32, hi: u32) -> u64 {
        u64::from(lo) | (u64::from(hi) << 32)
    }

    /// f32 to fixed point (two's complement in a u64), truncating towards zero.
    pub fn to_fixed(x: f32) -> u64 {
        let m = x.abs().min(5.0e11);
        let hi = (m / 256.0).floor();
        let v = join(((m - hi * 256.0) * ONE) as u32, hi as u32);
        if x < 0.0 { v.wrapping_neg() } else { v }
    }

    pub fn to_f32(v: u64) -> f32 {
        let negative = v >> 63 != 0;
        let (lo, hi) = split(if negative { v.wrapping_neg() } else { v });
        let magnitude = hi as f32 * 256.0 + lo as f32 / ONE;
        if negative { -magnitude } else { magnitude }
    }

    /// A pair as the accumulation buffer stores it: value = hi·2^32 + i32(lo), so that a small
    /// value of either sign is its low word alone.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct Stored {
        pub lo: u32,
        pub hi: u32,
    }

    impl Stored {
        /// `add_fixed`: the low words add as wrapping i32s, an overflow carries ±1 into the high
        /// word. Returns the number of atomic operations the shader spends.
        pub fn add(&mut self, value: u64) -> u32 {
            let (lo, hi) = split(value);
            let (lo, mut hi) = (lo, hi.wrapping_add(lo >> 31));
            let mut atomics = 0;
            if lo != 0 {
                let old = self.lo;
                let sum = old.wrapping_add(lo);
                self.lo = sum;
                atomics += 1;
                if (!(old ^ lo)) & (old ^ sum) & 0x8000_0000 != 0 {
                    hi = hi.wrapping_add(if lo & 0x8000_0000 != 0 { u32::MAX } else { 1 });
                }
            }
            if hi != 0 {
                self.hi = self.hi.wrapping_add(hi);
                atomics += 1;
            }
            atomics
        }

        /// `fixed_from_stored`: back to two's complement.
        pub fn value(self) -> u64 {
            join(self.lo, self.hi.wrapping_sub(self.lo >> 31))
        }
    }

    /// One channel of one pixel row: the value difference array `dv`, the slope difference array
    /// `ds`, and the writer's state (`set_at`).
    #[derive(Debug, Clone)]
    pub struct RowChannel {
        pub dv: Vec<Stored>,
        pub ds: Vec<Stored>,
        reached: u64,
        slope: u64,
        pos: usize,
    }

    impl RowChannel {
        pub fn new(width: usize) -> Self {
            Self {
                dv: vec![Stored::default(); width],
                ds: vec![Stored::default(); width],
                reached: 0,
                slope: 0,
                pos: 0,
            }
        }

        /// Column `x` (at or after the previous one) gets `value`, the columns after it `slope`
        /// more each; as `set_at`, in exact integer arithmetic.
        pub fn set(&mut self, x: usize, value: u64, slope: u64) {
            if x >= self.dv.len() {
                return;
            }
            let n = (x - self.pos) as u64;
            let reached = self.reached.wrapping_add(self.slope.wrapping_mul(n));
            self.dv[x].add(value.wrapping_sub(reached));
            self.ds[x].add(slope.wrapping_sub(self.slope));
            (self.reached, self.slope, self.pos) = (value, slope, x);
        }

        /// The scan: value(x) = Σ_{x' <= x} dv + Σ_{x' < x} (Σ_{x'' <= x'} ds).
        pub fn scan(&self) -> Vec<u64> {
            let (mut v, mut s) = (0u64, 0u64);
            let mut out = Vec::with_capacity(self.dv.len());
            for (dv, ds) in self.dv.iter().zip(&self.ds) {
                v = v.wrapping_add(dv.value());
                out.push(v);
                s = s.wrapping_add(ds.value());
                v = v.wrapping_add(s);
            }
            out
        }

        /// The scan as `alloc_map_dense_scan.wgsl` runs it: the row cut into `segments` pieces,
        /// each piece's sums (ΣDv, ΣDs and its own share of the slopes), exclusive prefix sums
        /// of those across the pieces, then each piece walked from the value and slope entering
        /// it. Integer arithmetic throughout, so it equals [`Self::scan`] exactly.
        pub fn scan_segmented(&self, segments: usize) -> Vec<u64> {
            let width = self.dv.len();
            let seg = width.div_ceil(segments.max(1));
            let bounds: Vec<(usize, usize)> = (0..segments.max(1))
                .map(|t| {
                    let x0 = (t * seg).min(width);
                    (x0, (x0 + seg).min(width))
                })
                .collect();
            // Walk 1: per segment ΣDv, ΣDs and Q = Σ_x Σ_{x0 <= x' <= x} Ds[x'].
            let own: Vec<(u64, u64, u64)> = bounds
                .iter()
                .map(|&(x0, x1)| {
                    let (mut dv, mut ds, mut q) = (0u64, 0u64, 0u64);
                    for x in x0..x1 {
                        dv = dv.wrapping_add(self.dv[x].value());
                        ds = ds.wrapping_add(self.ds[x].value());
                        q = q.wrapping_add(ds);
                    }
                    (dv, ds, q)
                })
                .collect();
            let mut out = Vec::with_capacity(width);
            let (mut s_in, mut v_in) = (0u64, 0u64);
            for (&(x0, x1), &(dv, ds, q)) in bounds.iter().zip(&own) {
                // Walk 2 from the exclusive prefix sums.
                let (mut v, mut s) = (v_in, s_in);
                for x in x0..x1 {
                    v = v.wrapping_add(self.dv[x].value());
                    out.push(v);
                    s = s.wrapping_add(self.ds[x].value());
                    v = v.wrapping_add(s);
                }
                let n = (x1 - x0) as u64;
                v_in = v_in
                    .wrapping_add(dv)
                    .wrapping_add(s_in.wrapping_mul(n))
                    .wrapping_add(q);
                s_in = s_in.wrapping_add(ds);
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixed::{RowChannel, Stored, to_f32, to_fixed};

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn unit(&mut self) -> f32 {
            (self.next() % 1_000_000) as f32 / 1_000_000.0
        }
    }

    #[test]
    fn fixed_point_round_trips_within_its_resolution() {
        for x in [
            0.0f32, 1.0, -1.0, 0.5, 1e-7, -1e-7, 3.25e-3, -0.999, 127.9, -128.0, 300.5, -4096.25,
        ] {
            let back = to_f32(to_fixed(x));
            assert!(
                (back - x).abs() <= 1.0 / super::fixed::ONE + x.abs() * 1e-7,
                "{x} -> {back}"
            );
        }
        // Small negative values keep their relative precision (negated in integers).
        let tiny = -3.0e-6f32;
        assert!((to_f32(to_fixed(tiny)) - tiny).abs() < 1e-7);
    }

    #[test]
    fn stored_pairs_sum_exactly_in_any_order_and_small_values_cost_one_atomic() {
        let mut rng = Rng(0x5eed_0000_1234_5678);
        for round in 0..50 {
            // Values up to ±300 (beyond the low word's ±128): carries happen.
            let values: Vec<u64> = (0..400)
                .map(|_| to_fixed((rng.unit() - 0.5) * if round % 2 == 0 { 600.0 } else { 2.0 }))
                .collect();
            let exact = values.iter().fold(0u64, |a, v| a.wrapping_add(*v));
            let mut forward = Stored::default();
            let mut backward = Stored::default();
            for v in &values {
                forward.add(*v);
            }
            for v in values.iter().rev() {
                backward.add(*v);
            }
            assert_eq!(forward.value(), exact);
            assert_eq!(backward.value(), exact);
        }
        let mut pair = Stored::default();
        assert_eq!(pair.add(to_fixed(0.75)), 1);
        assert_eq!(pair.add(to_fixed(-0.25)), 1);
        assert_eq!(pair.add(to_fixed(-1.0)), 1);
        assert_eq!(to_f32(pair.value()), -0.5);
    }

    #[test]
    fn row_sets_reproduce_piecewise_linear_values_and_cancel_after_the_block() {
        let mut rng = Rng(0x0123_4567_89ab_cdef);
        let width = 300;
        let mut channel = RowChannel::new(width);
        let mut expected = vec![0u64; width];
        for _ in 0..200 {
            // A block from a to b: exact columns at both ends, linear pieces between.
            let a = (rng.next() % (width as u64 - 20)) as usize;
            let b = (a + 3 + (rng.next() % 60) as usize).min(width + 5);
            let mut block = RowChannel::new(width);
            let mut x = a;
            while x <= b {
                let value = to_fixed(rng.unit() * 2.0);
                let slope = if x == a || x == b {
                    0
                } else {
                    to_fixed((rng.unit() - 0.5) * 0.01)
                };
                let next = (x + 1 + (rng.next() % 9) as usize).min(b + 1);
                // What the columns [x, next) hold.
                for (n, col) in (x..next).enumerate() {
                    if col < width {
                        let v = value.wrapping_add(slope.wrapping_mul(n as u64));
                        expected[col] = expected[col].wrapping_add(v);
                    }
                }
                block.set(x, value, slope);
                x = next;
            }
            block.set(b + 1, 0, 0);
            // Adding the blocks' difference arrays is what the atomics do.
            for col in 0..width {
                channel.dv[col].add(block.dv[col].value());
                channel.ds[col].add(block.ds[col].value());
            }
        }
        assert_eq!(channel.scan(), expected);
        // The GPU's segmented scan, for the segment counts of a workgroup and for more segments
        // than columns.
        for segments in [1, 7, super::SCAN_WORKGROUP as usize, 2 * width] {
            assert_eq!(
                channel.scan_segmented(segments),
                expected,
                "{segments} segments"
            );
        }
    }
}
