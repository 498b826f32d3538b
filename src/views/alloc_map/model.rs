//! What the allocation map shows, computed from the dataset: conversions between the time axes
//! and event counts, block colours with a highlight, and the occupancy samples' cache.

use memscape_render::alloc_map::AllocBlockGpu;

use crate::scene::{ColorBy, TimeAxis};

/// Events applied at time `t` of `axis` (for the wall axis: up to the last allocation at or
/// before `t`).
pub fn events_at(trace: &memscape_trace::Trace, axis: TimeAxis, t: u64) -> u64 {
    match axis {
        TimeAxis::Events => t.min(trace.meta.events),
        TimeAxis::Wall => {
            let b = &trace.blocks;
            let i = b.alloc_time_ns.partition_point(|&a| a <= t);
            if i == 0 {
                0
            } else {
                b.alloc_event.get(i - 1).map_or(0, |e| e + 1)
            }
        }
    }
}

/// The inverse of [`events_at`]: where `events` lies on `axis`.
pub fn axis_time_of_events(trace: &memscape_trace::Trace, axis: TimeAxis, events: u64) -> u64 {
    match axis {
        TimeAxis::Events => events,
        TimeAxis::Wall => {
            let b = &trace.blocks;
            let i = b.alloc_event.partition_point(|&e| e < events);
            b.alloc_time_ns
                .get(i.min(b.alloc_time_ns.len().saturating_sub(1)))
                .copied()
                .unwrap_or(0)
        }
    }
}

/// Block colours for `color_by`; with a highlight (sorted block indices), the highlighted blocks
/// keep their colour (quantitative colours resolved through the ramp) and the others are dimmed.
pub fn highlighted_blocks(
    scene: &crate::scene::AllocScene,
    trace: &memscape_trace::Trace,
    color_by: ColorBy,
    highlight: Option<&[u32]>,
) -> Vec<AllocBlockGpu> {
    let mut blocks = scene.colored_blocks(trace, color_by);
    let Some(selected) = highlight else {
        return blocks;
    };
    let quantitative = color_by.mode() == memscape_render::alloc_map::ColorMode::Quantitative;
    let dim = memscape_render::color::pack_rgba8([70, 72, 80, 255]);
    for (i, block) in blocks.iter_mut().enumerate() {
        let on = u32::try_from(i).is_ok_and(|i| selected.binary_search(&i).is_ok());
        if !on {
            block.color = dim;
        } else if quantitative {
            block.color = memscape_render::color::pack_rgba8(
                memscape_render::color::blue_red_srgb8(block.attr),
            );
        }
    }
    blocks
}

/// One column per physical pixel pair: the fraction of the regions' bytes in use, blue → red.
/// The occupancy samples of the last frame and what they were sampled for: redrawing without a
/// pan or zoom reuses them instead of resampling every region's step functions.
#[derive(Default)]
pub struct OccupancyCache {
    pub key: Option<(TimeAxis, u64, u64, usize)>,
    pub samples: Vec<(f32, bool)>,
}

pub fn nice_step(raw: f64) -> f64 {
    let raw = raw.max(1e-9);
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    p * if m < 1.5 {
        1.0
    } else if m < 3.5 {
        2.0
    } else if m < 7.5 {
        5.0
    } else {
        10.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::TimeAxis;

    fn demo() -> crate::data::Dataset {
        let source = crate::demo::sources().into_iter().next().unwrap();
        crate::data::load(&source, &|_, _| {}).unwrap()
    }

    #[test]
    fn wall_time_and_events_convert_both_ways() {
        let d = demo();
        let t = d.alloc_trace().unwrap();
        let b = &t.trace.blocks;
        for i in [0usize, 10, b.len() / 2, b.len() - 1] {
            let wall = b.alloc_time_ns[i];
            let events = events_at(&t.trace, TimeAxis::Wall, wall);
            // Right after this block's allocation (or a later one at the same nanosecond).
            assert!(events > b.alloc_event[i], "block {i}");
            let back = axis_time_of_events(&t.trace, TimeAxis::Wall, events);
            assert!(back >= wall, "block {i}: {back} < {wall}");
            assert_eq!(events_at(&t.trace, TimeAxis::Events, 123), 123);
        }
    }

    #[test]
    fn highlight_dims_every_other_block() {
        let d = demo();
        let t = d.alloc_trace().unwrap();
        let scene = t.scene.as_ref().unwrap();
        let plain = highlighted_blocks(scene, &t.trace, ColorBy::Site, None);
        let chosen = [3u32, 7, 11];
        let lit = highlighted_blocks(scene, &t.trace, ColorBy::Site, Some(&chosen));
        let dim = memscape_render::color::pack_rgba8([70, 72, 80, 255]);
        for (i, (a, b)) in plain.iter().zip(&lit).enumerate() {
            if chosen.contains(&(i as u32)) {
                assert_eq!(a.color, b.color, "block {i} keeps its colour");
            } else {
                assert_eq!(b.color, dim, "block {i} is dimmed");
            }
        }
        // Quantitative colours of highlighted blocks are resolved through the ramp.
        let lit = highlighted_blocks(scene, &t.trace, ColorBy::Size, Some(&chosen));
        assert_ne!(lit[3].color, dim);
        assert_ne!(lit[3].color, 0);
    }
}
