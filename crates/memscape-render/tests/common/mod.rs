//! What the renderer's GPU tests share: the adapter (lavapipe unless MEMSCAPE_ADAPTER says
//! otherwise) and the GPU-vs-CPU-reference comparison of the allocation-map passes.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use memscape_render::golden::{Tolerance, compare};
use memscape_render::{AdapterChoice, GpuContext, RgbaImage};
use std::sync::OnceLock;

/// The GPU the tests render on, made once per test binary and never dropped. One context, not
/// one per test: NVIDIA's driver (580, on an H100) deadlocks in about one run of three when two
/// test threads tear down their devices and instances at the same time (`vkDestroyDevice`
/// waiting on a driver thread while `vkDestroyInstance` holds the loader's lock).
pub fn ctx() -> &'static GpuContext {
    static CTX: OnceLock<GpuContext> = OnceLock::new();
    CTX.get_or_init(|| {
        GpuContext::new(AdapterChoice::from_env_or(AdapterChoice::Cpu)).unwrap_or_else(|e| {
            panic!("no GPU adapter for the renderer tests: {e}\ninstall libvulkan1 and mesa-vulkan-drivers (make test does)")
        })
    })
}

/// The allocation map's passes against their CPU reference: every channel within 2/255.
pub const ALLOC_MAP_GPU_VS_CPU: Tolerance = Tolerance {
    per_channel: 2,
    max_differing_pixels: 0,
};

/// Panics unless `gpu` matches `cpu` within [`ALLOC_MAP_GPU_VS_CPU`], leaving both images and
/// their difference in the temporary directory.
pub fn assert_close(name: &str, gpu: &RgbaImage, cpu: &RgbaImage) {
    let c = compare(gpu, cpu, ALLOC_MAP_GPU_VS_CPU);
    if c.differing_pixels > 0 {
        let dir = std::env::temp_dir();
        gpu.save_png(&dir.join(format!("{name}.gpu.png"))).ok();
        cpu.save_png(&dir.join(format!("{name}.cpu.png"))).ok();
        c.diff.save_png(&dir.join(format!("{name}.diff.png"))).ok();
        panic!(
            "{name}: {} pixels differ by > {} (max {}); images in {}",
            c.differing_pixels,
            ALLOC_MAP_GPU_VS_CPU.per_channel,
            c.max_channel_difference,
            dir.display()
        );
    }
}
