//! The picture around the GPU map: axes, legend, occupancy bar and the hovered block's details.

use super::model::{OccupancyCache, nice_step};
use super::pane::{Camera, OccupancyStyle};
use crate::scene::{ColorBy, TimeAxis};

pub fn block_details(ui: &mut egui::Ui, trace: &memscape_trace::Trace, i: usize) {
    let b = &trace.blocks;
    let waste = b.usable_size[i].saturating_sub(b.requested_size[i]);
    egui::Grid::new("block").num_columns(2).show(ui, |ui| {
        let mut row = |k: &str, v: String| {
            ui.label(k);
            ui.monospace(v);
            ui.end_row();
        };
        row("address", format!("{:#x}", b.address[i]));
        row("size", format!("{} B", b.size[i]));
        row("requested", format!("{} B", b.requested_size[i]));
        row("usable", format!("{} B", b.usable_size[i]));
        row("waste", format!("{waste} B"));
        row(
            "allocated",
            format!(
                "event {} · {:.3} ms",
                b.alloc_event[i],
                b.alloc_time_ns[i] as f64 / 1e6
            ),
        );
        row(
            "freed",
            format!(
                "event {} · {:.3} ms",
                b.free_event[i],
                b.free_time_ns[i] as f64 / 1e6
            ),
        );
        row("thread", trace.thread_name(b.thread[i]).to_owned());
        let site = memscape_heap::trace_tree::allocation_site(trace, b.site[i]);
        row("call site", trace.describe_frame(site));
        if let Some(&caller) = trace.call_tree.parent.get(site as usize)
            && caller != 0
        {
            row("called from", trace.describe_frame(caller));
        }
    });
}

pub fn draw_axes(
    ui: &egui::Ui,
    rect: egui::Rect,
    cam: &Camera,
    scene: &crate::scene::AllocScene,
    axis: TimeAxis,
) {
    let painter = ui.painter_at(rect);
    let text = egui::Color32::from_gray(200);
    let font = egui::FontId::monospace(11.0);
    // Region separators and their start addresses.
    for r in &scene.regions {
        let y =
            rect.bottom() - ((r.collapsed_start as f64 - cam.y_bottom) / cam.bytes_per_px) as f32;
        if (rect.top()..=rect.bottom()).contains(&y) {
            painter.line_segment(
                [egui::pos2(rect.left(), y), egui::pos2(rect.right(), y)],
                egui::Stroke::new(
                    1.0,
                    egui::Color32::from_rgba_unmultiplied(255, 255, 255, 60),
                ),
            );
            painter.text(
                egui::pos2(rect.left() + 4.0, y - 2.0),
                egui::Align2::LEFT_BOTTOM,
                format!("{:#x}", r.start),
                font.clone(),
                text,
            );
        }
    }
    // Time ticks at "nice" steps.
    let span = cam.time_per_px * f64::from(rect.width());
    let step = nice_step(span / 8.0);
    let first = (cam.t_left / step).ceil() * step;
    let mut t = first;
    while t < cam.t_left + span {
        let x = rect.left() + ((t - cam.t_left) / cam.time_per_px) as f32;
        painter.line_segment(
            [
                egui::pos2(x, rect.bottom() - 5.0),
                egui::pos2(x, rect.bottom()),
            ],
            egui::Stroke::new(1.0, text),
        );
        let label = match axis {
            TimeAxis::Events => format!("{t:.0}"),
            TimeAxis::Wall => format!("{:.1} ms", t / 1e6),
        };
        painter.text(
            egui::pos2(x + 2.0, rect.bottom() - 6.0),
            egui::Align2::LEFT_BOTTOM,
            label,
            font.clone(),
            text,
        );
        t += step;
    }
}

/// The colour legend in the map's top-right corner: swatches for threads or the top call sites,
/// or the blue → red ramp for quantitative colourings.
pub fn draw_legend(
    ui: &egui::Ui,
    rect: egui::Rect,
    scene: &crate::scene::AllocScene,
    trace: &memscape_trace::Trace,
    color_by: ColorBy,
) {
    use memscape_render::color::{blue_red, categorical, linear_to_srgb};
    let to_color32 = |c: [u8; 4]| egui::Color32::from_rgb(c[0], c[1], c[2]);
    let entries: Vec<(egui::Color32, String)> = match color_by {
        ColorBy::Thread => trace
            .threads
            .iter()
            .enumerate()
            .take(10)
            .map(|(i, _)| {
                (
                    to_color32(categorical(i as u32)),
                    trace.thread_name(i as u32).to_owned(),
                )
            })
            .collect(),
        ColorBy::Site => scene
            .top_sites
            .iter()
            .map(|(site, label)| (to_color32(crate::scene::site_color(*site)), label.clone()))
            .collect(),
        _ => Vec::new(),
    };
    let painter = ui.painter_at(rect);
    let font = egui::FontId::proportional(11.0);
    let width = 260.0;
    let row = 14.0;
    let height = if entries.is_empty() {
        34.0
    } else {
        18.0 + row * entries.len() as f32
    };
    let frame = egui::Rect::from_min_size(
        egui::pos2(rect.right() - width - 8.0, rect.top() + 8.0),
        egui::vec2(width, height),
    );
    painter.rect_filled(frame, 4.0, egui::Color32::from_black_alpha(170));
    painter.text(
        frame.min + egui::vec2(6.0, 3.0),
        egui::Align2::LEFT_TOP,
        color_by.name(),
        font.clone(),
        egui::Color32::from_gray(220),
    );
    if entries.is_empty() {
        let ramp = egui::Rect::from_min_size(
            frame.min + egui::vec2(6.0, 18.0),
            egui::vec2(width - 12.0, 9.0),
        );
        let steps = 48;
        for k in 0..steps {
            let c = blue_red(k as f32 / (steps - 1) as f32)
                .map(|v| (linear_to_srgb(v) * 255.0).round() as u8);
            let x0 = ramp.left() + ramp.width() * k as f32 / steps as f32;
            let x1 = ramp.left() + ramp.width() * (k + 1) as f32 / steps as f32;
            painter.rect_filled(
                egui::Rect::from_min_max(
                    egui::pos2(x0, ramp.top()),
                    egui::pos2(x1 + 0.5, ramp.bottom()),
                ),
                0.0,
                egui::Color32::from_rgb(c[0], c[1], c[2]),
            );
        }
        return;
    }
    for (k, (color, label)) in entries.iter().enumerate() {
        let y = frame.top() + 18.0 + row * k as f32;
        painter.rect_filled(
            egui::Rect::from_min_size(
                egui::pos2(frame.left() + 6.0, y + 2.0),
                egui::vec2(10.0, 10.0),
            ),
            2.0,
            *color,
        );
        // Module paths are long and their ends say the most: keep the tail.
        let count = label.chars().count();
        let text = if count > 40 {
            "…".to_owned() + &label.chars().skip(count - 39).collect::<String>()
        } else {
            label.clone()
        };
        painter.text(
            egui::pos2(frame.left() + 22.0, y),
            egui::Align2::LEFT_TOP,
            text,
            font.clone(),
            egui::Color32::from_gray(210),
        );
    }
}

pub fn draw_occupancy(
    ui: &egui::Ui,
    bar: egui::Rect,
    cam: &Camera,
    scene: &crate::scene::AllocScene,
    axis: TimeAxis,
    style: OccupancyStyle,
    cache: &mut OccupancyCache,
) {
    let painter = ui.painter_at(bar);
    let columns = (bar.width() / 2.0).ceil().max(1.0) as usize;
    let t0 = cam.t_left.max(0.0);
    let t1 = (cam.t_left + cam.time_per_px * f64::from(bar.width())).max(t0 + 1.0);
    let key = (axis, t0 as u64, t1.ceil() as u64, columns);
    if cache.key != Some(key) {
        cache.samples = scene.occupancy(axis, key.1, key.2, columns);
        cache.key = Some(key);
    }
    let samples = &cache.samples;
    // Columns may start right of the bar's left edge when the view begins before time 0.
    let x_of = |t: f64| bar.left() + ((t - cam.t_left) / cam.time_per_px) as f32;
    let step = (t1 - t0) / columns as f64;
    for (k, &(fraction, active)) in samples.iter().enumerate() {
        let x0 = x_of(t0 + step * k as f64);
        let x1 = x_of(t0 + step * (k + 1) as f64);
        let color = if style == OccupancyStyle::BlackIdleGaps && !active {
            egui::Color32::BLACK
        } else {
            let c = memscape_render::color::blue_red(fraction)
                .map(|v| (memscape_render::color::linear_to_srgb(v) * 255.0).round() as u8);
            egui::Color32::from_rgb(c[0], c[1], c[2])
        };
        painter.rect_filled(
            egui::Rect::from_min_max(
                egui::pos2(x0, bar.top()),
                egui::pos2(x1.max(x0 + 0.5), bar.bottom()),
            ),
            0.0,
            color,
        );
    }
    painter.text(
        egui::pos2(bar.right() - 4.0, bar.center().y),
        egui::Align2::RIGHT_CENTER,
        "occupancy",
        egui::FontId::proportional(10.0),
        egui::Color32::from_white_alpha(160),
    );
}
