//! GPU faults through the GUI's bridge on lavapipe: what the GPU refuses is caught by an error
//! scope and becomes the pane's message while other panes draw; errors outside any scope are
//! recorded instead of panicking (wgpu's default); a lost device (`Device::destroy`, as a
//! driver reset) is reported by its callback and nothing is prepared on it afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use memscape_render::offscreen::OFFSCREEN_FORMAT;
use memscape_views::ViewKind;
use memscape_views::gpu::{GpuRegistry, PaintOptions, PaneKey, PanePicture};
use memscape_views::gpu_health::{self, GpuFault, GpuHealth};

mod common;
use common::{ctx, load, settings};

/// A new device on the test adapter, with at most `max_texture` pixels a side.
fn device(max_texture: u32) -> (wgpu::Device, wgpu::Queue) {
    let adapter = &ctx().adapter;
    let mut limits = memscape_render::context::wanted_limits(adapter);
    limits.max_texture_dimension_2d = max_texture;
    pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("gpu_faults"),
        required_features: memscape_render::context::wanted_features(adapter),
        required_limits: limits,
        ..Default::default()
    }))
    .expect("a device on lavapipe")
}

/// Prepares `picture` under `key` as egui's paint callback does; returns what the scopes caught.
fn prepare(
    registry: &mut GpuRegistry,
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    key: &PaneKey,
    picture: &memscape_views::Picture,
) -> Option<GpuFault> {
    let screen = egui_wgpu::ScreenDescriptor {
        size_in_pixels: [picture.size.x as u32, picture.size.y as u32],
        pixels_per_point: 1.0,
    };
    let options = PaintOptions::default();
    let pane = PanePicture {
        key: key.get(),
        rect: egui::Rect::from_min_size(egui::Pos2::ZERO, picture.size),
        picture,
        options: &options,
    };
    // egui's own encoder of the frame, with the pane's commands before it.
    let egui_encoder =
        device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
    let (commands, fault) = match registry.prepare_guarded(device, queue, &screen, &pane) {
        Ok(commands) => (commands, None),
        Err(f) => (None, Some(f)),
    };
    // A failed pane's commands are dropped: the frame submits.
    let (_, submit) = gpu_health::scoped(device, || {
        queue.submit(commands.into_iter().chain([egui_encoder.finish()]))
    });
    assert_eq!(submit, None, "the frame with a failed pane still submits");
    fault
}

#[test]
fn a_buffer_beyond_the_device_limits_is_caught_by_an_error_scope() {
    let (device, _queue) = device(2048);
    let health = GpuHealth::watch(&device);
    let too_big = device.limits().max_buffer_size + 1;
    let (_buffer, fault) = gpu_health::scoped(&device, || {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("too big"),
            size: too_big,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    });
    let Some(fault @ GpuFault::Validation(_)) = fault else {
        panic!("not caught as a validation error: {fault:?}");
    };
    assert!(fault.message().contains("refused"), "{}", fault.message());
    // Outside any scope: recorded for the status bar, not wgpu's panic.
    let _ = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("too big, unscoped"),
        size: too_big,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let errors = health.take_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(health.lost().is_none());
}

#[test]
fn a_view_the_gpu_refuses_shows_why_while_other_panes_draw() {
    // Textures of at most 256 pixels a side: the allocation map's 640 × 400 accumulation
    // targets do not fit; a sunburst (shapes drawn straight into the pass) does.
    let (device, queue) = device(256);
    let mut registry = GpuRegistry::new(&device, OFFSCREEN_FORMAT).unwrap();
    let health = registry.health();
    let demo = load(Path::new("demo"));
    let size = egui::vec2(640.0, 400.0);
    let map = Arc::new(
        settings(ViewKind::AllocMap, "")
            .compose(&demo, size)
            .unwrap(),
    );
    let sunburst = settings(ViewKind::Sunburst, "peak = true\ndepth = 3")
        .compose(&demo, size)
        .unwrap();
    let (map_key, sunburst_key) = (PaneKey::new(), PaneKey::new());
    let fault = prepare(&mut registry, &device, &queue, &map_key, &map);
    assert!(
        matches!(fault, Some(GpuFault::Validation(_))),
        "the map's targets exceed the limit: {fault:?}"
    );
    let message = health
        .pane_failure(map_key.get())
        .expect("the map pane failed");
    assert!(message.contains("limits"), "{message}");
    assert_eq!(registry.pane_count(), 0, "the failed pane keeps nothing");
    // The other pane draws.
    assert_eq!(
        prepare(&mut registry, &device, &queue, &sunburst_key, &sunburst),
        None
    );
    assert_eq!(registry.pane_count(), 1);
    // A failed pane is not tried again every frame, only when asked.
    assert_eq!(
        prepare(&mut registry, &device, &queue, &map_key, &map),
        None
    );
    assert_eq!(registry.pane_count(), 1);
    health.retry_pane(map_key.get());
    assert!(prepare(&mut registry, &device, &queue, &map_key, &map).is_some());
    assert!(
        health.take_errors().is_empty(),
        "everything was caught by the scopes"
    );

    // The pane paints the message where its picture was.
    let egui_ctx = egui::Context::default();
    gpu_health::attach(&egui_ctx, health.clone());
    let output = egui_ctx.run_ui(egui::RawInput::default(), |ui| {
        memscape_views::gpu::paint_picture(
            ui,
            &map_key,
            egui::Rect::from_min_size(egui::Pos2::ZERO, size),
            map.clone(),
            PaintOptions::default(),
        );
    });
    let mut output = output;
    output.textures_delta.clear();
    let texts = shape_texts(&output.shapes);
    assert!(
        texts
            .iter()
            .any(|t| t.contains("refused") && t.contains("try again")),
        "{texts:?}"
    );
}

#[test]
fn a_lost_device_is_reported_and_nothing_more_is_prepared_on_it() {
    let (device, queue) = device(2048);
    let mut registry = GpuRegistry::new(&device, OFFSCREEN_FORMAT).unwrap();
    let health = registry.health();
    let demo = load(Path::new("demo"));
    let sunburst = Arc::new(
        settings(ViewKind::Sunburst, "peak = true\ndepth = 2")
            .compose(&demo, egui::vec2(320.0, 200.0))
            .unwrap(),
    );
    let key = PaneKey::new();
    assert_eq!(
        prepare(&mut registry, &device, &queue, &key, &sunburst),
        None
    );
    // Destroyed once its work is done, the device reports its loss at the next poll.
    let _ = device.poll(wgpu::PollType::wait_indefinitely());
    device.destroy();
    let _ = device.poll(wgpu::PollType::Poll);
    assert_eq!(health.lost().as_deref(), Some("destroyed"));
    // Nothing is prepared on it, and using it is no panic.
    let options = PaintOptions::default();
    let pane = PanePicture {
        key: key.get(),
        rect: egui::Rect::from_min_size(egui::Pos2::ZERO, sunburst.size),
        picture: &sunburst,
        options: &options,
    };
    let screen = egui_wgpu::ScreenDescriptor {
        size_in_pixels: [320, 200],
        pixels_per_point: 1.0,
    };
    assert!(matches!(
        registry.prepare_guarded(&device, &queue, &screen, &pane),
        Ok(None)
    ));
    // Every GPU pane says so.
    let egui_ctx = egui::Context::default();
    gpu_health::attach(&egui_ctx, health.clone());
    let output = egui_ctx.run_ui(egui::RawInput::default(), |ui| {
        memscape_views::gpu::paint_picture(
            ui,
            &key,
            egui::Rect::from_min_size(egui::Pos2::ZERO, sunburst.size),
            sunburst.clone(),
            PaintOptions::default(),
        );
    });
    let mut output = output;
    output.textures_delta.clear();
    let texts = shape_texts(&output.shapes);
    assert!(
        texts.iter().any(
            |t| t.contains("device was lost (destroyed)") && t.contains("MEMSCAPE_ADAPTER=cpu")
        ),
        "{texts:?}"
    );
}

/// The texts of painted galleys.
fn shape_texts(shapes: &[egui::epaint::ClippedShape]) -> Vec<String> {
    shapes
        .iter()
        .filter_map(|s| match &s.shape {
            egui::Shape::Text(t) => Some(t.galley.text().to_owned()),
            _ => None,
        })
        .collect()
}
