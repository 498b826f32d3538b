//! The heap tree pane of a big `.msc`'s first part (issue 25): the tree groups every block, so
//! until the whole trace is read the pane states the read's progress and draws the whole run's
//! heap-size curve from the level-of-detail index beside it (`memscape_views::msc_head`), its
//! peak marked, so that the shape of the run and where its peak is show at once.

use egui::{Color32, Pos2, Stroke};
use memscape_lod::curve::CurveBin;
use memscape_views::dataset::TraceExtent;
use memscape_views::heap_tree::draw::human_bytes;
use memscape_views::msc_head::IndexHeapCurve;

/// The curve's height in points (the tree is not there yet: a strip, not the whole pane).
const CURVE_HEIGHT: f32 = 140.0;

/// The progress line and, when the index holds it, the whole run's curve; `logged` is set once
/// the curve is drawn the first time (its debug line, which the GUI tests read).
pub(super) fn show(
    ui: &mut egui::Ui,
    extent: TraceExtent,
    curve: Option<&IndexHeapCurve>,
    logged: &mut bool,
) {
    ui.horizontal(|ui| {
        crate::panes::spinner(ui);
        ui.label(format!(
            "reading the whole trace for the heap tree ({} of {} blocks shown beside it so \
             far)…",
            extent.read, extent.total
        ));
    });
    let Some(curve) = curve.filter(|c| !c.bins.is_empty()) else {
        return;
    };
    let (peak_bin, peak) = curve.peak();
    let [p0, p1] = curve.bin_events(peak_bin);
    let events = curve.extent_t.saturating_sub(1);
    // No text of its own on screen (what it is and its figures are in its hover text): the
    // wave-18 test's pixel equality of the final window with a whole read is flaky under load
    // (4 of 8 runs before this curve), and with a label here it failed 9 of 12 (curve alone: 4
    // of 19): BENCHMARKS wave 19. Probably new glyphs in egui's font atlas move the places of
    // those the final pictures' rotated labels add later.
    let width = ui.available_width().max(1.0);
    let height = CURVE_HEIGHT.min(ui.available_height()).max(24.0);
    let (rect, response) = ui.allocate_exact_size(egui::vec2(width, height), egui::Sense::hover());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 2.0, Color32::from_gray(24));
    let scale = peak.max(1) as f32;
    let y_of = |b: u64| rect.bottom() - 3.0 - (b as f32 / scale) * (rect.height() - 8.0);
    let columns = (rect.width().floor() as usize).max(1);
    let n = curve.bins.len();
    let mut ends = Vec::with_capacity(columns.min(n));
    // Each pixel column the envelope of its bins: a band from lowest to highest, the line
    // through each column's last value.
    for c in 0..columns.min(n) {
        let (a, b) = if n <= columns {
            (c, c + 1)
        } else {
            (
                c * n / columns,
                ((c + 1) * n / columns).max(c * n / columns + 1),
            )
        };
        let Some(env) = curve.bins[a..b.min(n)]
            .iter()
            .copied()
            .reduce(CurveBin::then)
        else {
            continue;
        };
        let x0 = rect.left() + a as f32 / n as f32 * rect.width();
        let x1 = rect.left() + b as f32 / n as f32 * rect.width();
        let x = (x0 + x1) / 2.0;
        if env.max > env.min {
            painter.line_segment(
                [Pos2::new(x, y_of(env.min)), Pos2::new(x, y_of(env.max))],
                Stroke::new((x1 - x0).max(1.0), Color32::from_rgb(55, 90, 130)),
            );
        }
        ends.push(Pos2::new(x, y_of(env.end)));
    }
    if ends.len() >= 2 {
        painter.add(egui::Shape::line(
            ends,
            Stroke::new(1.5, Color32::from_rgb(110, 170, 230)),
        ));
    }
    let peak_x = rect.left() + (peak_bin as f32 + 0.5) / n as f32 * rect.width();
    let marker = Color32::from_rgb(250, 200, 80);
    painter.line_segment(
        [
            Pos2::new(peak_x, rect.top()),
            Pos2::new(peak_x, rect.bottom()),
        ],
        Stroke::new(1.0, marker),
    );
    painter.circle_filled(Pos2::new(peak_x, y_of(peak)), 3.5, marker);
    response.on_hover_text(format!(
        "the heap over the whole run, from the level-of-detail index (every block's bytes, as \
         the map, over its {events} events); the orange bar marks the peak: {} ({peak} B) at \
         events {p0} to {p1}",
        human_bytes(peak)
    ));
    if !std::mem::replace(logged, true) {
        tracing::debug!(
            target: "memscape::heap_tree",
            bins = n,
            log_bin = curve.log_bin,
            peak,
            peak_bin,
            read = extent.read,
            total = extent.total,
            "heap-size curve from the index drawn while the whole trace is read"
        );
    }
}
