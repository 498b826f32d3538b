//! The paint bridge's map layers drawn from a big trace's level-of-detail index
//! (`alloc_map::lod`): computed on the spot (headless pictures), or asked of the GUI's worker
//! (`lod_refine`) with its newest picture drawn stretched to the view.

use std::sync::Arc;

use memscape_render::alloc_map::{AllocMapFrame, AllocMapView};

use super::{Gpu, GpuRegistry, PaneGpu, PanePicture, frame_key, viewport};
use crate::alloc_map::lod::LodFrameTarget;
use crate::picture::MapLayer;

impl PanePicture<'_> {
    /// A map layer drawn from a big trace's level-of-detail index (`alloc_map::lod`): redrawn
    /// only when the view changes; the exact blocks in view, when few, are uploaded for it.
    pub(super) fn prepare_lod_map(
        &self,
        gpu: &mut Gpu<'_>,
        reg: &mut GpuRegistry,
        pane: &mut PaneGpu,
        m: &MapLayer,
        lod: &memscape_lod::LodTrace,
    ) {
        let (size, origin) = viewport(self.abs(m.rect), gpu.screen);
        let mut view = m.window.view(m.extent, [size[0] as f32, size[1] as f32]);
        m.style.apply(&mut view);
        let key = frame_key(
            &view,
            &[
                Arc::as_ptr(&m.data) as usize as u64,
                u64::from(size[0]) << 32 | u64::from(size[1]),
                u64::from(origin[0].to_bits()) << 32 | u64::from(origin[1].to_bits()),
            ],
        );
        // On a GPU that resolves a level's cells itself, views a level draws are drawn here at
        // once; the worker finds the exact blocks of finer views (and sums on the CPU else).
        let cells_here = crate::alloc_map::lod::cells_on_gpu(gpu.device)
            && lod
                .index
                .level_for(view.eq1([size[0].max(1), size[1].max(1)]).pixel_size())
                .is_some();
        if let Some(refiner) = &m.data.refiner
            && !cells_here
        {
            self.prepare_refined_map(gpu, reg, pane, m, refiner, &view, size, origin, key);
            return;
        }
        let (frame, prepared) = pane
            .frames
            .entry(m.slot)
            .or_insert_with(|| (AllocMapFrame::new(gpu.device, &reg.maps), 0));
        if *prepared != key {
            let (upload, _) = crate::alloc_map::lod::prepare(
                crate::alloc_map::lod::ExactOnGpu::of(gpu.device),
                &mut LodFrameTarget {
                    device: gpu.device,
                    queue: gpu.queue,
                    encoder: gpu.encoder,
                    pipelines: &mut reg.maps,
                    frame,
                    origin,
                    target_format: reg.target_format,
                },
                cells_here.then(|| pane.lod_cells.entry(m.slot).or_default()),
                lod,
                &view,
                size,
            );
            // Kept until the next redraw of this layer: the commands just recorded read it.
            pane.lod_uploads.insert(m.slot, upload);
            *prepared = key;
        }
    }

    /// A map layer drawn from a level-of-detail index by the GUI's worker (`lod_refine`): the
    /// view is asked of the worker, and the newest picture it finished is drawn, stretched and
    /// offset to the view (exact blocks: drawn at the view); nothing here waits for the worker.
    #[allow(clippy::too_many_arguments)]
    fn prepare_refined_map(
        &self,
        gpu: &mut Gpu<'_>,
        reg: &mut GpuRegistry,
        pane: &mut PaneGpu,
        m: &MapLayer,
        refiner: &crate::lod_refine::LodRefiner,
        view: &AllocMapView,
        size: [u32; 2],
        origin: [f32; 2],
        key: u64,
    ) {
        use crate::lod_refine::Drawn;
        let size = [size[0].max(1), size[1].max(1)];
        let lv = view.eq1(size);
        let exact = crate::alloc_map::lod::ExactOnGpu::of(gpu.device);
        let done = refiner.want(m.slot, &lv, exact.max_blocks);
        let generation = done.as_ref().map_or(0, |d| d.generation);
        let key = frame_key(view, &[key, generation]);
        let (frame, prepared) = pane
            .frames
            .entry(m.slot)
            .or_insert_with(|| (AllocMapFrame::new(gpu.device, &reg.maps), 0));
        if *prepared == key {
            return;
        }
        *prepared = key;
        let mut target = LodFrameTarget {
            device: gpu.device,
            queue: gpu.queue,
            encoder: gpu.encoder,
            pipelines: &mut reg.maps,
            frame,
            origin,
            target_format: reg.target_format,
        };
        match done.as_ref().map(|d| (d, &d.drawn)) {
            Some((d, Drawn::Blocks(blocks))) => {
                let upload = pane
                    .refined_uploads
                    .entry(m.slot)
                    .or_insert((u64::MAX, None));
                if upload.0 != d.generation {
                    *upload = (
                        d.generation,
                        Some(crate::alloc_map::lod::upload_blocks(
                            target.device,
                            target.pipelines,
                            blocks,
                        )),
                    );
                }
                if let Some(data) = &upload.1 {
                    target.record_blocks(data, view, size, exact.path);
                }
            }
            Some((d, Drawn::Sums(sums))) => {
                let stretched;
                let sums = if d.view == lv {
                    sums
                } else {
                    stretched = sums.stretched(&d.view, &lv);
                    &stretched
                };
                target.record_sums(view, size, &sums.acc, &sums.cov);
            }
            // Nothing finished yet: the background.
            None => target.record_sums(view, size, &[], &[]),
        }
    }
}
