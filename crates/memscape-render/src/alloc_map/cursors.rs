//! Cushion cursors (Moreta & Telea): vertical cursors at time positions drawn over the
//! time-aligned views (the map, bin views, occupancy bars) as a cushion texture whose opacity
//! falls off logarithmically from its centre line, blended on top; several at once, a global
//! opacity, a width in pixels.
//!
//! Opacity at distance `d` from the centre (in half widths): `opacity · (1 − ln(1 + k·d) /
//! ln(1 + k))`, zero from `d = 1`; colour: the cursor's colour times a parabolic cushion across
//! the cursor, lit as the blocks are. Each pixel averages four samples across x. Premultiplied
//! "over" blending, cursors in list order.
//!
//! Use: one [`CursorPipelines`] per device; one [`CursorOverlay`] per group of views with the
//! same time mapping and width (a column of time-aligned bin views can share one: the quads span
//! whatever viewport the caller sets). `prepare` writes the uniform and the cursor list, `draw`
//! issues one instanced draw into the caller's pass.
//!
//! CPU twin: [`blend_cursors_cpu`].

use bytemuck::{Pod, Zeroable};

use super::cpu_reference::cushion_luminance;
use super::occupancy::OccupancyBarView;
use super::{AllocMapView, CushionKind};
use crate::binding::{
    FormatCache, OverlayProgram, OverlayStage, VIEW_STAGES, storage_entry, uniform_buffer,
    uniform_entry,
};
use crate::color::{linear_to_srgb, needs_shader_srgb_encode, srgb_to_linear};
use crate::{RenderError, RgbaImage};

/// The cursor uniform. Keep in sync with `CursorView` in `shaders/alloc_map_cursors.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct CursorViewGpu {
    pub origin_time: [u32; 2],
    pub origin_frac: f32,
    pub pixels_per_time: f32,
    pub viewport_width: f32,
    pub width_px: f32,
    pub opacity: f32,
    pub falloff: f32,
    pub cushion_strength: f32,
    pub output_srgb_encode: u32,
    pub _pad: [u32; 2],
    pub light: [f32; 4],
}
const _: () = assert!(std::mem::size_of::<CursorViewGpu>() == 64);

/// One cursor. Keep in sync with `Cursor` in `shaders/alloc_map_cursors.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct CursorGpu {
    pub time: [u32; 2],
    pub frac: f32,
    pub color: u32,
}
const _: () = assert!(std::mem::size_of::<CursorGpu>() == 16);

/// A cursor: a time position (integer part and fraction; 0.5 puts it in the middle of an event
/// on the event-index axis) and a colour (sRGB bytes; alpha unused).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CushionCursor {
    pub time: u64,
    pub time_frac: f32,
    pub color: [u8; 4],
}

impl CushionCursor {
    pub fn new(time: u64, color: [u8; 4]) -> Self {
        Self {
            time,
            time_frac: 0.0,
            color,
        }
    }

    fn gpu(&self) -> CursorGpu {
        CursorGpu {
            time: crate::u64_split::split(self.time),
            frac: self.time_frac,
            color: crate::color::pack_rgba8(self.color),
        }
    }
}

/// How cursors look.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CursorStyle {
    /// Full width of a cursor in pixels.
    pub width_px: f32,
    /// Opacity at the centre line, in [0, 1] (the global transparency slider).
    pub opacity: f32,
    /// Steepness `k` of the logarithmic falloff (> 0; larger: a sharper centre).
    pub falloff: f32,
    pub cushion_strength: f32,
}

impl Default for CursorStyle {
    fn default() -> Self {
        Self {
            width_px: 15.0,
            opacity: 0.8,
            falloff: 9.0,
            cushion_strength: 1.0,
        }
    }
}

impl CursorStyle {
    fn sane(&self) -> Self {
        Self {
            width_px: if self.width_px.is_finite() {
                self.width_px.max(0.5)
            } else {
                0.5
            },
            opacity: self.opacity.clamp(0.0, 1.0),
            falloff: if self.falloff.is_finite() {
                self.falloff.max(1e-3)
            } else {
                9.0
            },
            cushion_strength: self.cushion_strength,
        }
    }
}

/// Where time lies on screen: the horizontal part of a view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeMapping {
    pub origin: u64,
    pub origin_frac: f32,
    pub pixels_per_time: f32,
    /// The light of the cushion (the map's).
    pub light: [f32; 3],
}

impl From<&AllocMapView> for TimeMapping {
    fn from(v: &AllocMapView) -> Self {
        Self {
            origin: v.time_origin,
            origin_frac: v.time_origin_frac,
            pixels_per_time: v.pixels_per_time,
            light: v.light(),
        }
    }
}

impl From<&OccupancyBarView> for TimeMapping {
    fn from(v: &OccupancyBarView) -> Self {
        Self {
            origin: v.time_origin,
            origin_frac: v.time_origin_frac,
            pixels_per_time: v.pixels_per_time,
            light: super::default_light(),
        }
    }
}

fn view_gpu(
    time: &TimeMapping,
    style: &CursorStyle,
    viewport_width: u32,
    format: wgpu::TextureFormat,
) -> CursorViewGpu {
    let s = style.sane();
    CursorViewGpu {
        origin_time: crate::u64_split::split(time.origin),
        origin_frac: time.origin_frac,
        pixels_per_time: time.pixels_per_time,
        viewport_width: viewport_width.max(1) as f32,
        width_px: s.width_px,
        opacity: s.opacity,
        falloff: s.falloff,
        cushion_strength: s.cushion_strength,
        output_srgb_encode: u32::from(needs_shader_srgb_encode(format)),
        _pad: [0; 2],
        light: [time.light[0], time.light[1], time.light[2], 0.0],
    }
}

/// The cursor pipeline's layout and a pipeline per target format.
pub struct CursorPipelines {
    program: OverlayProgram,
    pipelines: FormatCache<wgpu::RenderPipeline>,
}

impl CursorPipelines {
    pub fn new(device: &wgpu::Device) -> Result<Self, RenderError> {
        Ok(Self {
            program: OverlayProgram::new(
                device,
                "CushionCursors::layout",
                "alloc_map_cursors.wgsl",
                &[
                    uniform_entry(0, VIEW_STAGES),
                    storage_entry(1, wgpu::ShaderStages::VERTEX),
                ],
            )?,
            pipelines: FormatCache::default(),
        })
    }

    /// The pipeline for a target format, created on first use.
    pub fn ensure(&mut self, device: &wgpu::Device, format: wgpu::TextureFormat) {
        let program = &self.program;
        self.pipelines.ensure(format, || {
            program.pipeline(
                device,
                &OverlayStage {
                    label: "CushionCursors::pipeline",
                    vs: "vs_main",
                    fs: "fs_main",
                    instances: None,
                    topology: wgpu::PrimitiveTopology::TriangleList,
                },
                format,
            )
        });
    }
}

/// Cursors over one view (or several of the same width and time mapping).
pub struct CursorOverlay {
    uniform: wgpu::Buffer,
    cursors: wgpu::Buffer,
    capacity: usize,
    bind_group: wgpu::BindGroup,
    count: u32,
    format: wgpu::TextureFormat,
}

impl CursorOverlay {
    pub fn new(device: &wgpu::Device, pipelines: &CursorPipelines) -> Self {
        let uniform = uniform_buffer::<CursorViewGpu>(device, "CushionCursors::view");
        let capacity = 16;
        let cursors = Self::cursor_buffer(device, capacity);
        let bind_group = Self::bind(device, pipelines, &uniform, &cursors);
        Self {
            uniform,
            cursors,
            capacity,
            bind_group,
            count: 0,
            format: crate::offscreen::OFFSCREEN_FORMAT,
        }
    }

    fn cursor_buffer(device: &wgpu::Device, capacity: usize) -> wgpu::Buffer {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("CushionCursors::cursors"),
            size: (capacity * std::mem::size_of::<CursorGpu>()) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    fn bind(
        device: &wgpu::Device,
        pipelines: &CursorPipelines,
        uniform: &wgpu::Buffer,
        cursors: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("CushionCursors::bind_group"),
            layout: &pipelines.program.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: uniform.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: cursors.as_entire_binding(),
                },
            ],
        })
    }

    /// Writes the uniform and the cursor list (a few bytes per cursor) for views `width_px`
    /// wide drawn into `format`.
    #[allow(clippy::too_many_arguments)]
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        pipelines: &mut CursorPipelines,
        cursors: &[CushionCursor],
        time: &TimeMapping,
        style: &CursorStyle,
        width_px: u32,
        format: wgpu::TextureFormat,
    ) {
        pipelines.ensure(device, format);
        self.format = format;
        if cursors.len() > self.capacity {
            self.capacity = cursors.len().next_power_of_two();
            self.cursors = Self::cursor_buffer(device, self.capacity);
            self.bind_group = Self::bind(device, pipelines, &self.uniform, &self.cursors);
        }
        let gpu: Vec<CursorGpu> = cursors.iter().map(CushionCursor::gpu).collect();
        if !gpu.is_empty() {
            queue.write_buffer(&self.cursors, 0, bytemuck::cast_slice(&gpu));
        }
        self.count = u32::try_from(cursors.len()).unwrap_or(u32::MAX);
        let view = view_gpu(time, style, width_px, format);
        queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&view));
    }

    /// Draws the cursors into `pass`, whose viewport the caller has set to the view's rectangle.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>, pipelines: &CursorPipelines) {
        let Some(pipeline) = pipelines.pipelines.get(self.format) else {
            return;
        };
        if self.count == 0 {
            return;
        }
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.draw(0..6, 0..self.count);
    }
}

/// Draws cursors over the rectangle `rect` = `[x, y, width, height]` of an offscreen target
/// that already holds a picture (headless, tests).
#[allow(clippy::too_many_arguments)]
pub fn draw_cursors_offscreen(
    ctx: &crate::GpuContext,
    pipelines: &mut CursorPipelines,
    target: &crate::OffscreenTarget,
    rect: [u32; 4],
    cursors: &[CushionCursor],
    time: &TimeMapping,
    style: &CursorStyle,
) -> Result<(), RenderError> {
    let [x, y, w, h] = rect;
    if w == 0 || h == 0 || x.saturating_add(w) > target.width || y.saturating_add(h) > target.height
    {
        return Err(RenderError::BadRect {
            rect,
            width: target.width,
            height: target.height,
        });
    }
    let mut overlay = CursorOverlay::new(&ctx.device, pipelines);
    overlay.prepare(
        &ctx.device,
        &ctx.queue,
        pipelines,
        cursors,
        time,
        style,
        w,
        crate::offscreen::OFFSCREEN_FORMAT,
    );
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("CushionCursors::offscreen"),
        });
    {
        let mut pass = target.begin_pass(&mut encoder, "CushionCursors::offscreen", None);
        pass.set_viewport(x as f32, y as f32, w as f32, h as f32, 0.0, 1.0);
        overlay.draw(&mut pass, pipelines);
    }
    ctx.queue.submit([encoder.finish()]);
    Ok(())
}

/// Premultiplied (encoded rgb · a, a) of one cursor at view x `x`; as `cursor_sample` in WGSL.
fn sample(x: f32, centre: f32, color: [f32; 3], s: &CursorStyle, light: [f32; 3]) -> [f32; 4] {
    let half = 0.5 * s.width_px;
    let d = (x - centre).abs() / half;
    if d >= 1.0 {
        return [0.0; 4];
    }
    let k = s.falloff;
    let a = s.opacity * (1.0 - (1.0 + k * d).ln() / (1.0 + k).ln());
    let u = (x - centre) / s.width_px + 0.5;
    let lum = cushion_luminance(
        CushionKind::Parabolic,
        s.cushion_strength,
        [u, 0.5],
        [s.width_px, 1.0e6],
        light,
    );
    let rgb = color.map(|c| linear_to_srgb(c * lum));
    [rgb[0] * a, rgb[1] * a, rgb[2] * a, a]
}

/// The centre of a cursor in view pixels; as `cursor_centre_px` in WGSL.
pub fn cursor_centre_px(time: &TimeMapping, cursor: &CushionCursor) -> f32 {
    (crate::u64_split::offset_to_f32(cursor.time, time.origin)
        + (cursor.time_frac - time.origin_frac))
        * time.pixels_per_time
}

/// Blends the cursors over `rect` of `image` (sRGB bytes, as the offscreen target holds them),
/// one after the other with 8-bit rounding in between, as the GPU blends into an 8-bit target.
pub fn blend_cursors_cpu(
    image: &mut RgbaImage,
    rect: [u32; 4],
    cursors: &[CushionCursor],
    time: &TimeMapping,
    style: &CursorStyle,
) {
    let s = style.sane();
    let [rx, ry, rw, rh] = rect;
    for cursor in cursors {
        let centre = cursor_centre_px(time, cursor);
        let color = [0, 1, 2].map(|k| srgb_to_linear(f32::from(cursor.color[k]) / 255.0));
        let half = 0.5 * s.width_px;
        let x0 = (centre - half)
            .floor()
            .clamp(-2.0, rw as f32 + 2.0)
            .max(0.0) as u32;
        let x1 = ((centre + half).ceil().clamp(-2.0, rw as f32 + 2.0).max(0.0) as u32).min(rw);
        for lx in x0..x1 {
            let mut sum = [0f32; 4];
            for i in 0..4 {
                let x = lx as f32 + (i as f32 + 0.5) * 0.25;
                let v = sample(x, centre, color, &s, time.light);
                for k in 0..4 {
                    sum[k] += v[k];
                }
            }
            let src = sum.map(|v| v * 0.25);
            if src[3] <= 0.0 {
                continue;
            }
            for ly in 0..rh {
                let (px, py) = (rx + lx, ry + ly);
                let dst = image.pixel(px, py);
                let out: [u8; 4] = std::array::from_fn(|k| {
                    let d = f32::from(dst[k]) / 255.0;
                    ((src[k] + d * (1.0 - src[3])).clamp(0.0, 1.0) * 255.0).round() as u8
                });
                image.set_pixel(px, py, out);
            }
        }
    }
}
