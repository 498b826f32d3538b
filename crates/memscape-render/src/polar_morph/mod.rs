//! Points and arcs in polar coordinates that morph between two circle-valued parameterizations:
//! the circular, spiral and morph views of the cycle analysis (Choudhury et al.).
//!
//! * [`PolarMorphPipelines`]: a point and an arc pipeline per target format.
//! * [`PolarMorphData`]: a dataset's records (radius, θa, θb, colour) and arcs in vertex
//!   buffers, uploaded once per choice of parameterizations and colours.
//! * [`PolarMorphView`]: centre, radius and the morph parameter t: all a frame changes.
//!
//! The CPU twin ([`cpu_reference`]) evaluates the same interpolation and draws it with the
//! shapes reference; tests hold the two together on lavapipe.

pub mod cpu_reference;
pub mod gpu;

pub use gpu::{PolarArcGpu, PolarMorphViewGpu, PolarPointGpu};

use crate::binding::{FormatCache, OverlayProgram, OverlayStage, Uniform};
use crate::color::needs_shader_srgb_encode;
use crate::{GpuContext, OffscreenTarget, RenderError, RgbaImage};

/// Everything a frame of the morph changes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PolarMorphView {
    pub center_px: [f32; 2],
    /// Pixels per unit of radius.
    pub radius_px: f32,
    /// Morph parameter, already eased, in [0, 1]: 0 shows θa, 1 shows θb.
    pub t: f32,
    pub point_radius_px: f32,
    pub arc_width_px: f32,
    /// Straight pieces per arc.
    pub arc_subdivisions: u32,
}

impl PolarMorphView {
    /// Straight pieces per arc for `records` records: arcs between neighbours get shorter as
    /// records get denser, and fewer pieces keep the vertex count flat (8 for a few thousand
    /// records, 2 from 50,000 on).
    pub fn arc_pieces_for(records: usize) -> u32 {
        match records {
            0..=5_000 => 8,
            5_001..=20_000 => 4,
            20_001..=50_000 => 3,
            _ => 2,
        }
    }

    /// Centred in a `width`×`height` viewport with the unit circle `fill` of the half-size.
    pub fn centered(width: f32, height: f32, outer_radius: f32) -> Self {
        Self {
            center_px: [0.5 * width, 0.5 * height],
            radius_px: 0.5 * width.min(height) * 0.94 / outer_radius.max(1e-6),
            t: 0.0,
            point_radius_px: 2.5,
            arc_width_px: 1.0,
            arc_subdivisions: 8,
        }
    }

    pub fn gpu(&self, viewport: [f32; 2], format: wgpu::TextureFormat) -> PolarMorphViewGpu {
        PolarMorphViewGpu {
            center_px: self.center_px,
            viewport_px: [viewport[0].max(1.0), viewport[1].max(1.0)],
            radius_px: self.radius_px,
            t: self.t.clamp(0.0, 1.0),
            point_radius_px: self.point_radius_px,
            arc_width_px: self.arc_width_px,
            arc_subdivisions: self.arc_subdivisions.clamp(1, 64),
            output_srgb_encode: u32::from(needs_shader_srgb_encode(format)),
            _pad: [0; 2],
        }
    }
}

/// Pipelines per target format, created on first use: (points, arcs).
pub struct PolarMorphPipelines {
    program: OverlayProgram,
    pipelines: FormatCache<(wgpu::RenderPipeline, wgpu::RenderPipeline)>,
}

const POINT_ATTRIBUTES: [wgpu::VertexAttribute; 4] = wgpu::vertex_attr_array![
    0 => Float32,
    1 => Float32,
    2 => Float32,
    3 => Uint32,
];

const ARC_ATTRIBUTES: [wgpu::VertexAttribute; 3] = wgpu::vertex_attr_array![
    0 => Float32x3,
    1 => Float32x3,
    2 => Uint32,
];

impl PolarMorphPipelines {
    pub fn new(device: &wgpu::Device) -> Result<Self, RenderError> {
        Ok(Self {
            program: OverlayProgram::with_view_uniform(
                device,
                "PolarMorph::view",
                "polar_morph.wgsl",
            )?,
            pipelines: FormatCache::default(),
        })
    }

    /// Creates the pipelines for `format` if this is its first use.
    pub fn ensure_format(&mut self, device: &wgpu::Device, format: wgpu::TextureFormat) {
        let program = &self.program;
        self.pipelines.ensure(format, || {
            let points = program.pipeline(
                device,
                &OverlayStage {
                    label: "PolarMorph::points",
                    vs: "vs_point",
                    fs: "fs_point",
                    instances: Some((std::mem::size_of::<PolarPointGpu>(), &POINT_ATTRIBUTES)),
                    topology: wgpu::PrimitiveTopology::TriangleStrip,
                },
                format,
            );
            let arcs = program.pipeline(
                device,
                &OverlayStage {
                    label: "PolarMorph::arcs",
                    vs: "vs_arc",
                    fs: "fs_arc",
                    instances: Some((std::mem::size_of::<PolarArcGpu>(), &ARC_ATTRIBUTES)),
                    topology: wgpu::PrimitiveTopology::TriangleList,
                },
                format,
            );
            (points, arcs)
        });
    }
}

/// Records and arcs on the GPU with the view uniform.
pub struct PolarMorphData {
    points: Option<wgpu::Buffer>,
    point_count: u32,
    arcs: Option<wgpu::Buffer>,
    arc_count: u32,
    view: Uniform<PolarMorphViewGpu>,
    format: wgpu::TextureFormat,
    subdivisions: u32,
}

fn upload<T: bytemuck::Pod>(
    device: &wgpu::Device,
    label: &str,
    items: &[T],
) -> Result<(Option<wgpu::Buffer>, u32), RenderError> {
    use wgpu::util::DeviceExt;
    let bytes: &[u8] = bytemuck::cast_slice(items);
    let max = device.limits().max_buffer_size;
    let too_large = || RenderError::TooLarge {
        what: "polar morph instances",
        bytes: bytes.len() as u64,
        max,
    };
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    let count = u32::try_from(items.len()).map_err(|_| too_large())?;
    if count == 0 {
        return Ok((None, 0));
    }
    let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytes,
        usage: wgpu::BufferUsages::VERTEX,
    });
    Ok((Some(buffer), count))
}

impl PolarMorphData {
    pub fn new(
        device: &wgpu::Device,
        pipelines: &PolarMorphPipelines,
        points: &[PolarPointGpu],
        arcs: &[PolarArcGpu],
    ) -> Result<Self, RenderError> {
        let (points, point_count) = upload(device, "PolarMorph::points", points)?;
        let (arcs, arc_count) = upload(device, "PolarMorph::arcs", arcs)?;
        Ok(Self {
            points,
            point_count,
            arcs,
            arc_count,
            view: Uniform::new(device, &pipelines.program.layout, "PolarMorph::view"),
            format: wgpu::TextureFormat::Rgba8Unorm,
            subdivisions: 8,
        })
    }

    /// Writes the uniform: the only per-frame upload.
    pub fn set_view(
        &mut self,
        queue: &wgpu::Queue,
        view: &PolarMorphView,
        viewport: [f32; 2],
        format: wgpu::TextureFormat,
    ) {
        self.format = format;
        let gpu = view.gpu(viewport, format);
        self.subdivisions = gpu.arc_subdivisions;
        self.view.write(queue, &gpu);
    }

    /// Arcs first, points over them.
    pub fn paint(&self, pipelines: &PolarMorphPipelines, pass: &mut wgpu::RenderPass<'_>) {
        let Some((points, arcs)) = pipelines.pipelines.get(self.format) else {
            return;
        };
        pass.set_bind_group(0, self.view.bind_group(), &[]);
        if let Some(buffer) = &self.arcs {
            pass.set_pipeline(arcs);
            pass.set_vertex_buffer(0, buffer.slice(..));
            pass.draw(0..self.subdivisions * 6, 0..self.arc_count);
        }
        if let Some(buffer) = &self.points {
            pass.set_pipeline(points);
            pass.set_vertex_buffer(0, buffer.slice(..));
            pass.draw(0..4, 0..self.point_count);
        }
    }
}

/// Draws the morph into an existing offscreen target, clearing it to `clear` first if given.
pub fn draw_into(
    ctx: &GpuContext,
    pipelines: &mut PolarMorphPipelines,
    data: &mut PolarMorphData,
    view: &PolarMorphView,
    target: &OffscreenTarget,
    clear: Option<[u8; 4]>,
) {
    draw_into_timed(
        ctx,
        pipelines,
        data,
        view,
        target,
        clear,
        &crate::stats::PassQueries::none(),
    );
}

/// [`draw_into`], its pass writing its timestamps to `queries` (see [`crate::stats`]).
pub fn draw_into_timed(
    ctx: &GpuContext,
    pipelines: &mut PolarMorphPipelines,
    data: &mut PolarMorphData,
    view: &PolarMorphView,
    target: &OffscreenTarget,
    clear: Option<[u8; 4]>,
    queries: &crate::stats::PassQueries,
) {
    let format = crate::offscreen::OFFSCREEN_FORMAT;
    pipelines.ensure_format(&ctx.device, format);
    data.set_view(
        &ctx.queue,
        view,
        [target.width as f32, target.height as f32],
        format,
    );
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("PolarMorph::draw_into"),
        });
    {
        let mut pass = target.begin_timed_pass(&mut encoder, "PolarMorph::pass", clear, queries);
        data.paint(pipelines, &mut pass);
    }
    ctx.queue.submit([encoder.finish()]);
}

/// Renders one frame of the morph over `background` into a new image.
pub fn render_offscreen(
    ctx: &GpuContext,
    pipelines: &mut PolarMorphPipelines,
    data: &mut PolarMorphData,
    view: &PolarMorphView,
    width: u32,
    height: u32,
    background: [u8; 4],
) -> Result<RgbaImage, RenderError> {
    let target = OffscreenTarget::new(ctx, width, height)?;
    draw_into(ctx, pipelines, data, view, &target, Some(background));
    target.read(ctx)
}

/// A deterministic spiral of `n` records (benchmarks, `memscape bench`) whose two parameterizations wind 40 and 25 times.
pub fn synthetic_spiral(n: usize) -> (Vec<PolarPointGpu>, Vec<PolarArcGpu>) {
    let color = crate::color::pack_rgba8([90, 160, 230, 255]);
    let arc_color = crate::color::pack_rgba8([170, 176, 192, 70]);
    let at = |i: usize| {
        let s = i as f32 / n as f32;
        [
            0.1 + 0.9 * s,
            (40.0 * std::f32::consts::TAU * s) % std::f32::consts::TAU,
            (25.0 * std::f32::consts::TAU * s + 1.0) % std::f32::consts::TAU,
        ]
    };
    let points = (0..n)
        .map(|i| {
            let [r, a, b] = at(i);
            PolarPointGpu {
                r,
                theta_a: a,
                theta_b: b,
                color,
            }
        })
        .collect();
    let arcs = (1..n)
        .map(|i| PolarArcGpu {
            from: at(i - 1),
            to: at(i),
            color: arc_color,
            _pad: 0,
        })
        .collect();
    (points, arcs)
}
