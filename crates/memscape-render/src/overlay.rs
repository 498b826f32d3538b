//! Render pipelines that draw over a target in premultiplied alpha ("over" blending): the
//! shapes, the polar morph's points and arcs and the cushion cursors all draw this way, one
//! pipeline per target format.

/// What differs between overlay pipelines.
pub(crate) struct OverlayShader<'a> {
    pub label: &'a str,
    pub layout: &'a wgpu::PipelineLayout,
    pub module: &'a wgpu::ShaderModule,
    pub vs: &'a str,
    pub fs: &'a str,
    /// The per-instance vertex buffer (stride in bytes, attributes); None when the vertex
    /// shader reads its data from storage buffers.
    pub instances: Option<(usize, &'a [wgpu::VertexAttribute])>,
    pub topology: wgpu::PrimitiveTopology,
}

/// The pipeline of `shader` drawing into `format`.
pub(crate) fn overlay_pipeline(
    device: &wgpu::Device,
    shader: &OverlayShader<'_>,
    format: wgpu::TextureFormat,
) -> wgpu::RenderPipeline {
    let instance_buffer = shader
        .instances
        .map(|(stride, attributes)| wgpu::VertexBufferLayout {
            array_stride: stride as u64,
            step_mode: wgpu::VertexStepMode::Instance,
            attributes,
        });
    let buffers = match instance_buffer {
        Some(_) => std::slice::from_ref(&instance_buffer),
        None => &[],
    };
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(shader.label),
        layout: Some(shader.layout),
        vertex: wgpu::VertexState {
            module: shader.module,
            entry_point: Some(shader.vs),
            compilation_options: Default::default(),
            buffers,
        },
        primitive: wgpu::PrimitiveState {
            topology: shader.topology,
            ..Default::default()
        },
        depth_stencil: None,
        multisample: wgpu::MultisampleState::default(),
        fragment: Some(wgpu::FragmentState {
            module: shader.module,
            entry_point: Some(shader.fs),
            compilation_options: Default::default(),
            targets: &[Some(wgpu::ColorTargetState {
                format,
                blend: Some(wgpu::BlendState::PREMULTIPLIED_ALPHA_BLENDING),
                write_mask: wgpu::ColorWrites::ALL,
            })],
        }),
        multiview_mask: None,
        cache: None,
    })
}
