//! The allocation map's pipelines and bind-group layouts, one set per device.

use super::dense::{self, DensePipelines};
use super::pick;
use crate::binding::{FormatCache, float_texture_entry, storage_entry, uniform_entry};
use crate::context::RendererFeatures;
use crate::stats::{PassQueries, StatsRecorder};
use crate::{RenderError, shader};

/// Pipelines and bind-group layouts of the allocation map, one set per device.
pub struct AllocMapPipelines {
    pub(crate) features: RendererFeatures,
    pub(crate) view_layout: wgpu::BindGroupLayout,
    pub(crate) blocks_layout: wgpu::BindGroupLayout,
    pub(crate) resolve_layout: wgpu::BindGroupLayout,
    pub(crate) accumulate: wgpu::RenderPipeline,
    pub(crate) pick_layout: wgpu::BindGroupLayout,
    pub(crate) pick: wgpu::RenderPipeline,
    /// The dense path, where the device supports it.
    pub(crate) dense: Option<DensePipelines>,
    /// Whether [`AccumPath::Auto`] takes the dense path (see [`dense::auto_takes_dense`]).
    pub(crate) auto_dense: bool,
    resolve_module: wgpu::ShaderModule,
    resolve_pipeline_layout: wgpu::PipelineLayout,
    pub(crate) resolve: FormatCache<wgpu::RenderPipeline>,
    /// Where the passes report their GPU times and each map draw its path (see
    /// [`Self::set_stats`]).
    pub(crate) stats: Option<StatsRecorder>,
    /// The level-of-detail cells' passes (`lod_cells.rs`), made on first use.
    pub(crate) lod_cells: Option<super::lod_cells::LodCellsPipelines>,
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
        let accumulate = crate::binding::buffer_free_pipeline(
            device,
            "AllocMap::accumulate",
            &accumulate_layout,
            &accumulate_module,
            "vs_main",
            "fs_main",
            &accumulate_targets,
        );
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
            resolve: FormatCache::default(),
            stats: None,
            lod_cells: None,
        })
    }

    /// Makes the level-of-detail cells' pipelines unless made (a failure is logged and leaves
    /// `lod_cells` empty: the cells are then resolved on the CPU).
    pub(crate) fn ensure_lod_cells(&mut self, device: &wgpu::Device) {
        if self.lod_cells.is_some() {
            return;
        }
        let targets = [
            Some(wgpu::ColorTargetState {
                format: self.features.accumulation_format(),
                blend: Some(ADDITIVE),
                write_mask: wgpu::ColorWrites::ALL,
            }),
            Some(wgpu::ColorTargetState {
                format: self.features.coverage_format(),
                blend: Some(ADDITIVE),
                write_mask: wgpu::ColorWrites::ALL,
            }),
        ];
        match super::lod_cells::LodCellsPipelines::new(device, &targets) {
            Ok(p) => self.lod_cells = Some(p),
            Err(e) => tracing::warn!("level-of-detail cells on the GPU unavailable: {e}"),
        }
    }

    /// Makes every pass recorded with these pipelines (accumulations, dense passes, occupancy
    /// bars) write its GPU time to `stats`, and every map draw report its path; `None` stops it.
    pub fn set_stats(&mut self, stats: Option<StatsRecorder>) {
        self.stats = stats;
    }

    /// The recorder set with [`Self::set_stats`].
    pub fn stats(&self) -> Option<&StatsRecorder> {
        self.stats.as_ref()
    }

    /// The timestamp writes of a pass named `pass` (none without a recorder).
    pub(crate) fn pass_queries(&self, pass: &str) -> PassQueries {
        self.stats
            .as_ref()
            .map_or_else(PassQueries::none, |s| s.pass(pass))
    }

    /// Whether this device can draw by the dense path ([`AccumPath::Dense`]).
    pub fn dense_supported(&self) -> bool {
        self.dense.is_some()
    }

    /// The resolve pipeline for a target format, created on first use.
    pub fn ensure_resolve(&mut self, device: &wgpu::Device, format: wgpu::TextureFormat) {
        // With the level-of-detail cells' pipelines, their resolve too (`lod_cells.rs`).
        if let Some(lod) = self.lod_cells.as_mut() {
            lod.ensure_resolve(device, &self.resolve_module, format);
        }
        let (module, layout) = (&self.resolve_module, &self.resolve_pipeline_layout);
        self.resolve.ensure(format, || {
            crate::binding::buffer_free_pipeline(
                device,
                "AllocMap::resolve",
                layout,
                module,
                "vs_main",
                "fs_main",
                &[Some(wgpu::ColorTargetState {
                    format,
                    blend: None,
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            )
        });
    }
}
