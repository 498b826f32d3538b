//! The allocation map (Moreta & Telea): every block a rectangle in time × address, drawn with
//! exact box-filter coverage, the biased anti-aliasing of their Eq. 1, and cushion shading.
//!
//! Three pieces, so that several views can share one upload:
//! * [`AllocMapPipelines`]: pipelines and layouts, one per device;
//! * [`AllocMapData`]: a dataset's blocks in storage buffers, split into chunks below the
//!   device's binding limit, uploaded once;
//! * [`AllocMapFrame`]: one view's uniform and accumulation targets. Zoom and pan change only the
//!   uniform.

pub mod cpu_reference;
pub mod dense;
pub mod gpu;

use std::collections::HashMap;
use std::ops::Range;

pub mod cursors;
pub mod occupancy;
pub mod pick;

use crate::color::needs_shader_srgb_encode;
use crate::context::RendererFeatures;
use crate::offscreen::OFFSCREEN_FORMAT;
use crate::{GpuContext, OffscreenTarget, RenderError, RgbaImage, shader};
pub use cursors::{CursorOverlay, CursorPipelines, CursorStyle, CushionCursor, TimeMapping};
pub use dense::AccumPath;
use dense::{DenseChunk, DenseDraw, DensePipelines, DenseTargets, RasterList};
pub use gpu::{AllocBlockGpu, AllocMapViewGpu, BlockTimeGpu, ChunkInfoGpu};
pub use occupancy::{
    BarBlocks, OccupancyBarData, OccupancyBarFrame, OccupancyBarView, OccupancySteps,
    OccupancyVariant,
};
pub use pick::{AllocMapPicker, PickHit, PickResult};

/// How blocks are shaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CushionKind {
    None,
    /// Parabolic profile: strong structure, dark borders, bright centre.
    #[default]
    Parabolic,
    /// Flat top with bevelled edges.
    Plateau,
}

impl CushionKind {
    fn gpu(self) -> u32 {
        match self {
            CushionKind::None => 0,
            CushionKind::Parabolic => 1,
            CushionKind::Plateau => 2,
        }
    }
}

/// Whether colours (categorical attributes) or attribute values (quantitative) are averaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorMode {
    /// Each block carries a colour; Eq. 1 averages colours weighted by f^α.
    #[default]
    Categorical,
    /// Each block carries a value in [0, 1]; Eq. 1 averages values, then the blue → red ramp.
    Quantitative,
}

/// How a view applies the dataset's selection bits (see [`AllocMapData::set_selection`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum SelectionStyle {
    /// The bits are ignored: every block in its own colour.
    #[default]
    Off,
    /// Blocks whose bit is clear are drawn in `color` (sRGB bytes), mixed with their own colour
    /// by `1 − amount` (`amount` 1: only the dim colour). Selected blocks keep their colour; in
    /// [`ColorMode::Quantitative`] every block is first coloured through the blue → red ramp and
    /// the colours are averaged (Eq. 1's categorical form), as the dim colour is no value.
    DimUnselected { color: [u8; 3], amount: f32 },
}

impl SelectionStyle {
    /// The app's highlight look: unselected blocks a dark grey.
    pub const DIM: SelectionStyle = SelectionStyle::DimUnselected {
        color: [70, 72, 80],
        amount: 1.0,
    };
}

/// What one draw of an [`AllocMapData`] shows besides the view: a subset of the blocks and how
/// the selection is applied. `Default` draws every block, selection off.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DrawOptions {
    /// The blocks `[start, end)` of the upload (indices as uploaded; clipped to the upload).
    /// For the bins grid the app uploads blocks sorted by bin, so each bin is one range.
    /// `None`: all blocks.
    pub range: Option<Range<usize>>,
    pub selection: SelectionStyle,
    /// Raster or dense accumulation ([`AccumPath::Auto`]: chosen per draw). Both draw the same
    /// picture (the CPU reference's).
    pub path: AccumPath,
}

impl DrawOptions {
    /// The blocks `range` only.
    pub fn range(range: Range<usize>) -> Self {
        Self {
            range: Some(range),
            ..Self::default()
        }
    }
}

/// What happens to blocks at least `min_px` wide: the occupancy bar's idle gaps (its blocks are
/// inter-event intervals). The main map uses [`GapRule::None`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) enum GapRule {
    #[default]
    None,
    /// Not drawn: the background shows.
    Hide { min_px: f32 },
    /// Only these get the view's cushion; narrower blocks are flat.
    CushionOnly { min_px: f32 },
}

impl GapRule {
    fn gpu(self) -> (u32, f32) {
        match self {
            GapRule::None => (0, f32::INFINITY),
            GapRule::Hide { min_px } => (1, min_px),
            GapRule::CushionOnly { min_px } => (2, min_px),
        }
    }
}

/// The cushions' light: from the upper left, slightly towards the viewer (normalised).
pub fn default_light() -> [f32; 3] {
    let l = [-0.45f32, -0.55, 0.7];
    let n = (l[0] * l[0] + l[1] * l[1] + l[2] * l[2]).sqrt();
    l.map(|v| v / n)
}

/// What part of the (time, collapsed address) plane is shown, and how.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AllocMapView {
    /// Integer part of the time at the left edge.
    pub time_origin: u64,
    /// Fractional part of the time at the left edge, in [0, 1).
    pub time_origin_frac: f32,
    /// Integer part of the collapsed address at the bottom edge.
    pub addr_origin: u64,
    pub addr_origin_frac: f32,
    pub pixels_per_time: f32,
    pub pixels_per_byte: f32,
    /// The bias α of Eq. 1 (> 0; low values emphasise few, thin blocks).
    pub alpha: f32,
    pub cushion: CushionKind,
    pub cushion_strength: f32,
    pub color_mode: ColorMode,
    /// c_B, the colour of free memory, linear RGB.
    pub background_linear: [f32; 3],
}

impl AllocMapView {
    /// A view showing `[t0, t1) × [a0, a1)` in a target of `width`×`height` pixels.
    pub fn fit(t0: u64, t1: u64, a0: u64, a1: u64, width: u32, height: u32) -> Self {
        let span_t = (t1.saturating_sub(t0)).max(1) as f64;
        let span_a = (a1.saturating_sub(a0)).max(1) as f64;
        Self {
            time_origin: t0,
            time_origin_frac: 0.0,
            addr_origin: a0,
            addr_origin_frac: 0.0,
            pixels_per_time: (f64::from(width) / span_t) as f32,
            pixels_per_byte: (f64::from(height) / span_a) as f32,
            alpha: 0.5,
            cushion: CushionKind::Parabolic,
            cushion_strength: 1.0,
            color_mode: ColorMode::Categorical,
            background_linear: [0.012, 0.014, 0.02],
        }
    }

    /// Light from the upper left, slightly towards the viewer.
    pub fn light(&self) -> [f32; 3] {
        default_light()
    }

    /// The uniform for passes that produce no colour (picking).
    fn gpu_plain(&self, size: [u32; 2]) -> AllocMapViewGpu {
        self.gpu(
            size,
            [0.0, 0.0],
            OFFSCREEN_FORMAT,
            SelectionStyle::Off,
            GapRule::None,
            0..u32::MAX as usize,
        )
    }

    fn gpu(
        &self,
        size: [u32; 2],
        resolve_origin_px: [f32; 2],
        target: wgpu::TextureFormat,
        selection: SelectionStyle,
        gaps: GapRule,
        range: Range<usize>,
    ) -> AllocMapViewGpu {
        let l = self.light();
        let (gap_mode, gap_min_px) = gaps.gpu();
        let (selection_mode, dim_amount, dim_color) = match selection {
            SelectionStyle::Off => (0, 0.0, [0.0; 4]),
            SelectionStyle::DimUnselected { color, amount } => {
                let c = color.map(|b| crate::color::srgb_to_linear(f32::from(b) / 255.0));
                let mode = match self.color_mode {
                    ColorMode::Categorical => 1,
                    ColorMode::Quantitative => 2,
                };
                (mode, amount.clamp(0.0, 1.0), [c[0], c[1], c[2], 1.0])
            }
        };
        AllocMapViewGpu {
            origin_time: crate::u64_split::split(self.time_origin),
            origin_addr: crate::u64_split::split(self.addr_origin),
            origin_frac: [self.time_origin_frac, self.addr_origin_frac],
            scale: [self.pixels_per_time, self.pixels_per_byte],
            viewport_px: [size[0] as f32, size[1] as f32],
            resolve_origin_px,
            alpha: self.alpha.max(1e-3),
            cushion_kind: self.cushion.gpu(),
            cushion_strength: self.cushion_strength,
            color_mode: match (self.color_mode, selection_mode) {
                (ColorMode::Quantitative, 0) => 1,
                _ => 0,
            },
            background: [
                self.background_linear[0],
                self.background_linear[1],
                self.background_linear[2],
                1.0,
            ],
            light: [l[0], l[1], l[2], 0.0],
            output_srgb_encode: u32::from(needs_shader_srgb_encode(target)),
            selection_mode,
            dim_amount,
            gap_mode,
            dim_color,
            gap_min_px,
            range_start: range.start.min(u32::MAX as usize) as u32,
            range_end: range.end.min(u32::MAX as usize) as u32,
            _pad: 0,
        }
    }
}

/// Pipelines and bind-group layouts of the allocation map, one set per device.
pub struct AllocMapPipelines {
    features: RendererFeatures,
    view_layout: wgpu::BindGroupLayout,
    blocks_layout: wgpu::BindGroupLayout,
    resolve_layout: wgpu::BindGroupLayout,
    accumulate: wgpu::RenderPipeline,
    pick_layout: wgpu::BindGroupLayout,
    pick: wgpu::RenderPipeline,
    /// The dense path, where the device supports it.
    dense: Option<DensePipelines>,
    /// Whether [`AccumPath::Auto`] takes the dense path (see [`dense::auto_takes_dense`]).
    auto_dense: bool,
    resolve_module: wgpu::ShaderModule,
    resolve_pipeline_layout: wgpu::PipelineLayout,
    resolve: HashMap<wgpu::TextureFormat, wgpu::RenderPipeline>,
}

fn uniform_entry(binding: u32, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

fn storage_entry(binding: u32, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: true },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

fn float_texture_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::FRAGMENT,
        ty: wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Float { filterable: false },
            view_dimension: wgpu::TextureViewDimension::D2,
            multisampled: false,
        },
        count: None,
    }
}

const ADDITIVE: wgpu::BlendState = wgpu::BlendState {
    color: wgpu::BlendComponent {
        src_factor: wgpu::BlendFactor::One,
        dst_factor: wgpu::BlendFactor::One,
        operation: wgpu::BlendOperation::Add,
    },
    alpha: wgpu::BlendComponent {
        src_factor: wgpu::BlendFactor::One,
        dst_factor: wgpu::BlendFactor::One,
        operation: wgpu::BlendOperation::Add,
    },
};

impl AllocMapPipelines {
    pub fn new(device: &wgpu::Device) -> Result<Self, RenderError> {
        let features = RendererFeatures::of(device);
        // The dense path's compute pass reads the view and the blocks too.
        let compute = if features.dense_accumulation() {
            wgpu::ShaderStages::COMPUTE
        } else {
            wgpu::ShaderStages::NONE
        };
        let view_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("AllocMap::view_layout"),
            entries: &[uniform_entry(
                0,
                wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT | compute,
            )],
        });
        let blocks_stages = wgpu::ShaderStages::VERTEX | compute;
        let blocks_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("AllocMap::blocks_layout"),
            entries: &[
                storage_entry(0, blocks_stages),
                storage_entry(1, blocks_stages),
                uniform_entry(2, blocks_stages),
                storage_entry(3, blocks_stages),
            ],
        });
        let resolve_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("AllocMap::resolve_layout"),
            entries: &[
                uniform_entry(0, wgpu::ShaderStages::FRAGMENT),
                float_texture_entry(1),
                float_texture_entry(2),
            ],
        });
        let accumulate_module = shader::create_module(device, "alloc_map_accumulate.wgsl")?;
        let resolve_module = shader::create_module(device, "alloc_map_resolve.wgsl")?;
        let accumulate_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("AllocMap::accumulate_layout"),
            bind_group_layouts: &[Some(&view_layout), Some(&blocks_layout)],
            immediate_size: 0,
        });
        let accumulate_targets = [
            Some(wgpu::ColorTargetState {
                format: features.accumulation_format(),
                blend: Some(ADDITIVE),
                write_mask: wgpu::ColorWrites::ALL,
            }),
            Some(wgpu::ColorTargetState {
                format: features.coverage_format(),
                blend: Some(ADDITIVE),
                write_mask: wgpu::ColorWrites::ALL,
            }),
        ];
        let dense = if features.dense_accumulation() {
            Some(DensePipelines::new(
                device,
                &features,
                &view_layout,
                &blocks_layout,
                &accumulate_module,
                &accumulate_targets,
            )?)
        } else {
            None
        };
        let accumulate = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("AllocMap::accumulate"),
            layout: Some(&accumulate_layout),
            vertex: wgpu::VertexState {
                module: &accumulate_module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &accumulate_module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &accumulate_targets,
            }),
            multiview_mask: None,
            cache: None,
        });
        let pick_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("AllocMap::pick_layout"),
            entries: &[
                uniform_entry(0, wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT),
                uniform_entry(1, wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT),
            ],
        });
        let pick_module = shader::create_module(device, "alloc_map_pick.wgsl")?;
        let pick_pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("AllocMap::pick_pipeline_layout"),
            bind_group_layouts: &[Some(&pick_layout), Some(&blocks_layout)],
            immediate_size: 0,
        });
        let pick = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("AllocMap::pick"),
            layout: Some(&pick_pipeline_layout),
            vertex: wgpu::VertexState {
                module: &pick_module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: Some(wgpu::DepthStencilState {
                format: pick::PICK_DEPTH_FORMAT,
                depth_write_enabled: Some(true),
                // The largest coverage wins; on a tie the later draw (higher block index).
                depth_compare: Some(wgpu::CompareFunction::GreaterEqual),
                stencil: wgpu::StencilState::default(),
                bias: wgpu::DepthBiasState::default(),
            }),
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &pick_module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format: pick::PICK_ID_FORMAT,
                    blend: None,
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        });
        let resolve_pipeline_layout =
            device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("AllocMap::resolve_layout"),
                bind_group_layouts: &[Some(&resolve_layout)],
                immediate_size: 0,
            });
        Ok(Self {
            features,
            view_layout,
            blocks_layout,
            resolve_layout,
            accumulate,
            pick_layout,
            pick,
            auto_dense: dense::auto_takes_dense(device),
            dense,
            resolve_module,
            resolve_pipeline_layout,
            resolve: HashMap::new(),
        })
    }

    /// Whether this device can draw by the dense path ([`AccumPath::Dense`]).
    pub fn dense_supported(&self) -> bool {
        self.dense.is_some()
    }

    /// The resolve pipeline for a target format, created on first use.
    pub fn ensure_resolve(&mut self, device: &wgpu::Device, format: wgpu::TextureFormat) {
        if self.resolve.contains_key(&format) {
            return;
        }
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("AllocMap::resolve"),
            layout: Some(&self.resolve_pipeline_layout),
            vertex: wgpu::VertexState {
                module: &self.resolve_module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &self.resolve_module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format,
                    blend: None,
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        });
        self.resolve.insert(format, pipeline);
    }
}

struct BlockChunk {
    bind_group: wgpu::BindGroup,
    blocks: wgpu::Buffer,
    times: wgpu::Buffer,
    /// Index of the chunk's first block in the whole dataset.
    base: u32,
    count: u32,
    /// The chunk's position in the upload.
    index: u32,
}

impl BlockChunk {
    /// The chunk-local instances of the global block range `range`, if any.
    fn local(&self, range: &Range<usize>) -> Option<Range<u32>> {
        let lo = range.start.max(self.base as usize);
        let hi = range.end.min(self.base as usize + self.count as usize);
        (lo < hi).then(|| (lo - self.base as usize) as u32..(hi - self.base as usize) as u32)
    }
}

/// A dataset's blocks on the GPU, uploaded once; split into chunks below the binding limit.
pub struct AllocMapData {
    chunks: Vec<BlockChunk>,
    /// One bit per block (bit `i % 32` of word `i / 32`), shared by every chunk's bind group.
    selection: wgpu::Buffer,
    /// The dense path's raster list (`None` where the path is unavailable).
    raster_list: Option<RasterList>,
    pub block_count: usize,
}

impl AllocMapData {
    /// Largest number of blocks in one chunk for the given binding limit.
    pub fn blocks_per_chunk(max_binding_bytes: u64) -> usize {
        let per_block = std::mem::size_of::<AllocBlockGpu>() as u64;
        ((max_binding_bytes / per_block).clamp(1, u64::from(u32::MAX))) as usize
    }

    pub fn upload(
        device: &wgpu::Device,
        pipelines: &AllocMapPipelines,
        blocks: &[AllocBlockGpu],
        times: &[BlockTimeGpu],
    ) -> Self {
        let per_chunk = Self::blocks_per_chunk(pipelines.features.max_storage_binding_bytes);
        Self::upload_chunked(device, pipelines, blocks, times, per_chunk)
    }

    /// [`Self::upload`] with an explicit chunk size (tests exercise the split with small ones).
    pub fn upload_chunked(
        device: &wgpu::Device,
        pipelines: &AllocMapPipelines,
        blocks: &[AllocBlockGpu],
        times: &[BlockTimeGpu],
        per_chunk: usize,
    ) -> Self {
        use wgpu::util::DeviceExt;
        // Block indices travel to the GPU as u32 (picking, selection bits).
        let n = blocks.len().min(times.len()).min(u32::MAX as usize);
        if n < blocks.len().max(times.len()) {
            tracing::warn!(
                "allocation map: {} blocks and {} lifetimes given, drawing {n}",
                blocks.len(),
                times.len()
            );
        }
        let per_chunk = per_chunk.max(1);
        let selection = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("AllocMapData::selection_bits"),
            size: 4 * SelectionBits::words_for(n).max(1) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let chunk_count = n.div_ceil(per_chunk);
        let list_offset = RasterList::header_words(chunk_count);
        let mut chunks = Vec::new();
        let mut start = 0;
        while start < n {
            let end = (start + per_chunk).min(n);
            let blocks_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("AllocMapData::blocks"),
                contents: bytemuck::cast_slice(&blocks[start..end]),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            });
            let times_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("AllocMapData::times"),
                contents: bytemuck::cast_slice(&times[start..end]),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            });
            let info = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("AllocMapData::chunk_info"),
                contents: bytemuck::bytes_of(&ChunkInfoGpu {
                    base: start as u32,
                    count: (end - start) as u32,
                    index: chunks.len() as u32,
                    list_offset,
                }),
                usage: wgpu::BufferUsages::UNIFORM,
            });
            let bind_group = Self::bind(
                device,
                pipelines,
                &blocks_buf,
                &times_buf,
                &info,
                &selection,
            );
            chunks.push(BlockChunk {
                bind_group,
                blocks: blocks_buf,
                times: times_buf,
                base: start as u32,
                count: (end - start) as u32,
                index: chunks.len() as u32,
            });
            start = end;
        }
        let raster_list = pipelines
            .dense
            .as_ref()
            .and_then(|dense| RasterList::new(device, dense, &pipelines.features, chunk_count, n));
        Self {
            chunks,
            selection,
            raster_list,
            block_count: n,
        }
    }

    fn bind(
        device: &wgpu::Device,
        pipelines: &AllocMapPipelines,
        blocks: &wgpu::Buffer,
        times: &wgpu::Buffer,
        info: &wgpu::Buffer,
        selection: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("AllocMapData::bind_group"),
            layout: &pipelines.blocks_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: blocks.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: times.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: info.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: selection.as_entire_binding(),
                },
            ],
        })
    }

    /// Draws the blocks `range` (indices into the whole upload, clipped to it) in index order,
    /// binding each chunk at bind group `group`. Instance `i` of a chunk reads its buffers at
    /// `i`: draws start at the chunk-local first instance.
    fn draw_range(&self, pass: &mut wgpu::RenderPass<'_>, group: u32, range: Range<usize>) {
        for chunk in &self.chunks {
            if let Some(local) = chunk.local(&range) {
                pass.set_bind_group(group, &chunk.bind_group, &[]);
                pass.draw(0..6, local);
            }
        }
    }

    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Replaces the selection bits (one bit per block, see [`SelectionBits`]): `n / 8` bytes
    /// through the queue, nothing else re-uploaded. Views show them with
    /// [`SelectionStyle::DimUnselected`]. Words beyond the upload are ignored; missing words
    /// keep their previous bits. Bits start all clear.
    pub fn set_selection(&self, queue: &wgpu::Queue, words: &[u32]) {
        let n = SelectionBits::words_for(self.block_count).min(words.len());
        if n > 0 {
            queue.write_buffer(&self.selection, 0, bytemuck::cast_slice(&words[..n]));
        }
    }

    /// Replaces the time axis (wall time ↔ event index) without touching the blocks.
    pub fn replace_times(&self, queue: &wgpu::Queue, times: &[BlockTimeGpu]) {
        let mut start = 0usize;
        for chunk in &self.chunks {
            let end = start + chunk.count as usize;
            if let Some(slice) = times.get(start..end) {
                queue.write_buffer(&chunk.times, 0, bytemuck::cast_slice(slice));
            }
            start = end;
        }
    }

    /// Replaces colours and attributes (a new colour mapping) without touching the times.
    pub fn replace_blocks(&self, queue: &wgpu::Queue, blocks: &[AllocBlockGpu]) {
        let mut start = 0usize;
        for chunk in &self.chunks {
            let end = start + chunk.count as usize;
            if let Some(slice) = blocks.get(start..end) {
                queue.write_buffer(&chunk.blocks, 0, bytemuck::cast_slice(slice));
            }
            start = end;
        }
    }
}

struct AccumTargets {
    size: [u32; 2],
    weighted: wgpu::TextureView,
    coverage: wgpu::TextureView,
    resolve_bind_group: wgpu::BindGroup,
    /// The dense path's difference arrays, made on its first use at this size.
    dense: Option<DenseTargets>,
}

/// One view of the allocation map: its uniform and accumulation targets.
pub struct AllocMapFrame {
    uniform: wgpu::Buffer,
    view_bind_group: wgpu::BindGroup,
    targets: Option<AccumTargets>,
    target_format: wgpu::TextureFormat,
    last_path: AccumPath,
}

impl AllocMapFrame {
    pub fn new(device: &wgpu::Device, pipelines: &AllocMapPipelines) -> Self {
        let uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("AllocMapFrame::view"),
            size: std::mem::size_of::<AllocMapViewGpu>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let view_bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("AllocMapFrame::view_bind_group"),
            layout: &pipelines.view_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: uniform.as_entire_binding(),
            }],
        });
        Self {
            uniform,
            view_bind_group,
            targets: None,
            target_format: OFFSCREEN_FORMAT,
            last_path: AccumPath::Raster,
        }
    }

    fn ensure_targets(
        &mut self,
        device: &wgpu::Device,
        pipelines: &AllocMapPipelines,
        size: [u32; 2],
    ) {
        if self.targets.as_ref().is_some_and(|t| t.size == size) {
            return;
        }
        // The dense path's scan writes the targets as storage textures.
        let storage = if pipelines.dense.is_some() {
            wgpu::TextureUsages::STORAGE_BINDING
        } else {
            wgpu::TextureUsages::empty()
        };
        let make = |label: &str, format| {
            device
                .create_texture(&wgpu::TextureDescriptor {
                    label: Some(label),
                    size: wgpu::Extent3d {
                        width: size[0],
                        height: size[1],
                        depth_or_array_layers: 1,
                    },
                    mip_level_count: 1,
                    sample_count: 1,
                    dimension: wgpu::TextureDimension::D2,
                    format,
                    usage: wgpu::TextureUsages::RENDER_ATTACHMENT
                        | wgpu::TextureUsages::TEXTURE_BINDING
                        | storage,
                    view_formats: &[],
                })
                .create_view(&wgpu::TextureViewDescriptor::default())
        };
        let weighted = make(
            "AllocMapFrame::weighted_sums",
            pipelines.features.accumulation_format(),
        );
        let coverage = make(
            "AllocMapFrame::coverage_sums",
            pipelines.features.coverage_format(),
        );
        let resolve_bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("AllocMapFrame::resolve_bind_group"),
            layout: &pipelines.resolve_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: self.uniform.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(&weighted),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: wgpu::BindingResource::TextureView(&coverage),
                },
            ],
        });
        self.targets = Some(AccumTargets {
            size,
            weighted,
            coverage,
            resolve_bind_group,
            dense: None,
        });
    }

    /// Which path the last `prepare` took (never `Auto`).
    pub fn last_path(&self) -> AccumPath {
        self.last_path
    }

    /// Writes the uniform and records the accumulation pass of every block, selection off.
    /// `size` is the view's size in pixels, `resolve_origin_px` where its top-left corner lies
    /// in the final target. See [`Self::prepare_with`].
    #[allow(clippy::too_many_arguments)]
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        pipelines: &mut AllocMapPipelines,
        data: &AllocMapData,
        view: &AllocMapView,
        size: [u32; 2],
        resolve_origin_px: [f32; 2],
        target_format: wgpu::TextureFormat,
    ) {
        self.prepare_with(
            device,
            queue,
            encoder,
            pipelines,
            data,
            view,
            size,
            resolve_origin_px,
            target_format,
            &DrawOptions::default(),
        );
    }

    /// [`Self::prepare`] for a subset of the blocks (`options.range`, e.g. one bin of the bins
    /// grid: give each cell its own frame, `size` the cell's and `resolve_origin_px` its corner)
    /// and with the selection applied as `options.selection` says. Nothing is re-uploaded.
    #[allow(clippy::too_many_arguments)]
    pub fn prepare_with(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        pipelines: &mut AllocMapPipelines,
        data: &AllocMapData,
        view: &AllocMapView,
        size: [u32; 2],
        resolve_origin_px: [f32; 2],
        target_format: wgpu::TextureFormat,
        options: &DrawOptions,
    ) {
        self.prepare_inner(
            device,
            queue,
            encoder,
            pipelines,
            data,
            view,
            size,
            resolve_origin_px,
            target_format,
            options,
            GapRule::None,
        );
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn prepare_inner(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        pipelines: &mut AllocMapPipelines,
        data: &AllocMapData,
        view: &AllocMapView,
        size: [u32; 2],
        resolve_origin_px: [f32; 2],
        target_format: wgpu::TextureFormat,
        options: &DrawOptions,
        gaps: GapRule,
    ) {
        let size = [size[0].max(1), size[1].max(1)];
        pipelines.ensure_resolve(device, target_format);
        self.ensure_targets(device, pipelines, size);
        self.target_format = target_format;
        let range = options.range.clone().unwrap_or(0..data.block_count);
        let range = range.start.min(data.block_count)..range.end.min(data.block_count);
        let gpu = view.gpu(
            size,
            resolve_origin_px,
            target_format,
            options.selection,
            gaps,
            range.clone(),
        );
        queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&gpu));
        let dense_possible = gaps == GapRule::None
            && data.raster_list.is_some()
            && DenseTargets::bytes(size) <= pipelines.features.max_storage_binding_bytes;
        let dense = dense_possible
            && match options.path {
                AccumPath::Raster => false,
                AccumPath::Dense => true,
                AccumPath::Auto => {
                    pipelines.auto_dense && range.len() >= dense::DENSE_AUTO_MIN_BLOCKS
                }
            };
        if let (true, Some(dense_pipelines), Some(list), Some(targets)) = (
            dense,
            pipelines.dense.as_ref(),
            data.raster_list.as_ref(),
            self.targets.as_mut(),
        ) {
            let dense_targets = targets.dense.get_or_insert_with(|| {
                DenseTargets::new(
                    device,
                    dense_pipelines,
                    size,
                    &targets.weighted,
                    &targets.coverage,
                )
            });
            let chunks: Vec<DenseChunk<'_>> = data
                .chunks
                .iter()
                .filter_map(|chunk| {
                    chunk.local(&range).map(|local| DenseChunk {
                        bind_group: &chunk.bind_group,
                        index: chunk.index,
                        local,
                    })
                })
                .collect();
            DenseDraw {
                pipelines: dense_pipelines,
                list,
                targets: dense_targets,
                view_bind_group: &self.view_bind_group,
                weighted: &targets.weighted,
                coverage: &targets.coverage,
                size,
            }
            .record(encoder, &chunks);
            self.last_path = AccumPath::Dense;
            return;
        }
        self.last_path = AccumPath::Raster;
        let Some(targets) = &self.targets else {
            return;
        };
        let clear = wgpu::Operations {
            load: wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
            store: wgpu::StoreOp::Store,
        };
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("AllocMap::accumulate"),
            color_attachments: &[
                Some(wgpu::RenderPassColorAttachment {
                    view: &targets.weighted,
                    depth_slice: None,
                    resolve_target: None,
                    ops: clear,
                }),
                Some(wgpu::RenderPassColorAttachment {
                    view: &targets.coverage,
                    depth_slice: None,
                    resolve_target: None,
                    ops: clear,
                }),
            ],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&pipelines.accumulate);
        pass.set_bind_group(0, &self.view_bind_group, &[]);
        data.draw_range(&mut pass, 1, range);
    }

    /// Clears `target` and draws Eq. 1 into all of it (headless rendering and benchmarks).
    pub fn resolve_to(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        pipelines: &AllocMapPipelines,
    ) {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("AllocMap::resolve_to"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: target,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        self.resolve(&mut pass, pipelines);
    }

    /// Draws Eq. 1 into `pass`, whose viewport the caller has set to the view's rectangle.
    pub fn resolve(&self, pass: &mut wgpu::RenderPass<'_>, pipelines: &AllocMapPipelines) {
        let (Some(targets), Some(pipeline)) =
            (&self.targets, pipelines.resolve.get(&self.target_format))
        else {
            return;
        };
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &targets.resolve_bind_group, &[]);
        pass.draw(0..3, 0..1);
    }
}

/// A selection as bits, one per block, in the layout [`AllocMapData::set_selection`] uploads
/// (bit `i % 32` of word `i / 32`): 10 M blocks are 1.25 MB.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SelectionBits {
    words: Vec<u32>,
    len: usize,
}

impl SelectionBits {
    /// Words needed for `blocks` bits.
    pub fn words_for(blocks: usize) -> usize {
        blocks.div_ceil(32)
    }

    /// Nothing selected, room for `blocks` bits.
    pub fn new(blocks: usize) -> Self {
        Self {
            words: vec![0; Self::words_for(blocks)],
            len: blocks,
        }
    }

    /// The blocks `indices` selected (indices at or beyond `blocks` are ignored).
    pub fn from_indices(blocks: usize, indices: impl IntoIterator<Item = usize>) -> Self {
        let mut bits = Self::new(blocks);
        for i in indices {
            bits.set(i, true);
        }
        bits
    }

    /// Every block selected.
    pub fn all(blocks: usize) -> Self {
        Self::from_indices(blocks, 0..blocks)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Selects or deselects block `i` (ignored beyond the length).
    pub fn set(&mut self, i: usize, on: bool) {
        if i >= self.len {
            return;
        }
        let (w, b) = (i / 32, i % 32);
        if on {
            self.words[w] |= 1 << b;
        } else {
            self.words[w] &= !(1 << b);
        }
    }

    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 32] & (1 << (i % 32)) != 0
    }

    /// The words, ready for [`AllocMapData::set_selection`].
    pub fn words(&self) -> &[u32] {
        &self.words
    }
}

/// One cell of a grid of views sharing one target: where it lies and what it shows.
#[derive(Debug, Clone, PartialEq)]
pub struct GridCell {
    /// `[x, y, width, height]` in the target's pixels.
    pub rect: [u32; 4],
    pub view: AllocMapView,
    pub options: DrawOptions,
}

/// Renders several views of one upload (the bins grid: each cell a bin's block range with its
/// own view) into one image of `width`×`height` cleared to `clear` (sRGB bytes), each cell
/// through its own frame, resolved with the viewport set to the cell. Cells must lie inside the
/// image.
pub fn render_grid_offscreen(
    ctx: &GpuContext,
    pipelines: &mut AllocMapPipelines,
    data: &AllocMapData,
    cells: &[GridCell],
    width: u32,
    height: u32,
    clear: [u8; 4],
) -> Result<RgbaImage, RenderError> {
    let target = OffscreenTarget::new(ctx, width, height)?;
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("AllocMap::grid_offscreen"),
        });
    let mut frames = Vec::with_capacity(cells.len());
    for cell in cells {
        let [x, y, w, h] = cell.rect;
        if w == 0 || h == 0 || x.saturating_add(w) > width || y.saturating_add(h) > height {
            return Err(RenderError::BadRect {
                rect: cell.rect,
                width,
                height,
            });
        }
        let mut frame = AllocMapFrame::new(&ctx.device, pipelines);
        frame.prepare_with(
            &ctx.device,
            &ctx.queue,
            &mut encoder,
            pipelines,
            data,
            &cell.view,
            [w, h],
            [x as f32, y as f32],
            OFFSCREEN_FORMAT,
            &cell.options,
        );
        frames.push(frame);
    }
    {
        let mut pass = target.begin_pass(&mut encoder, "AllocMap::grid_resolve", Some(clear));
        for (cell, frame) in cells.iter().zip(&frames) {
            let [x, y, w, h] = cell.rect;
            pass.set_viewport(x as f32, y as f32, w as f32, h as f32, 0.0, 1.0);
            frame.resolve(&mut pass, pipelines);
        }
    }
    ctx.queue.submit([encoder.finish()]);
    target.read(ctx)
}

/// Renders the allocation map headless into an image (what `memscape render` and the tests use).
pub fn render_offscreen(
    ctx: &GpuContext,
    pipelines: &mut AllocMapPipelines,
    data: &AllocMapData,
    view: &AllocMapView,
    width: u32,
    height: u32,
) -> Result<RgbaImage, RenderError> {
    render_offscreen_with(
        ctx,
        pipelines,
        data,
        view,
        width,
        height,
        &DrawOptions::default(),
    )
}

/// [`render_offscreen`] of a block range and/or with the selection applied.
pub fn render_offscreen_with(
    ctx: &GpuContext,
    pipelines: &mut AllocMapPipelines,
    data: &AllocMapData,
    view: &AllocMapView,
    width: u32,
    height: u32,
    options: &DrawOptions,
) -> Result<RgbaImage, RenderError> {
    let target = OffscreenTarget::new(ctx, width, height)?;
    let mut frame = AllocMapFrame::new(&ctx.device, pipelines);
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("AllocMap::offscreen"),
        });
    frame.prepare_with(
        &ctx.device,
        &ctx.queue,
        &mut encoder,
        pipelines,
        data,
        view,
        [width, height],
        [0.0, 0.0],
        OFFSCREEN_FORMAT,
        options,
    );
    frame.resolve_to(&mut encoder, &target.view, pipelines);
    ctx.queue.submit([encoder.finish()]);
    target.read(ctx)
}
