//! One view of the allocation map: its uniform and accumulation targets, the accumulation pass
//! (raster or dense) and the resolve of Eq. 1.

use std::borrow::Cow;

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
    /// The textures behind the views (sums computed on the CPU are written into them).
    weighted_texture: wgpu::Texture,
    coverage_texture: wgpu::Texture,
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
    /// The resolve's bindings with a level's cells' sums (`lod_cells.rs`) where the last
    /// prepare left them to the resolve: its targets, then the sums buffer.
    cells_resolve: Option<wgpu::BindGroup>,
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
            cells_resolve: None,
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
            device.create_texture(&wgpu::TextureDescriptor {
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
                    | wgpu::TextureUsages::COPY_DST
                    | storage,
                view_formats: &[],
            })
        };
        let weighted_texture = make(
            "AllocMapFrame::weighted_sums",
            pipelines.features.accumulation_format(),
        );
        let coverage_texture = make(
            "AllocMapFrame::coverage_sums",
            pipelines.features.coverage_format(),
        );
        let weighted = weighted_texture.create_view(&wgpu::TextureViewDescriptor::default());
        let coverage = coverage_texture.create_view(&wgpu::TextureViewDescriptor::default());
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
            weighted_texture,
            coverage_texture,
            resolve_bind_group,
            dense: None,
        });
    }

    /// The accumulation targets (weighted sums, coverage), once a `prepare` made them.
    pub(crate) fn accumulation_views(&self) -> Option<(&wgpu::TextureView, &wgpu::TextureView)> {
        self.targets.as_ref().map(|t| (&t.weighted, &t.coverage))
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
            1.0,
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
        value_scale: f32,
    ) {
        let size = [size[0].max(1), size[1].max(1)];
        pipelines.ensure_resolve(device, target_format);
        self.ensure_targets(device, pipelines, size);
        self.target_format = target_format;
        self.cells_resolve = None;
        let range = options.range.clone().unwrap_or(0..data.block_count);
        let range = range.start.min(data.block_count)..range.end.min(data.block_count);
        let gpu = view.gpu(
            size,
            resolve_origin_px,
            target_format,
            options.selection,
            gaps,
            range.clone(),
            value_scale,
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

    /// Writes the uniform and Eq. 1's per-pixel sums computed elsewhere (memscape-lod's level
    /// of detail: `acc` = (Σw·L·c or (Σw·a, Σw·L, 0), Σw) and `cov` = Σf, row-major, row 0 at
    /// the top, `size[0] · size[1]` each) into the accumulation targets, so that
    /// [`Self::resolve`] draws them like any accumulated frame. Missing values read as 0.
    #[allow(clippy::too_many_arguments)]
    pub fn prepare_sums(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        pipelines: &mut AllocMapPipelines,
        view: &AllocMapView,
        size: [u32; 2],
        resolve_origin_px: [f32; 2],
        target_format: wgpu::TextureFormat,
        acc: &[[f32; 4]],
        cov: &[f32],
    ) {
        self.prepare_sums_scaled(
            device,
            queue,
            pipelines,
            view,
            size,
            resolve_origin_px,
            target_format,
            acc,
            cov,
            1.0,
        );
    }

    /// [`Self::prepare_sums`] with quantitative values drawn as `value_scale` times the mean
    /// attribute (a one-bin occupancy bar's, `BarBlocks::value_scale`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn prepare_sums_scaled(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        pipelines: &mut AllocMapPipelines,
        view: &AllocMapView,
        size: [u32; 2],
        resolve_origin_px: [f32; 2],
        target_format: wgpu::TextureFormat,
        acc: &[[f32; 4]],
        cov: &[f32],
        value_scale: f32,
    ) {
        let size = [size[0].max(1), size[1].max(1)];
        pipelines.ensure_resolve(device, target_format);
        self.ensure_targets(device, pipelines, size);
        self.target_format = target_format;
        self.cells_resolve = None;
        let gpu = view.gpu(
            size,
            resolve_origin_px,
            target_format,
            super::SelectionStyle::Off,
            GapRule::None,
            0..0,
            value_scale,
        );
        queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&gpu));
        let Some(targets) = &self.targets else {
            return;
        };
        let n = size[0] as usize * size[1] as usize;
        let f32_targets =
            pipelines.features.accumulation_format() == wgpu::TextureFormat::Rgba32Float;
        let whole = acc.len() >= n && cov.len() >= n && cfg!(target_endian = "little");
        let (acc_bytes, cov_bytes): (Cow<[u8]>, Cow<[u8]>) = if f32_targets && whole {
            // The sums' own bytes (little-endian f32, as the textures hold them): no copy.
            (
                Cow::Borrowed(bytemuck::cast_slice(&acc[..n])),
                Cow::Borrowed(bytemuck::cast_slice(&cov[..n])),
            )
        } else if f32_targets {
            (
                (0..n)
                    .flat_map(|i| acc.get(i).copied().unwrap_or_default())
                    .flat_map(f32::to_le_bytes)
                    .collect(),
                (0..n)
                    .map(|i| cov.get(i).copied().unwrap_or_default())
                    .flat_map(f32::to_le_bytes)
                    .collect(),
            )
        } else {
            (
                (0..n)
                    .flat_map(|i| acc.get(i).copied().unwrap_or_default())
                    .flat_map(|v| f16_bits(v).to_le_bytes())
                    .collect(),
                (0..n)
                    .map(|i| cov.get(i).copied().unwrap_or_default())
                    .flat_map(|v| f16_bits(v).to_le_bytes())
                    .collect(),
            )
        };
        let texel = if f32_targets { 4 } else { 2 };
        let extent = wgpu::Extent3d {
            width: size[0],
            height: size[1],
            depth_or_array_layers: 1,
        };
        for (texture, bytes, per_texel) in [
            (&targets.weighted_texture, &acc_bytes, 4 * texel),
            (&targets.coverage_texture, &cov_bytes, texel),
        ] {
            queue.write_texture(
                wgpu::TexelCopyTextureInfo {
                    texture,
                    mip_level: 0,
                    origin: wgpu::Origin3d::ZERO,
                    aspect: wgpu::TextureAspect::All,
                },
                bytes,
                wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(size[0] * per_texel),
                    rows_per_image: Some(size[1]),
                },
                extent,
            );
        }
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

    /// Makes the resolve add `sums` (a level's cells' sums, `lod_cells.rs`, 5 f32 per pixel of
    /// the view, row-major) to the accumulated sums, until the next prepare; `false` (nothing
    /// changed) where the device has no such resolve for the frame's target format.
    pub(crate) fn resolve_with_cells(
        &mut self,
        device: &wgpu::Device,
        pipelines: &AllocMapPipelines,
        sums: &wgpu::Buffer,
    ) -> bool {
        let Some(lod) = pipelines.lod_cells.as_ref() else {
            return false;
        };
        let (Some(targets), Some(_)) = (&self.targets, lod.resolve.get(self.target_format)) else {
            return false;
        };
        self.cells_resolve = Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("AllocMapFrame::cells_resolve_bind_group"),
            layout: lod.resolve_layout(),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: self.uniform.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(&targets.weighted),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: wgpu::BindingResource::TextureView(&targets.coverage),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: sums.as_entire_binding(),
                },
            ],
        }));
        true
    }

    /// Draws Eq. 1 into `pass`, whose viewport the caller has set to the view's rectangle.
    pub fn resolve(&self, pass: &mut wgpu::RenderPass<'_>, pipelines: &AllocMapPipelines) {
        let cells = self.cells_resolve.as_ref().and_then(|group| {
            let pipeline = pipelines
                .lod_cells
                .as_ref()?
                .resolve
                .get(self.target_format)?;
            Some((pipeline, group))
        });
        if let Some((pipeline, group)) = cells {
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.draw(0..3, 0..1);
            return;
        }
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

/// `v` as IEEE half-precision bits (round to nearest; overflow to infinity, underflow to 0):
/// for devices whose accumulation targets are 16-bit floats.
fn f16_bits(v: f32) -> u16 {
    let b = v.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32 - 127 + 15;
    let man = b & 0x007f_ffff;
    if exp >= 31 {
        return sign | 0x7c00;
    }
    if exp <= 0 {
        if exp < -10 {
            return sign;
        }
        let m = (man | 0x0080_0000) >> (1 - exp);
        return sign | ((m + 0x1000) >> 13) as u16;
    }
    let h = ((exp as u32) << 10) | (man >> 13);
    // Round to nearest (a carry into the exponent is the right result).
    sign | (h + ((man >> 12) & 1)) as u16
}

#[cfg(test)]
mod tests {
    #[test]
    fn f16_bits_of_common_values() {
        assert_eq!(super::f16_bits(0.0), 0);
        assert_eq!(super::f16_bits(1.0), 0x3c00);
        assert_eq!(super::f16_bits(-2.0), 0xc000);
        assert_eq!(super::f16_bits(0.5), 0x3800);
        assert_eq!(super::f16_bits(65504.0), 0x7bff);
        assert_eq!(super::f16_bits(1e6), 0x7c00);
    }
}
