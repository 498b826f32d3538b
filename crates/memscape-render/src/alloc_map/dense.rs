//! The allocation map's dense path: a frame whose cost grows with blocks + pixels, not with the
//! pixels each block covers.
//!
//! Rasterizing every block as an inflated quad costs one fragment per pixel it touches: zoomed
//! out, a long-lived block less than a pixel tall still touches a whole row of pixels. The dense
//! path instead runs three passes (see the shaders for the details):
//!
//! 1. `alloc_map_dense.wgsl`, one invocation per block of the draw range: blocks outside the view
//!    are dropped; blocks taller than [`DENSE_MAX_ROWS`] pixel rows go to a raster list; every
//!    other block adds its Eq. 1 sums to per-row difference arrays in 64-bit fixed point, in
//!    O(rows × cushion pieces): its two first and two last columns exactly per pixel, the
//!    interior (f = f_y) as constant or piecewise-linear pieces of the cushion luminance.
//! 2. `alloc_map_dense_scan.wgsl`, one invocation per pixel row: prefix sums along the row,
//!    written into the accumulation targets (this also clears them).
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

/// Fixed-point pairs per pixel: Σf, F, three colour sums and three colour slopes.
/// Keep in sync with `PAIRS_PER_PIXEL` in `shaders/alloc_map_dense*.wgsl`.
pub const PAIRS_PER_PIXEL: u64 = 8;
/// Bytes of difference arrays per pixel of a frame drawn by the dense path.
pub const DENSE_BYTES_PER_PIXEL: u64 = PAIRS_PER_PIXEL * 8;
/// Blocks touching more pixel rows than this are rasterized. Keep in sync with
/// `DENSE_MAX_ROWS` in `shaders/alloc_map_dense.wgsl`.
pub const DENSE_MAX_ROWS: u32 = 16;
/// Rows of a block at most this many columns long are added pixel by pixel. Keep in sync with
/// `CHAIN_MAX` in `shaders/alloc_map_dense.wgsl`.
pub const CHAIN_MAX: u32 = 12;
/// [`AccumPath::Auto`] takes the dense path from this many blocks in the draw range on.
pub const DENSE_AUTO_MIN_BLOCKS: usize = 4096;
/// Invocations per workgroup of the dense passes.
const WORKGROUP: u32 = 64;
/// Workgroups per row of a 2-D dispatch (the per-dimension limit is 65,535).
const DISPATCH_ROW: u32 = 32_768;

/// How a draw accumulates Eq. 1's sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AccumPath {
    /// Dense where the device supports it, the draw has at least [`DENSE_AUTO_MIN_BLOCKS`]
    /// blocks and the difference arrays fit in one buffer binding; raster otherwise.
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
        let blocks_pipeline_layout =
            device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("AllocMap::dense_blocks_layout"),
                bind_group_layouts: &[
                    Some(view_layout),
                    Some(blocks_layout),
                    Some(&accum_layout),
                    Some(&list_rw_layout),
                ],
                immediate_size: 0,
            });
        let blocks = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("AllocMap::dense_blocks"),
            layout: Some(&blocks_pipeline_layout),
            module: &blocks_module,
            entry_point: Some("cs_blocks"),
            compilation_options: Default::default(),
            cache: None,
        });
        let scan_pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("AllocMap::dense_scan_layout"),
            bind_group_layouts: &[Some(view_layout), Some(&scan_layout)],
            immediate_size: 0,
        });
        let scan = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("AllocMap::dense_scan"),
            layout: Some(&scan_pipeline_layout),
            module: &scan_module,
            entry_point: Some("cs_scan"),
            compilation_options: Default::default(),
            cache: None,
        });
        let listed_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("AllocMap::accumulate_listed_layout"),
            bind_group_layouts: &[
                Some(view_layout),
                Some(blocks_layout),
                Some(&list_ro_layout),
            ],
            immediate_size: 0,
        });
        let listed = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("AllocMap::accumulate_listed"),
            layout: Some(&listed_layout),
            vertex: wgpu::VertexState {
                module: accumulate_module,
                entry_point: Some("vs_listed"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: None,
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: accumulate_module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: accumulate_targets,
            }),
            multiview_mask: None,
            cache: None,
        });
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
    pub fn record(&self, encoder: &mut wgpu::CommandEncoder, chunks: &[DenseChunk<'_>]) {
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
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipelines.blocks);
            pass.set_bind_group(0, self.view_bind_group, &[]);
            pass.set_bind_group(2, &self.targets.accum_bind_group, &[]);
            pass.set_bind_group(3, &self.list.rw_bind_group, &[]);
            for chunk in chunks {
                let groups = chunk.local.len().div_ceil(WORKGROUP as usize) as u32;
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
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipelines.scan);
            pass.set_bind_group(0, self.view_bind_group, &[]);
            pass.set_bind_group(1, &self.targets.scan_bind_group, &[]);
            pass.dispatch_workgroups(self.size[1].div_ceil(WORKGROUP), 1, 1);
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
            timestamp_writes: None,
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
