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
    /// The picture the pane last painted ("Export view as SVG/PNG…"); None for panes that draw
    /// with egui widgets only.
    fn picture(&self) -> Option<std::sync::Arc<memscape_views::Picture>> {
        None
    }
}

/// A repaint request of `ctx` for workers of the views crate.
pub fn repaint_of(ctx: &egui::Context) -> memscape_views::samples::shared::Repaint {
    let ctx = ctx.clone();
    std::sync::Arc::new(move || ctx.request_repaint())
}
