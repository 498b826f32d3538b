//! An offscreen colour target and its readback: the one place where row padding, colour space
//! and premultiplied alpha are dealt with for headless images.

use crate::{GpuContext, RenderError, RgbaImage};

/// Format of every offscreen target. Non-sRGB storage: resolve shaders encode sRGB themselves
/// (see [`crate::color::needs_shader_srgb_encode`]), exactly as they do for egui's target.
pub const OFFSCREEN_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

pub struct OffscreenTarget {
    pub texture: wgpu::Texture,
    pub view: wgpu::TextureView,
    pub width: u32,
    pub height: u32,
}

impl OffscreenTarget {
    pub fn new(ctx: &GpuContext, width: u32, height: u32) -> Result<Self, RenderError> {
        let max = ctx.device.limits().max_texture_dimension_2d;
        if width == 0 || height == 0 || width > max || height > max {
            return Err(RenderError::BadSize { width, height, max });
        }
        let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("OffscreenTarget::color"),
            size: wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: OFFSCREEN_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        Ok(Self {
            texture,
            view,
            width,
            height,
        })
    }

    /// The load operation of a pass into an offscreen target: clear to `clear` (straight sRGB
    /// bytes, stored premultiplied as the pipelines blend) or keep what is there.
    pub fn load_op(clear: Option<[u8; 4]>) -> wgpu::LoadOp<wgpu::Color> {
        match clear {
            Some(bg) => {
                let c = bg.map(|b| f64::from(b) / 255.0);
                wgpu::LoadOp::Clear(wgpu::Color {
                    r: c[0] * c[3],
                    g: c[1] * c[3],
                    b: c[2] * c[3],
                    a: c[3],
                })
            }
            None => wgpu::LoadOp::Load,
        }
    }

    /// A render pass drawing into this target (loaded or cleared, see [`Self::load_op`]).
    pub fn begin_pass<'e>(
        &self,
        encoder: &'e mut wgpu::CommandEncoder,
        label: &str,
        clear: Option<[u8; 4]>,
    ) -> wgpu::RenderPass<'e> {
        self.begin_timed_pass(encoder, label, clear, &crate::stats::PassQueries::none())
    }

    /// [`Self::begin_pass`] writing its timestamps to `queries` (see [`crate::stats`]).
    pub fn begin_timed_pass<'e>(
        &self,
        encoder: &'e mut wgpu::CommandEncoder,
        label: &str,
        clear: Option<[u8; 4]>,
        queries: &crate::stats::PassQueries,
    ) -> wgpu::RenderPass<'e> {
        encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some(label),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &self.view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: Self::load_op(clear),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: queries.render(),
            occlusion_query_set: None,
            multiview_mask: None,
        })
    }

    /// Fills the target with `color` (straight sRGB bytes).
    pub fn clear(&self, ctx: &GpuContext, color: [u8; 4]) {
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("OffscreenTarget::clear"),
            });
        drop(self.begin_pass(&mut encoder, "OffscreenTarget::clear", Some(color)));
        ctx.queue.submit([encoder.finish()]);
    }

    /// Copies the target to the CPU. Blocks until the GPU is done.
    pub fn read(&self, ctx: &GpuContext) -> Result<RgbaImage, RenderError> {
        let unpadded = self.width as usize * 4;
        let align = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT as usize;
        let padded = unpadded.div_ceil(align) * align;
        let buffer = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("OffscreenTarget::readback"),
            size: (padded * self.height as usize) as u64,
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("OffscreenTarget::read"),
            });
        encoder.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture: &self.texture,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &buffer,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(padded as u32),
                    rows_per_image: Some(self.height),
                },
            },
            wgpu::Extent3d {
                width: self.width,
                height: self.height,
                depth_or_array_layers: 1,
            },
        );
        ctx.queue.submit([encoder.finish()]);
        let slice = buffer.slice(..);
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        ctx.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| RenderError::Readback(e.to_string()))?;
        rx.recv()
            .map_err(|e| RenderError::Readback(e.to_string()))?
            .map_err(|e| RenderError::Readback(e.to_string()))?;
        let mapped = slice
            .get_mapped_range()
            .map_err(|e| RenderError::Readback(e.to_string()))?;
        let mut pixels = Vec::with_capacity(unpadded * self.height as usize);
        for row in mapped.chunks_exact(padded) {
            pixels.extend_from_slice(&row[..unpadded]);
        }
        drop(mapped);
        buffer.unmap();
        unpremultiply(&mut pixels);
        Ok(RgbaImage {
            width: self.width,
            height: self.height,
            pixels,
        })
    }
}

/// Pipelines blend with premultiplied alpha; PNG stores straight alpha.
fn unpremultiply(pixels: &mut [u8]) {
    for p in pixels.chunks_exact_mut(4) {
        let a = p[3];
        if a != 0 && a != 255 {
            for c in &mut p[..3] {
                *c = ((u16::from(*c) * 255 + u16::from(a) / 2) / u16::from(a)).min(255) as u8;
            }
        }
    }
}
