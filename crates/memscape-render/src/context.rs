//! A wgpu device without a window, for `memscape render`, tests and benchmarks.

use crate::RenderError;

/// Whether `device` is a software rasterizer (lavapipe/llvmpipe): what picks the cheaper path
/// wherever a draw has a CPU alternative.
pub fn is_software(device: &wgpu::Device) -> bool {
    device.adapter_info().device_type == wgpu::DeviceType::Cpu
}

/// Which adapter to use. `MEMSCAPE_ADAPTER=cpu|gpu|auto` overrides the caller's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdapterChoice {
    /// A hardware GPU if there is one, otherwise the software adapter.
    Auto,
    /// A software rasterizer (Mesa lavapipe): deterministic, what CI and golden images use.
    Cpu,
    /// A hardware GPU only.
    Gpu,
}

impl AdapterChoice {
    /// Reads `MEMSCAPE_ADAPTER`, falling back to `default` when unset or unrecognised.
    pub fn from_env_or(default: AdapterChoice) -> Self {
        match std::env::var("MEMSCAPE_ADAPTER").as_deref() {
            Ok("cpu") | Ok("software") | Ok("lavapipe") => AdapterChoice::Cpu,
            Ok("gpu") | Ok("hardware") => AdapterChoice::Gpu,
            Ok("auto") => AdapterChoice::Auto,
            Ok(other) if !other.is_empty() => {
                tracing::warn!("MEMSCAPE_ADAPTER={other:?} is not cpu|gpu|auto; using {default:?}");
                default
            }
            _ => default,
        }
    }

    fn accepts(self, kind: wgpu::DeviceType) -> bool {
        let software = kind == wgpu::DeviceType::Cpu;
        match self {
            AdapterChoice::Auto => true,
            AdapterChoice::Cpu => software,
            AdapterChoice::Gpu => !software,
        }
    }
}

/// Device, queue and what we learnt about the adapter.
pub struct GpuContext {
    pub instance: wgpu::Instance,
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub features: RendererFeatures,
}

/// Optional capabilities the pipelines adapt to.
#[derive(Debug, Clone, Copy)]
pub struct RendererFeatures {
    /// Additive blending into 32-bit float targets; without it, accumulation uses 16-bit floats.
    pub float32_blendable: bool,
    /// The largest storage-buffer binding; block buffers are split into chunks below it.
    pub max_storage_binding_bytes: u64,
    /// Storage buffers and storage textures one shader stage may use (the allocation map's
    /// dense path needs 5 and 2).
    pub max_storage_buffers_per_stage: u32,
    pub max_storage_textures_per_stage: u32,
}

impl RendererFeatures {
    /// The features a given device was created with.
    pub fn of(device: &wgpu::Device) -> Self {
        Self {
            float32_blendable: device
                .features()
                .contains(wgpu::Features::FLOAT32_BLENDABLE),
            max_storage_binding_bytes: device.limits().max_storage_buffer_binding_size,
            max_storage_buffers_per_stage: device.limits().max_storage_buffers_per_shader_stage,
            max_storage_textures_per_stage: device.limits().max_storage_textures_per_shader_stage,
        }
    }

    /// The features of a device created by someone else (egui's), without asking the adapter.
    pub fn accumulation_format(&self) -> wgpu::TextureFormat {
        if self.float32_blendable {
            wgpu::TextureFormat::Rgba32Float
        } else {
            wgpu::TextureFormat::Rgba16Float
        }
    }

    pub fn coverage_format(&self) -> wgpu::TextureFormat {
        if self.float32_blendable {
            wgpu::TextureFormat::R32Float
        } else {
            wgpu::TextureFormat::R16Float
        }
    }
}

/// The features memscape asks of any device it creates (and that the app asks eframe for).
pub fn wanted_features(adapter: &wgpu::Adapter) -> wgpu::Features {
    adapter.features() & wgpu::Features::FLOAT32_BLENDABLE
}

/// The limits memscape asks for: the adapter's own storage-buffer limits (and up to WebGPU's 8
/// storage buffers per stage, for the allocation map's dense path), the defaults otherwise.
pub fn wanted_limits(adapter: &wgpu::Adapter) -> wgpu::Limits {
    let supported = adapter.limits();
    wgpu::Limits {
        max_storage_buffer_binding_size: supported.max_storage_buffer_binding_size,
        max_storage_buffers_per_shader_stage: supported
            .max_storage_buffers_per_shader_stage
            .clamp(4, 8),
        max_buffer_size: supported.max_buffer_size,
        max_texture_dimension_2d: supported.max_texture_dimension_2d,
        ..wgpu::Limits::downlevel_defaults().using_resolution(supported.clone())
    }
}

impl GpuContext {
    /// Creates a headless device on the adapter `choice` selects (see [`AdapterChoice`]).
    pub fn new(choice: AdapterChoice) -> Result<Self, RenderError> {
        Self::new_with_features(choice, wgpu::Features::empty())
    }

    /// [`Self::new`], also enabling those of `optional` that the adapter supports (benchmarks
    /// ask for `TIMESTAMP_QUERY`); check `device.features()` for what was granted.
    pub fn new_with_features(
        choice: AdapterChoice,
        optional: wgpu::Features,
    ) -> Result<Self, RenderError> {
        // Vulkan/Metal/DX12 unless WGPU_BACKEND says otherwise: probing GL on a headless Linux
        // box only prints EGL errors, and lavapipe is a Vulkan device.
        let backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY);
        let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        descriptor.backends = backends;
        let instance = wgpu::Instance::new(descriptor);
        let adapters = pollster::block_on(instance.enumerate_adapters(backends));
        let tried: Vec<String> = adapters.iter().map(describe).collect();
        // Prefer hardware for Auto, Vulkan over GL, then the first enumerated.
        let rank = |a: &wgpu::Adapter| {
            let info = a.get_info();
            let hardware = info.device_type != wgpu::DeviceType::Cpu;
            (!hardware, info.backend != wgpu::Backend::Vulkan)
        };
        let adapter = adapters
            .into_iter()
            .filter(|a| choice.accepts(a.get_info().device_type))
            .min_by_key(rank)
            .ok_or_else(|| RenderError::NoAdapter {
                wanted: format!("{choice:?}"),
                tried: if tried.is_empty() {
                    "none found (is libvulkan1 with mesa-vulkan-drivers installed?)".to_owned()
                } else {
                    tried.join("; ")
                },
            })?;
        let name = describe(&adapter);
        tracing::info!("headless GPU: {name}");
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("memscape::headless"),
            required_features: wanted_features(&adapter) | (adapter.features() & optional),
            required_limits: wanted_limits(&adapter),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|source| RenderError::RequestDevice {
            adapter: name,
            source,
        })?;
        device.on_uncaptured_error(std::sync::Arc::new(|e| {
            tracing::error!("wgpu: {e}");
        }));
        let features = RendererFeatures::of(&device);
        Ok(Self {
            instance,
            adapter,
            device,
            queue,
            features,
        })
    }

    /// One line naming the adapter, e.g. `llvmpipe (LLVM 15.0.6, 256 bits) [Cpu, Vulkan]`.
    pub fn adapter_name(&self) -> String {
        describe(&self.adapter)
    }
}

fn describe(adapter: &wgpu::Adapter) -> String {
    let info = adapter.get_info();
    format!("{} [{:?}, {:?}]", info.name, info.device_type, info.backend)
}
