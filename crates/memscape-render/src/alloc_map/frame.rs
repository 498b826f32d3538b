//! One view of the allocation map: its uniform and accumulation targets, the accumulation pass
//! (raster or dense) and the resolve of Eq. 1.

use super::dense::{self, DenseChunk, DenseDraw, DenseTargets};
use super::{
    AccumPath, AllocMapData, AllocMapPipelines, AllocMapView, AllocMapViewGpu, DrawOptions, GapRule,
};
use crate::binding::uniform_buffer;
use crate::offscreen::OFFSCREEN_FORMAT;
use crate::stats::MapDrawStats;

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
        let uniform = uniform_buffer::<AllocMapViewGpu>(device, "AllocMapFrame::view");
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
            let queries = [
                pipelines.pass_queries("alloc_map dense blocks"),
                pipelines.pass_queries("alloc_map dense scan"),
                pipelines.pass_queries("alloc_map dense accumulate_listed"),
            ];
            DenseDraw {
                pipelines: dense_pipelines,
                list,
                targets: dense_targets,
                view_bind_group: &self.view_bind_group,
                weighted: &targets.weighted,
                coverage: &targets.coverage,
                size,
            }
            .record(encoder, &chunks, &queries);
            self.last_path = AccumPath::Dense;
            self.report(pipelines, range.len(), size);
            return;
        }
        self.last_path = AccumPath::Raster;
        self.report(pipelines, range.len(), size);
        let queries = pipelines.pass_queries("alloc_map accumulate (raster)");
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
            timestamp_writes: queries.render(),
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&pipelines.accumulate);
        pass.set_bind_group(0, &self.view_bind_group, &[]);
        data.draw_range(&mut pass, 1, range);
    }

    /// Reports the draw just recorded to the pipelines' recorder, if any.
    fn report(&self, pipelines: &AllocMapPipelines, blocks: usize, size: [u32; 2]) {
        if let Some(stats) = pipelines.stats() {
            stats.map_drawn(MapDrawStats {
                path: self.last_path,
                blocks,
                size,
            });
        }
    }

    /// Clears `target` and draws Eq. 1 into all of it (headless rendering and benchmarks).
    pub fn resolve_to(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        target: &wgpu::TextureView,
        pipelines: &AllocMapPipelines,
    ) {
        let queries = pipelines.pass_queries("alloc_map resolve");
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
            timestamp_writes: queries.render(),
            occlusion_query_set: None,
            multiview_mask: None,
        });
        self.resolve(&mut pass, pipelines);
    }

    /// Draws Eq. 1 into `pass`, whose viewport the caller has set to the view's rectangle.
    pub fn resolve(&self, pass: &mut wgpu::RenderPass<'_>, pipelines: &AllocMapPipelines) {
        let (Some(targets), Some(pipeline)) =
            (&self.targets, pipelines.resolve.get(self.target_format))
        else {
            return;
        };
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &targets.resolve_bind_group, &[]);
        pass.draw(0..3, 0..1);
    }
}
