//! GPU picking for the allocation map: which block covers a pixel most, found by drawing the
//! blocks into a small id target around the cursor (never a CPU scan over the blocks).
//!
//! Each block's exact box coverage `f` of each pixel of a `(2r+1)²` window around the cursor is
//! computed as the accumulate pass computes it, and written as the fragment's depth; the depth
//! test keeps the largest `f` per pixel and, on equal `f`, the block with the higher index. The
//! id target stores (block + 1, bits of `f`).
//!
//! The readback is asynchronous:
//! 1. [`AllocMapPicker::request`] records the id pass and a copy into a readback buffer in the
//!    caller's encoder (in an egui callback: `prepare`'s encoder) and returns the request's
//!    number;
//! 2. the caller submits that encoder (egui does, at the end of the frame);
//! 3. [`AllocMapPicker::poll`], called a frame or more later, starts the mapping of submitted
//!    requests, polls the device without blocking and returns finished results.
//!
//! [`AllocMapPicker::pick_blocking`] does all three and waits (tests, headless).
//!
//! CPU twin: [`super::cpu_reference::pick_window`].

use std::ops::Range;
use std::sync::{Arc, Mutex};

use bytemuck::{Pod, Zeroable};

use super::{AllocMapData, AllocMapPipelines, AllocMapView};
use crate::RenderError;
use crate::binding::uniform_buffer;

/// Format of the id target: (block index + 1, bits of the coverage), 0 = no block.
pub const PICK_ID_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rg32Uint;
/// Depth target holding the winning coverage.
pub const PICK_DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// How many requests may be in flight at once; more are refused until one is collected.
pub const PICK_SLOTS: usize = 3;

/// The pick window. Keep in sync with `PickWindow` in `shaders/alloc_map_pick.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct PickWindowGpu {
    pub origin_px: [f32; 2],
    pub size_px: [f32; 2],
}
const _: () = assert!(std::mem::size_of::<PickWindowGpu>() == 16);

/// The block that wins a pixel: its index in the uploaded blocks and its coverage of the pixel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PickHit {
    pub block: u32,
    /// Exact box coverage of the pixel, in (0, 1].
    pub coverage: f32,
}

/// The pixels around the cursor and the block winning each.
#[derive(Debug, Clone, PartialEq)]
pub struct PickResult {
    /// The number [`AllocMapPicker::request`] returned.
    pub request: u64,
    /// The pixel asked about, in the view (top-left origin).
    pub cursor_px: [u32; 2],
    /// The window's top-left pixel in the view and its size (clipped to the view).
    pub origin_px: [u32; 2],
    pub width: u32,
    pub height: u32,
    /// Row-major, `width × height`.
    pub hits: Vec<Option<PickHit>>,
}

impl PickResult {
    /// The winner at a pixel of the view, if the pixel is inside the window.
    pub fn at(&self, px: [u32; 2]) -> Option<PickHit> {
        let x = px[0].checked_sub(self.origin_px[0])?;
        let y = px[1].checked_sub(self.origin_px[1])?;
        if x >= self.width || y >= self.height {
            return None;
        }
        self.hits
            .get((y * self.width + x) as usize)
            .copied()
            .flatten()
    }

    /// The winner at the cursor's pixel.
    pub fn at_cursor(&self) -> Option<PickHit> {
        self.at(self.cursor_px)
    }

    /// The hit nearest the cursor within the window (squared pixel distance), ties broken by the
    /// larger coverage and then the higher block index: forgiving hover for sub-pixel blocks.
    pub fn nearest(&self) -> Option<PickHit> {
        let mut best: Option<(u64, PickHit)> = None;
        for y in 0..self.height {
            for x in 0..self.width {
                let Some(hit) = self.hits[(y * self.width + x) as usize] else {
                    continue;
                };
                let dx = i64::from(self.origin_px[0] + x) - i64::from(self.cursor_px[0]);
                let dy = i64::from(self.origin_px[1] + y) - i64::from(self.cursor_px[1]);
                let d = (dx * dx + dy * dy) as u64;
                let better = match best {
                    None => true,
                    Some((bd, b)) => {
                        d < bd
                            || (d == bd
                                && (hit.coverage > b.coverage
                                    || (hit.coverage == b.coverage && hit.block > b.block)))
                    }
                };
                if better {
                    best = Some((d, hit));
                }
            }
        }
        best.map(|(_, h)| h)
    }
}

/// The window of the view that a request covers: `(origin, size)` in view pixels, clipped.
pub fn pick_window_rect(
    view_size: [u32; 2],
    cursor_px: [u32; 2],
    radius: u32,
) -> ([u32; 2], [u32; 2]) {
    let w = view_size[0].max(1);
    let h = view_size[1].max(1);
    let cx = cursor_px[0].min(w - 1);
    let cy = cursor_px[1].min(h - 1);
    let x0 = cx.saturating_sub(radius);
    let y0 = cy.saturating_sub(radius);
    let x1 = cx.saturating_add(radius).saturating_add(1).min(w);
    let y1 = cy.saturating_add(radius).saturating_add(1).min(h);
    ([x0, y0], [x1 - x0, y1 - y0])
}

#[derive(Debug, Clone)]
struct PickMeta {
    request: u64,
    cursor_px: [u32; 2],
    origin_px: [u32; 2],
    size: [u32; 2],
}

type MapOutcome = Arc<Mutex<Option<Result<(), wgpu::BufferAsyncError>>>>;

enum SlotState {
    Free,
    /// Commands recorded; the caller has not necessarily submitted them yet.
    Recorded(PickMeta),
    /// `map_async` called; the outcome arrives through the callback.
    Mapping(PickMeta, MapOutcome),
}

struct Slot {
    buffer: wgpu::Buffer,
    state: SlotState,
}

/// Bytes per row of the readback copy (rows padded to 256 bytes).
fn padded_row_bytes(width: u32) -> u32 {
    let unpadded = width * 8;
    unpadded.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT
}

/// A picker for one view: its small id and depth targets, uniforms and readback buffers.
pub struct AllocMapPicker {
    radius: u32,
    side: u32,
    ids: wgpu::Texture,
    ids_view: wgpu::TextureView,
    depth_view: wgpu::TextureView,
    view_uniform: wgpu::Buffer,
    window_uniform: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    slots: Vec<Slot>,
    next_request: u64,
}

impl AllocMapPicker {
    /// A picker whose window reaches `radius` pixels around the cursor (`radius` 0: one pixel;
    /// capped at 15, a 31×31 window).
    pub fn new(device: &wgpu::Device, pipelines: &AllocMapPipelines, radius: u32) -> Self {
        let radius = radius.min(15);
        let side = 2 * radius + 1;
        let make = |label: &str, format, usage| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size: wgpu::Extent3d {
                    width: side,
                    height: side,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: &[],
            })
        };
        let ids = make(
            "AllocMapPicker::ids",
            PICK_ID_FORMAT,
            wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        );
        let depth = make(
            "AllocMapPicker::coverage_depth",
            PICK_DEPTH_FORMAT,
            wgpu::TextureUsages::RENDER_ATTACHMENT,
        );
        let view_uniform = uniform_buffer::<super::AllocMapViewGpu>(device, "AllocMapPicker::view");
        let window_uniform = uniform_buffer::<PickWindowGpu>(device, "AllocMapPicker::window");
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("AllocMapPicker::bind_group"),
            layout: &pipelines.pick_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: view_uniform.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: window_uniform.as_entire_binding(),
                },
            ],
        });
        let slots = (0..PICK_SLOTS)
            .map(|_| Slot {
                buffer: device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("AllocMapPicker::readback"),
                    size: u64::from(padded_row_bytes(side) * side),
                    usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
                    mapped_at_creation: false,
                }),
                state: SlotState::Free,
            })
            .collect();
        Self {
            radius,
            side,
            ids_view: ids.create_view(&wgpu::TextureViewDescriptor::default()),
            ids,
            depth_view: depth.create_view(&wgpu::TextureViewDescriptor::default()),
            view_uniform,
            window_uniform,
            bind_group,
            slots,
            next_request: 1,
        }
    }

    pub fn radius(&self) -> u32 {
        self.radius
    }

    /// Whether a request was recorded and not collected yet.
    pub fn busy(&self) -> bool {
        self.slots
            .iter()
            .any(|s| !matches!(s.state, SlotState::Free))
    }

    /// Records a pick of the pixels around `cursor_px` (view pixels, top-left origin) of a view
    /// of `view_size` pixels drawn with `view`, over the blocks `range` of `data` (`None`: all).
    /// Returns the request's number, or `None` when no request can be recorded now: a previous
    /// one is recorded but not yet polled (the view and window uniforms are written through the
    /// queue, so one request per submitted command buffer), or every readback buffer is busy.
    /// Submit `encoder` before calling [`Self::poll`].
    #[allow(clippy::too_many_arguments)]
    pub fn request(
        &mut self,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        pipelines: &AllocMapPipelines,
        data: &AllocMapData,
        view: &AllocMapView,
        view_size: [u32; 2],
        cursor_px: [u32; 2],
        range: Option<Range<usize>>,
    ) -> Option<u64> {
        if self
            .slots
            .iter()
            .any(|s| matches!(s.state, SlotState::Recorded(_)))
        {
            return None;
        }
        let slot_index = self
            .slots
            .iter()
            .position(|s| matches!(s.state, SlotState::Free))?;
        let view_size = [view_size[0].max(1), view_size[1].max(1)];
        let (origin, size) = pick_window_rect(view_size, cursor_px, self.radius);
        let gpu = view.gpu_plain(view_size);
        queue.write_buffer(&self.view_uniform, 0, bytemuck::bytes_of(&gpu));
        let window = PickWindowGpu {
            origin_px: [origin[0] as f32, origin[1] as f32],
            size_px: [size[0] as f32, size[1] as f32],
        };
        queue.write_buffer(&self.window_uniform, 0, bytemuck::bytes_of(&window));
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("AllocMapPicker::ids"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &self.ids_view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &self.depth_view,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(0.0),
                        store: wgpu::StoreOp::Discard,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_viewport(0.0, 0.0, size[0] as f32, size[1] as f32, 0.0, 1.0);
            pass.set_scissor_rect(0, 0, size[0], size[1]);
            pass.set_pipeline(&pipelines.pick);
            pass.set_bind_group(0, &self.bind_group, &[]);
            data.draw_range(&mut pass, 1, range.unwrap_or(0..data.block_count));
        }
        let slot = &mut self.slots[slot_index];
        encoder.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture: &self.ids,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &slot.buffer,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(padded_row_bytes(self.side)),
                    rows_per_image: Some(self.side),
                },
            },
            wgpu::Extent3d {
                width: size[0],
                height: size[1],
                depth_or_array_layers: 1,
            },
        );
        let request = self.next_request;
        self.next_request += 1;
        slot.state = SlotState::Recorded(PickMeta {
            request,
            cursor_px: [
                cursor_px[0].min(view_size[0] - 1),
                cursor_px[1].min(view_size[1] - 1),
            ],
            origin_px: origin,
            size,
        });
        Some(request)
    }

    /// Starts reading back the requests recorded so far (their command buffers must have been
    /// submitted), polls the device without blocking, and returns the finished results, oldest
    /// first. Call it once per frame, from the frame after [`Self::request`] on.
    pub fn poll(&mut self, device: &wgpu::Device) -> Vec<PickResult> {
        self.poll_with(device, wgpu::PollType::Poll)
    }

    fn poll_with(&mut self, device: &wgpu::Device, how: wgpu::PollType) -> Vec<PickResult> {
        for slot in &mut self.slots {
            if let SlotState::Recorded(meta) = &slot.state {
                let outcome: MapOutcome = Arc::new(Mutex::new(None));
                let sink = outcome.clone();
                slot.buffer
                    .slice(..)
                    .map_async(wgpu::MapMode::Read, move |r| {
                        if let Ok(mut o) = sink.lock() {
                            *o = Some(r);
                        }
                    });
                slot.state = SlotState::Mapping(meta.clone(), outcome);
            }
        }
        let mapping = self
            .slots
            .iter()
            .any(|s| matches!(s.state, SlotState::Mapping(..)));
        if !mapping {
            return Vec::new();
        }
        if let Err(e) = device.poll(how) {
            tracing::warn!("picking: polling the device failed: {e}");
        }
        let mut done = Vec::new();
        for slot in &mut self.slots {
            let SlotState::Mapping(meta, outcome) = &slot.state else {
                continue;
            };
            let finished = outcome.lock().ok().and_then(|mut o| o.take());
            match finished {
                None => {}
                Some(Err(e)) => {
                    tracing::warn!("picking: mapping the readback failed: {e}");
                    slot.state = SlotState::Free;
                }
                Some(Ok(())) => {
                    let result = read_slot(&slot.buffer, meta, self.side);
                    slot.buffer.unmap();
                    slot.state = SlotState::Free;
                    match result {
                        Ok(r) => done.push(r),
                        Err(e) => tracing::warn!("picking: {e}"),
                    }
                }
            }
        }
        done.sort_by_key(|r| r.request);
        done
    }

    /// Records, submits and waits for one pick (tests, headless tools). Requests still in
    /// flight are collected and dropped first.
    #[allow(clippy::too_many_arguments)]
    pub fn pick_blocking(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        pipelines: &AllocMapPipelines,
        data: &AllocMapData,
        view: &AllocMapView,
        view_size: [u32; 2],
        cursor_px: [u32; 2],
        range: Option<Range<usize>>,
    ) -> Result<PickResult, RenderError> {
        while self.busy() {
            self.poll_with(device, wgpu::PollType::wait_indefinitely());
        }
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("AllocMapPicker::blocking"),
        });
        let request = self
            .request(
                queue,
                &mut encoder,
                pipelines,
                data,
                view,
                view_size,
                cursor_px,
                range,
            )
            .ok_or_else(|| RenderError::Readback("the picker refused the request".into()))?;
        queue.submit([encoder.finish()]);
        loop {
            let results = self.poll_with(device, wgpu::PollType::wait_indefinitely());
            if let Some(r) = results.into_iter().find(|r| r.request == request) {
                return Ok(r);
            }
            if !self.busy() {
                return Err(RenderError::Readback(
                    "the pick readback failed (see the log)".into(),
                ));
            }
        }
    }
}

fn read_slot(buffer: &wgpu::Buffer, meta: &PickMeta, side: u32) -> Result<PickResult, RenderError> {
    let mapped = buffer
        .slice(..)
        .get_mapped_range()
        .map_err(|e| RenderError::Readback(e.to_string()))?;
    let row = padded_row_bytes(side) as usize;
    let [w, h] = meta.size;
    let mut hits = Vec::with_capacity((w * h) as usize);
    for y in 0..h as usize {
        for x in 0..w as usize {
            let at = y * row + x * 8;
            let texel: [u32; 2] = mapped
                .get(at..at + 8)
                .map(bytemuck::pod_read_unaligned)
                .unwrap_or([0, 0]);
            hits.push((texel[0] != 0).then(|| PickHit {
                block: texel[0] - 1,
                coverage: f32::from_bits(texel[1]),
            }));
        }
    }
    Ok(PickResult {
        request: meta.request,
        cursor_px: meta.cursor_px,
        origin_px: meta.origin_px,
        width: w,
        height: h,
        hits,
    })
}
