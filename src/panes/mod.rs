//! The GUI panes: interaction only. Each pane holds its view's typed settings and what the user
//! is doing (camera, hover, selection, animation), asks the view's `compose` in
//! `memscape_views` for its picture and paints it through the one GPU bridge
//! (`memscape_views::gpu`). The shell (`crate::app`) docks them; which pane shows which dataset
//! is `crate::app::registry`.

pub mod alloc_map;
pub mod cycles;
pub mod diff;
pub mod graph;
pub mod heap_tree;
pub mod load_error;
pub mod samples;
pub mod summary;
pub mod topology;

/// What every pane gets each frame besides its own state.
pub struct ViewContext<'a> {
    /// The GPU device egui renders with (None when eframe runs without wgpu).
    pub render_state: Option<&'a egui_wgpu::RenderState>,
    /// The open topology files (hwloc XML, MemAxes hardware.xml): what a samples pane can be
    /// paired with.
    pub topologies: &'a [std::sync::Arc<memscape_views::Dataset>],
}

/// Where a pane is with a snapshot handed by `View::follow` (see `View::live_step`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveStep {
    /// None handed, or the one handed was dropped.
    Idle,
    /// Its workers are still at it.
    Preparing,
    /// It can be swapped in.
    Ready,
    /// Swapped in now.
    Swapped,
}

pub trait View {
    /// Tab title.
    fn title(&self) -> String;
    /// Draws the view into `ui`, which fills its pane.
    fn ui(&mut self, ui: &mut egui::Ui, cx: &ViewContext<'_>);
    /// True once the view has everything it needs on screen (data uploaded, first frame drawn):
    /// the screenshot self-test waits for it.
    fn is_ready(&self) -> bool {
        true
    }
    /// The pane's current state as a presentation-tour step ("Record tour step"), when the view
    /// can be rendered headless: its settings.
    fn tour_step(&self) -> Option<memscape_views::tour::Step> {
        None
    }
    /// A newer state of the dataset this pane shows (a live recording's next snapshot, or its
    /// finished file): the pane prepares it off screen and moves to it, keeping what the user
    /// is doing. Panes of kinds that are never live ignore it.
    fn follow(&mut self, _dataset: std::sync::Arc<memscape_views::Dataset>, _ctx: &egui::Context) {}
    /// Whether the pane, drawn in the last frame (`ctx`'s pass before this one: a pane in a
    /// hidden tab does not hold the recording back), is still preparing a snapshot handed by
    /// `follow`: the shell hands a live recording's next snapshot only when none of its panes
    /// is, so that no snapshot is made only to be dropped.
    fn preparing_live(&self, _ctx: &egui::Context) -> bool {
        false
    }
    /// Moves a snapshot handed by `follow` on (its workers' results taken) and, with `swap`,
    /// shows it once it can be drawn. The shell asks every pane without `swap` first and then,
    /// when none of a recording's panes is still preparing, those that are ready with it: the
    /// panes of one snapshot swap in together, in one frame (each a whole-window redraw on a
    /// software rasterizer).
    fn live_step(&mut self, _ctx: &egui::Context, _swap: bool) -> LiveStep {
        LiveStep::Idle
    }
    /// The picture the pane last painted ("Export view as SVG/PNG…"); None for panes that draw
    /// with egui widgets only.
    fn picture(&self) -> Option<std::sync::Arc<memscape_views::Picture>> {
        None
    }
}

/// Whether egui draws with a software rasterizer (lavapipe, llvmpipe): each frame is then a
/// whole-window redraw on the CPU that loaders and workers need (≈ 0.4 s of CPU at 1280×800 on
/// lavapipe), so frames that only animate a spinner or a progress line are paced.
static SOFTWARE_RASTERIZER: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// The least time between frames that only animate, on a software rasterizer. Workers still
/// wake the window the moment their results land.
pub const SOFTWARE_ANIMATION_PACE: std::time::Duration = std::time::Duration::from_millis(1000);

/// The least time between frames that only check on work whose worker wakes the window when it
/// is done (a live snapshot being prepared, the status line's rate), on a software rasterizer:
/// such frames redraw the same picture. On cc1plus's live view they were about half of the
/// window's frames (one a second while each snapshot was prepared), and the rasterizer a third
/// of the whole run's CPU.
pub const SOFTWARE_FALLBACK_PACE: std::time::Duration = std::time::Duration::from_millis(5000);

/// Records what the GUI draws with (the shell, once its renderer is known).
pub fn set_software_rasterizer(on: bool) {
    SOFTWARE_RASTERIZER.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether the GUI draws with a software rasterizer.
pub fn software_rasterizer() -> bool {
    SOFTWARE_RASTERIZER.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether a live recording is being followed (its spinners do not animate on a software
/// rasterizer: see [`spinner`]).
static LIVE_RECORDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Records whether a live recording is being followed (the shell, each frame).
pub fn set_live_recording(on: bool) {
    LIVE_RECORDING.store(on, std::sync::atomic::Ordering::Relaxed);
}

fn live_recording() -> bool {
    LIVE_RECORDING.load(std::sync::atomic::Ordering::Relaxed)
}

/// The delay before a frame that only polls or animates: `d`, at least
/// [`SOFTWARE_ANIMATION_PACE`] on a software rasterizer.
pub fn paced(d: std::time::Duration) -> std::time::Duration {
    if software_rasterizer() {
        d.max(SOFTWARE_ANIMATION_PACE)
    } else {
        d
    }
}

/// The delay before a frame that is only a fallback for a worker's wake: `d`, at least
/// [`SOFTWARE_FALLBACK_PACE`] on a software rasterizer.
pub fn fallback(d: std::time::Duration) -> std::time::Duration {
    if software_rasterizer() {
        d.max(SOFTWARE_FALLBACK_PACE)
    } else {
        d
    }
}

/// Says how far a pane's content (`used`) reaches past the pane (`allotted`), if it does by more
/// than a point. A row that does not wrap (a slider, a long label) widens the pane's layout: side
/// panels and curves are then drawn past the edge and clipped, which no view notices itself.
pub fn overflow(
    title: impl FnOnce() -> String,
    allotted: egui::Rect,
    used: egui::Rect,
) -> Option<String> {
    const SLACK: f32 = 1.0;
    let right = used.right() - allotted.right();
    let bottom = used.bottom() - allotted.bottom();
    (right > SLACK || bottom > SLACK).then(|| {
        let title = title();
        format!(
            "the {title} pane's content is {:.0}×{:.0} points in a pane of {:.0}×{:.0}: \
             it is clipped at the pane's edge",
            used.width(),
            used.height(),
            allotted.width(),
            allotted.height()
        )
    })
}

/// In a `horizontal_wrapped` toolbar, starts a new row when a slider with its value and a
/// label of about `label_width` points would cross the pane's edge. A slider lays out its parts
/// in a row of its own that does not wrap, so without this it overflows: the row widens the
/// pane's whole layout and side panels and curves are drawn past the pane's edge, clipped.
pub fn wrap_before_slider(ui: &mut egui::Ui, label_width: f32) {
    // `available_width` in a wrapped row is the whole row's width, not what is left of it.
    let left = ui.max_rect().right() - ui.cursor().left();
    if left < ui.spacing().slider_width + ui.spacing().interact_size.x + label_width {
        ui.end_row();
    }
}

/// A busy spinner: egui's, which asks for the next frame at once, on a GPU; on a software
/// rasterizer the same drawing with its next frame [`paced`].
pub fn spinner(ui: &mut egui::Ui) -> egui::Response {
    if !software_rasterizer() {
        return ui.spinner();
    }
    let size = ui.style().spacing.interact_size.y;
    let (rect, response) = ui.allocate_exact_size(egui::vec2(size, size), egui::Sense::hover());
    if ui.is_rect_visible(rect) {
        // egui's `Spinner::paint_at`, without its repaint request.
        let color = ui.visuals().strong_text_color();
        let radius = (rect.height() / 2.0) - 2.0;
        let n = (radius.round() as u32).clamp(8, 128);
        let time = ui.input(|i| i.time);
        let start = time * std::f64::consts::TAU;
        let end = start + 240f64.to_radians() * time.sin();
        let points: Vec<egui::Pos2> = (0..n)
            .map(|i| {
                let angle = start + (end - start) * f64::from(i) / f64::from(n);
                let (sin, cos) = angle.sin_cos();
                rect.center() + radius * egui::vec2(cos as f32, sin as f32)
            })
            .collect();
        ui.painter()
            .add(egui::Shape::line(points, egui::Stroke::new(3.0, color)));
        // While a recording is live its snapshots and the workers wake the window anyway: a
        // spinner's own frames there were 1–3 of each cc1plus update's frames.
        if !live_recording() {
            ui.ctx().request_repaint_after(SOFTWARE_ANIMATION_PACE);
        }
    }
    response
}

/// A repaint request of `ctx` for workers of the views crate.
pub fn repaint_of(ctx: &egui::Context) -> memscape_views::samples::shared::Repaint {
    let ctx = ctx.clone();
    std::sync::Arc::new(move || memscape_views::wake(&ctx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_names_a_pane_drawn_past_its_edge() {
        let pane = egui::Rect::from_min_size(egui::pos2(10.0, 20.0), egui::vec2(400.0, 300.0));
        let inside = egui::Rect::from_min_size(egui::pos2(10.0, 20.0), egui::vec2(400.5, 300.0));
        assert_eq!(overflow(|| "Heap tree".into(), pane, inside), None);
        let wide = egui::Rect::from_min_size(egui::pos2(10.0, 20.0), egui::vec2(520.0, 120.0));
        let said = overflow(|| "Heap tree".into(), pane, wide).unwrap();
        assert!(
            said.contains("Heap tree") && said.contains("520×120") && said.contains("400×300"),
            "{said}"
        );
        let tall = egui::Rect::from_min_size(egui::pos2(10.0, 20.0), egui::vec2(400.0, 310.0));
        assert!(overflow(|| "Map".into(), pane, tall).is_some());
    }
}
