//! What every pipeline of the renderer sets up the same way, written once: bind-group layout
//! entries, a uniform buffer bound alone in its group, the layout + shader module + pipelines
//! per target format of an overlay program, and the per-format pipeline cache.
//!
//! The shapes, the polar morph, the cushion cursors and the allocation map's resolve pass each
//! draw into whatever format the caller renders to (egui's surface, the offscreen target): their
//! pipelines are created on first use per format through [`FormatCache`].

use std::collections::HashMap;
use std::marker::PhantomData;

use crate::{RenderError, shader};

/// A uniform buffer entry of a bind-group layout.
pub fn uniform_entry(binding: u32, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
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

/// A read-only storage buffer entry of a bind-group layout.
pub fn storage_entry(binding: u32, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
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

/// A render pipeline without vertex buffers or depth, its geometry made by the vertex shader
/// from the vertex index and storage buffers: the allocation map's accumulation (all blocks
/// and the dense path's listed ones), its resolves and the level cells' add differ only in
/// entry points and targets.
pub fn buffer_free_pipeline(
    device: &wgpu::Device,
    label: &str,
    layout: &wgpu::PipelineLayout,
    module: &wgpu::ShaderModule,
    vertex_entry: &str,
    fragment_entry: &str,
    targets: &[Option<wgpu::ColorTargetState>],
) -> wgpu::RenderPipeline {
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(label),
        layout: Some(layout),
        vertex: wgpu::VertexState {
            module,
            entry_point: Some(vertex_entry),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: wgpu::PrimitiveState::default(),
        depth_stencil: None,
        multisample: wgpu::MultisampleState::default(),
        fragment: Some(wgpu::FragmentState {
            module,
            entry_point: Some(fragment_entry),
            compilation_options: Default::default(),
            targets,
        }),
        multiview_mask: None,
        cache: None,
    })
}

/// A compute pipeline of `module`'s `entry_point` over a layout of `groups` (the layout's label
/// is the pipeline's with `_layout`).
pub fn compute_pipeline(
    device: &wgpu::Device,
    label: &str,
    groups: &[Option<&wgpu::BindGroupLayout>],
    module: &wgpu::ShaderModule,
    entry_point: &str,
) -> wgpu::ComputePipeline {
    compute_pipeline_with(device, label, groups, module, entry_point, &[])
}

/// [`compute_pipeline`] with values for the module's pipeline-overridable constants
/// (`override` declarations; those not named keep their defaults).
pub fn compute_pipeline_with(
    device: &wgpu::Device,
    label: &str,
    groups: &[Option<&wgpu::BindGroupLayout>],
    module: &wgpu::ShaderModule,
    entry_point: &str,
    constants: &[(&str, f64)],
) -> wgpu::ComputePipeline {
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(&format!("{label}_layout")),
        bind_group_layouts: groups,
        immediate_size: 0,
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: Some(&layout),
        module,
        entry_point: Some(entry_point),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants,
            ..Default::default()
        },
        cache: None,
    })
}

/// A storage buffer holding `contents` (16 zero bytes when empty: bindings must not be empty).
pub fn storage_buffer_init(device: &wgpu::Device, label: &str, contents: &[u8]) -> wgpu::Buffer {
    use wgpu::util::DeviceExt as _;
    let contents = if contents.is_empty() {
        &[0u8; 16][..]
    } else {
        contents
    };
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents,
        usage: wgpu::BufferUsages::STORAGE,
    })
}

/// A non-filterable float texture read by the fragment stage.
pub fn float_texture_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
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

/// The stages that read a view uniform of an overlay.
pub const VIEW_STAGES: wgpu::ShaderStages =
    wgpu::ShaderStages::VERTEX.union(wgpu::ShaderStages::FRAGMENT);

/// A uniform buffer holding one `T`, bound alone at binding 0 of a group of `layout` (a layout
/// made by [`OverlayProgram`] or with [`uniform_entry`] `(0, …)` as its only entry).
pub struct Uniform<T> {
    buffer: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    _value: PhantomData<T>,
}

impl<T: bytemuck::Pod> Uniform<T> {
    pub fn new(device: &wgpu::Device, layout: &wgpu::BindGroupLayout, label: &str) -> Self {
        let buffer = uniform_buffer::<T>(device, label);
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(label),
            layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: buffer.as_entire_binding(),
            }],
        });
        Self {
            buffer,
            bind_group,
            _value: PhantomData,
        }
    }

    /// Writes the value through the queue (the only per-frame upload of most views).
    pub fn write(&self, queue: &wgpu::Queue, value: &T) {
        queue.write_buffer(&self.buffer, 0, bytemuck::bytes_of(value));
    }

    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    pub fn bind_group(&self) -> &wgpu::BindGroup {
        &self.bind_group
    }
}

/// An empty uniform buffer the size of `T`, written through the queue.
pub fn uniform_buffer<T>(device: &wgpu::Device, label: &str) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: std::mem::size_of::<T>() as u64,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// Pipelines (or tuples of them) created on first use per target format.
pub struct FormatCache<P> {
    pipelines: HashMap<wgpu::TextureFormat, P>,
}

impl<P> Default for FormatCache<P> {
    fn default() -> Self {
        Self {
            pipelines: HashMap::new(),
        }
    }
}

impl<P> FormatCache<P> {
    /// Makes the pipelines of `format` with `create` unless they exist.
    pub fn ensure(&mut self, format: wgpu::TextureFormat, create: impl FnOnce() -> P) {
        self.pipelines.entry(format).or_insert_with(create);
    }

    pub fn get(&self, format: wgpu::TextureFormat) -> Option<&P> {
        self.pipelines.get(&format)
    }
}

/// The parts of an overlay program every pipeline of it shares: one bind group (group 0) of
/// `entries`, the pipeline layout with it, and the shader module.
pub struct OverlayProgram {
    pub layout: wgpu::BindGroupLayout,
    pub pipeline_layout: wgpu::PipelineLayout,
    pub module: wgpu::ShaderModule,
}

impl OverlayProgram {
    /// The program of `shader_file` (see [`shader::create_module`]) whose group 0 holds
    /// `entries`.
    pub fn new(
        device: &wgpu::Device,
        label: &str,
        shader_file: &str,
        entries: &[wgpu::BindGroupLayoutEntry],
    ) -> Result<Self, RenderError> {
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(label),
            entries,
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(label),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let module = shader::create_module(device, shader_file)?;
        Ok(Self {
            layout,
            pipeline_layout,
            module,
        })
    }

    /// A program whose only binding is a view uniform (binding 0, vertex and fragment).
    pub fn with_view_uniform(
        device: &wgpu::Device,
        label: &str,
        shader_file: &str,
    ) -> Result<Self, RenderError> {
        Self::new(device, label, shader_file, &[uniform_entry(0, VIEW_STAGES)])
    }

    /// A premultiplied "over" pipeline of this program into `format`
    /// (see [`crate::overlay::overlay_pipeline`]).
    pub fn pipeline(
        &self,
        device: &wgpu::Device,
        stage: &OverlayStage<'_>,
        format: wgpu::TextureFormat,
    ) -> wgpu::RenderPipeline {
        crate::overlay::overlay_pipeline(
            device,
            &crate::overlay::OverlayShader {
                label: stage.label,
                layout: &self.pipeline_layout,
                module: &self.module,
                vs: stage.vs,
                fs: stage.fs,
                instances: stage.instances,
                topology: stage.topology,
            },
            format,
        )
    }
}

/// One pipeline of an [`OverlayProgram`]: entry points, instance layout and topology.
pub struct OverlayStage<'a> {
    pub label: &'a str,
    pub vs: &'a str,
    pub fs: &'a str,
    /// The per-instance vertex buffer (stride in bytes, attributes); None when the vertex
    /// shader reads its data from storage buffers.
    pub instances: Option<(usize, &'a [wgpu::VertexAttribute])>,
    pub topology: wgpu::PrimitiveTopology,
}
