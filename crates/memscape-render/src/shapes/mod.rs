//! Instanced 2-D shapes with analytic anti-aliasing: the drawing primitive of every view that is
//! not the allocation map (heap sunburst and icicle, cycle plots, topology, graphs, histograms).
//!
//! * [`Shape`]: one rectangle, disc, annular sector or thick segment, in world units, with a
//!   fill and an optional inner border; converted to the 48-byte [`ShapeGpu`] instance.
//! * [`ShapesView`]: the world → pixel transform (`pixel = world·scale + offset`, y down).
//! * [`ShapesPipelines`]: one pipeline per target format, shared by all batches of a device.
//! * [`ShapeBatch`]: a list of shapes in a vertex buffer (uploaded when the list changes) with
//!   its view uniform; panning and zooming rewrite only the uniform.
//!
//! Shapes are drawn in order with premultiplied "over" blending. The CPU twin
//! ([`cpu_reference`]) produces the same image; tests hold them together on lavapipe.

pub mod cpu_reference;
pub mod gpu;

pub use gpu::{ShapeGpu, ShapesViewGpu};

use crate::binding::{FormatCache, OverlayProgram, OverlayStage, Uniform};
use crate::color::needs_shader_srgb_encode;
use crate::{GpuContext, OffscreenTarget, RenderError, RgbaImage};

/// What a shape is, in world units unless said otherwise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Geometry {
    /// Axis-aligned rectangle between two corners; corners rounded by `corner_px` pixels.
    Rect {
        min: [f32; 2],
        max: [f32; 2],
        corner_px: f32,
    },
    /// Rectangle of a fixed pixel size centred on a world point (markers, glyphs).
    PixelRect {
        center: [f32; 2],
        size_px: [f32; 2],
        corner_px: f32,
    },
    Disc {
        center: [f32; 2],
        radius: f32,
    },
    /// Disc of a fixed pixel radius centred on a world point (scatter points).
    PixelDisc {
        center: [f32; 2],
        radius_px: f32,
    },
    /// Ring segment between radii `r0 < r1` and angles `a0 < a1` (radians; 0 = +x, growing
    /// clockwise on screen because y points down). A span of 2π or more is a full ring.
    Sector {
        center: [f32; 2],
        r0: f32,
        r1: f32,
        a0: f32,
        a1: f32,
    },
    /// Segment with round caps, `width_px` pixels wide whatever the zoom.
    Segment {
        a: [f32; 2],
        b: [f32; 2],
        width_px: f32,
    },
}

/// A shape with its colours (straight-alpha sRGB bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    pub geometry: Geometry,
    pub fill: [u8; 4],
    pub border: [u8; 4],
    /// Border width in pixels, inside the shape's edge; 0 for none.
    pub border_px: f32,
}

impl Shape {
    pub fn new(geometry: Geometry, fill: [u8; 4]) -> Self {
        Self {
            geometry,
            fill,
            border: [0; 4],
            border_px: 0.0,
        }
    }

    pub fn with_border(mut self, color: [u8; 4], width_px: f32) -> Self {
        self.border = color;
        self.border_px = width_px.max(0.0);
        self
    }

    pub fn gpu(&self) -> ShapeGpu {
        use gpu::*;
        let (kind, p, q) = match self.geometry {
            Geometry::Rect {
                min,
                max,
                corner_px,
            } => (
                KIND_RECT,
                [min[0], min[1], max[0], max[1]],
                [corner_px, 0.0, 0.0, 0.0],
            ),
            Geometry::PixelRect {
                center,
                size_px,
                corner_px,
            } => (
                KIND_RECT | FLAG_PIXEL_SIZE,
                [center[0], center[1], size_px[0], size_px[1]],
                [corner_px, 0.0, 0.0, 0.0],
            ),
            Geometry::Disc { center, radius } => {
                (KIND_DISC, [center[0], center[1], radius, 0.0], [0.0; 4])
            }
            Geometry::PixelDisc { center, radius_px } => (
                KIND_DISC | FLAG_PIXEL_SIZE,
                [center[0], center[1], radius_px, 0.0],
                [0.0; 4],
            ),
            Geometry::Sector {
                center,
                r0,
                r1,
                a0,
                a1,
            } => (
                KIND_SECTOR,
                [center[0], center[1], r0.min(r1), r0.max(r1)],
                [a0.min(a1), a0.max(a1), 0.0, 0.0],
            ),
            Geometry::Segment { a, b, width_px } => (
                KIND_SEGMENT,
                [a[0], a[1], b[0], b[1]],
                [0.5 * width_px.max(0.0), 0.0, 0.0, 0.0],
            ),
        };
        ShapeGpu {
            kind,
            border_px: self.border_px,
            fill: crate::color::pack_rgba8(self.fill),
            border: crate::color::pack_rgba8(self.border),
            p,
            q,
        }
    }
}

/// World → pixel transform: `pixel = world·scale + offset`, pixels from the top left.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShapesView {
    pub scale: [f32; 2],
    pub offset: [f32; 2],
}

impl ShapesView {
    /// World units are pixels.
    pub const IDENTITY: Self = Self {
        scale: [1.0, 1.0],
        offset: [0.0, 0.0],
    };

    /// Maps the world rectangle `[min, max]` onto `width`×`height` pixels with `margin_px` all
    /// round, keeping x and y at the same scale (centred) when `isotropic`.
    pub fn fit(
        min: [f32; 2],
        max: [f32; 2],
        width: f32,
        height: f32,
        margin_px: f32,
        isotropic: bool,
    ) -> Self {
        let span = [(max[0] - min[0]).max(1e-9), (max[1] - min[1]).max(1e-9)];
        let avail = [
            (width - 2.0 * margin_px).max(1.0),
            (height - 2.0 * margin_px).max(1.0),
        ];
        let mut scale = [avail[0] / span[0], avail[1] / span[1]];
        if isotropic {
            let s = scale[0].min(scale[1]);
            scale = [s, s];
        }
        let used = [span[0] * scale[0], span[1] * scale[1]];
        let offset = [
            0.5 * (width - used[0]) - min[0] * scale[0],
            0.5 * (height - used[1]) - min[1] * scale[1],
        ];
        Self { scale, offset }
    }

    pub fn to_pixels(&self, world: [f32; 2]) -> [f32; 2] {
        [
            world[0] * self.scale[0] + self.offset[0],
            world[1] * self.scale[1] + self.offset[1],
        ]
    }

    pub fn to_world(&self, pixel: [f32; 2]) -> [f32; 2] {
        [
            (pixel[0] - self.offset[0]) / self.scale[0],
            (pixel[1] - self.offset[1]) / self.scale[1],
        ]
    }

    /// The uniform for a viewport of `size` pixels drawn into `format`.
    pub fn gpu(&self, size: [f32; 2], format: wgpu::TextureFormat) -> ShapesViewGpu {
        ShapesViewGpu {
            scale: self.scale,
            offset: self.offset,
            viewport_px: [size[0].max(1.0), size[1].max(1.0)],
            output_srgb_encode: u32::from(needs_shader_srgb_encode(format)),
            _pad: 0,
        }
    }
}

/// The shape pipeline for each target format, created on first use; one set per device.
pub struct ShapesPipelines {
    program: OverlayProgram,
    pipelines: FormatCache<wgpu::RenderPipeline>,
}

const INSTANCE_ATTRIBUTES: [wgpu::VertexAttribute; 6] = wgpu::vertex_attr_array![
    0 => Uint32,
    1 => Float32,
    2 => Uint32,
    3 => Uint32,
    4 => Float32x4,
    5 => Float32x4,
];

impl ShapesPipelines {
    pub fn new(device: &wgpu::Device) -> Result<Self, RenderError> {
        Ok(Self {
            program: OverlayProgram::with_view_uniform(device, "Shapes::view", "shapes.wgsl")?,
            pipelines: FormatCache::default(),
        })
    }

    /// Creates the pipeline for `format` if this is its first use.
    pub fn ensure_format(&mut self, device: &wgpu::Device, format: wgpu::TextureFormat) {
        let program = &self.program;
        self.pipelines.ensure(format, || {
            program.pipeline(
                device,
                &OverlayStage {
                    label: "Shapes::pipeline",
                    vs: "vs_main",
                    fs: "fs_main",
                    instances: Some((std::mem::size_of::<ShapeGpu>(), &INSTANCE_ATTRIBUTES)),
                    topology: wgpu::PrimitiveTopology::TriangleStrip,
                },
                format,
            )
        });
    }

    pub fn pipeline(&self, format: wgpu::TextureFormat) -> Option<&wgpu::RenderPipeline> {
        self.pipelines.get(format)
    }
}

/// A list of shapes on the GPU with its view uniform.
pub struct ShapeBatch {
    instances: Option<wgpu::Buffer>,
    capacity: u64,
    count: u32,
    view: Uniform<ShapesViewGpu>,
    format: wgpu::TextureFormat,
}

impl ShapeBatch {
    pub fn new(device: &wgpu::Device, pipelines: &ShapesPipelines) -> Self {
        Self {
            instances: None,
            capacity: 0,
            count: 0,
            view: Uniform::new(device, &pipelines.program.layout, "ShapeBatch::view"),
            format: wgpu::TextureFormat::Rgba8Unorm,
        }
    }

    pub fn len(&self) -> usize {
        self.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Replaces the shapes (the buffer grows by doubling, so animation does not reallocate).
    pub fn set_shapes(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        shapes: &[ShapeGpu],
    ) -> Result<(), RenderError> {
        let bytes: &[u8] = bytemuck::cast_slice(shapes);
        let needed = bytes.len() as u64;
        let max = device.limits().max_buffer_size;
        if needed > max {
            return Err(RenderError::TooLarge {
                what: "shape instances",
                bytes: needed,
                max,
            });
        }
        self.count = u32::try_from(shapes.len()).map_err(|_| RenderError::TooLarge {
            what: "shape instances",
            bytes: needed,
            max,
        })?;
        if needed == 0 {
            return Ok(());
        }
        if self.instances.is_none() || needed > self.capacity {
            let capacity = needed.next_power_of_two().clamp(4096, max.max(needed));
            self.instances = Some(device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("ShapeBatch::instances"),
                size: capacity,
                usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
            self.capacity = capacity;
        }
        if let Some(buffer) = &self.instances {
            queue.write_buffer(buffer, 0, bytes);
        }
        Ok(())
    }

    /// Writes the view uniform for a viewport of `size` pixels in `format`.
    pub fn set_view(
        &mut self,
        queue: &wgpu::Queue,
        view: &ShapesView,
        size: [f32; 2],
        format: wgpu::TextureFormat,
    ) {
        self.format = format;
        self.view.write(queue, &view.gpu(size, format));
    }

    /// Records the draw into `pass` (viewport and scissor are the caller's).
    pub fn paint(&self, pipelines: &ShapesPipelines, pass: &mut wgpu::RenderPass<'_>) {
        let (Some(buffer), Some(pipeline)) = (&self.instances, pipelines.pipeline(self.format))
        else {
            return;
        };
        if self.count == 0 {
            return;
        }
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, self.view.bind_group(), &[]);
        pass.set_vertex_buffer(0, buffer.slice(..));
        pass.draw(0..4, 0..self.count);
    }
}

/// Draws `shapes` over `background` (straight sRGB) into a new offscreen image.
pub fn render_offscreen(
    ctx: &GpuContext,
    pipelines: &mut ShapesPipelines,
    shapes: &[ShapeGpu],
    view: &ShapesView,
    width: u32,
    height: u32,
    background: [u8; 4],
) -> Result<RgbaImage, RenderError> {
    let target = OffscreenTarget::new(ctx, width, height)?;
    draw_into(ctx, pipelines, shapes, view, &target, Some(background))?;
    target.read(ctx)
}

/// Draws `shapes` into an existing offscreen target, clearing it to `clear` first if given.
pub fn draw_into(
    ctx: &GpuContext,
    pipelines: &mut ShapesPipelines,
    shapes: &[ShapeGpu],
    view: &ShapesView,
    target: &OffscreenTarget,
    clear: Option<[u8; 4]>,
) -> Result<(), RenderError> {
    let format = crate::offscreen::OFFSCREEN_FORMAT;
    pipelines.ensure_format(&ctx.device, format);
    let mut batch = ShapeBatch::new(&ctx.device, pipelines);
    batch.set_shapes(&ctx.device, &ctx.queue, shapes)?;
    batch.set_view(
        &ctx.queue,
        view,
        [target.width as f32, target.height as f32],
        format,
    );
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("Shapes::draw_into"),
        });
    {
        let mut pass = target.begin_pass(&mut encoder, "Shapes::pass", clear);
        batch.paint(pipelines, &mut pass);
    }
    ctx.queue.submit([encoder.finish()]);
    Ok(())
}
